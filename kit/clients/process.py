"""The clients' side of the process protocol (``kit.topology.protocol``).

``python -m kit.clients.h2 --config '<ClientProcess as JSON>'`` (or
``kit.clients.grpcio_client``) prints its ready line, runs the trial against the target and
prints one result line (a ``ClientResult``) or one error line; ``--worker`` instead runs one
trial per line of stdin, each on connections of its own (docs/process-protocol.md), so that
the ~0.45 s a Python client takes to start is paid once, not once per cell. Each client has
its own entry module so that a process imports only its own stack: grpc alone costs a client
~0.1-0.2 s to start.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from kit.plan.processes import ClientProcess
from kit.plan.trial import Trial
from kit.results.client import ClientResult
from kit.topology.protocol import WORKER_FLAG, child_main, worker_main

Runner = Callable[[str, int, Trial], ClientResult]


def client_main(run: Runner, stack: str, version: str, argv: Sequence[str] | None = None) -> int:
    """One client process: ready as soon as its config is valid, then the trial's result;
    with ``--worker``, a client worker running one trial per line of stdin."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == [WORKER_FLAG]:
        return worker_main(
            ClientProcess,
            lambda p: run(p.target_host, p.target_port, p.trial),
            stack,
            version,
            sys.stdin,
        )

    def body(process: ClientProcess, ready: Callable[[int], None]) -> ClientResult:
        ready(0)
        return run(process.target_host, process.target_port, process.trial)

    return child_main(ClientProcess, body, stack, version, argv)
