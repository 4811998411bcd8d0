"""``make bench``'s delay lines side by side: the compiled line (kit-linkd), the Python line,
toxiproxy (the peer to beat) and no proxy (the machine's floor), in one run.

Every figure is measured beside the others in the same minutes (interleaved where the
measure allows), and each goal is a ratio to the floor or to toxiproxy, never a speed:

1. bulk TCP (iperf3, Debian's; else the kit's own sender and sink) through each line at RTT
   0 and 10 ms: Gbit/s, and the relay process's CPU seconds per GiB moved (goals: at least
   toxiproxy's throughput at both RTTs and half of no proxy's at RTT 0; at most 0.3 s/GiB);
2. a 1-byte ping-pong's delay error (RTT - configured) against the floor (the same
   ping-pong with no proxy, the echo sleeping the RTT itself, interleaved), at 10 and 20 ms,
   alone and beside a 1 Gbit/s bulk transfer on another connection of the same line (goals:
   p50 within +0.05 ms, p99 within +0.2 ms of the floor); and, reported, beside a full-speed
   one, which saturates 2 cores: the faster a line carries it, the less CPU is left to the
   ping-pong's own ends (their floor's p99 rises too), so that figure favours a slow line;
3. the h2 client with a static 1 MiB window at 5 ms: throughput / (window / RTT) through
   each line (goal: at least 0.93).

toxiproxy is installed by the bench (``go install ...@TOXIPROXY_VERSION`` into the user's
cache); without Go or the module proxy it is skipped, in one line. ``python -m
kit.tools.linebench`` runs only this part (about five minutes on 2 cores).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from tabulate import tabulate

from kit.plan.processes import LOOPBACK, ProxyConfig, ServerProcess
from kit.plan.programs import DELAYLINE_ENV, PROXY_PROGRAMS, SERVER_PROGRAMS
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import MIB
from kit.tools.benchline import BenchLine
from kit.tools.floorbench import Errors, Starter, against_floor
from kit.topology.processes import spawn
from kit.topology.topology import Topology

TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
TOXIPROXY_VERSION = "v2.5.0"  # the newest the Go module proxy offered when pinned
KIT_LINES = ("compiled", "python")
BULK_RTTS_MS = (0.0, 10.0)
BULK_S = 3
BULK_ROUNDS = 3
DELAY_RTTS_MS = (10.0, 20.0)
BESIDE_MBIT_S = 1000.0  # the bulk transfer beside the ping-pong: the same load through every line
Beside = Literal["", "paced", "full"]  # "paced": BESIDE_MBIT_S, the goal; "full": reported
H2_RTT_MS, H2_WINDOW = 5.0, MIB
H2_ROUNDS = 3
# The goals (ratios, on this 2-core machine).
BULK_VS_PEER, BULK_VS_FLOOR = 1.0, 0.5
CPU_S_PER_GIB = 0.3
P50_OVER_FLOOR_MS, P99_OVER_FLOOR_MS = 0.05, 0.2
H2_FRACTION = 0.93


# -- the lines -----------------------------------------------------------------------------


@dataclass
class Running:
    """A line in front of an upstream: where clients connect, and its process (CPU)."""

    port: int
    pid: int | None


LineStarter = Callable[[int, float, float], contextlib.AbstractContextManager[Running]]


def _kit_starter(kind: str) -> LineStarter:
    @contextlib.contextmanager
    def start(port: int, up_ms: float, down_ms: float) -> Iterator[Running]:
        config = ProxyConfig(upstream_port=port, link=Link(up_ms, down_ms))
        child = spawn("proxy", PROXY_PROGRAMS[kind], config)
        try:
            yield Running(child.port, child.pid)
        finally:
            child.close()

    return start


def toxiproxy_binary(log: Callable[[str], None]) -> str | None:
    """The pinned toxiproxy server, installed with ``go install`` into the user's cache the
    first time; None (and one line saying why) when it cannot be."""
    gobin = (
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        / "kit"
        / (f"toxiproxy-{TOXIPROXY_VERSION}")
    )
    binary = gobin / "server"
    if binary.exists():
        return str(binary)
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if go is None:
        log("toxiproxy: skipped (go is not installed, so it cannot be installed)")
        return None
    done = subprocess.run(
        [go, "install", f"{TOXIPROXY_MODULE}@{TOXIPROXY_VERSION}"],
        env={**os.environ, "GOBIN": str(gobin)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 or not binary.exists():
        why = " ".join(done.stderr.split())[-200:]
        log(f"toxiproxy: skipped (go install {TOXIPROXY_VERSION} failed: {why})")
        return None
    return str(binary)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _post(api: int, path: str, body: object) -> None:
    request = urllib.request.Request(
        f"http://{LOOPBACK}:{api}{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def _toxiproxy_starter(binary: str) -> LineStarter:
    """toxiproxy with a latency toxic per direction (its own unit: whole ms)."""

    @contextlib.contextmanager
    def start(port: int, up_ms: float, down_ms: float) -> Iterator[Running]:
        api, listen = _free_port(), _free_port()
        proc = subprocess.Popen(
            [binary, "-host", LOOPBACK, "-port", str(api)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_listening(api)
            upstream = f"{LOOPBACK}:{port}"
            _post(
                api,
                "/proxies",
                {"name": "kit", "listen": f"{LOOPBACK}:{listen}", "upstream": upstream},
            )
            for stream, ms in (("upstream", up_ms), ("downstream", down_ms)):
                if ms:
                    toxic = {"latency": round(ms), "jitter": 0}
                    body = {
                        "name": stream,
                        "type": "latency",
                        "stream": stream,
                        "attributes": toxic,
                    }
                    _post(api, "/proxies/kit/toxics", body)
            yield Running(listen, proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)

    return start


def _wait_listening(port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=1):
            return
        time.sleep(0.05)
    raise OSError(f"nothing listens on {port}")


@contextlib.contextmanager
def _no_proxy(port: int, up_ms: float, down_ms: float) -> Iterator[Running]:
    yield Running(port, None)


def _as_floor_starter(start: LineStarter) -> Starter:
    @contextlib.contextmanager
    def floor_start(port: int, up_ms: float, down_ms: float) -> Iterator[int]:
        with start(port, up_ms, down_ms) as line:
            yield line.port

    return floor_start


# -- 1. bulk ---------------------------------------------------------------------------------

CHUNK = MIB


@contextlib.contextmanager
def _sink_server() -> Iterator[int]:
    """A thread that swallows bulk bytes on loopback and closes at EOF; ends with the socket."""
    listener = socket.create_server((LOOPBACK, 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                threading.Thread(target=_sink, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield port
    finally:
        listener.close()


def _sink(conn: socket.socket) -> None:
    with conn, contextlib.suppress(OSError):
        while conn.recv(CHUNK):
            pass


def _bulk_mib_s(port: int, total: int = 512 * MIB) -> float:
    payload = b"\x00" * CHUNK
    with socket.create_connection((LOOPBACK, port), timeout=30) as sock:
        t0 = time.perf_counter()
        for _ in range(total // CHUNK):
            sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        sock.recv(1)  # EOF once the far end has read everything
        return total / (time.perf_counter() - t0) / MIB


def _cpu_s(pid: int | None) -> float:
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def _bulk_sink() -> Iterator[tuple[int, Callable[[int], tuple[float, int]]]]:
    """An iperf3 server (or the kit's own sink) and how to run one bulk transfer to a port:
    (Gbit/s, bytes moved)."""
    if shutil.which("iperf3"):
        port = _free_port()
        server = subprocess.Popen(["iperf3", "-s", "-p", str(port)], stdout=subprocess.DEVNULL)
        try:
            _wait_listening(port)
            yield port, _iperf3
        finally:
            server.terminate()
            server.wait(10)
        return

    def own(port: int) -> tuple[float, int]:
        total = 2048 * MIB
        return _bulk_mib_s(port, total) * MIB * 8 / 1e9, total

    with _sink_server() as port:
        yield port, own


def _iperf3(port: int) -> tuple[float, int]:
    done = subprocess.run(
        ["iperf3", "-c", LOOPBACK, "-p", str(port), "-t", str(BULK_S), "-J"],
        capture_output=True,
        text=True,
        timeout=BULK_S + 60,
    )
    received = json.loads(done.stdout)["end"]["sum_received"]
    return received["bits_per_second"] / 1e9, int(received["bytes"])


@dataclass(frozen=True)
class Bulk:
    gbit_s: float
    cpu_s_per_gib: float | None


def bulk(lines: dict[str, LineStarter]) -> dict[tuple[str, float], Bulk]:
    """Each line at each RTT, ``BULK_ROUNDS`` transfers interleaved; medians."""
    found: dict[tuple[str, float], list[tuple[float, float | None]]] = {}
    with _bulk_sink() as (port, transfer):
        for rtt_ms in BULK_RTTS_MS:
            names = [n for n in lines if n != "none" or rtt_ms == 0]
            for i in range(BULK_ROUNDS):
                for name in names if i % 2 == 0 else reversed(names):
                    with lines[name](port, rtt_ms / 2, rtt_ms / 2) as line:
                        cpu0 = _cpu_s(line.pid)
                        gbit_s, moved = transfer(line.port)
                        cpu = _cpu_s(line.pid) - cpu0
                    per_gib = None if line.pid is None else cpu / (moved / 2**30)
                    found.setdefault((name, rtt_ms), []).append((gbit_s, per_gib))
    return {
        key: Bulk(
            statistics.median(g for g, _ in runs),
            None if runs[0][1] is None else statistics.median(c for _, c in runs if c is not None),
        )
        for key, runs in found.items()
    }


# -- 2. delay error --------------------------------------------------------------------------


def delay_errors(
    lines: dict[str, LineStarter],
) -> dict[tuple[str, float, Beside], tuple[Errors, Errors]]:
    """(line, RTT, what ran beside) -> (its errors, the floor's measured with it, interleaved)."""
    out = {}
    for rtt_ms in DELAY_RTTS_MS:
        for beside in get_args(Beside):
            for name, start in lines.items():
                if name == "none":
                    continue
                found = against_floor(
                    rtt_ms / 2,
                    rtt_ms / 2,
                    starters={name: _as_floor_starter(start)},
                    bulk=bool(beside),
                    bulk_mbit_s=BESIDE_MBIT_S if beside == "paced" else None,
                )
                out[(name, rtt_ms, beside)] = (found[name], found["floor"])
    return out


# -- 3. h2 static through each line ----------------------------------------------------------


def _h2_trial(link: Link) -> Trial:
    client = ClientConfig(kind="h2", window_mode="static", window_bytes=H2_WINDOW)
    return Trial(link=link, client=client, workload=Workload(duration_s=2.0))


def h2_fractions(toxiproxy: LineStarter | None) -> dict[str, float | None]:
    """Throughput / (window / RTT) of the h2 client, static 1 MiB at 5 ms, through each line
    (interleaved rounds, medians). toxiproxy's goes direct to it, in front of a kit server."""
    theory_mib_s = H2_WINDOW / MIB / (H2_RTT_MS / 1000)
    runs: dict[str, list[float]] = {}
    with contextlib.ExitStack() as stack:
        topologies: dict[str, Topology] = {}
        for kind in KIT_LINES:
            topologies[kind] = stack.enter_context(Topology())
        if toxiproxy is not None:
            server = stack.enter_context(_server())
            line = stack.enter_context(toxiproxy(server, H2_RTT_MS / 2, H2_RTT_MS / 2))
            topologies["toxiproxy"] = stack.enter_context(
                Topology(direct=True, target=(LOOPBACK, line.port))
            )
        for i in range(H2_ROUNDS):
            names = list(topologies) if i % 2 == 0 else list(reversed(topologies))
            for name in names:
                link = Link() if name == "toxiproxy" else Link.from_rtt(H2_RTT_MS)
                with _env_line(name):
                    m = topologies[name].measure(_h2_trial(link))
                if m.ok and m.throughput_mib_s:
                    runs.setdefault(name, []).append(m.throughput_mib_s / theory_mib_s)
    names = [*KIT_LINES, *(["toxiproxy"] if toxiproxy is not None else [])]
    return {n: statistics.median(runs[n]) if runs.get(n) else None for n in names}


@contextlib.contextmanager
def _server() -> Iterator[int]:
    child = spawn("server", SERVER_PROGRAMS["grpcio"], ServerProcess())
    try:
        yield child.port
    finally:
        child.close()


@contextlib.contextmanager
def _env_line(name: str) -> Iterator[None]:
    """The kit's delay line ``name`` for the proxies started meanwhile (KIT_DELAYLINE)."""
    saved = os.environ.get(DELAYLINE_ENV)
    if name in KIT_LINES:
        os.environ[DELAYLINE_ENV] = name
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(DELAYLINE_ENV, None)
        else:
            os.environ[DELAYLINE_ENV] = saved


# -- the report ------------------------------------------------------------------------------


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def bulk_lines(found: dict[tuple[str, float], Bulk]) -> list[BenchLine]:
    lines = []
    floor = found.get(("none", 0.0))
    for rtt_ms in BULK_RTTS_MS:
        row = {n: found[(n, rtt)] for n, rtt in found if rtt == rtt_ms}
        text = ", ".join(f"{n} {b.gbit_s:.2f}" for n, b in row.items())
        mine, peer = row.get("compiled"), row.get("toxiproxy")
        vs_peer = _ratio(mine.gbit_s if mine else None, peer.gbit_s if peer else None)
        lines.append(
            BenchLine(
                f"bulk TCP @ RTT {rtt_ms:g} ms: compiled / toxiproxy (Gbit/s: {text})",
                "no toxiproxy" if vs_peer is None else f"{vs_peer:.2f}",
                f">= {BULK_VS_PEER:g}",
                None if vs_peer is None else vs_peer >= BULK_VS_PEER,
            )
        )
        if rtt_ms == 0 and floor is not None and mine is not None:
            vs_floor = mine.gbit_s / floor.gbit_s
            lines.append(
                BenchLine(
                    "bulk TCP @ RTT 0: compiled / no proxy (the machine's floor)",
                    f"{vs_floor:.2f}",
                    f">= {BULK_VS_FLOOR:g}",
                    vs_floor >= BULK_VS_FLOOR,
                )
            )
    for (name, rtt_ms), b in found.items():
        if b.cpu_s_per_gib is None:
            continue
        ok = b.cpu_s_per_gib <= CPU_S_PER_GIB if name == "compiled" else None
        bar = f"<= {CPU_S_PER_GIB:g}" if name == "compiled" else "report"
        lines.append(
            BenchLine(
                f"relay CPU s per GiB moved, {name} @ RTT {rtt_ms:g} ms",
                f"{b.cpu_s_per_gib:.3f}",
                bar,
                ok,
            )
        )
    return lines


def delay_lines(found: dict[tuple[str, float, Beside], tuple[Errors, Errors]]) -> list[BenchLine]:
    lines = []
    for (name, rtt_ms, beside), (errs, floor) in found.items():
        d50, d99 = errs.p50_ms - floor.p50_ms, errs.p99_ms - floor.p99_ms
        where = {
            "": "",
            "paced": f", beside a {BESIDE_MBIT_S / 1000:g} Gbit/s bulk transfer",
            "full": ", beside a full-speed bulk transfer (2 cores saturated)",
        }[beside]
        goal = name == "compiled" and beside != "full"
        ok = d50 <= P50_OVER_FLOOR_MS and d99 <= P99_OVER_FLOOR_MS
        lines.append(
            BenchLine(
                f"delay error @ {rtt_ms:g} ms{where}: {name}",
                f"p50 {errs.p50_ms:.3f} / p99 {errs.p99_ms:.3f} ms; floor {floor.p50_ms:.3f} / "
                f"{floor.p99_ms:.3f}; over the floor {d50:+.3f} / {d99:+.3f}",
                f"over the floor p50 <= +{P50_OVER_FLOOR_MS:g}, p99 <= +{P99_OVER_FLOOR_MS:g} ms"
                if goal
                else "report",
                ok if goal else None,
            )
        )
    return lines


def h2_lines(found: dict[str, float | None]) -> list[BenchLine]:
    text = ", ".join(f"{n} {'failed' if f is None else f'{f:.3f}'}" for n, f in found.items())
    mine = found.get("compiled")
    return [
        BenchLine(
            f"h2 static 1 MiB @ 5 ms: throughput / (window / RTT) ({text})",
            "failed" if mine is None else f"{mine:.3f}",
            f">= {H2_FRACTION:g}",
            None if mine is None else mine >= H2_FRACTION,
        )
    ]


def line_bench(log: Callable[[str], None] = print) -> list[BenchLine]:
    """Every part, every line side by side; a line that is not there is left out, said once."""
    starters: dict[str, LineStarter] = {}
    for kind in KIT_LINES:
        why = PROXY_PROGRAMS[kind].missing()
        if why is None:
            starters[kind] = _kit_starter(kind)
        else:
            log(f"{kind} delay line: skipped ({why})")
    binary = toxiproxy_binary(log)
    toxiproxy = None if binary is None else _toxiproxy_starter(binary)
    if toxiproxy is not None:
        starters["toxiproxy"] = toxiproxy
    if not shutil.which("iperf3"):
        log("bulk: iperf3 is not installed (apt-get install iperf3): the kit's own sender and sink")
    load_before = os.getloadavg()[0]
    lines = bulk_lines(bulk({**starters, "none": _no_proxy}))
    lines += delay_lines(delay_errors(starters))
    lines += h2_lines(h2_fractions(toxiproxy))
    load = f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    cores = os.cpu_count() or 0
    lines.append(BenchLine(f"machine load average (1 min) on {cores} cores", load, "report", None))
    return lines


def print_lines(lines: list[BenchLine]) -> None:
    verdict = {True: "ok", False: "MISSED", None: "-"}
    rows = [(b.name, b.value, b.bar, verdict[b.ok]) for b in lines]
    print(tabulate(rows, headers=["measure", "value", "bar", ""], tablefmt="github"))


def main(argv: list[str] | None = None) -> int:
    del argv
    print_lines(line_bench(lambda text: print(text, file=sys.stderr, flush=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
