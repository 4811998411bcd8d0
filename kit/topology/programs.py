"""Which program runs each kind of process. A new stack is one entry here: a program that
speaks the process protocol (``docs/process-protocol.md``) and passes its conformance test
(``tests/integration/test_conformance.py``, parametrised over these tables)."""

from __future__ import annotations

from kit.plan.trial import ClientKind
from kit.topology.processes import Program

CLIENT_PROGRAMS: dict[ClientKind, Program] = {
    "grpcio": Program.python_module("kit.clients.grpcio_client"),
    "h2": Program.python_module("kit.clients.h2"),
}
SERVER_PROGRAMS: dict[str, Program] = {
    "grpcio": Program.python_module("servers.grpcio_server"),
}
PROXY_PROGRAM = Program.python_module("kit.delayline")
