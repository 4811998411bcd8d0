"""The packet link's processes: the forwarder (it creates the two namespaces), the server in
the server namespace, the clients in the client namespace, and a sampler of each TCP
connection's kernel view (``ss -ti`` in both namespaces, every ``SAMPLE_S``).

Every process here is a ``Child`` (PR_SET_PDEATHSIG, stopped by the topology), and the
namespaces live only as long as they do (``kit.delayline.netns``): nothing to clean up by
name, even after a SIGKILL.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from dataclasses import replace

from kit.delayline.netns import CLIENT_NS_FD, SERVER_NS_FD, missing, nsenter_prefix
from kit.errors import UsageError
from kit.plan.packet import SERVER_ADDR, ForwarderConfig
from kit.plan.processes import ServerProcess
from kit.plan.programs import SERVER_PROGRAMS, Program, forwarder_choice, forwarder_program
from kit.plan.trial import Link, ServerConfig
from kit.results.records import TcpView
from kit.topology.processes import Child, spawn

_NOTED: list[str] = []  # the fallback's one line, said once per process
SAMPLE_S = 0.1
SS_TIMEOUT_S = 2.0


def in_namespace(program: Program, forwarder_pid: int, ns_fd: int) -> Program:
    """``program``, started inside one of the forwarder's namespaces."""
    prefix = nsenter_prefix(forwarder_pid, ns_fd)
    return replace(program, argv=(*prefix, *program.argv))


def check_packet_link() -> None:
    """``UsageError`` (exit 2, one line: what is missing) when the packet link cannot run
    here: like an option this machine does not offer."""
    why = missing()
    if why is not None:
        raise UsageError(f"--link packet: {why}")


def _note_fallback() -> None:
    """One line on stderr, once, when the Python forwarder stands in for the compiled one."""
    note = forwarder_choice()[1]
    if note is not None and note not in _NOTED:
        _NOTED.append(note)
        print(f"kit: {note}", file=sys.stderr, flush=True)


class PacketPath:
    """One forwarder for one (server config, link) and the server behind it."""

    def __init__(self, config: ServerConfig, link: Link, tap_path: str) -> None:
        check_packet_link()
        self.link, self.tap_path = link, tap_path
        _note_fallback()
        self.forwarder = spawn(
            "forwarder", forwarder_program(), ForwarderConfig(link=link, tap_path=tap_path)
        )
        self.server: Child | None = None
        try:
            program = in_namespace(SERVER_PROGRAMS[config.kind], self.forwarder.pid, SERVER_NS_FD)
            process = ServerProcess(config=config, listen_host=SERVER_ADDR, listen_port=0)
            self.server = spawn("server", program, process)
        except BaseException:
            self.forwarder.close()
            raise

    @property
    def children(self) -> list[Child]:
        """Stop order: the server first (its connections close over the link), then the
        forwarder (which writes the tap's last lines)."""
        return [c for c in (self.forwarder, self.server) if c is not None]

    def client_program(self, program: Program) -> Program:
        return in_namespace(program, self.forwarder.pid, CLIENT_NS_FD)

    def sampler(self) -> TcpSampler:
        return TcpSampler(self.forwarder.pid)


class TcpSampler:
    """Samples ``ss -tin`` in both namespaces while a trial runs; keeps each connection's
    last view (its counters only grow, so the last sample is the fullest)."""

    def __init__(self, forwarder_pid: int) -> None:
        self._sides = (("client", CLIENT_NS_FD), ("server", SERVER_NS_FD))
        self._pid = forwarder_pid
        self._views: dict[tuple[str, str, str], TcpView] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kit-tcp-sampler", daemon=True)

    def __enter__(self) -> TcpSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=SS_TIMEOUT_S * 2)

    def views(self) -> tuple[TcpView, ...]:
        return tuple(self._views[key] for key in sorted(self._views))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(SAMPLE_S)
        self.sample()

    def sample(self) -> None:
        for side, fd in self._sides:
            argv = [*nsenter_prefix(self._pid, fd), "ss", "-tinH", "state", "established"]
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=SS_TIMEOUT_S)
            except (OSError, subprocess.SubprocessError):
                continue
            for view in parse_ss(done.stdout, side):
                self._views[(view.side, view.local, view.peer)] = view


_ADDRESS = re.compile(r"^\s*\S+\s+\S+\s+(\S+)\s+(\S+)")


def parse_ss(text: str, side: str) -> list[TcpView]:
    """``ss -tinH state established`` output -> one view per connection (the info line
    follows the address line, indented)."""
    views, address = [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            match = _ADDRESS.match(line)
            address = (match.group(1), match.group(2)) if match else None
        elif address is not None:
            views.append(_view(side, address, line))
            address = None
    return views


def _field(info: str, name: str, default: str = "0") -> str:
    match = re.search(rf"(?:^|\s){name}:(\S+)", info)
    return match.group(1) if match else default


def _view(side: str, address: tuple[str, str], info: str) -> TcpView:
    words = info.split()
    congestion = words[0] if words and ":" not in words[0] else ""
    retrans = _field(info, "retrans", "0/0").split("/")
    return TcpView(
        side=side,
        local=address[0],
        peer=address[1],
        congestion=congestion,
        cwnd_packets=int(_field(info, "cwnd")),
        mss_bytes=int(_field(info, "mss")),
        srtt_ms=float(_field(info, "rtt", "0/0").split("/")[0]),
        retransmits=int(retrans[-1]),
        bytes_sent=int(_field(info, "bytes_sent")),
    )
