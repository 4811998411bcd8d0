"""``kit serve`` and ``kit proxy``: a stack's server program, or the delay line, as a child
in the foreground.

Every server is its own program (Python's grpcio, Go, Java, Node, Rust), so ``kit serve
--server grpc-go`` starts it by the process protocol with its job, says where it listens,
and stops it on Ctrl-C / SIGTERM (or reports that it died). ``kit proxy`` does the same with
the delay line (``proxy_program()``: the compiled line where built), whose stderr is the
kit's, and serves its control API (``kit.delayline.control``) here, handing each checked
change to the line's stdin.

The signal handlers only record the signal (a handler that took a lock, as
``threading.Event.set`` does, could deadlock against the main loop holding that lock in
``Event.wait``: seen under load, after which SIGINT and SIGTERM were ignored); the main loop
polls the record.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from kit.delayline.control import Control, check_control_host, start_control
from kit.errors import TopologyError
from kit.plan.jobs import link_job
from kit.plan.processes import ProxyConfig, ServerProcess
from kit.plan.programs import SERVER_PROGRAMS, Program, proxy_program
from kit.plan.trial import Link
from kit.results.records import ProxyTotals
from kit.results.server import ServerResult
from kit.topology.processes import Child, spawn

POLL_S = 0.1


def serve_stack(process: ServerProcess, on_ready: Callable[[int], None]) -> ServerResult:
    """Run the stack's server until SIGINT/SIGTERM; ``on_ready(port)`` once it listens."""
    kind = process.config.kind
    program = SERVER_PROGRAMS[kind]
    why = program.missing()
    if why is not None:
        raise TopologyError(f"server cannot start: {why}")
    stopped: list[int] = []
    previous = _record_signals(stopped)
    child = spawn("server", program, process)
    try:
        on_ready(child.port)
        _until_stopped(child, stopped, f"the {kind} server")
        return child.result(ServerResult, 1.0)
    finally:
        child.close()
        _restore(previous)


def serve_line(
    config: ProxyConfig,
    on_ready: Callable[[int], None],
    control: tuple[str, int] | None = None,
    announce: Callable[[str], None] = print,
    program: Program | None = None,
) -> ProxyTotals:
    """Run the delay line until SIGINT/SIGTERM; with ``control`` (host, port) its API too,
    announced (``control API on ...``) before ``on_ready(port)``."""
    if control is not None:
        check_control_host(control[0])
    program = program or proxy_program()
    why = program.missing()
    if why is not None:
        raise TopologyError(f"delay line cannot start: {why}")
    stopped: list[int] = []
    previous = _record_signals(stopped)
    child = spawn("proxy", program, config, foreground=True)
    api = None
    try:
        if control is not None:
            api = start_control(*control, _control(config, child, announce))
            announce(f"control API on http://{control[0]}:{api.server_port}/link (GET, POST)")
        on_ready(child.port)
        _until_stopped(child, stopped, "the delay line", None if api is None else api.shutdown)
        return child.result(ProxyTotals, 1.0)
    finally:
        if api is not None:
            api.shutdown()
            api.server_close()
        child.close()
        _restore(previous)


def _control(config: ProxyConfig, child: Child, announce: Callable[[str], None]) -> Control:
    def apply(link: Link) -> None:
        child.change(link_job(link))

    return Control(config.link, apply, config.tap_path, announce)


def _record_signals(stopped: list[int]) -> dict[int, object]:
    return {
        sig: signal.signal(sig, lambda signum, _frame: stopped.append(signum))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }


def _restore(previous: dict[int, object]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)  # type: ignore[arg-type]


def _until_stopped(
    child: Child, stopped: list[int], what: str, first: Callable[[], None] | None = None
) -> None:
    """Wait for a signal (then ``first()`` and stop the child) or the child's death (then say
    so)."""
    while not stopped and child.popen.poll() is None:
        time.sleep(POLL_S)
    if child.popen.poll() is not None and not stopped:
        tail = child.stderr_tail()
        raise TopologyError(
            f"{what} (pid {child.pid}) exited with code {child.popen.returncode}"
            + (f": {tail}" if tail else "")
        )
    if first is not None:
        first()
    child.stop()
