"""The real delay line over 127.0.0.1: integrity, delay accuracy, half-close, errors, process.

Every test is bounded in time (asyncio.wait_for / socket timeouts) and uses OS-chosen ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import signal
import socket
import statistics
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from hyperframe.frame import DataFrame, PingFrame, SettingsFrame, WindowUpdateFrame
from relay_support import (
    LineHandle,
    delay_line,
    one_connection_server,
    proxy_process,
    raw_proxy_process,
    read_all,
    run,
    upstream,
    vcpus_awake,
)

from kit.capture.frametap import CLIENT_PREFACE
from kit.capture.summary import summarize
from kit.capture.tapfile import read_tap, tap_connections
from kit.delayline.relay import startup_warnings
from kit.errors import UsageError
from kit.plan.processes import ProxyConfig
from kit.plan.trial import Link
from kit.results.records import DataTotals, ProxyTotals, TapConnection, WindowUpdates

pytestmark = pytest.mark.integration
STACKS = {"python": "kit.delayline", "compiled": "kit-linkd"}  # what each line's ready line says


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- integrity ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"delay_up_ms": 1.0, "delay_down_ms": 3.0},
        # tiny reads and cap: many chunks, and the backpressure path is exercised
        {"delay_up_ms": 2.0, "read_bytes": 4096, "buffer_cap_bytes": 64 * 1024},
    ],
)
def test_bytes_arrive_identical_and_in_order_both_ways(options: dict[str, Any], line: str) -> None:
    rng = random.Random(1)
    up_payload, down_payload = rng.randbytes(6 << 20), rng.randbytes(5 << 20)
    got: dict[str, bytes] = {}

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(down_payload)
        writer.write_eof()
        got["server"] = await read_all(reader)
        writer.close()

    async def main() -> LineHandle:
        async with upstream(server) as port, delay_line(port, line, **options) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            sender = asyncio.create_task(_send_then_eof(writer, up_payload))
            got["client"] = await read_all(reader)
            await sender
            await _until(lambda: "server" in got and proxy.active == 0)
            writer.close()
        return proxy

    totals = run(main()).totals
    assert hashlib.sha256(got["server"]).digest() == hashlib.sha256(up_payload).digest()
    assert hashlib.sha256(got["client"]).digest() == hashlib.sha256(down_payload).digest()
    assert (totals.bytes_up, totals.bytes_down) == (len(up_payload), len(down_payload))
    assert totals.errors == ()
    if "buffer_cap_bytes" in options:  # the cap bounds the backlog (plus one read)
        assert totals.peak_buffered_bytes <= options["buffer_cap_bytes"] + 4096


async def _send_then_eof(writer: asyncio.StreamWriter, payload: bytes) -> None:
    view = memoryview(payload)
    for start in range(0, len(payload), 1 << 18):
        writer.write(view[start : start + (1 << 18)])
        await writer.drain()
    writer.write_eof()


async def _until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


# -- first bytes, half-close, refused, reset ------------------------------------------------


def test_server_speaks_first_on_many_connections_and_nothing_echoes_back(line: str) -> None:
    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SERVER-HELLO")  # before reading anything, like an HTTP/2 SETTINGS
        await writer.drain()
        hello = await reader.readexactly(12)
        writer.write(b"ECHO:" + hello)
        writer.write_eof()
        await reader.read()
        writer.close()

    async def one(port: int, i: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CLIENT-{i:05d}".encode())  # sent before the proxy dialled upstream
        data = await read_all(reader)
        writer.close()
        return data

    async def main() -> list[bytes]:
        async with upstream(server) as port, delay_line(port, line, delay_down_ms=1.0) as proxy:
            return await asyncio.gather(*(one(proxy.port, i) for i in range(60)))

    for i, data in enumerate(run(main())):
        assert data == b"SERVER-HELLO" + b"ECHO:" + f"CLIENT-{i:05d}".encode()


def test_half_close_is_propagated_in_both_orders(line: str) -> None:
    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_all(reader)  # needs the client's FIN to arrive as EOF
        writer.write(b"got " + request)
        writer.write_eof()
        writer.close()

    async def server_closes_first(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.write(b"bye")
        writer.write_eof()  # the server's half-close; it still reads
        late = await read_all(reader)
        assert late == b"still here"
        writer.close()

    async def main() -> tuple[bytes, bytes]:
        async with upstream(server) as port, delay_line(port, line, delay_up_ms=2.0) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"question")
            writer.write_eof()
            answer = await read_all(reader)
            writer.close()
        async with upstream(server_closes_first) as port, delay_line(port, line) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            first = await read_all(reader)  # EOF arrives, and we can still send
            writer.write(b"still here")
            writer.write_eof()
            await _until(lambda: proxy.active == 0)
            writer.close()
        return answer, first

    assert run(main()) == (b"got question", b"bye")


def test_refused_upstream_closes_client_cleanly_and_proxy_keeps_serving(line: str) -> None:
    port = free_port()  # nothing listens here yet

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.read(100))
        writer.write_eof()
        writer.close()

    async def main() -> tuple[bytes, bytes, tuple[str, ...]]:
        async with delay_line(port, line) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"anyone?")
            refused = await read_all(reader)  # EOF, not ConnectionResetError
            writer.close()
            server = await asyncio.start_server(echo, "127.0.0.1", port, reuse_address=True)
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"hello")
            served = await read_all(reader)
            writer.close()
            server.close()
        return refused, served, proxy.totals.errors

    refused, served, errors = run(main())
    assert refused == b""
    assert served == b"hello"
    assert len(errors) == 1 and "unreachable" in errors[0]


def test_reset_on_one_side_closes_the_other(line: str) -> None:
    async def main() -> bytes:
        done = asyncio.Event()
        seen: list[bytes] = []

        async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                seen.append(await read_all(reader))
            done.set()
            writer.close()

        async with upstream(server) as port, delay_line(port, line) as proxy:
            sock = socket.create_connection(("127.0.0.1", proxy.port))
            sock.sendall(b"abc")
            await asyncio.sleep(0.05)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # linger 0: the kernel sends RST
            await asyncio.wait_for(done.wait(), 5)
            await _until(lambda: proxy.active == 0)
            assert proxy.active == 0
        return b"".join(seen)

    assert run(main()) in (b"", b"abc")


# -- passive decoding through the proxy ---------------------------------------------------


def test_non_http2_bytes_pass_untouched_and_tap_marks_undecodable(
    tmp_path: Path, line: str
) -> None:
    tap = tmp_path / "tap.jsonl"
    payload = b"GET / HTTP/1.1\r\nHost: example\r\n\r\n" + bytes(range(256)) * 100

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await read_all(reader))
        writer.write_eof()
        writer.close()

    async def main() -> bytes:
        async with upstream(echo) as port, delay_line(port, line, tap_path=str(tap)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(payload)
            writer.write_eof()
            data = await read_all(reader)
            writer.close()
            await _until(lambda: proxy.active == 0)
            return data

    assert run(main()) == payload
    (conn, final), skipped = read_tap(tap)
    assert skipped == 0
    assert isinstance(conn, TapConnection) and not conn.up.decodable
    assert conn.up.bytes == len(payload) and conn.down.bytes == len(payload)
    assert not conn.down.decodable
    assert isinstance(final, ProxyTotals) and final.connections == 1


def test_http2_frames_are_summarized_with_ping_rtt(tmp_path: Path, line: str) -> None:
    tap = tmp_path / "tap.jsonl"
    client_frames = (
        CLIENT_PREFACE
        + SettingsFrame(0, settings={4: 1 << 20}).serialize()
        + (WindowUpdateFrame(0, window_increment=12345).serialize())
    )
    server_frames = (
        SettingsFrame(0, settings={3: 100}).serialize()
        + DataFrame(1, data=b"d" * 100_000).serialize()
    )

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(server_frames)
        await reader.readexactly(len(client_frames))
        for i in range(5):  # ack each PING as an HTTP/2 peer would
            ping = await reader.readexactly(17)
            assert ping[9:] == i.to_bytes(8, "big")
            writer.write(PingFrame(0, opaque_data=ping[9:], flags=["ACK"]).serialize())
        writer.write_eof()
        await reader.read()
        writer.close()

    async def main() -> None:
        async with (
            upstream(server) as port,
            delay_line(port, line, delay_up_ms=2.0, delay_down_ms=3.0, tap_path=str(tap)) as proxy,
        ):
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(client_frames)
            await reader.readexactly(len(server_frames))
            for i in range(5):
                writer.write(PingFrame(0, opaque_data=i.to_bytes(8, "big")).serialize())
                await reader.readexactly(17)
            writer.write_eof()
            await reader.read()
            writer.close()
            await _until(lambda: proxy.active == 0)

    run(main())
    lines, skipped = read_tap(tap)
    summary = summarize(tap_connections(lines), delay_down_ms=3.0, skipped_lines=skipped)
    assert summary.decodable and summary.connections == 1 and summary.tap_lines_skipped == 0
    assert summary.client.settings == {"INITIAL_WINDOW_SIZE": 1 << 20}
    assert summary.client.conn_window_updates.first == (12345,)
    assert summary.client.window_growth[0].window_bytes == 1 << 20
    assert summary.client.pings_sent == 5
    proxy_rtt, client_rtt = summary.ping_rtt_ms.proxy, summary.ping_rtt_ms.client
    assert proxy_rtt.count == 5 and proxy_rtt.median_ms is not None
    assert 2.0 <= proxy_rtt.median_ms < 6.0  # up delay + server
    assert client_rtt.median_ms == round(proxy_rtt.median_ms + 3.0, 3)  # + the down delay
    assert summary.data_down == DataTotals(frames=1, bytes=100_000, max_frame=100_000)
    assert summary.client.stream_window_updates == WindowUpdates()


# -- the process contract and delay accuracy ----------------------------------------------


def echo_thread() -> contextlib.AbstractContextManager[int]:
    """A blocking echo server in a thread (the proxy under test runs in another process)."""

    def echo(conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while data := conn.recv(65536):
            conn.sendall(data)

    return one_connection_server(echo, join_s=5)


def test_process_prints_ready_line_and_exits_0_on_sigterm(tmp_path: Path, line: str) -> None:
    tap = tmp_path / "tap.jsonl"
    with (
        echo_thread() as port,
        proxy_process(line, upstream_port=port, tap_path=str(tap)) as (proc, ready),
    ):
        assert ready == {
            "ready": True,
            "port": ready["port"],
            "pid": proc.pid,
            "stack": STACKS[line],
            "version": ready["version"],
        }
        with socket.create_connection(("127.0.0.1", ready["port"]), timeout=5) as sock:
            sock.sendall(b"ping")
            assert sock.recv(10) == b"ping"
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0
        assert proc.stdout is not None
        rest = proc.stdout.read().splitlines()  # exactly one more line: the result
        assert len(rest) == 1 and json.loads(rest[0])["result"]["connections"] == 1
    lines, skipped = read_tap(tap)
    assert [type(tap_line) for tap_line in lines] == [TapConnection, ProxyTotals]  # the open one
    assert skipped == 0


JOB = '{"upstream_host": "127.0.0.1", "upstream_port": 1, "listen_host": "127.0.0.1"'


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--config", JOB + ', "bogus": 1}'], "bogus"),
        (["--config", JOB + ', "link": {"delay_up_ms": 1}}'], "delay_up_ms"),
        (["--config", JOB + ', "link": {"delay_up_ns": "20ms"}}'], "bad job"),
        (["--config", JOB + ', "read_bytes": "many"}'], "bad job"),
        (["--config", "{not json"], "bad job"),
        (["--config", "[1]"], "bad job"),
        (["--config"], "usage"),
        (["--upstream", "127.0.0.1:1"], "usage"),
        ([], "usage"),
    ],
)
def test_process_reports_a_bad_config_as_one_json_line_and_exit_2(
    args: list[str], error: str, line: str
) -> None:
    """What the protobuf library refuses (an unknown field, a wrong type, not JSON), both
    lines refuse in one line with exit 2; ranges are the kit's (below, the Python line's)."""
    with raw_proxy_process(*args, line=line) as (proc, ready):
        assert "ready" not in ready and error in ready["error"] and ready["exit_code"] == 2
        assert proc.wait(10) == 2
        assert proc.stdout is not None and proc.stdout.read() == ""  # exactly one line
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()


def test_the_python_line_checks_its_job_against_the_kits_ranges() -> None:
    with raw_proxy_process(
        "--config", JOB.replace('"upstream_port": 1', '"upstream_port": 0') + "}"
    ) as (
        proc,
        ready,
    ):
        assert "upstream_port" in ready["error"] and ready["exit_code"] == 2
        assert proc.wait(10) == 2


def test_process_reports_port_in_use_with_exit_3(line: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        with proxy_process(line, listen_port=port, upstream_port=1) as (proc, ready):
            assert "ready" not in ready and "cannot listen" in ready["error"]
            assert ready["exit_code"] == 3 and proc.wait(10) == 3


ATTEMPTS = 4  # of the timing tests below; see test_added_delay_is_accurate


def attempt_conditions() -> Iterator[contextlib.AbstractContextManager[None]]:
    """The machine state of each attempt, alternating: vCPUs kept awake, then left idle.

    Awake is what measures the delay line on a quiet host (idle vCPUs halt, and waking them
    cost 1.3-1.8 ms per ping-pong here); on a contended host the busy vCPUs are the ones the
    hypervisor preempts (one CI run: 20 ms errors of 4 ms p50 with the loops running), and
    idle does better. Either only ever adds lateness."""
    for attempt in range(ATTEMPTS):
        yield vcpus_awake() if attempt % 2 == 0 else contextlib.nullcontext()


def measure_rtt_errors_ms(rtt_ms: float, pings: int, line: str) -> list[float]:
    """Ping-pong 1 byte through a proxy process; measured RTT minus configured RTT."""
    half = rtt_ms / 2
    with (
        echo_thread() as port,
        proxy_process(line, upstream_port=port, delay_up_ms=half, delay_down_ms=half) as (
            proc,
            ready,
        ),
        socket.create_connection(("127.0.0.1", ready["port"]), timeout=5) as sock,
    ):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        errors = []
        for i in range(pings + 3):
            t0 = time.perf_counter_ns()
            sock.sendall(b"p")
            assert sock.recv(1) == b"p"
            if i >= 3:  # the first round trips include connection set-up in the proxy
                errors.append((time.perf_counter_ns() - t0) / 1e6 - rtt_ms)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    return errors


@pytest.mark.alone
@pytest.mark.parametrize(("rtt_ms", "pings"), [(5.0, 120), (20.0, 50)])
def test_added_delay_is_accurate(rtt_ms: float, pings: int, line: str) -> None:
    """Best of a few attempts: a busy host only ever adds lateness (a stalled vCPU, measured
    p99 37-76 ms at 20 ms in one CI run, p50 2-3.4 ms), never removes it, so one accurate
    attempt shows the delay line is accurate, while a wrong delay line (rounded, cumulative,
    early) fails every attempt. A round trip faster than configured fails at once. Each
    attempt measures its own control just before: the same ping-pong through a zero-delay
    proxy (the relay's own cost; once measured 2.9 ms in a contended minute)."""
    for attempt, condition in enumerate(attempt_conditions()):
        with condition:
            forwarding_ms = statistics.median(measure_rtt_errors_ms(0.0, 60, line))
            raw = sorted(measure_rtt_errors_ms(rtt_ms, pings, line))
        added = [e - forwarding_ms for e in raw]  # added delay minus configured delay
        p50, p99 = statistics.median(added), added[round(0.99 * (len(added) - 1))]
        print(
            f"\nRTT {rtt_ms:g} ms (attempt {attempt + 1}): forwarding {forwarding_ms:.3f} "
            f"ms; raw error p50 {statistics.median(raw):.3f} "
            f"p99 {raw[round(0.99 * (len(raw) - 1))]:.3f}; added-delay error "
            f"p50 {p50:.3f} p99 {p99:.3f} ms"
        )
        assert raw[0] > -0.1, "a round trip was faster than the configured delay"
        if abs(p50) < 1.0:
            return
    pytest.fail(f"median added-delay error {p50:.3f} ms (tolerance 1 ms) in {ATTEMPTS} attempts")


def sink_thread(lateness_ns: list[int], delay_ns: int) -> contextlib.AbstractContextManager[int]:
    """Reads 8-byte send stamps (time.monotonic_ns, one clock for every process) and records
    how late each arrived beyond ``delay_ns``."""

    def sink(conn: socket.socket) -> None:
        pending = b""
        while data := conn.recv(65536):
            now_ns = time.monotonic_ns()
            pending += data
            whole = len(pending) // 8 * 8
            for (sent_ns,) in struct.iter_unpack("!q", pending[:whole]):
                lateness_ns.append(now_ns - sent_ns - delay_ns)
            pending = pending[whole:]

    return one_connection_server(sink, join_s=5)


@pytest.mark.alone
def test_paced_traffic_is_delayed_exactly_without_burning_a_core(line: str) -> None:
    """~1500 small chunks/s one way at 5 ms: each due time is 0.5-1 ms after the previous
    one, so a writer that spins the last ~1.5 ms before each due time never stops spinning
    (measured 0.9-0.92 core, KIT_DELAYLINE_TIMER=spin); a timer-driven writer sleeps in
    between (measured 0.15-0.5 core on a loaded 2-vCPU VM: ~200 us of Python per chunk).
    The bar, 0.7 core, sits between the two."""
    failures = []
    for condition in attempt_conditions():  # best of a few, as in test_added_delay_is_accurate
        with condition:
            failure = _paced_attempt(line)
        if failure is None:
            return
        failures.append(failure)
    pytest.fail("; ".join(failures))


def _paced_attempt(line: str) -> str | None:
    """One paced run: None when it met every bar, else what it missed."""
    delay_ms, duration_s, gap_s = 5.0, 1.5, 0.0005
    lateness_ns: list[int] = []
    with (
        sink_thread(lateness_ns, round(delay_ms * 1e6)) as port,
        proxy_process(line, upstream_port=port, delay_up_ms=delay_ms) as (proc, ready),
        socket.create_connection(("127.0.0.1", ready["port"]), timeout=5) as sock,
    ):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        proxy = psutil.Process(proc.pid)
        sock.sendall(struct.pack("!q", time.monotonic_ns()))  # connection set-up, not timed
        time.sleep(0.1)
        cpu_before, t0 = sum(proxy.cpu_times()[:2]), time.monotonic()
        while time.monotonic() - t0 < duration_s:
            sock.sendall(struct.pack("!q", time.monotonic_ns()))
            time.sleep(gap_s)
        time.sleep(2 * delay_ms / 1000)
        cpu_fraction = (sum(proxy.cpu_times()[:2]) - cpu_before) / (time.monotonic() - t0)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    late_ms = sorted(ns / 1e6 for ns in lateness_ns[1:])
    p50 = statistics.median(late_ms)
    print(
        f"\npaced {len(late_ms)} chunks at {delay_ms:g} ms: proxy CPU {cpu_fraction:.2f} core; "
        f"lateness min {late_ms[0]:.3f} p50 {p50:.3f} "
        f"p99 {late_ms[round(0.99 * (len(late_ms) - 1))]:.3f} ms"
    )
    assert len(late_ms) > 500
    assert late_ms[0] >= 0.0, "a chunk was released before its due time"  # never, any attempt
    if p50 >= 1.0:
        return f"the median chunk was {p50:.3f} ms late (bar 1 ms)"
    if cpu_fraction >= 0.7:
        return f"the delay line spins: {cpu_fraction:.2f} core for ~1500 chunks/s (bar 0.7)"
    return None


def test_listen_host_other_than_loopback_is_flagged() -> None:
    assert startup_warnings(ProxyConfig(upstream_port=1)) == []
    warning = startup_warnings(ProxyConfig(listen_host="0.0.0.0", upstream_port=1))
    assert "NOT a loopback" in warning[0]


def test_config_errors_name_the_field() -> None:
    cases: list[tuple[str, Any]] = [
        ("listen_port", 70000),
        ("upstream_port", 0),
        ("read_bytes", 10),
        ("buffer_cap_bytes", 1),
    ]
    for field_name, value in cases:
        with pytest.raises(UsageError, match=field_name):
            ProxyConfig(**{"upstream_port": 80, field_name: value})
    with pytest.raises(UsageError, match="delay_down_ms"):  # the link checks its own fields
        ProxyConfig(upstream_port=80, link=Link(delay_down_ms=20_000.0))
