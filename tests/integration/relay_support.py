"""Helpers shared by the relay fault and load tests (loopback only, every wait bounded).

Each delay-line test runs on both lines (the ``line`` fixture of ``conftest.py``): the
Python one in this process (``DelayLine``, its counters live) and the compiled one as a
process (``kit-linkd``), each behind the same ``LineHandle``: its port, the connections open
now (``active``), and once stopped its ``totals``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from kit.capture.tapfile import TapLine, parse_tap_lines
from kit.delayline.relay import DelayLine
from kit.plan.processes import ProxyConfig
from kit.plan.programs import PROXY_PROGRAMS, Program
from kit.plan.trial import Link
from kit.protocol import config_argv
from kit.results.records import ProxyTotals
from kit.topology.awake import KeepAwake
from kit.topology.processes import Child, spawn

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def run(coro: Coroutine[Any, Any, T], timeout_s: float = 30.0) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout_s))


@contextlib.asynccontextmanager
async def upstream(handler: Handler, port: int = 0) -> AsyncIterator[int]:
    server = await asyncio.start_server(
        handler, "127.0.0.1", port, backlog=1024, reuse_address=True
    )
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


LINK_FIELDS = frozenset(f.name for f in dataclasses.fields(Link))


def proxy_config(**options: Any) -> ProxyConfig:
    """``ProxyConfig`` from flat keyword arguments: the link's own (``delay_up_ms``,
    ``jitter_ms``...) go into its ``Link``."""
    link = Link(**{k: v for k, v in options.items() if k in LINK_FIELDS})
    return ProxyConfig(link=link, **{k: v for k, v in options.items() if k not in LINK_FIELDS})


class LineHandle:
    """A running delay line of either kind: ``port``, ``active`` (connections open now) and,
    once its block ended, ``totals``; ``python`` is the in-process ``DelayLine`` (None for the
    compiled line), for the few checks of the Python line's own machinery."""

    def __init__(self, kind: str, port: int, python: DelayLine | None, child: Child | None):
        self.kind, self.port, self.python, self.child = kind, port, python, child
        self._totals: ProxyTotals | None = None

    @property
    def active(self) -> int:
        if self.python is not None:
            return self.python.stats.active
        assert self.child is not None
        return tcp_connections(self.child.pid)

    @property
    def totals(self) -> ProxyTotals:
        assert self._totals is not None, "totals exist once the line stopped"
        return self._totals

    @property
    def pid(self) -> int:
        return os.getpid() if self.child is None else self.child.pid


def tcp_connections(pid: int) -> int:
    """Relayed connections a process holds open: its TCP sockets that do not listen, two per
    connection (one while it dials, or after its upstream refused)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    sockets = 0
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = row.split()
                if fields[9] in inodes and fields[3] != "0A":  # 0A: LISTEN
                    sockets += 1
    return (sockets + 1) // 2


@contextlib.asynccontextmanager
async def delay_line(
    upstream_port: int, line: str = "python", **options: Any
) -> AsyncIterator[LineHandle]:
    """The delay line ``line`` ("python" or "compiled") in front of ``upstream_port``."""
    config = proxy_config(upstream_port=upstream_port, **options)
    if line == "python":
        proxy = DelayLine(config)
        await proxy.start()
        handle = LineHandle(line, proxy.port, proxy, None)
        try:
            yield handle
        finally:
            await proxy.aclose()
            handle._totals = proxy.stats.totals()
        return
    child = await asyncio.to_thread(spawn, "proxy", PROXY_PROGRAMS[line], config)
    handle = LineHandle(line, child.port, None, child)
    try:
        yield handle
    finally:
        # Stopped off the event loop: the line flushes to this test's sockets meanwhile.
        handle._totals = await asyncio.to_thread(_stop, child)


def _stop(child: Child) -> ProxyTotals:
    """Stop the line; what it wrote on stderr goes to this process's (as the Python line's
    own lines do), for tests that read it."""
    try:
        child.stop()
        return child.result(ProxyTotals, 1.0)
    finally:
        with contextlib.suppress(OSError, ValueError):
            child.stderr_file.seek(0)
            sys.stderr.write(child.stderr_file.read())
            sys.stderr.flush()
        child.close()


async def read_all(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while chunk := await reader.read(1 << 20):
        parts.append(chunk)
    return b"".join(parts)


async def send_all(writer: asyncio.StreamWriter, payload: bytes, eof: bool = True) -> None:
    view = memoryview(payload)
    for start in range(0, len(payload), 1 << 16):
        writer.write(view[start : start + (1 << 16)])
        await writer.drain()
    if eof:
        writer.write_eof()


async def until(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def vm_kib(pid: int, field: str) -> int:
    """VmRSS / VmHWM (peak RSS) of a process, in KiB, from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"{field} not in /proc/{pid}/status")


@contextlib.contextmanager
def proxy_process(
    line: str = "python", **options: Any
) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """The delay line ``line`` as a process of ``proxy_config(**options)``, as the
    orchestrator starts it; yields (process, ready line). Killed if still alive."""
    with raw_proxy_process(*config_argv(proxy_config(**options)), line=line) as started:
        yield started


@contextlib.contextmanager
def raw_proxy_process(
    *args: str, line: str = "python"
) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """The delay line ``line``'s program with ARGS; yields (process, ready line). Killed if
    still alive."""
    program: Program = PROXY_PROGRAMS[line]
    proc = subprocess.Popen(
        [*program.argv, *args],
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        ready_fds, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready_fds, "no ready line within 15 s"
        yield proc, json.loads(proc.stdout.readline())
    finally:
        kill_and_reap(proc)


@contextlib.contextmanager
def one_connection_server(
    handle: Callable[[socket.socket], None], join_s: float = 10.0
) -> Iterator[int]:
    """A blocking server in its own thread: accepts one connection (10 s at most), hands it to
    ``handle`` and closes it; yields the port. Any OSError ends the server quietly."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with conn, contextlib.suppress(OSError):
                handle(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        listener.close()
        thread.join(join_s)


def kill_and_reap(proc: subprocess.Popen[str]) -> None:
    """Kill a process a test started (if still alive), reap it, close its pipes."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def tap_line_count(path: Path) -> int:
    """Whole lines in a tap file the proxy may still be writing (cheap enough to poll)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0


def tap_records(path: Path) -> list[TapLine]:
    """The typed lines of a tap file the proxy may still be writing: whole lines only (the
    last one may be half written), and every whole line must decode."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines, skipped = parse_tap_lines(text[: text.rfind("\n") + 1])
    assert skipped == 0, f"{skipped} corrupt line(s) in {path}"
    return lines


@contextlib.contextmanager
def vcpus_awake() -> Iterator[None]:
    """One nice-19 busy loop per CPU for the duration: idle vCPUs never halt.

    On this kind of VM an idle vCPU halts, and waking it for a socket event can cost far
    more than the delay line's timer error (measured on a busy host: a 1-byte ping-pong
    through a 5 ms delay line came back 1.3-1.8 ms late at p50 with both cores idle and
    0.19 ms late with these loops running; the delay line's timer itself woke 5 us late at
    p50 either way). No delay line controls that, so the accuracy tests keep the vCPUs
    awake and measure the delay line: the same loops as ``kit run --keep-awake``.
    """
    loops = KeepAwake()
    loops.start()
    try:
        time.sleep(0.2)  # started and at nice 19 before the measurement begins
        yield
    finally:
        loops.stop()
