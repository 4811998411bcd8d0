"""The clients' side of the process protocol (``kit.protocol``).

``python -m kit.clients.h2 --config '<ClientJob as JSON>'`` (or ``kit.clients.grpcio_client``)
decodes its job (``protos/worker.proto``, with Python's protobuf library), prints its ready
line, runs the job against its target and prints one result line (a ``ClientResult``) or
one error line; ``--worker`` instead runs one job per line of stdin, each on connections of
its own (docs/process-protocol.md), so that the ~0.45 s a Python client takes to start is
paid once, not once per cell. Each client has its own entry module so that a process
imports only its own stack: grpc alone costs a client ~0.1-0.2 s to start.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from kit._proto import worker_pb2 as pb
from kit.errors import UsageError
from kit.protocol import WORKER_FLAG, child_main, worker_main
from kit.results.client import ClientResult

Runner = Callable[[pb.ClientJob], ClientResult]


def checked(run: Runner, who: str) -> Runner:
    """``run`` for jobs that say what to do: one without work is a bad job (exit 2), refused
    before the ready line (a client is ready once its job is decoded)."""

    def checked_run(job: pb.ClientJob) -> ClientResult:
        if job.WhichOneof("work") is None:
            raise UsageError(f"{who}: bad job: no work (download, unary or upload)")
        return run(job)

    return checked_run


def client_main(run: Runner, stack: str, version: str, argv: Sequence[str] | None = None) -> int:
    """One client process: ready as soon as its job is decoded, then the job's result; with
    ``--worker``, a client worker running one job per line of stdin."""
    args = list(sys.argv[1:] if argv is None else argv)
    who = f"{stack} client"
    if args == [WORKER_FLAG]:
        return worker_main(pb.ClientJob, checked(run, who), stack, version, sys.stdin.buffer, who)

    run_checked = checked(run, who)

    def body(job: pb.ClientJob, ready: Callable[[int], None]) -> ClientResult:
        if job.WhichOneof("work") is not None:
            ready(0)
        return run_checked(job)

    return child_main(pb.ClientJob, body, stack, version, argv, who)
