"""Child processes the kit starts: spawn, wait for the ready line, stop. Nothing else.

Every child runs in its own session (so a terminal's Ctrl-C reaches only the kit, which
then stops them in order) and gets PR_SET_PDEATHSIG (so even a SIGKILLed kit leaves no
orphan on Linux). ``stop`` sends SIGTERM, waits, then SIGKILLs.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any

from kit.errors import TopologyError
from kit.plan.units import MIB

READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 3.0
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


@dataclass
class Child:
    role: str
    popen: subprocess.Popen[str]
    stderr_file: IO[str]
    ready: dict[str, Any]

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def port(self) -> int:
        return int(self.ready.get("port", 0))

    def stderr_tail(self, lines: int = 5) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.stderr_file.flush()
            self.stderr_file.seek(0)
            return " | ".join(self.stderr_file.read().strip().splitlines()[-lines:])
        return ""


def spawn(
    role: str,
    module_args: list[str],
    *,
    wait_ready: bool = True,
    timeout_s: float = READY_TIMEOUT_S,
) -> Child:
    """Start ``python -m ...`` as its own process; with wait_ready, wait for its ready line."""
    # Closed by the owner after stop(): its tail explains a failed start.
    stderr_file = tempfile.TemporaryFile(mode="w+", prefix=f"kit-{role}-")  # noqa: SIM115
    popen = subprocess.Popen(
        [sys.executable, "-m", *module_args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        text=True,
        env={**os.environ, **CHILD_ENV},
        start_new_session=True,
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )
    child = Child(role, popen, stderr_file, {})
    if wait_ready:
        try:
            child.ready = _await_ready(child, timeout_s)
        except BaseException:
            stop(child)
            raise
    return child


def _await_ready(child: Child, timeout_s: float) -> dict[str, Any]:
    line = read_line(child, timeout_s)
    if line is None:
        reason = (
            "exited" if child.popen.poll() is not None else f"no ready line within {timeout_s:g} s"
        )
        tail = child.stderr_tail()
        raise TopologyError(
            f"{child.role} failed to start: {reason}" + (f" ({tail})" if tail else "")
        )
    try:
        ready = json.loads(line)
    except json.JSONDecodeError:
        raise TopologyError(
            f"{child.role} failed to start: unexpected output {line[:200]!r}"
        ) from None
    if not ready.get("ready"):
        raise TopologyError(f"{child.role} failed to start: {ready.get('error', 'unknown reason')}")
    return dict(ready)


def read_line(child: Child, timeout_s: float) -> str | None:
    """One stdout line, or None on EOF/timeout (bounded by the deadline)."""
    assert child.popen.stdout is not None
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(child.popen.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if sel.select(timeout=min(left, 0.5)):
                line = child.popen.stdout.readline()
                return line.strip() or None
            if child.popen.poll() is not None:
                return None
    return None


def communicate(child: Child, timeout_s: float) -> str:
    """Wait for the child to finish; return its stdout. Kills it past the deadline."""
    try:
        out, _ = child.popen.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop(child)
        raise
    return out or ""


def stop(child: Child, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
    """SIGTERM, wait, SIGKILL. Only ever signals the process we started.

    SIGCONT follows SIGTERM: a stopped child (SIGSTOP, a debugger, a frozen server in a test)
    acts on SIGTERM only once continued, and would otherwise cost the whole wait."""
    popen = child.popen
    if popen.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            popen.send_signal(signal.SIGTERM)
            popen.send_signal(signal.SIGCONT)
        try:
            popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                popen.kill()
            popen.wait(timeout=timeout_s)
    for stream in (popen.stdout,):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return popen.returncode
