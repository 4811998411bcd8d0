"""Running the ``kit`` command from tests: as a real process, or in this process.

``kit(...)`` starts ``python -m kit.cli`` exactly as a user's shell would (the entry point, the
signal handlers, every child process). ``kit_here(...)`` calls the same ``main`` in this
process, for commands that end before measuring anything (bad input, ``--help``, rendering
records): it checks the same exit code and the same stdout/stderr text without paying a Python
start-up (about 0.7 s of imports) per call. Both return a ``CompletedProcess``.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import psutil

from kit.cli import main

REPO = Path(__file__).resolve().parents[2]


def kit(
    *args: str,
    timeout_s: float = 90.0,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``kit ARGS...`` as its own process (cwd: the repository unless given)."""
    return subprocess.run(
        [sys.executable, "-m", "kit.cli", *args],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        env=None if env is None else dict(env),
    )


def kit_here(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``kit ARGS...`` through the same ``main`` in this process (no measurement may start)."""
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with (
        _argv(["kit", *args]),
        _kept_signal_handlers(),
        _environment(env),
        contextlib.chdir(cwd or REPO),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code
    if not isinstance(code, int):  # sys.exit("text") prints the text and exits 1
        if code is not None:
            err.write(f"{code}\n")
        code = 0 if code is None else 1
    return subprocess.CompletedProcess(["kit", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    """``sys.argv`` as the ``kit`` script sees it: usage lines name ``kit``."""
    saved, sys.argv = sys.argv, argv
    try:
        yield
    finally:
        sys.argv = saved


@contextlib.contextmanager
def _kept_signal_handlers() -> Iterator[None]:
    """``main`` installs the kit's SIGINT/SIGTERM handlers; the test runner's come back after."""
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """Run with exactly ``env`` as the environment (None: leave it as it is)."""
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def child_of(
    kit_pid: int, needle: str, timeout_s: float, not_pid: int | None = None
) -> psutil.Process:
    """The first process below ``kit_pid`` whose command line holds ``needle`` (bounded wait)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for proc in psutil.Process(kit_pid).children(recursive=True):
            try:
                if proc.pid != not_pid and needle in " ".join(proc.cmdline()):
                    return proc
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no {needle} process within {timeout_s} s")


def nth_connection(client: psutil.Process, n: int, timeout_s: float) -> None:
    """Wait (bounded) until ``client`` has opened its ``n``-th TCP connection: a client worker
    runs the warm-up trial and then the measured one, each on a connection of its own."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while len(seen) < n and time.monotonic() < deadline:
        try:
            conns = client.net_connections(kind="tcp")
        except psutil.Error as exc:
            raise AssertionError(f"the client (pid {client.pid}) is gone: {exc}") from None
        seen |= {c.laddr.port for c in conns if c.raddr and c.status == psutil.CONN_ESTABLISHED}
        time.sleep(0.005)
    assert len(seen) >= n, f"the client opened {len(seen)} connection(s) within {timeout_s} s"
