"""The process protocol: how the kit talks to every process it starts, in any language.

Documented for implementers in ``docs/process-protocol.md``; this module is its one Python
implementation. Both sides use it: the child side (``child_main``, for the kit's own Python
server, delay line and clients) and the driver side (``kit.topology.processes.Child``).

- argv: ``<program> --config '<JSON>'``; the JSON is ``kit.results.codec.to_json`` of the
  process's config record (``ClientProcess``, ``ServerProcess``, ``ProxyConfig``).
- stdout carries protocol lines only, one JSON object each: first the ready line
  ``{"ready": true, "pid": P, "port": N, "stack": S, "version": V}``, last one final line,
  ``{"result": {...}}`` or ``{"error": "<one line>", "exit_code": N}``.
- exit codes: 0 done; 1 failed unexpectedly; 2 bad config; 3 cannot start (e.g. cannot
  listen); 4 the measurement failed (unreachable target, timeout, protocol error);
  128 + N stopped by signal N before it was done.
- SIGTERM/SIGINT: a client stops at once (error line, exit 128 + N); a server or delay line
  stops serving, writes its result line and exits 0.
- stderr is free-form text for people; the driver quotes its last lines when a process fails
  without an error line.

Pure except for ``child_main`` and ``emit``, which are the child's thin IO shell.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kit.errors import Interrupted, KitError, MeasurementError, TopologyError, UsageError
from kit.plan.trial import Link, Workload
from kit.results.codec import from_json, to_json

T = TypeVar("T")
CONFIG_FLAG = "--config"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_CONFIG = UsageError.exit_code
EXIT_CANNOT_START = TopologyError.exit_code
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


# --- the lines -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    """The first line: the process is up. ``port`` is where a server or delay line listens
    (0 for a client); ``stack`` and ``version`` name the implementation (``grpcio 1.85.1``)."""

    pid: int
    port: int = 0
    stack: str = ""
    version: str = ""

    @property
    def label(self) -> str:
        """ "grpc-go 1.85.0": what a record's meta says ran."""
        return f"{self.stack} {self.version}".strip()


@dataclass(frozen=True)
class Failure:
    """A final error line: one line of text and the exit code that follows it."""

    error: str
    exit_code: int


@dataclass(frozen=True)
class Result:
    """A final result line; ``data`` is still JSON (the driver decodes it as it expects)."""

    data: Any


Line = Ready | Failure | Result


def one_line(text: str) -> str:
    """Any message as one line of text (an error line never spans two)."""
    return " ".join(text.split())


def ready_line(ready: Ready) -> str:
    return json.dumps({"ready": True, **to_json(ready)})


def result_line(value: Any) -> str:
    return json.dumps({"result": to_json(value)}, separators=(",", ":"))


def failure_line(error: str, exit_code: int) -> str:
    return json.dumps({"error": one_line(error) or "failed", "exit_code": exit_code})


def parse_line(text: str) -> Line:
    """One stdout line -> its typed form; ``UsageError`` when it is not a protocol line."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise UsageError(f"not a protocol line: {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise UsageError(f"not a protocol line: {text[:200]!r}")
    if data.get("ready") is True:
        fields = {k: v for k, v in data.items() if k != "ready"}
        return from_json(Ready, fields, "ready line")
    if "result" in data and len(data) == 1:
        return Result(data["result"])
    if set(data) == {"error", "exit_code"}:
        return from_json(Failure, data, "error line")
    raise UsageError(f"not a protocol line: {text[:200]!r}")


def error_for(failure: Failure) -> KitError:
    """The kit's own error for a child's error line, by its exit code."""
    kinds: dict[int, type[KitError]] = {
        EXIT_BAD_CONFIG: UsageError,
        EXIT_CANNOT_START: TopologyError,
    }
    return kinds.get(failure.exit_code, MeasurementError)(failure.error)


# --- the config argument -------------------------------------------------------------------


# Link fields newer than the stacks' programs (the packet link's, rate steps): those programs
# decode a trial's link strictly, and at their defaults these change nothing for them, so a
# link that does not use them is sent as before; one that does is refused by the program.
LATER_LINK_FIELDS: tuple[str, ...] = (
    "kind",
    "loss",
    "loss_burst_len",
    "queue_bytes",
    "mtu",
    "congestion",
    "rate_steps",
)


# The workload's fields that came later still (only the h2 client reads them).
LATER_WORKLOAD_FIELDS = ("prime_bytes", "idle_s")


def as_sent(data: Any) -> Any:
    """A config's JSON as it is handed to a process (the link's and the workload's later
    fields left out at their defaults, so every stack's program reads what it always has)."""
    trial = data.get("trial", {}) if isinstance(data, dict) else {}
    for part, later, default in (
        ("link", LATER_LINK_FIELDS, Link()),
        ("workload", LATER_WORKLOAD_FIELDS, Workload()),
    ):
        value = trial.get(part) if isinstance(trial, dict) else None
        if isinstance(value, dict):
            defaults = to_json(default)
            for name in later:
                if name in value and value[name] == defaults[name]:
                    del value[name]
    return data


def config_argv(config: Any) -> list[str]:
    """The arguments that hand ``config`` to a process: ``--config '<JSON>'``."""
    return [CONFIG_FLAG, json.dumps(as_sent(to_json(config)), separators=(",", ":"))]


def parse_config_argv(argv: Sequence[str], cls: type[T], what: str) -> T:
    """``--config JSON`` (or ``--config=JSON``) -> a validated ``cls``; ``UsageError`` if not."""
    args = list(argv)
    if len(args) == 1 and args[0].startswith(CONFIG_FLAG + "="):
        text = args[0][len(CONFIG_FLAG) + 1 :]
    elif len(args) == 2 and args[0] == CONFIG_FLAG:
        text = args[1]
    else:
        raise UsageError(
            f"usage: {CONFIG_FLAG} '<{cls.__name__} as JSON>' (got {len(args)} argument(s))"
        )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{CONFIG_FLAG}: not JSON ({exc})") from None
    return from_json(cls, data, what)


# --- the child side (the kit's own Python processes) ----------------------------------------


def emit(line: str) -> None:
    """Write one protocol line. A driver that is gone (a closed pipe) is not an error here."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _raise_interrupted(signum: int, _frame: object) -> None:
    raise Interrupted(signum, signal.Signals(signum).name)


def interrupt_on_signals() -> None:
    """SIGTERM/SIGINT raise ``Interrupted`` in the main thread (a server replaces these with
    its own, graceful, handlers once it serves)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _raise_interrupted)


Body = Callable[[T, Callable[[int], None]], Any]


def child_main(
    cls: type[T],
    body: Body[T],
    stack: str,
    version: str,
    argv: Sequence[str] | None = None,
) -> int:
    """Run one process by the protocol: parse ``--config``, call ``body(config, ready)``,
    where ``ready(port)`` prints the ready line, then print its return value as the result
    line. Errors become one error line and their exit code; never a traceback."""
    interrupt_on_signals()
    pid = os.getpid()
    announced = False

    def ready(port: int) -> None:
        nonlocal announced
        announced = True
        emit(ready_line(Ready(pid=pid, port=port, stack=stack, version=version)))

    try:
        config = parse_config_argv(sys.argv[1:] if argv is None else argv, cls, cls.__name__)
        result = body(config, ready)
    except Interrupted as stopped:
        return _fail(f"interrupted by {stopped.signal_name}", stopped.exit_code)
    except KitError as exc:
        return _fail(str(exc), exc.exit_code)
    except Exception as exc:  # the contract: one line, no traceback
        code = EXIT_FAILED if announced else EXIT_CANNOT_START
        return _fail(f"{type(exc).__name__}: {exc}", code)
    emit(result_line(result))
    return EXIT_OK


def _fail(message: str, exit_code: int) -> int:
    emit(failure_line(message, exit_code))
    return exit_code
