"""The delay line under load: 200 connections at once, a slow receiver, 1,000 short connections.

Loopback only, OS ports, every wait bounded. Numbers the issue asks for are printed (run
with ``-s`` to see them): bytes relayed, peak buffered bytes, RSS growth, fd counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from relay_support import (
    delay_line,
    fd_count,
    proxy_process,
    read_all,
    run,
    send_all,
    tap_line_count,
    tap_records,
    until,
    upstream,
    vm_kib,
)

from kit.capture.channel import MIN_RING_BYTES
from kit.plan.units import MIB
from kit.results.records import ProxyTotals, TapConnection

pytestmark = pytest.mark.integration


def payload(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


# -- 200 concurrent connections, data both ways at once -------------------------------------


def test_200_concurrent_connections_both_ways_every_byte_intact_and_in_order(line: str) -> None:
    conns, size = 200, 192 * 1024
    server_got: dict[int, bytes] = {}

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn_id = struct.unpack(">I", await reader.readexactly(4))[0]
        # Send while receiving: both directions busy at the same time on every connection.
        _, got = await asyncio.gather(
            send_all(writer, payload(10_000 + conn_id, size)), read_all(reader)
        )
        server_got[conn_id] = got
        writer.close()

    async def client(proxy_port: int, conn_id: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        writer.write(struct.pack(">I", conn_id))
        _, got = await asyncio.gather(send_all(writer, payload(conn_id, size)), read_all(reader))
        writer.close()
        return got

    async def main() -> tuple[list[bytes], int, int, int, tuple[str, ...]]:
        async with (
            upstream(server) as port,
            delay_line(
                port, line, delay_up_ms=1.0, delay_down_ms=1.0, read_bytes=64 * 1024
            ) as proxy,
        ):
            started = time.monotonic()
            got = await asyncio.gather(*(client(proxy.port, i) for i in range(conns)))
            elapsed = time.monotonic() - started
            assert await until(lambda: proxy.active == 0)
        s = proxy.totals
        print(
            f"\n200 conns: {(s.bytes_up + s.bytes_down) / MIB:.0f} MiB relayed in "
            f"{elapsed:.2f} s, peak buffered {s.peak_buffered_bytes} B, "
            f"errors {len(s.errors)}"
        )
        return got, s.connections, s.bytes_up, s.bytes_down, s.errors

    got, accepted, bytes_up, bytes_down, errors = run(main(), timeout_s=60)
    bad_down = [i for i in range(conns) if got[i] != payload(10_000 + i, size)]
    bad_up = [i for i in range(conns) if server_got.get(i) != payload(i, size)]
    assert bad_down == [] and bad_up == [], f"corrupt: down {bad_down[:5]}, up {bad_up[:5]}"
    assert accepted == conns and errors == ()
    assert (bytes_up, bytes_down) == (conns * (size + 4), conns * size)


# -- a receiver slower than the sender: backpressure, bounded memory ------------------------


@contextlib.contextmanager
def slow_reader_server(read_bytes: int, pause_s: float) -> Iterator[tuple[int, list[int]]]:
    """Blocking server thread that reads ``read_bytes`` then sleeps ``pause_s``, until EOF."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    received = [0]

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            conn.settimeout(10)
            with conn:
                while data := conn.recv(read_bytes):
                    received[0] += len(data)
                    time.sleep(pause_s)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1]), received
    finally:
        listener.close()
        thread.join(15)


def push_for(sock: socket.socket, seconds: float) -> int:
    """Send as fast as the socket takes it for ``seconds``; bytes accepted by the kernel."""
    sock.setblocking(False)
    block, sent = b"s" * MIB, 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            sent += sock.send(block)
        except BlockingIOError:
            time.sleep(0.001)
    return sent


# A process's peak memory: the Python line's grew 45-47 MiB run alone (three runs) and 66 MiB,
# over its bound, with three other tests beside it (its allocator keeps what it freed).
@pytest.mark.alone
def test_slow_receiver_is_held_back_and_proxy_memory_stays_bounded(
    tmp_path: Path, line: str
) -> None:
    cap, read = 1 * MIB, 64 * 1024
    tap = tmp_path / "tap.jsonl"
    with (
        slow_reader_server(64 * 1024, 0.004) as (port, received),
        proxy_process(
            line,
            upstream_port=port,
            delay_up_ms=5.0,
            buffer_cap_bytes=cap,
            read_bytes=read,
            tap_path=str(tap),
        ) as (proc, ready),
    ):
        rss_before = vm_kib(proc.pid, "VmRSS")
        with socket.create_connection(("127.0.0.1", ready["port"]), timeout=10) as sock:
            sent = push_for(sock, 2.0)  # loopback could carry > 1 GiB in this time
            taken = received[0]
            in_flight = sent - taken
            peak_rss = vm_kib(proc.pid, "VmHWM")
            sock.shutdown(socket.SHUT_WR)
        proc.terminate()
        assert proc.wait(10) == 0
    final = tap_records(tap)[-1]
    assert isinstance(final, ProxyTotals)
    growth_mib = (peak_rss - rss_before) / 1024
    print(
        f"\nslow receiver: sent {sent / MIB:.1f} MiB, received {taken / MIB:.1f} MiB, "
        f"in flight {in_flight / MIB:.1f} MiB, peak buffered {final.peak_buffered_bytes} B "
        f"(cap {cap}), proxy RSS {rss_before / 1024:.1f} -> peak {peak_rss / 1024:.1f} MiB"
    )
    # The delay queue never holds more than its cap plus one read...
    assert cap // 2 <= final.peak_buffered_bytes <= cap + read
    # ...so the sender is held back: what it got rid of is what the receiver took, plus the
    # queue, the transport's write buffer (16 MiB high-water) and the kernel socket buffers.
    assert in_flight < 64 * MIB, f"{in_flight / MIB:.0f} MiB in flight: no backpressure"
    # Plus the tap's ring (fixed size, shared with the decoder process, in RSS once touched).
    limit_mib = 48 + MIN_RING_BYTES / MIB
    assert growth_mib < limit_mib, f"proxy RSS grew {growth_mib:.0f} MiB"


# -- 1,000 short connections leak nothing ---------------------------------------------------


async def short_connection(port: int, i: int) -> None:
    """One of three endings: normal close, half-close then read, or a reset mid-request."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    message = b"%06d" % i * 10
    writer.write(message)
    if i % 3 == 2:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return
    if i % 3 == 1:
        writer.write_eof()
        assert await read_all(reader) == message
    else:
        assert await reader.readexactly(len(message)) == message
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def short_connections(port: int, count: int, parallel: int = 50) -> None:
    gate = asyncio.Semaphore(parallel)

    async def one(i: int) -> None:
        async with gate:
            await short_connection(port, i)

    await asyncio.gather(*(one(i) for i in range(count)))


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # OSError, not only ConnectionError: a peer gone before our FIN makes write_eof raise
    # ENOTCONN on some Pythons (3.11.2), and the socket must still be closed.
    try:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
            writer.write_eof()
    finally:
        writer.close()


def test_1000_short_connections_leave_no_fds_in_the_proxy_process(
    tmp_path: Path, line: str
) -> None:
    tap = tmp_path / "tap.jsonl"

    async def main() -> tuple[int, int, int]:
        async with upstream(echo) as port:
            with proxy_process(line, upstream_port=port, delay_up_ms=0.5, tap_path=str(tap)) as (
                proc,
                ready,
            ):
                await short_connections(ready["port"], 30)  # warm: first-use allocations
                assert await until(lambda: tap_line_count(tap) == 30)
                before = fd_count(proc.pid)
                await short_connections(ready["port"], 1000)
                done = await until(lambda: tap_line_count(tap) == 1030, timeout_s=15)
                assert done, f"{tap_line_count(tap)} of 1030 connections closed"
                after = fd_count(proc.pid)
                proc.terminate()
                code = await asyncio.to_thread(proc.wait, 10)
                return before, after, code

    before, after, code = run(main(), timeout_s=60)
    print(f"\nproxy fds: {before} before 1000 short connections, {after} after")
    assert after <= before
    assert code == 0
    lines = tap_records(tap)
    final = lines[-1]
    assert isinstance(final, ProxyTotals) and final.connections == 1030
    assert sum(isinstance(line, TapConnection) for line in lines) == 1030


def test_1000_short_connections_leave_no_tasks_or_fds_in_process() -> None:
    """The Python line's own machinery (its tasks): the process test above holds both lines
    to no leaked descriptors."""

    async def main() -> tuple[int, int, int, int, int]:
        async with upstream(echo) as port, delay_line(port, delay_down_ms=0.5) as proxy:
            await short_connections(proxy.port, 30)
            assert await until(lambda: proxy.active == 0)
            tasks_before, fds_before = len(asyncio.all_tasks()), fd_count(os.getpid())
            await short_connections(proxy.port, 1000)
            assert await until(lambda: proxy.active == 0)
            await asyncio.sleep(0.05)  # let finished tasks be collected
            tasks_after, fds_after = len(asyncio.all_tasks()), fd_count(os.getpid())
        return tasks_before, tasks_after, fds_before, fds_after, proxy.totals.connections

    tasks_before, tasks_after, fds_before, fds_after, accepted = run(main(), timeout_s=60)
    print(f"\nin-process: tasks {tasks_before} -> {tasks_after}, fds {fds_before} -> {fds_after}")
    assert accepted == 1030
    assert tasks_after <= tasks_before
    assert fds_after <= fds_before


def test_a_connection_burst_larger_than_the_backlog_is_served(line: str) -> None:
    """1,000 connects at once (backlog 1024): every one gets through, none is reset."""

    async def main() -> list[bytes]:
        async with upstream(echo) as port, delay_line(port, line) as proxy:

            async def one(i: int) -> bytes:
                reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
                writer.write(b"%04d" % i)
                writer.write_eof()
                data = await read_all(reader)
                writer.close()
                return data

            return await asyncio.gather(*(one(i) for i in range(1000)))

    assert run(main(), timeout_s=60) == [b"%04d" % i for i in range(1000)]
