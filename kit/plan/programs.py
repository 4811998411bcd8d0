"""Which program runs each kind of process: the one list of the kit's stacks.

A new stack is one entry here: a program that speaks the process protocol
(``docs/process-protocol.md``), decodes its job (``protos/worker.proto``) and passes its
conformance test (``tests/integration/test_conformance.py``, parametrised over these
tables). Every list of stacks the kit shows (``--help``, refusals, docs) comes from here.

A client program marked ``worker=True`` also runs as a client worker (``--worker``: one
trial per line of stdin), which the kit keeps for successive trials; a program without it
runs one process per trial. Every client here has workers.

The stacks users run live in ``stacks/<stack>/`` and are built by ``make install``
(``make stacks``); a stack whose toolchain is missing is not built, and starting it is
refused with one line saying what to install. Plain data: nothing here starts anything
(``kit.topology.processes`` does).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ClientKind = Literal["grpcio", "h2", "grpc-go", "grpc-java", "grpc-js", "tonic"]
ServerKind = Literal["grpcio", "grpc-go", "grpc-java", "grpc-js", "tonic"]


@dataclass(frozen=True)
class Program:
    """How to start one kind of process: everything on its command line before ``--config``.

    ``needs`` are files that must exist first (a built binary, a jar, installed modules);
    ``hint`` says how to get them, for the one-line refusal when they are missing.
    ``worker``: a client program that also runs as a client worker (``--worker``: one trial
    per line of stdin); the kit then starts one for successive trials instead of a process
    per trial."""

    argv: tuple[str, ...]
    needs: tuple[str, ...] = ()
    hint: str = ""
    worker: bool = False

    @classmethod
    def python_module(cls, module: str, worker: bool = False) -> Program:
        return cls((sys.executable, "-m", module), worker=worker)

    def missing(self) -> str | None:
        """Why it cannot start on this machine (None: it can)."""
        absent = [path for path in self.needs if not os.path.exists(path)]
        if not absent:
            return None
        return f"{absent[0]} is missing" + (f" ({self.hint})" if self.hint else "")


REPO = Path(__file__).resolve().parents[2]
STACKS = REPO / "stacks"


def _go(role: str) -> Program:
    binary = str(STACKS / "grpc-go" / "bin" / role)
    return Program(
        (binary,),
        needs=(binary,),
        hint="make stacks builds it; it needs Go",
        worker=role == "client",
    )


def _java(role: str) -> Program:
    target = STACKS / "grpc-java" / "target"
    jar = str(target / "kit-grpc-java.jar")
    # JVM flags (measured in stacks/grpc-java/README.md): the class-data-sharing archive its
    # build.sh trains (halves a client's start-up; missing, the JVM starts without it); JVM
    # warnings to stderr (HotSpot's unified logging writes them to stdout by default). A client
    # is a short process per cell: C1 only and the serial GC start quicker and, on two cores,
    # move more bytes in a 2-10 s cell than C2 still compiling.
    flags = [
        f"-XX:SharedArchiveFile={target / 'kit-grpc-java.jsa'}",
        "-Xlog:disable",
        "-Xlog:all=warning:stderr",
    ]
    if role == "client":
        flags += ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    return Program(
        ("java", *flags, "-jar", jar, role),
        needs=(jar,),
        hint="make stacks builds it; it needs JDK 17+ and Maven",
        worker=role == "client",
    )


def _js(role: str) -> Program:
    folder = STACKS / "grpc-js"
    script, modules = str(folder / f"{role}.js"), str(folder / "node_modules")
    return Program(
        ("node", script),
        needs=(script, modules),
        hint="make stacks installs it; it needs Node 20 and npm",
        worker=role == "client",
    )


def _rust(role: str) -> Program:
    binary = str(STACKS / "tonic" / "target" / "release" / f"kit-tonic-{role}")
    hint = "make stacks builds it; it needs Rust (cargo)"
    return Program((binary,), needs=(binary,), hint=hint, worker=role == "client")


CLIENT_PROGRAMS: dict[ClientKind, Program] = {
    "grpcio": Program.python_module("kit.clients.grpcio_client", worker=True),
    "h2": Program.python_module("kit.clients.h2", worker=True),
    "grpc-go": _go("client"),
    "grpc-java": _java("client"),
    "grpc-js": _js("client"),
    "tonic": _rust("client"),
}
SERVER_PROGRAMS: dict[ServerKind, Program] = {
    "grpcio": Program.python_module("servers.grpcio_server"),
    "grpc-go": _go("server"),
    "grpc-java": _java("server"),
    "grpc-js": _js("server"),
    "tonic": _rust("server"),
}
# The delay line: the compiled one (``linkd/``, built by ``make install`` where Rust is) and
# the Python one, its fallback and the reference of the schedule's vectors. Both speak the
# same process protocol, take the same ``ProxyJob`` and pass the same tests; the kit uses the
# compiled line wherever it is built (KIT_DELAYLINE=python or =compiled picks one).
LINKD_BINARY = str(REPO / "linkd" / "target" / "release" / "kit-linkd")
PROXY_PROGRAMS: dict[str, Program] = {
    "compiled": Program(
        (LINKD_BINARY,), needs=(LINKD_BINARY,), hint="make install builds it; it needs Rust (cargo)"
    ),
    "python": Program.python_module("kit.delayline"),
}
DELAYLINE_ENV = "KIT_DELAYLINE"


def proxy_choice(env: str | None = None, built: bool | None = None) -> tuple[str, str | None]:
    """Which delay line runs, and the one line that says why when it is not the compiled one
    (None when it is, or when the Python line was asked for)."""
    env = os.environ.get(DELAYLINE_ENV, "") if env is None else env
    if built is None:
        built = PROXY_PROGRAMS["compiled"].missing() is None
    if env in PROXY_PROGRAMS:
        return env, None
    if built:
        return "compiled", None
    return "python", (
        "note: the compiled delay line is not built (make install builds it; it needs Rust): "
        "using the Python delay line"
    )


def proxy_program() -> Program:
    """The delay line the kit starts now (asked at each start: KIT_DELAYLINE may change)."""
    return PROXY_PROGRAMS[proxy_choice()[0]]


def proxy_note() -> str | None:
    """The one line that says the Python line stands in for the compiled one, if it does."""
    return proxy_choice()[1]


# The packet link's forwarder: the compiled one (``kit-linkfwd``, built with the compiled
# delay line) and the Python one, its fallback and the reference of the packet vectors
# (``tests/vectors/packets.json``). Both take the same ``ForwarderJob`` and feed the same frame
# tap; KIT_DELAYLINE picks for both lines.
LINKFWD_BINARY = str(REPO / "linkd" / "target" / "release" / "kit-linkfwd")
FORWARDER_PROGRAMS: dict[str, Program] = {
    "compiled": Program(
        (LINKFWD_BINARY,), needs=(LINKFWD_BINARY,), hint="make install builds it; it needs Rust"
    ),
    "python": Program.python_module("kit.delayline.forwarder"),
}


def forwarder_choice(env: str | None = None, built: bool | None = None) -> tuple[str, str | None]:
    """Which forwarder runs the packet link, and the one line that says why when it is not
    the compiled one (None when it is, or when the Python one was asked for)."""
    env = os.environ.get(DELAYLINE_ENV, "") if env is None else env
    if built is None:
        built = FORWARDER_PROGRAMS["compiled"].missing() is None
    if env in FORWARDER_PROGRAMS:
        return env, None
    if built:
        return "compiled", None
    return "python", (
        "note: the compiled packet forwarder is not built (make install builds it; it needs "
        "Rust): using the Python forwarder"
    )


def forwarder_program() -> Program:
    """The packet link's forwarder the kit starts now (asked at each start)."""
    return FORWARDER_PROGRAMS[forwarder_choice()[0]]


# What a name alone does not say, for lists of stacks in help texts.
ABOUT: dict[str, str] = {"grpcio": "C-core", "h2": "ours: exact windows, models"}
CLIENT_KINDS: tuple[str, ...] = tuple(CLIENT_PROGRAMS)
SERVER_KINDS: tuple[str, ...] = tuple(SERVER_PROGRAMS)
# The stacks users run, each a client and a server program of its own (``stacks/``).
STACK_KINDS: tuple[str, ...] = tuple(k for k, p in SERVER_PROGRAMS.items() if p.needs)


def kinds_text(kinds: tuple[str, ...], default: str = "") -> str:
    """``grpcio (C-core), h2 (ours: exact windows, models), grpc-go, ...`` for help texts."""
    parts = []
    for kind in kinds:
        notes = [n for n in (ABOUT.get(kind, ""), "default" if kind == default else "") if n]
        parts.append(f"{kind} ({', '.join(notes)})" if notes else kind)
    return ", ".join(parts)
