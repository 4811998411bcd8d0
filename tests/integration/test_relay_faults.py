"""The delay line under faults: resets, refusals, upstream closes, half-closes, garbage, signals.

Extends tests/integration/test_proxy.py (which has the single-connection basics) with
traffic in flight when the fault hits, many connections at once, the frame tap's verdict on
malformed input, and the process's shutdown on SIGINT/SIGTERM. Loopback only, OS ports,
every wait bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hyperframe.frame import SettingsFrame
from relay_support import (
    delay_line,
    one_connection_server,
    proxy_process,
    read_all,
    run,
    send_all,
    tap_records,
    until,
    upstream,
)

from kit.capture.frametap import CLIENT_PREFACE
from kit.delayline.relay import describe, startup_warnings
from kit.plan.processes import ProxyConfig, is_loopback_host
from kit.results.records import ProxyTotals, TapConnection

pytestmark = pytest.mark.integration


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with SO_LINGER 0: the kernel sends RST instead of FIN."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def echo_once(proxy_port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    await send_all(writer, payload)
    data = await read_all(reader)
    writer.close()
    return data


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
        writer.write_eof()
    writer.close()


# -- a client that resets mid-transfer --------------------------------------------------------


def test_client_reset_mid_transfer_frees_both_sides_and_proxy_keeps_serving(line: str) -> None:
    down = random.Random(2).randbytes(32 << 20)
    upstream_ended = asyncio.Event()

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await reader.read(8)
        if first.startswith(b"ECHO"):
            writer.write(first + await read_all(reader))
            writer.write_eof()
            writer.close()
            return
        with contextlib.suppress(ConnectionError):
            await asyncio.gather(send_all(writer, down), read_all(reader))
        upstream_ended.set()
        writer.close()

    async def main() -> tuple[int, tuple[str, ...], bytes]:
        async with (
            upstream(server) as port,
            delay_line(port, line, delay_up_ms=1.0, delay_down_ms=1.0) as proxy,
        ):
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"BULK----" + b"u" * (4 << 20))  # upload in flight too
            got = await reader.readexactly(1 << 20)
            assert got == down[: 1 << 20]
            reset(writer)  # the client vanishes with megabytes in flight both ways
            assert await until(upstream_ended.is_set), "upstream side was never closed"
            assert await until(lambda: proxy.active == 0)
            served = await echo_once(proxy.port, b"ECHO" + b"x" * 100_000)
        return proxy.totals.connections, proxy.totals.errors, served

    accepted, errors, served = run(main())
    assert served == b"ECHO" + b"x" * 100_000
    assert accepted == 2
    assert len(errors) == 1 and "conn 1" in errors[0]  # the reset is counted, quietly


# -- an upstream that refuses ---------------------------------------------------------------


def test_refused_upstream_many_clients_each_closed_cleanly_and_reported(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], line: str
) -> None:
    with socket.socket() as probe:  # a port nothing listens on (until we start one there)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tap = tmp_path / "tap.jsonl"

    async def refused_client(proxy_port: int, i: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        writer.write(b"hello %d" % i)
        writer.write_eof()
        data = await read_all(reader)  # a clean EOF: ConnectionResetError would fail here
        writer.close()
        return data

    async def main() -> list[bytes]:
        async with delay_line(port, line, tap_path=str(tap)) as proxy:
            refused = await asyncio.gather(*(refused_client(proxy.port, i) for i in range(30)))
            assert await until(lambda: proxy.active == 0)
            async with upstream(echo, port):
                served = await asyncio.gather(
                    *(echo_once(proxy.port, b"%05d" % i * 1000) for i in range(30))
                )
            assert served == [b"%05d" % i * 1000 for i in range(30)]
        assert proxy.totals.connections == 60
        return refused

    assert run(main()) == [b""] * 30
    final = tap_records(tap)[-1]
    assert isinstance(final, ProxyTotals) and final.connections == 60
    assert len(final.errors) == 30 and all("unreachable" in e for e in final.errors)
    logged = [text for text in capfd.readouterr().err.splitlines() if "unreachable" in text]
    assert len(logged) == 30  # one line per refused connection, on stderr


# -- an upstream that closes mid-stream -----------------------------------------------------


@pytest.mark.parametrize("how", ["fin", "reset"])
def test_upstream_closing_mid_stream_gives_the_client_an_intact_prefix(how: str, line: str) -> None:
    down = random.Random(3).randbytes(3 << 20)

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if (await reader.read(4)).startswith(b"ECHO"):
            writer.write(b"ECHO" + await read_all(reader))
            writer.write_eof()
            writer.close()
            return
        await send_all(writer, down, eof=False)
        if how == "fin":
            writer.close()  # a full close in the middle of the conversation
        else:
            reset(writer)

    async def client(proxy_port: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        writer.write(b"GET!")
        parts = []
        with contextlib.suppress(ConnectionError):
            while chunk := await reader.read(1 << 20):
                parts.append(chunk)
        writer.close()
        return b"".join(parts)

    async def main() -> tuple[bytes, bytes, int]:
        async with upstream(server) as port, delay_line(port, line, delay_down_ms=2.0) as proxy:
            got = await client(proxy.port)
            assert await until(lambda: proxy.active == 0)
            served = await echo_once(proxy.port, b"ECHO" + b"y" * 1000)
        return got, served, proxy.totals.connections

    got, served, accepted = run(main())
    if how == "fin":
        assert got == down  # everything sent before the FIN arrives, then a clean EOF
    else:
        assert got == down[: len(got)]  # a reset may cut it short, never corrupt it
    assert served == b"ECHO" + b"y" * 1000 and accepted == 2


# -- half-closed connections with bulk traffic after the half-close -------------------------


@pytest.mark.parametrize("first", ["client", "server"])
def test_half_close_with_megabytes_still_flowing_the_other_way(first: str, line: str) -> None:
    rng = random.Random(4)
    up, down = rng.randbytes(6 << 20), rng.randbytes(6 << 20)
    seen: dict[str, bytes] = {}

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if first == "client":
            seen["server"] = await read_all(reader)  # the client's EOF must arrive as EOF
            await send_all(writer, down)
        else:
            await send_all(writer, down)  # the server's half-close first...
            seen["server"] = await read_all(reader)  # ...and it keeps reading
        writer.close()

    async def main() -> tuple[bytes, int]:
        async with (
            upstream(server) as port,
            delay_line(
                port, line, delay_up_ms=2.0, delay_down_ms=3.0, read_bytes=64 * 1024
            ) as proxy,
        ):
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            if first == "client":
                await send_all(writer, up)
                got = await read_all(reader)
            else:
                got = await read_all(reader)
                await send_all(writer, up)
            assert await until(lambda: "server" in seen and proxy.active == 0)
            writer.close()
        assert proxy.totals.errors == ()  # neither half-close became a reset
        return got, proxy.totals.bytes_up

    got, bytes_up = run(main())
    assert hashlib.sha256(got).digest() == hashlib.sha256(down).digest()
    assert hashlib.sha256(seen["server"]).digest() == hashlib.sha256(up).digest()
    assert bytes_up == len(up)


# -- bytes that are not (valid) HTTP/2 ------------------------------------------------------

SETTINGS = SettingsFrame(0, settings={4: 65535}).serialize()


def _frame_header(length: int, frame_type: int, flags: int = 0, stream: int = 1) -> bytes:
    return struct.pack(">I", length)[1:] + bytes([frame_type, flags]) + struct.pack(">I", stream)


GARBAGE = {
    "truncated preface": (CLIENT_PREFACE[:15], "inside the client preface"),
    "absurd non-DATA length": (
        CLIENT_PREFACE + SETTINGS + _frame_header(2**24 - 1, 0x1) + b"h" * 5000,
        "absurd length",
    ),
    "DATA frame cut short": (
        CLIENT_PREFACE + SETTINGS + _frame_header(2**24 - 1, 0x0) + b"d" * 70_000,
        "inside a DATA frame",
    ),
    "random garbage": (random.Random(5).randbytes(1 << 20), "no HTTP/2 client preface"),
    "preface then garbage": (
        CLIENT_PREFACE + b"\x00\x00\x04\x08\x00\x00\x00\x00" + random.Random(6).randbytes(9999),
        "not SETTINGS",
    ),
}


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_malformed_bytes_pass_untouched_and_tap_says_why(
    name: str, tmp_path: Path, line: str
) -> None:
    payload, reason = GARBAGE[name]
    tap = tmp_path / "tap.jsonl"

    async def main() -> bytes:
        async with (
            upstream(echo) as port,
            delay_line(port, line, tap_path=str(tap), delay_up_ms=1.0) as proxy,
        ):
            got = await echo_once(proxy.port, payload)
            assert await until(lambda: proxy.active == 0)
        assert proxy.totals.errors == ()
        return got

    assert run(main()) == payload
    conn, final = tap_records(tap)
    assert isinstance(conn, TapConnection) and isinstance(final, ProxyTotals)
    assert conn.up.bytes == conn.down.bytes == len(payload)
    assert not conn.up.decodable and reason in conn.up.undecodable_reason
    assert not conn.down.decodable  # the echo is not an HTTP/2 server either
    assert final.errors == ()


def test_truncated_frame_from_the_server_is_marked_on_the_down_direction(
    tmp_path: Path, line: str
) -> None:
    tap = tmp_path / "tap.jsonl"
    down = SETTINGS + _frame_header(4, 0x8, stream=0)[:7]  # WINDOW_UPDATE header cut off

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(down)
        writer.write_eof()
        await read_all(reader)
        writer.close()

    async def main() -> bytes:
        async with upstream(server) as port, delay_line(port, line, tap_path=str(tap)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(CLIENT_PREFACE + SETTINGS)
            writer.write_eof()
            got = await read_all(reader)
            writer.close()
            assert await until(lambda: proxy.active == 0)
            return got

    assert run(main()) == down
    conn = tap_records(tap)[0]
    assert isinstance(conn, TapConnection)
    assert conn.up.decodable and conn.up.frames == 1
    assert not conn.down.decodable
    assert "inside a frame" in conn.down.undecodable_reason


# -- SIGINT / SIGTERM on the proxy process --------------------------------------------------


def pushing_server(payload: bytes) -> contextlib.AbstractContextManager[int]:
    """A blocking server (own thread) that pushes ``payload`` at whoever connects."""

    def push(conn: socket.socket) -> None:
        conn.settimeout(10)
        conn.sendall(payload)
        conn.shutdown(socket.SHUT_WR)
        while conn.recv(65536):
            pass

    return one_connection_server(push)


@pytest.mark.alone
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_accepting_flushes_what_it_read_and_exits_0(
    sig: signal.Signals, tmp_path: Path, line: str
) -> None:
    payload = random.Random(7).randbytes(24 << 20)
    tap = tmp_path / "tap.jsonl"
    with (
        pushing_server(payload) as port,
        proxy_process(line, upstream_port=port, tap_path=str(tap)) as (proc, ready),
        socket.create_connection(("127.0.0.1", ready["port"]), timeout=10) as sock,
    ):
        time.sleep(0.3)  # not reading: the proxy now holds bytes it has not delivered yet
        proc.send_signal(sig)
        refused = False
        for _ in range(50):  # bounded: 50 x 20 ms
            try:
                socket.create_connection(("127.0.0.1", ready["port"]), timeout=1).close()
            except ConnectionRefusedError:
                refused = True
                break
            time.sleep(0.02)
        received = bytearray()
        while chunk := sock.recv(1 << 20):  # bounded by the socket timeout and EOF
            received += chunk
        assert proc.wait(10) == 0
    assert refused, "the proxy still accepted connections after the signal"
    assert received == payload[: len(received)]  # a prefix, intact
    final = tap_records(tap)[-1]
    assert isinstance(final, ProxyTotals)
    # Nothing was delayed (0 ms), so all it read was due: all of it reached the client.
    assert final.bytes_down == len(received) > 0


# -- listening on loopback only, unless told otherwise, and saying so -----------------------


def test_only_loopback_hosts_count_as_loopback() -> None:
    for host in ("127.0.0.1", "127.5.6.7", "::1", "[::1]", "localhost"):
        assert is_loopback_host(host), host
    for host in (
        "0.0.0.0",
        "::",
        "192.0.2.1",
        "10.0.0.1",
        "example.org",
        "127.1",
        "::ffff:127.0.0.1",
        "",
    ):
        assert not is_loopback_host(host), host  # when unsure, warn


def test_non_loopback_listen_is_announced_first() -> None:
    assert ProxyConfig(upstream_port=1).listen_host == "127.0.0.1"  # the default
    config = ProxyConfig(listen_host="0.0.0.0", listen_port=7000, upstream_port=50051)
    lines = [*startup_warnings(config), describe(config, 7000)]
    assert lines[0].startswith("WARNING: the delay line listens on 0.0.0.0")
    assert "NOT a loopback address" in lines[0] and "127.0.0.1:50051" in lines[0]
    assert lines[1].startswith("delay line listening on 0.0.0.0:7000")
    assert startup_warnings(ProxyConfig(listen_host="::1", upstream_port=1)) == []


def test_kit_proxy_on_loopback_first_line_is_the_listening_line(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kit.cli",
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            f"127.0.0.1:{port}",
            "--rtt",
            "2ms",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert select.select([proc.stdout], [], [], 15)[0], "no first line within 15 s"
        first = proc.stdout.readline()
        assert first.startswith("delay line listening on 127.0.0.1:")
        assert "delay up 1 ms, down 1 ms" in first
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        assert proc.stderr is not None and proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_a_receiver_that_reads_late_still_gets_every_byte_after_both_sides_closed(
    line: str,
) -> None:
    """Both directions ended (FIN each way) while megabytes still wait in the proxy for a
    receiver that is slow to read: they are delivered, not dropped after a grace period."""
    down = random.Random(8).randbytes(12 << 20)

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_all(reader)
        await send_all(writer, down)
        writer.close()

    async def main() -> tuple[bytes, tuple[str, ...]]:
        async with upstream(server) as port, delay_line(port, line) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"go")
            writer.write_eof()
            await asyncio.sleep(3.0)  # longer than the proxy's 2 s shutdown grace
            got = await read_all(reader)  # ConnectionResetError here = data dropped
            writer.close()
            assert await until(lambda: proxy.active == 0)
        return got, proxy.totals.errors

    got, errors = run(main())
    assert len(got) == len(down) and got == down
    assert errors == ()
