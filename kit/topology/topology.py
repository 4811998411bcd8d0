"""Server + delay lines + one client at a time, each its own process; always torn down.

A ``Topology`` starts a grpcio server per server config and one delay line per link
(lazily, so a table that sweeps three RTTs keeps three proxies in front of one server).
Every process is a ``Child`` of the process protocol (``kit.protocol``): its config
goes in as JSON, a ready line and one final line come out. Each measurement runs the client
on fresh connections, in a client worker kept for the next trials where its program has
them (``kit.topology.workers``), else in a fresh process; its connections are matched to
the proxy's frame-tap records by time. ``close()`` (and the context manager) stops every process it started, on success,
on errors and on KeyboardInterrupt; anything that went wrong while stopping is kept in
``teardown_problems`` for the caller to report, never swallowed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import grpc
import h2

from kit import __version__
from kit.capture.summary import summarize
from kit.capture.tapfile import link_connections, parse_tap_lines
from kit.delayline.counter import read_count
from kit.errors import KitError, MeasurementError, TopologyError
from kit.plan.grpc_args import server_notes
from kit.plan.packet import SERVER_ADDR
from kit.plan.processes import LOOPBACK, ClientProcess, ProxyConfig, ServerProcess
from kit.plan.programs import CLIENT_PROGRAMS, SERVER_PROGRAMS, Program, proxy_program
from kit.plan.trial import WARMUP, Link, ServerConfig, Trial, theory_mib_s
from kit.results.client import ClientResult, now_ns
from kit.results.records import (
    FrameSummary,
    LinkConnection,
    Measurement,
    ProcessCpu,
    RunMeta,
    RunTags,
    TapConnection,
    TcpView,
)
from kit.topology import descriptors, leftovers
from kit.topology.awake import KeepAwake
from kit.topology.cpu import CpuSampler, machine_load
from kit.topology.packet import PacketPath, TcpSampler
from kit.topology.processes import READY_TIMEOUT_S, Child, spawn
from kit.topology.workers import Answer, Worker

CLIENT_GRACE_S = 20.0
TAP_SETTLE_S = 3.0
WARM_UP_S = 0.3


class _Proxy:
    """A delay-line process and the tap file it appends to (read only as it grows)."""

    def __init__(
        self, child: Child, tap_path: Path, link: Link, counter_path: Path | None = None
    ) -> None:
        self.child, self.tap_path, self.link = child, tap_path, link
        self.counter_path = counter_path  # the live count of bytes delivered (or none)
        self._offset = 0  # end of the last whole line already parsed
        self._conns: list[TapConnection] = []
        self.links: dict[int, LinkConnection] = {}  # what the link did, by connection id
        self.skipped_lines = 0

    def new_connections(self, since_ns: int, expect: int, timeout_s: float) -> list[TapConnection]:
        """Connections opened since ``since_ns`` (waits up to ``timeout_s`` for ``expect``)."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._read_new()
            found = [c for c in self._conns if c.opened_ns >= since_ns]
            if len(found) >= expect or time.monotonic() >= deadline:
                return sorted(found, key=lambda c: (c.opened_ns, c.conn))
            time.sleep(0.02)

    def _read_new(self) -> None:
        """Parse only the whole lines appended since the last call: the tap file grows over a
        whole table run, and this is polled every 20 ms after every cell. A corrupt line is
        skipped and counted; the lines around it are kept."""
        try:
            with self.tap_path.open("rb") as tap:
                tap.seek(self._offset)
                chunk = tap.read()
        except FileNotFoundError:
            return  # the proxy writes its first line when a connection closes
        except OSError as exc:
            raise MeasurementError(f"cannot read the tap file {self.tap_path}: {exc}") from None
        whole = chunk.rfind(b"\n") + 1
        if whole == 0:
            return
        self._offset += whole
        lines, skipped = parse_tap_lines(chunk[:whole].decode("utf-8", errors="replace"))
        self.skipped_lines += skipped
        self._conns += [line for line in lines if isinstance(line, TapConnection)]
        self.links.update(link_connections(lines))


class Topology:
    """Owns every process it starts. Use as a context manager."""

    def __init__(
        self,
        workdir: Path | None = None,
        direct: bool = False,
        client_grace_s: float | None = None,
        warm_up: bool = True,
        on_teardown_problem: Callable[[str], None] | None = None,
        target: tuple[str, int] | None = None,
        keep_awake: bool = False,
        live_count: bool = False,
        workers: bool = True,
    ) -> None:
        self._tmp = None
        if workdir is None:
            leftovers.sweep()  # the directories of kits that were killed
            self._tmp = tempfile.TemporaryDirectory(prefix=leftovers.PREFIX)
            leftovers.mark(Path(self._tmp.name))
        self.workdir = Path(self._tmp.name) if self._tmp is not None else Path(str(workdir))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.direct = direct
        self.client_grace_s = CLIENT_GRACE_S if client_grace_s is None else client_grace_s
        self.warm_up = warm_up
        # A kit server someone else started (``kit serve``, maybe on another machine): no
        # server process of ours; the delay line (unless direct) relays to it.
        self.target = target
        # Busy loops at nice 19 on every CPU from the first measurement to the end (awake.py).
        self.keep_awake = keep_awake
        self._awake = KeepAwake()
        # Each delay line keeps a live count of the bytes it delivered (kit run --interval).
        self.live_count = live_count
        self._counting: Path | None = None  # the count of the delay line measuring now
        self.teardown_problems: list[str] = []
        self._on_teardown_problem = on_teardown_problem
        self._warmed: set[tuple[ServerConfig, Link]] = set()
        self._servers: dict[ServerConfig, Child] = {}
        self._client_stacks: dict[str, str] = {}  # client kind -> what its ready line said
        self._proxies: dict[tuple[ServerConfig, Link, int], _Proxy] = {}
        self._packets: dict[tuple[ServerConfig, Link], tuple[PacketPath, _Proxy]] = {}
        self._children: list[Child] = []
        # One client worker per client program that has them, for every cell (workers=False:
        # a process per trial).
        self.workers = workers
        self._workers: dict[Program, Worker] = {}
        self._client_run = (False, 0)  # the last trial's client: (a worker?, which trial of it)
        self.phase: tuple[str, float] = ("start-up", time.monotonic())  # for interrupted runs

    def __enter__(self) -> Topology:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pids(self) -> list[int]:
        """Every process of ours that may run: servers, delay lines, client workers."""
        return [c.pid for c in self._children] + [w.pid for w in self._workers.values()]

    def close(self) -> None:
        """Stop proxies first (they flush tap records), then servers; a second Ctrl-C waits."""
        with _signals_deferred():
            self._stop_all()

    def _stop_all(self) -> None:
        self._awake.stop()
        for program in list(self._workers):
            self._drop_worker(program)
        for child in reversed(self._children):
            try:
                child.close()
            except (OSError, subprocess.SubprocessError) as exc:
                self._problem(f"stopping the {child.role} (pid {child.pid}): {exc}")
        self._children.clear()
        self._servers.clear()
        self._proxies.clear()
        self._packets.clear()
        if self._tmp is not None:
            try:
                self._tmp.cleanup()
            except OSError as exc:
                self._problem(f"removing {self.workdir}: {exc.strerror or exc}")

    def _problem(self, text: str) -> None:
        """Kept, and told at once: the run may be ending with an error of its own."""
        self.teardown_problems.append(text)
        if self._on_teardown_problem is not None:
            self._on_teardown_problem(text)

    def server(self, config: ServerConfig) -> Child:
        if config not in self._servers:
            process = ServerProcess(config=config, listen_host=LOOPBACK, listen_port=0)
            program = SERVER_PROGRAMS[config.kind]
            self._servers[config] = self._track(spawn("server", program, process))
        return self._servers[config]

    def proxy(self, config: ServerConfig, link: Link, lane: int = 0) -> _Proxy:
        """The delay line for ``config`` and ``link`` (started once); trials measured together
        each have a lane of their own, so that each has a tap of its own."""
        key = (config, link, lane)
        if key not in self._proxies:
            upstream_host, upstream_port = self._upstream(config)
            tap_path = self.workdir / f"tap-{len(self._proxies)}.jsonl"
            counter = self._counter_path() if self.live_count else None
            proxy = ProxyConfig(
                listen_host=LOOPBACK,
                upstream_host=upstream_host,
                upstream_port=upstream_port,
                link=link,
                tap_path=str(tap_path),
                counter_path=None if counter is None else str(counter),
            )
            child = self._track(spawn("proxy", proxy_program(), proxy))
            self._proxies[key] = _Proxy(child, tap_path, link, counter)
        return self._proxies[key]

    def _counter_path(self) -> Path:
        return self.workdir / f"delivered-{len(self._proxies)}.bin"

    def delivered_bytes(self) -> int | None:
        """The bytes the delay line of the trial measuring now has delivered downstream so
        far, all connections, warm-up included (None: no live count, or not started)."""
        return None if self._counting is None else read_count(self._counting)

    def packet(self, config: ServerConfig, link: Link) -> tuple[PacketPath, _Proxy]:
        """The forwarder and the server behind it for a packet link (started once)."""
        key = (config, link)
        if key not in self._packets:
            if self.target is not None or self.direct:
                raise TopologyError(
                    "the packet link runs the server itself, in a namespace of its own: "
                    "it takes no --target and no --direct"
                )
            tap_path = self.workdir / f"tap-packet-{len(self._packets)}.jsonl"
            path = PacketPath(config, link, str(tap_path))
            for child in reversed(path.children):  # stopped in reverse: server first
                self._track(child)
            self._packets[key] = (path, _Proxy(path.forwarder, tap_path, link))
        return self._packets[key]

    def _upstream(self, config: ServerConfig) -> tuple[str, int]:
        """Where the server is: the target, or a server process of ours for ``config``."""
        if self.target is not None:
            return self.target
        return LOOPBACK, self.server(config).port

    def _track(self, child: Child) -> Child:
        self._children.append(child)
        return child

    def _base(self, trial: Trial, tags: RunTags | None) -> Measurement:
        return Measurement(
            trial=trial,
            status="failed",
            theory_mib_s=theory_mib_s(trial),
            meta=replace(
                _meta(time.strftime("%Y-%m-%dT%H:%M:%S%z"), self.direct),
                target="" if self.target is None else _address(*self.target),
                keep_awake=self.keep_awake,
                warmup=WARMUP if trial.workload.warmup else "none",
            ),
            tags=tags or RunTags(),
        )

    def interrupted(
        self, trial: Trial, signal_name: str, tags: RunTags | None = None
    ) -> Measurement:
        """The record of a trial cut short by a signal: what phase it was in, for how long."""
        phase, since = self.phase
        elapsed_s = time.monotonic() - since
        return replace(
            self._base(trial, tags),
            status="interrupted",
            error=f"interrupted by {signal_name} during {phase}, {elapsed_s:.1f} s into it",
        )

    def _enter(self, phase: str) -> None:
        self.phase = (phase, time.monotonic())

    def measure(self, trial: Trial, tags: RunTags | None = None) -> Measurement:
        """Run one client for one trial. A failure of the trial becomes a failed record."""
        base = self._base(trial, tags)
        self._check_alive()
        self._check_programs(trial)
        descriptors.ensure(trial)
        self._enter("start-up (server and delay line)")
        if self.keep_awake:
            self._awake.start()
        route = self._route(trial)
        proxy, address, pids = route.proxy, route.address, route.pids
        self._counting = None if proxy is None else proxy.counter_path
        self._enter("warm-up")
        no_answer = self._warm(trial, route)
        if no_answer is not None:  # the whole --timeout went by without data: don't wait twice
            return replace(base, error=no_answer)
        self._enter("the timed phase")
        since = now_ns()
        try:
            with CpuSampler(pids, filler=self._awake.pids) as sampler, route.tcp() as tcp:
                result = self._run_client(trial, address, route.client_program)
        except MeasurementError as exc:
            return replace(base, error=str(exc), meta=self._what_ran(base.meta, trial))
        base = replace(base, meta=self._what_ran(base.meta, trial), tcp=tcp.views())
        self._enter("collecting the frame summary")
        cpu = _cpu(result, sampler.fractions(result.t_start_ns, result.t_end_ns))
        path_cores = sum(c.cpu_fraction for c in cpu)
        machine = machine_load(
            sampler.machine,
            result.t_start_ns,
            result.t_end_ns,
            path_cores,
            sampler.filler_cores(result.t_start_ns, result.t_end_ns),
        )
        return replace(
            base,
            status="ok",
            result=result,
            cpu=cpu,
            frames=self._frames(proxy, since, trial) if proxy else None,
            meta=replace(base.meta, machine=machine),
        )

    def measure_together(self, cells: Sequence[tuple[Trial, RunTags | None]]) -> list[Measurement]:
        """Run several trials at once: for trials that mostly wait (connections left idle for
        keepalive rules to act), which one after another would take minutes each.

        Each trial goes through a delay line of its own (its tap tells its frames apart) to a
        server shared by the trials with the same server config; every client is a process
        of its own, started together. No warm-up and no CPU figures: the trials share the
        machine by design, so their throughput is not the point."""
        trials = [trial for trial, _ in cells]
        for trial in trials:
            self._check_alive()
            self._check_programs(trial)
        descriptors.ensure_count(sum(descriptors.needed(t) for t in trials))
        self._enter("start-up (servers and delay lines)")
        proxies = [self.proxy(t.server, t.link, lane=i + 1) for i, t in enumerate(trials)]
        since = now_ns()
        self._enter("the trials, together")
        clients: list[Child] = []
        try:
            for trial, proxy in zip(trials, proxies, strict=True):
                process = ClientProcess(target_port=proxy.child.port, trial=trial)
                program = CLIENT_PROGRAMS[trial.client.kind]
                clients.append(Child.start("client", program, process))
            records = [
                self._together_record(self._base(trial, tags), child)
                for (trial, tags), child in zip(cells, clients, strict=True)
            ]
        finally:
            for child in clients:
                child.close()
        self._enter("collecting the frame summaries")
        return [
            replace(record, frames=self._frames(proxy, since, record.trial))
            for record, proxy in zip(records, proxies, strict=True)
        ]

    def _together_record(self, base: Measurement, child: Child) -> Measurement:
        trial = base.trial
        self._client_run = (False, 1)
        try:
            result = child.result(
                ClientResult, trial.workload.timeout_s + self.client_grace_s, abandon=self._dead
            )
        except KitError as exc:
            return replace(base, error=str(exc), meta=self._what_ran(base.meta, trial))
        finally:
            if child.ready is not None:
                self._client_stacks[trial.client.kind] = child.ready.label
        meta = self._what_ran(base.meta, trial)
        return replace(base, status="ok", result=result, meta=meta)

    def _route(self, trial: Trial) -> _Route:
        """Where the client goes for ``trial`` (and in which namespace it starts)."""
        if trial.link.kind == "packet":
            path, tap = self.packet(trial.server, trial.link)
            server = path.server
            assert server is not None
            pids = {"forwarder": path.forwarder.pid, "server": server.pid}
            program = path.client_program(CLIENT_PROGRAMS[trial.client.kind])
            return _Route(tap, (SERVER_ADDR, server.port), pids, program, path)
        proxy = None if self.direct else self.proxy(trial.server, trial.link)
        address = (LOOPBACK, proxy.child.port) if proxy else self._upstream(trial.server)
        pids = {"proxy": proxy.child.pid} if proxy else {}
        if self.target is None:
            pids["server"] = self.server(trial.server).pid
        return _Route(proxy, address, pids, CLIENT_PROGRAMS[trial.client.kind])

    def _warm(self, trial: Trial, route: _Route) -> str | None:
        """One discarded short run per (server, link) before the first measured one, and
        before a new client worker's first measured trial.

        Why: the first run through a fresh server and delay line measured ~30% low (cold
        code paths in both), whichever cell came first; clients warm only their connection.
        A worker's first trial is a fresh process's (a cold JVM spends 4x the CPU of a warm
        one): with its own warm-up, no measured trial is a worker's first, whichever cell
        starts it (docs/process-protocol.md). A failed warm-up is left to the measured run to
        report, unless it used up the whole timeout: then the error (the measured run would
        only wait that long again).
        """
        key = (trial.server, trial.link)
        new_worker = self._worker_of(route.client_program) is None and self._uses_worker(
            route.client_program
        )
        if not self.warm_up or (key in self._warmed and not new_worker):
            return None
        self._warmed.add(key)
        warm = warm_trial(trial)
        started, since = time.monotonic(), now_ns()
        try:
            self._run_client(warm, route.address, route.client_program)
        except MeasurementError as exc:
            if time.monotonic() - started >= warm.workload.timeout_s:
                return (
                    f"no answer within the warm-up's {warm.workload.timeout_s:g} s timeout: {exc}"
                )
            return None
        if route.proxy is not None and self._uses_worker(route.client_program):
            self._drained(route.proxy, since, warm)
        return None

    def _drained(self, proxy: _Proxy, since_ns: int, trial: Trial) -> None:
        """Wait (bounded) until the delay line has closed ``trial``'s connections: what the
        server sent before the client hung up is still crossing it, and on a link with a rate
        it would take the next trial's bandwidth. A worker starts that trial at once, where a
        process of its own took its start-up (~0.45 s) first."""
        expect = min(trial.client.connections, trial.workload.streams)
        proxy.new_connections(since_ns, expect, TAP_SETTLE_S + 2 * trial.link.rtt_ms / 1000)

    def _run_client(self, trial: Trial, address: tuple[str, int], program: Program) -> ClientResult:
        """The client's result, from a worker of ``program`` when it has them (kept for the
        next trial), else from a process of its own; what its ready line said it is is kept
        by its kind."""
        process = ClientProcess(target_host=address[0], target_port=address[1], trial=trial)
        timeout_s = trial.workload.timeout_s + self.client_grace_s
        try:
            if self._uses_worker(program):
                answer = self._ask_worker(program, process, timeout_s)
            else:
                answer = self._ask_process(program, process, timeout_s)
        except KitError as exc:
            # A failed client is a failed cell, recorded (a hung or frozen server too); a dead
            # server or proxy is named here and stops the campaign at its next cell.
            dead = self._dead()
            told = not dead or dead in str(exc)
            raise MeasurementError(str(exc) + ("" if told else f"; {dead}")) from None
        if trial.workload.kind == "upload":  # the server receives: the kit says its rules
            notes = answer.result.notes + server_notes(trial.server)
            return dataclasses.replace(answer.result, notes=notes)
        return answer.result

    def _uses_worker(self, program: Program) -> bool:
        return self.workers and program.worker

    def _ask_process(self, program: Program, process: ClientProcess, timeout_s: float) -> Answer:
        """One client process for this one trial."""
        self._client_run = (False, 1)
        child = Child.start("client", program, process)
        try:
            result = child.result(ClientResult, timeout_s, abandon=self._dead)
        finally:
            if child.ready is not None:  # read with its result
                self._client_stacks[process.trial.client.kind] = child.ready.label
            child.close()
        return Answer(result, 1, False, child.ready)

    def _worker_of(self, program: Program) -> Worker | None:
        """``program``'s worker, if it still runs (one gone while idle, killed, is forgotten)."""
        worker = self._workers.get(program)
        if worker is not None and worker.child.popen.poll() is not None:
            self._drop_worker(program)
            return None
        return worker

    def _ask_worker(self, program: Program, process: ClientProcess, timeout_s: float) -> Answer:
        """The trial on ``program``'s worker (started first if there is none); a worker that
        fails it in any way is stopped and forgotten."""
        worker = self._worker_of(program)
        if worker is None:
            # A process per trial starts within the trial's time; so does a worker.
            started = time.monotonic()
            worker = Worker.start(program, min(READY_TIMEOUT_S, timeout_s))
            self._workers[program] = worker
            timeout_s = max(0.0, timeout_s - (time.monotonic() - started))
        self._client_run = (True, worker.trials + 1)
        if worker.child.ready is not None:
            self._client_stacks[process.trial.client.kind] = worker.child.ready.label
        try:
            return worker.run(process, timeout_s, abandon=self._dead)
        except BaseException:
            self._drop_worker(program, idle=False)
            raise

    def _drop_worker(self, program: Program, idle: bool = True) -> None:
        """Stop ``program``'s worker: an idle one by closing its stdin, one mid-trial (or that
        failed) by SIGTERM."""
        worker = self._workers.pop(program, None)
        if worker is None:
            return
        try:
            if idle:
                worker.close()
            else:
                worker.child.close()
        except (OSError, subprocess.SubprocessError) as exc:
            self._problem(f"stopping the client worker (pid {worker.pid}): {exc}")

    def _dead(self) -> str:
        """ "the server (pid N) exited with code C" for each process of ours that is gone."""
        return "; ".join(
            f"the {c.role} (pid {c.pid}) exited with code {c.popen.returncode}"
            for c in self._children
            if c.popen.poll() is not None
        )

    def _what_ran(self, meta: RunMeta, trial: Trial) -> RunMeta:
        """The meta with the stacks (and versions) the client and our server said they are."""
        if trial.link.kind == "packet":
            server = self._packets[(trial.server, trial.link)][0].server
            ready = None if server is None else server.ready
        else:
            ready = self._servers[trial.server].ready if self.target is None else None
        return replace(
            meta,
            client_stack=self._client_stacks.get(trial.client.kind, ""),
            server_stack="" if ready is None else ready.label,
            client_worker=self._client_run[0],
            client_trial=self._client_run[1],
        )

    def _check_programs(self, trial: Trial) -> None:
        """A stack that is not built is refused before anything of this trial starts."""
        needed = [("client", CLIENT_PROGRAMS[trial.client.kind])]
        if self.target is None:
            needed.append(("server", SERVER_PROGRAMS[trial.server.kind]))
        for role, program in needed:
            why = program.missing()
            if why is not None:
                raise TopologyError(f"{role} cannot start: {why}")

    def _check_alive(self) -> None:
        dead = self._dead()
        if dead:
            raise TopologyError(dead)

    def _frames(self, proxy: _Proxy, since_ns: int, trial: Trial) -> FrameSummary | None:
        expect = min(trial.client.connections, trial.workload.streams)
        before = proxy.skipped_lines
        # A connection's record is written once its close crossed both delays: scale with RTT.
        settle_s = TAP_SETTLE_S + 2 * trial.link.rtt_ms / 1000
        conns = proxy.new_connections(since_ns, expect, settle_s)
        if not conns:
            return None
        skipped = proxy.skipped_lines - before
        return summarize(
            conns,
            proxy.link.delay_down_ms,
            skipped,
            proxy.links,
            delay_up_ms=proxy.link.delay_up_ms,
        )


@dataclass(frozen=True)
class _Route:
    """The path of one trial: the tap, the address the client dials, the processes whose
    CPU counts, the client program (in the client namespace on the packet link)."""

    proxy: _Proxy | None
    address: tuple[str, int]
    pids: dict[str, int]
    client_program: Program
    packet: PacketPath | None = None

    def tcp(self) -> contextlib.AbstractContextManager[TcpSampler | _NoTcp]:
        return _NoTcp() if self.packet is None else self.packet.sampler()


class _NoTcp(contextlib.AbstractContextManager["_NoTcp"]):
    """The stream link: the kernels' TCP runs over loopback, with nothing to tell."""

    def __exit__(self, *exc: object) -> None:
        return None

    def views(self) -> tuple[TcpView, ...]:
        return ()


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ignore SIGINT/SIGTERM while tearing down, so teardown itself is not interrupted."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def warm_trial(trial: Trial) -> Trial:
    """The same client and link, a short timed download (an upload for uploads): the
    warm-up run."""
    workload = replace(
        trial.workload,
        kind="upload" if trial.workload.kind == "upload" else "download",
        duration_s=WARM_UP_S,
        bytes_per_stream=None,
        streams=min(trial.workload.streams, 4),
        timeout_s=min(trial.workload.timeout_s, 30.0),
    )
    return replace(trial, workload=workload, label="warm-up")


def _cpu(result: ClientResult, others: dict[str, float]) -> tuple[ProcessCpu, ...]:
    return (
        ProcessCpu("client", result.cpu_fraction),
        *(ProcessCpu(r, f) for r, f in sorted(others.items())),
    )


def _meta(started_at: str, direct: bool) -> RunMeta:
    return RunMeta(
        started_at=started_at,
        host=socket.gethostname(),
        cpus=os.cpu_count() or 0,
        python=platform.python_version(),
        grpcio=grpc.__version__,
        h2=h2.__version__,
        kit=__version__,
        path="direct" if direct else "delay line",
    )
