"""The one child-process type: start a process by the protocol, wait for its ready line,
read its final line, stop it. Every server, delay line and client goes through ``Child``.

The protocol itself (argv, lines, exit codes) is ``kit.protocol``. Every child runs
in its own session (so a terminal's Ctrl-C reaches only the kit, which then stops them in
order) and gets PR_SET_PDEATHSIG (so even a SIGKILLed kit leaves no orphan on Linux).
``stop`` sends SIGTERM, waits, then SIGKILLs. stdout is read from the raw pipe, line by
line, with deadlines: a child can neither block the kit nor hide a line in a buffer.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import IO, Any, TypeVar

from kit.errors import KitError, MeasurementError, TopologyError, UsageError
from kit.plan.programs import Program
from kit.plan.units import MIB
from kit.protocol import (
    WORKER_FLAG,
    Changed,
    Failure,
    Line,
    Ready,
    Result,
    config_argv,
    config_line,
    decode_result,
    error_for,
    parse_line,
)

T = TypeVar("T")
READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 3.0
DRAIN_S = 0.5  # after exit, how long a child's last bytes may take to arrive
CHANGE_TIMEOUT_S = 2.0
_PR_SET_PDEATHSIG = 1

# glibc maps every buffer >= 128 KiB separately by default; raising the thresholds halved
# the per-byte cost of the Python processes on the measurement path (measured here).
CHILD_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(64 * MIB),
    "MALLOC_TRIM_THRESHOLD_": str(128 * MIB),
    "PYTHONUNBUFFERED": "1",
    "GRPC_VERBOSITY": "NONE",
}


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Child:
    """One process the kit started and speaks to by the protocol."""

    def __init__(self, role: str, popen: subprocess.Popen[bytes], stderr_file: IO[str]) -> None:
        self.role, self.popen, self.stderr_file = role, popen, stderr_file
        self.ready: Ready | None = None
        # Every protocol line read so far, in order (a delay line's ``changed`` lines only count).
        self.lines: list[Ready | Failure | Result] = []
        self.unexpected: list[str] = []  # stdout lines that were not protocol lines
        self._pending = b""
        self._eof = False
        self.changes = 0  # link changes a delay line said it applied (``change``)

    @classmethod
    def start(cls, role: str, program: Program, config: Any, *, foreground: bool = False) -> Child:
        """Start ``program --config <config as JSON>`` (a client's, server's or delay line's
        record goes as its job, ``kit.plan.jobs``); its ready line is not awaited here.
        ``foreground``: stdin a pipe (``send`` gives it a line: a delay line's link change)
        and stderr the kit's own, for a person to read as it comes.
        ``TopologyError`` when the program is not there to start (not built)."""
        if foreground:
            return cls._start(role, program, config_argv(config), subprocess.PIPE, inherit=True)
        return cls._start(role, program, config_argv(config), subprocess.DEVNULL)

    @classmethod
    def start_worker(cls, role: str, program: Program) -> Child:
        """Start ``program --worker``: its configs go one per line to its stdin (``send``)."""
        return cls._start(role, program, [WORKER_FLAG], subprocess.PIPE)

    @classmethod
    def _start(
        cls, role: str, program: Program, args: list[str], stdin: int, inherit: bool = False
    ) -> Child:
        why = program.missing()
        if why is not None:
            raise TopologyError(f"{role} cannot start: {why}")
        # Closed by close(): its tail explains a failed start (empty when ``inherit``).
        stderr_file = tempfile.TemporaryFile(mode="w+", prefix=f"kit-{role}-")  # noqa: SIM115
        popen = subprocess.Popen(
            [*program.argv, *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=None if inherit else stderr_file,
            env={**os.environ, **CHILD_ENV},
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        return cls(role, popen, stderr_file)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def port(self) -> int:
        return 0 if self.ready is None else self.ready.port

    @property
    def final(self) -> Result | Failure | None:
        """The final line (a result or an error), once read."""
        last = self.lines[-1] if self.lines else None
        return None if isinstance(last, Ready) or last is None else last

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> Ready:
        """The ready line, or ``TopologyError`` (the error line's reason, or what went wrong)."""
        deadline = time.monotonic() + timeout_s
        while not self.lines and not self._eof and time.monotonic() < deadline:
            self._read(deadline)
        first = self.lines[0] if self.lines else None
        if isinstance(first, Ready):
            self.ready = first
            return first
        raise TopologyError(f"{self.role} failed to start: {self._why_not(first, timeout_s)}")

    def _why_not(self, first: Line | None, timeout_s: float) -> str:
        if isinstance(first, Failure):
            return first.error
        if isinstance(first, Result):
            return "a result line before its ready line"
        if self.unexpected:
            return f"unexpected output {self.unexpected[0][:200]!r}"
        reason = (
            "exited" if self.popen.poll() is not None else f"no ready line within {timeout_s:g} s"
        )
        tail = self.stderr_tail()
        return reason + (f" ({tail})" if tail else "")

    def finish(
        self, timeout_s: float, abandon: Callable[[], str] | None = None
    ) -> Result | Failure | None:
        """Wait for the process to end by itself (a client); its final line, if it wrote one.
        Past the deadline it is stopped and ``MeasurementError`` says so; likewise as soon as
        ``abandon()`` gives a reason (a process it depends on died: why wait for its own
        timeouts to notice)."""
        deadline = time.monotonic() + timeout_s
        self._read_until(lambda: False, deadline, abandon)
        if self.popen.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
        if self.popen.poll() is None:
            self.stop()
            raise MeasurementError(f"{self.role} timed out after {timeout_s:g} s and was stopped")
        return self.final

    def _read_until(
        self, done: Callable[[], bool], deadline: float, abandon: Callable[[], str] | None
    ) -> None:
        """Read lines until ``done()``, the end of stdout, the process's exit or the deadline;
        once ``abandon()`` gives a reason the process is stopped and ``MeasurementError`` says
        why."""
        while not done() and not self._eof and time.monotonic() < deadline:
            self._read(deadline)
            if done():
                break
            if self.popen.poll() is not None:
                self._drain()
                break
            reason = abandon() if abandon is not None else ""
            if reason:
                self.stop()
                raise MeasurementError(f"{self.role} stopped: {reason}")

    def result(self, cls: type[T], timeout_s: float, abandon: Callable[[], str] | None = None) -> T:
        """``finish``, then the result line decoded as ``cls``; a failure becomes the kit's own
        error for its exit code (``MeasurementError`` when the child said nothing)."""
        return self.decoded(self.finish(timeout_s, abandon), cls)

    def decoded(self, final: Result | Failure | None, cls: type[T]) -> T:
        """A final line's result as ``cls``; an error line, a malformed result or none at all
        (it exited) as the kit's own error."""
        if isinstance(final, Result):
            try:
                return decode_result(cls, final.data, f"{self.role} result")
            except UsageError as exc:
                raise MeasurementError(f"the {self.role}'s result is malformed: {exc}") from None
        if isinstance(final, Failure):
            raise error_for(final)
        reason = self.stderr_tail() or f"{self.role} exited with code {self.popen.poll()}"
        raise MeasurementError(reason)

    def send(self, config: Any) -> None:
        """One config to a worker, as one line on its stdin; ``MeasurementError`` when the
        worker no longer reads (it exited)."""
        stdin = self.popen.stdin
        if stdin is None:
            raise MeasurementError(f"the {self.role} takes no configs on stdin")
        try:
            stdin.write(config_line(config).encode() + b"\n")
            stdin.flush()
        except (OSError, ValueError) as exc:
            raise MeasurementError(f"the {self.role} (pid {self.pid}) is gone: {exc}") from None

    def change(self, link_job: Any, timeout_s: float = CHANGE_TIMEOUT_S) -> None:
        """A delay line's new link, on its stdin; returns once the line says it applies it
        (``MeasurementError`` if it does not within ``timeout_s``)."""
        before = self.changes
        self.send(link_job)
        deadline = time.monotonic() + timeout_s
        while self.changes == before and not self._eof and time.monotonic() < deadline:
            self._read(deadline, poll_s=0.05)
        if self.changes == before:
            raise MeasurementError(
                f"the {self.role} did not apply the change within {timeout_s:g} s"
            )

    def next_final(
        self, seen: int, timeout_s: float, abandon: Callable[[], str] | None = None
    ) -> Result | Failure | None:
        """A worker's answer: the first line after the ``seen`` lines read before its config
        went out (None: it exited without one). Past the deadline, or once ``abandon()``
        gives a reason, it is stopped and ``MeasurementError`` says so."""
        deadline = time.monotonic() + timeout_s
        self._read_until(lambda: len(self.lines) > seen, deadline, abandon)
        if len(self.lines) > seen:
            line = self.lines[seen]
            return None if isinstance(line, Ready) else line
        if self.popen.poll() is None and not self._eof:
            self.stop()
            raise MeasurementError(f"{self.role} timed out after {timeout_s:g} s and was stopped")
        return None

    def end_input(self) -> None:
        """Close a worker's stdin: its normal end (it exits 0 once its trial is done)."""
        if self.popen.stdin is not None:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM, wait, SIGKILL; reads what it wrote meanwhile. Only ever signals the process
        we started. SIGCONT follows SIGTERM: a stopped child (SIGSTOP, a debugger, a frozen
        server in a test) acts on SIGTERM only once continued, and would cost the whole wait."""
        popen = self.popen
        if popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                popen.send_signal(signal.SIGTERM)
                popen.send_signal(signal.SIGCONT)
            deadline = time.monotonic() + timeout_s
            try:
                self._read_until_exit(deadline)
                popen.wait(timeout=max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    popen.kill()
                popen.wait(timeout=timeout_s)
        self._drain()
        for pipe in (popen.stdout, popen.stdin):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        return popen.returncode

    def close(self) -> None:
        """Stop it if it still runs, and let go of its stderr file."""
        try:
            self.stop()
        finally:
            self.stderr_file.close()

    def stderr_tail(self, lines: int = 5) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.stderr_file.flush()
            self.stderr_file.seek(0)
            return " | ".join(self.stderr_file.read().strip().splitlines()[-lines:])
        return ""

    # -- reading stdout -------------------------------------------------------------------

    def _read_until_exit(self, deadline: float) -> None:
        while self.popen.poll() is None and not self._eof and time.monotonic() < deadline:
            self._read(deadline)

    def _drain(self) -> None:
        """What an exited child wrote last (bounded: a grandchild may hold the pipe open)."""
        deadline = time.monotonic() + DRAIN_S
        while not self._eof and time.monotonic() < deadline:
            self._read(deadline, poll_s=0.05)

    def _read(self, deadline: float, poll_s: float = 0.2) -> None:
        """Read what is there (waiting up to ``poll_s``), and parse every whole line."""
        stdout = self.popen.stdout
        if stdout is None or stdout.closed or self._eof:
            self._eof = True
            return
        wait_s = max(0.0, min(poll_s, deadline - time.monotonic()))
        with selectors.DefaultSelector() as sel:
            sel.register(stdout, selectors.EVENT_READ)
            if not sel.select(timeout=wait_s):
                return
        chunk = os.read(stdout.fileno(), 1 << 16)
        if not chunk:
            self._eof = True
        self._pending += chunk
        *whole, self._pending = self._pending.split(b"\n")
        if self._eof and self._pending:
            whole, self._pending = [*whole, self._pending], b""
        for raw in whole:
            self._take(raw.decode("utf-8", errors="replace").strip())

    def _take(self, text: str) -> None:
        if not text:
            return
        try:
            line = parse_line(text)
        except KitError:
            self.unexpected.append(text)
            return
        if isinstance(line, Changed):
            self.changes = line.changes
            return
        self.lines.append(line)
        if isinstance(line, Ready) and self.ready is None and len(self.lines) == 1:
            self.ready = line  # also when read by ``finish`` without ``wait_ready``


def spawn(
    role: str,
    program: Program,
    config: Any,
    *,
    timeout_s: float = READY_TIMEOUT_S,
    foreground: bool = False,
) -> Child:
    """Start a server or delay line and wait for its ready line (stopped again if it fails)."""
    child = Child.start(role, program, config, foreground=foreground)
    try:
        child.wait_ready(timeout_s)
    except BaseException:
        child.close()
        raise
    return child
