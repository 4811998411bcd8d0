"""``kit serve`` with another stack's server: its program as a child, in the foreground.

The grpcio server runs inside the ``kit serve`` process itself; a stack's server is its own
program (Go, Java, Node), so ``kit serve --server grpc-go`` starts it by the process
protocol, says where it listens, and stops it on Ctrl-C / SIGTERM (or reports that it died).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

from kit.errors import TopologyError
from kit.plan.processes import ServerProcess
from kit.results.server import ServerResult
from kit.topology.processes import spawn
from kit.topology.programs import SERVER_PROGRAMS


def serve_stack(process: ServerProcess, on_ready: Callable[[int], None]) -> ServerResult:
    """Run the stack's server until SIGINT/SIGTERM; ``on_ready(port)`` once it listens."""
    kind = process.config.kind
    program = SERVER_PROGRAMS[kind]
    why = program.missing()
    if why is not None:
        raise TopologyError(f"server cannot start: {why}")
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    child = spawn("server", program, process)
    try:
        on_ready(child.port)
        while not stop.wait(0.2) and child.popen.poll() is None:
            pass
        if child.popen.poll() is not None and not stop.is_set():
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
