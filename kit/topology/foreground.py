"""``kit serve``: a stack's server program as a child, in the foreground.

Every server is its own program (Python's grpcio, Go, Java, Node, Rust), so ``kit serve
--server grpc-go`` starts it by the process protocol with its job, says where it listens,
and stops it on Ctrl-C / SIGTERM (or reports that it died).

The signal handlers only record the signal (a handler that took a lock, as
``threading.Event.set`` does, could deadlock against the main loop holding that lock in
``Event.wait``: seen under load, after which SIGINT and SIGTERM were ignored); the main loop
polls the record.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from kit.errors import TopologyError
from kit.plan.processes import ServerProcess
from kit.plan.programs import SERVER_PROGRAMS
from kit.results.server import ServerResult
from kit.topology.processes import spawn

POLL_S = 0.1


def serve_stack(process: ServerProcess, on_ready: Callable[[int], None]) -> ServerResult:
    """Run the stack's server until SIGINT/SIGTERM; ``on_ready(port)`` once it listens."""
    kind = process.config.kind
    program = SERVER_PROGRAMS[kind]
    why = program.missing()
    if why is not None:
        raise TopologyError(f"server cannot start: {why}")
    stopped: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, _frame: stopped.append(signum))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    child = spawn("server", program, process)
    try:
        on_ready(child.port)
        while not stopped and child.popen.poll() is None:
            time.sleep(POLL_S)
        if child.popen.poll() is not None and not stopped:
            tail = child.stderr_tail()
            raise TopologyError(
                f"the {kind} server (pid {child.pid}) exited with code {child.popen.returncode}"
                + (f": {tail}" if tail else "")
            )
        child.stop()
        return child.result(ServerResult, 1.0)
    finally:
        child.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
