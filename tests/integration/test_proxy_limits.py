"""The proxy's limits hold: connections over --max-connections are refused and counted, the
total buffered bytes stay under --max-buffered-bytes, and running out of file descriptors
gives one bounded line per second, never a flood of tracebacks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import select
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest
from relay_support import REPO, delay_line, run, until, upstream

from kit.plan.processes import ProxyConfig
from kit.plan.programs import PROXY_PROGRAMS
from kit.plan.units import MIB
from kit.protocol import config_argv

pytestmark = [pytest.mark.integration, pytest.mark.alone]


async def _hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read()  # never answers; at EOF it closes (not when its writer is collected)
    writer.close()


async def _refused(port: int) -> bytes:
    """What a connection over the cap reads: nothing. Accepted and closed at once, with a
    reset, which a client sees while it reads or, when the line is that quick, while it
    connects."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionError:
        return b""
    try:
        return await asyncio.wait_for(reader.read(), 5)
    except ConnectionError:
        return b""
    finally:
        writer.close()
    writer.close()


def test_connections_over_the_cap_are_refused_and_counted(line: str) -> None:
    async def scenario() -> None:
        async with upstream(_hold) as port, delay_line(port, line, max_connections=2) as proxy:
            held = [await asyncio.open_connection("127.0.0.1", proxy.port) for _ in range(2)]
            assert await until(lambda: proxy.active == 2)
            assert await _refused(proxy.port) == b""  # closed at once
            assert proxy.active == 2
            for _, w in held:
                w.close()
            assert await until(lambda: proxy.active == 0)
            # Below the cap again: a new connection is relayed.
            _, again = await asyncio.open_connection("127.0.0.1", proxy.port)
            assert await until(lambda: proxy.active == 1)
            again.close()
        assert proxy.totals.refused_connections == 1 and proxy.totals.connections == 3

    run(scenario())


def test_the_last_refusal_line_counts_every_refused_connection(
    capfd: pytest.CaptureFixture[str], line: str
) -> None:
    refused = 6

    async def scenario() -> None:
        async with upstream(_hold) as port, delay_line(port, line, max_connections=1) as proxy:
            _, held = await asyncio.open_connection("127.0.0.1", proxy.port)
            assert await until(lambda: proxy.active == 1)
            for _ in range(refused):  # within a second: all but the first held back
                await _refused(proxy.port)
            held.close()
        assert proxy.totals.refused_connections == refused

    run(scenario())
    lines = [text for text in capfd.readouterr().err.splitlines() if "refused so far" in text]
    assert f"({refused} refused so far)" in lines[-1]


def test_total_buffered_bytes_stay_under_the_cap(line: str) -> None:
    read, cap = 64 * 1024, 2 * MIB

    async def never_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    async def push(port: int, seconds: float) -> None:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        block = b"x" * read
        deadline = time.monotonic() + seconds
        with contextlib.suppress(ConnectionError, TimeoutError):
            while time.monotonic() < deadline:
                writer.write(block)
                await asyncio.wait_for(writer.drain(), max(0.01, deadline - time.monotonic()))
        writer.transport.abort()

    async def scenario() -> None:
        async with (
            upstream(never_read) as port,
            # Each direction may hold 8 MiB; together the proxy may hold 2 MiB only.
            delay_line(
                port, line, read_bytes=read, buffer_cap_bytes=8 * MIB, max_buffered_bytes=cap
            ) as proxy,
        ):
            await asyncio.gather(*(push(proxy.port, 1.5) for _ in range(4)))
            if proxy.python is not None:  # the Python line's own count of all queues together
                peak = proxy.python.budget.peak_bytes
                assert cap <= peak <= cap + 4 * read, peak  # each reader may finish one read
        # Either line: the total paused the readers, so no direction came near its own 8 MiB.
        assert proxy.totals.buffer_full_pauses >= 1
        assert proxy.totals.peak_buffered_bytes <= cap + 4 * read

    run(scenario())


@contextlib.contextmanager
def _held_connections_server() -> Iterator[tuple[int, list[socket.socket]]]:
    listener = socket.create_server(("127.0.0.1", 0), backlog=512)
    held: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1], held
    finally:
        listener.close()
        for s in held:
            s.close()


def _low_fd_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))


def test_fd_exhaustion_gives_one_line_per_second_not_a_traceback_flood(line: str) -> None:
    with _held_connections_server() as (port, _held):
        config = ProxyConfig(upstream_port=port)
        proc = subprocess.Popen(
            [*PROXY_PROGRAMS[line].argv, *config_argv(config)],
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_low_fd_limit,
        )
        clients: list[socket.socket] = []
        try:
            assert proc.stdout is not None and proc.stderr is not None
            assert select.select([proc.stdout], [], [], 15)[0], "no ready line"
            proxy_port = json.loads(proc.stdout.readline())["port"]
            t0 = time.monotonic()
            for _ in range(60):  # far more than 40 descriptors allow
                clients.append(socket.create_connection(("127.0.0.1", proxy_port), timeout=5))
            time.sleep(2.5)
            elapsed = time.monotonic() - t0
            for c in clients:
                c.close()
            time.sleep(0.5)
            proc.terminate()
            _, stderr = proc.communicate(timeout=15)
        finally:
            for c in clients:
                c.close()
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr[:2000]
    lines = [line for line in stderr.splitlines() if line.strip()]
    fd_lines = [line for line in lines if "cannot accept new connections" in line]
    assert fd_lines, stderr[:2000]
    assert len(fd_lines) <= elapsed + 2, fd_lines  # at most one per second
    assert "ulimit -n" in fd_lines[0]
    assert len(lines) <= 2 * (elapsed + 2) + 2, lines[:20]  # nothing else floods either


def test_a_full_budget_does_not_stall_light_traffic(line: str) -> None:
    read, cap = 64 * 1024, 2 * MIB

    async def route(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if await reader.read(1) == b"e":  # echo; anything else is never read again
            writer.write(b"e")
            while data := await reader.read(64):
                writer.write(data)
                await writer.drain()
        else:
            await asyncio.sleep(30)
        writer.close()

    async def hog(port: int) -> asyncio.StreamWriter:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        # More than the upstream socket, the proxy's write buffer (16 MiB) and its total hold.
        writer.write(b"h" + b"x" * (40 * MIB))
        return writer

    async def scenario() -> None:
        async with (
            upstream(route) as port,
            delay_line(
                port,
                line,
                read_bytes=read,
                buffer_cap_bytes=8 * MIB,
                max_buffered_bytes=cap,
                delay_up_ms=1.0,
                delay_down_ms=1.0,
            ) as proxy,
        ):
            hogs = [await hog(proxy.port) for _ in range(3)]
            if proxy.python is not None:
                assert await until(lambda: proxy.python.budget.full, 10)  # type: ignore[union-attr]
            else:  # seen from outside: the hogs fill 2 MiB in far less than this
                await asyncio.sleep(1.0)
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"e")
            assert await asyncio.wait_for(reader.readexactly(1), 5) == b"e"
            for _ in range(20):  # the ping-pong keeps going while the hogs hold the cap
                writer.write(b"p")
                assert await asyncio.wait_for(reader.readexactly(1), 2) == b"p"
            if proxy.python is not None:
                assert proxy.python.budget.full
            for w in [*hogs, writer]:
                w.transport.abort()
        assert proxy.totals.buffer_full_pauses >= 1  # the cap was reached (and held them)

    run(scenario())
