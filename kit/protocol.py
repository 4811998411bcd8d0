"""The process protocol: how the kit talks to every process it starts, in any language.

Documented for implementers in ``docs/process-protocol.md``; this module is its one Python
implementation. Both sides use it: the child side (``child_main``, for the kit's own Python
server, delay line and clients) and the driver side (``kit.topology.processes.Child``).

- argv: ``<program> --config '<JSON>'``. The JSON is the program's job (``ClientJob`` /
  ``ServerJob`` / ``ProxyJob`` of ``protos/worker.proto``, built by ``kit.plan.jobs``, in
  protobuf's canonical JSON). A delay line reads its link's changes from stdin, one
  ``LinkJob`` per line, and answers each, once applied, with ``{"changed": N}`` (N: changes
  so far) on stdout.
- a client worker: ``<program> --worker``; its ready line says ``"worker": true``, then each
  line of stdin is one ``ClientJob`` and gets exactly one result line (with
  ``"client_trial": N``, 1 = its first) or one error line, after which it exits with that
  code; stdin's end -> exit 0.
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from google.protobuf.message import Message

from kit.errors import Interrupted, KitError, MeasurementError, TopologyError, UsageError
from kit.plan.jobs import (
    client_job,
    forwarder_job,
    job_text,
    parse_job,
    proxy_job,
    server_job,
)
from kit.plan.packet import ForwarderConfig
from kit.plan.processes import ClientProcess, ProxyConfig, ServerProcess
from kit.results.codec import from_json, to_json
from kit.results.wire import WIRE_RESULTS, result_json, result_record

T = TypeVar("T")
CONFIG_FLAG = "--config"
WORKER_FLAG = "--worker"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_CONFIG = UsageError.exit_code
EXIT_CANNOT_START = TopologyError.exit_code
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


# --- the lines -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    """The first line: the process is up. ``port`` is where a server or delay line listens
    (0 for a client); ``stack`` and ``version`` name the implementation (``grpcio 1.85.1``);
    ``worker``: a client worker, reading one trial per line of stdin."""

    pid: int
    port: int = 0
    stack: str = ""
    version: str = ""
    worker: bool = False

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
    """A final result line; ``data`` is still JSON (the driver decodes it as it expects).
    ``client_trial``: which trial of a client worker it is (1 = its first; 0: not a worker)."""

    data: Any
    client_trial: int = 0


@dataclass(frozen=True)
class Changed:
    """A delay line's answer to a ``LinkJob`` on its stdin: applied; ``changes`` so far."""

    changes: int


Line = Ready | Failure | Result | Changed


def one_line(text: str) -> str:
    """Any message as one line of text (an error line never spans two)."""
    return " ".join(text.split())


def ready_line(ready: Ready) -> str:
    fields = to_json(ready)
    if not ready.worker:  # the line every process printed before workers existed
        del fields["worker"]
    return json.dumps({"ready": True, **fields})


def result_line(value: Any, client_trial: int = 0) -> str:
    line: dict[str, Any] = {"result": result_data(value)}
    if client_trial:
        line["client_trial"] = client_trial
    return json.dumps(line, separators=(",", ":"))


def changed_line(changes: int) -> str:
    return json.dumps({"changed": changes})


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
    if "result" in data and set(data) <= {"result", "client_trial"}:
        trial = data.get("client_trial", 0)
        if type(trial) is not int or trial < 0:
            raise UsageError(f"not a protocol line (client_trial {trial!r}): {text[:200]!r}")
        return Result(data["result"], trial)
    if set(data) == {"error", "exit_code"}:
        return from_json(Failure, data, "error line")
    if set(data) == {"changed"} and type(data["changed"]) is int:
        return Changed(data["changed"])
    raise UsageError(f"not a protocol line: {text[:200]!r}")


def error_for(failure: Failure) -> KitError:
    """The kit's own error for a child's error line, by its exit code."""
    kinds: dict[int, type[KitError]] = {
        EXIT_BAD_CONFIG: UsageError,
        EXIT_CANNOT_START: TopologyError,
    }
    return kinds.get(failure.exit_code, MeasurementError)(failure.error)


# --- the config argument -------------------------------------------------------------------


def config_text(config: Any) -> str:
    """``config`` as one line of JSON: a client's, server's, delay line's or forwarder's job
    (``kit.plan.jobs``: the worker contract's canonical JSON), or the codec's form of any
    other record."""
    if isinstance(config, ClientProcess):
        config = client_job(config)
    elif isinstance(config, ServerProcess):
        config = server_job(config)
    elif isinstance(config, ProxyConfig):
        config = proxy_job(config)
    elif isinstance(config, ForwarderConfig):
        config = forwarder_job(config)
    if isinstance(config, Message):
        return job_text(config)
    return json.dumps(to_json(config), separators=(",", ":"))


def config_argv(config: Any) -> list[str]:
    """The arguments that hand ``config`` to a process: ``--config '<JSON>'``."""
    return [CONFIG_FLAG, config_text(config)]


def config_line(config: Any) -> str:
    """``config`` as a worker takes it: one line of JSON on its stdin."""
    return config_text(config)


def parse_config_argv(argv: Sequence[str], cls: type[T], who: str) -> T:
    """``--config JSON`` (or ``--config=JSON``) -> a ``cls``; ``UsageError`` if not."""
    args = list(argv)
    if len(args) == 1 and args[0].startswith(CONFIG_FLAG + "="):
        text = args[0][len(CONFIG_FLAG) + 1 :]
    elif len(args) == 2 and args[0] == CONFIG_FLAG:
        text = args[1]
    else:
        raise UsageError(
            f"{who}: usage: {CONFIG_FLAG} '<{cls.__name__} as JSON>' (got {len(args)} argument(s))"
        )
    return parse_config(text, cls, who, CONFIG_FLAG)


def parse_config(text: str, cls: type[T], who: str, source: str) -> T:
    """One config as JSON text (``--config``'s, or a worker's line) -> a ``cls``: a job
    decoded by the protobuf library, or a record of the kit's own by its codec."""
    if issubclass(cls, Message):
        job: Any = parse_job(text, cls(), f"{who}: {source}")
        return cast(T, job)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{who}: {source}: not JSON ({exc})") from None
    return from_json(cls, data, who)


def result_data(value: Any) -> Any:
    """A final result as JSON: a client's or server's through its worker-contract message."""
    return result_json(value) if isinstance(value, WIRE_RESULTS) else to_json(value)


def decode_result(cls: type[T], data: Any, where: str) -> T:
    """A result line's data as the kit's ``cls`` record (``UsageError`` if it does not fit)."""
    if cls in WIRE_RESULTS:
        record: Any = result_record(cls, data, where)
        return cast(T, record)
    return from_json(cls, data, where)


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
    who: str = "",
) -> int:
    """Run one process by the protocol: parse ``--config``, call ``body(config, ready)``,
    where ``ready(port)`` prints the ready line, then print its return value as the result
    line. Errors become one error line and their exit code; never a traceback. ``who`` names
    the process in a bad config's line (``h2 client``)."""
    interrupt_on_signals()
    pid = os.getpid()
    announced = False

    def ready(port: int) -> None:
        nonlocal announced
        announced = True
        emit(ready_line(Ready(pid=pid, port=port, stack=stack, version=version)))

    def run() -> None:
        args = sys.argv[1:] if argv is None else argv
        config = parse_config_argv(args, cls, who or cls.__name__)
        emit(result_line(body(config, ready)))

    return _guarded(run, lambda: announced)


def worker_main(
    cls: type[T],
    run: Callable[[T], Any],
    stack: str,
    version: str,
    lines: Iterable[bytes],
    who: str = "",
) -> int:
    """A client worker by the protocol: the ready line (``"worker": true``), then for each
    line of ``lines`` (stdin's bytes) one config, ``run(config)``, one result line numbered
    by its trial. The first error ends it, a bad line too (not UTF-8 included): one error
    line and its exit code (2 for a bad line). The end of ``lines`` is the worker's normal
    end (exit 0)."""
    interrupt_on_signals()
    emit(ready_line(Ready(pid=os.getpid(), stack=stack, version=version, worker=True)))
    name = who or cls.__name__

    def serve() -> None:
        trials = 0
        for raw in lines:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise UsageError(f"{name}: worker line: not UTF-8") from None
            if not text.strip():
                continue
            config = parse_config(text, cls, name, "worker line")
            trials += 1
            emit(result_line(run(config), trials))

    return _guarded(serve, lambda: True)


def _guarded(work: Callable[[], None], announced: Callable[[], bool]) -> int:
    """``work()``'s exit code: 0, or that of the one error line it ended with."""
    try:
        work()
    except Interrupted as stopped:
        return _fail(f"interrupted by {stopped.signal_name}", stopped.exit_code)
    except KitError as exc:
        return _fail(str(exc), exc.exit_code)
    except Exception as exc:  # the contract: one line, no traceback
        code = EXIT_FAILED if announced() else EXIT_CANNOT_START
        return _fail(f"{type(exc).__name__}: {exc}", code)
    return EXIT_OK


def _fail(message: str, exit_code: int) -> int:
    emit(failure_line(message, exit_code))
    return exit_code
