"""The frame tap's cost, as ratios: the same bytes through the delay line with and without it.

Traffic is synthetic HTTP/2, written straight to the socket so the sender is never the
bottleneck: a flood of 17-byte PING frames, a flood of empty DATA frames, large DATA frames
(16 KiB, gRPC's default) and a unary-like mix (HEADERS + small DATA per call). Each is sent
through a proxy with a tap file and one without, interleaved, and reported as
tapped / untapped forwarding rate (1.0 = free). A neighbour's ping-pong during a flood is
``kit.tools.floorbench``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from kit.delayline.timer import open_timerfd
from kit.plan.processes import LOOPBACK, ProxyConfig
from kit.plan.programs import Program, proxy_program
from kit.plan.trial import Link
from kit.plan.units import MIB
from kit.quantile import percentile
from kit.topology.processes import Child, spawn

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_HEADER = struct.Struct(">HBBBL")


def frame(ftype: int, payload: bytes, stream_id: int = 0, flags: int = 0) -> bytes:
    n = len(payload)
    return _HEADER.pack(n >> 8, n & 0xFF, ftype, flags, stream_id) + payload


def flood(kind: str, total_bytes: int) -> bytes:
    """About ``total_bytes`` of client-side HTTP/2: preface, SETTINGS, then ``kind`` frames."""
    if kind == "ping":
        unit = frame(0x6, b"\x00" * 8)
    elif kind == "empty-data":
        unit = frame(0x0, b"", stream_id=1)
    elif kind == "large-data":
        unit = frame(0x0, b"\x5a" * 16384, stream_id=1)
    else:  # unary-like: a HEADERS block and a 100-byte message per call
        unit = frame(0x1, b"\x82" * 60, stream_id=1, flags=0x4) + frame(
            0x0, b"\x00" * 100, stream_id=1, flags=0x1
        )
    start = PREFACE + frame(0x4, b"")
    return start + unit * max(1, (total_bytes - len(start)) // len(unit))


@contextlib.contextmanager
def proxy(
    upstream_port: int,
    delay_ms: float,
    tap: Path | None,
    delay_down_ms: float | None = None,
    program: Program | None = None,
) -> Iterator[Child]:
    config = ProxyConfig(
        upstream_port=upstream_port,
        link=Link(delay_ms, delay_ms if delay_down_ms is None else delay_down_ms),
        tap_path=None if tap is None else str(tap),
    )
    child = spawn("proxy", program or proxy_program(), config)
    try:
        yield child
    finally:
        child.close()


def send_mib_s(port: int, payload: bytes) -> float:
    with socket.create_connection((LOOPBACK, port), timeout=60) as sock:
        t0 = time.perf_counter()
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        sock.recv(1)
        return len(payload) / (time.perf_counter() - t0) / MIB


def tap_ratio(kind: str, workdir: Path, total_bytes: int = 64 * MIB, repeats: int = 3) -> float:
    """Median tapped / median untapped forwarding rate for one kind of traffic."""
    payload = flood(kind, total_bytes)
    tapped: list[float] = []
    plain: list[float] = []
    with (
        upstream() as port,
        proxy(port, 0.0, workdir / f"tap-{kind}.jsonl") as with_tap,
        proxy(port, 0.0, None) as without,
    ):
        for _ in range(repeats):
            tapped.append(send_mib_s(with_tap.port, payload))
            plain.append(send_mib_s(without.port, payload))
    return statistics.median(tapped) / statistics.median(plain)


def _echo(conn: socket.socket) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn, contextlib.suppress(OSError):
        while conn.recv(64):
            conn.sendall(b"p")


def _sink(conn: socket.socket) -> None:
    with conn, contextlib.suppress(OSError):
        while conn.recv(MIB):
            pass


SLEEPING_ROLE = b"s"
SLEEP_DELAY = struct.Struct(">Q")  # after the role byte: the sleep in ns


def sleeping_echo(conn: socket.socket) -> None:
    """Reply to each byte at its arrival + the delay the client asked for (absolute timerfd)."""
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = b""
    while len(head) < 1 + SLEEP_DELAY.size:
        more = conn.recv(1 + SLEEP_DELAY.size - len(head))
        if not more:
            return
        head += more
    (delay_ns,) = SLEEP_DELAY.unpack(head[1:])
    timer = open_timerfd()
    try:
        while conn.recv(64):
            timer.set_abs_ns(time.monotonic_ns() + delay_ns)
            select.select([timer.fd], [], [])  # sleeps in the kernel until the deadline
            timer.drain()
            conn.sendall(b"p")
    finally:
        timer.close()


def serve_upstream() -> None:
    """Each accepted connection's first byte picks its role: b"e" echoes, b"s" echoes after a
    sleep (``kit.tools.floorbench``), anything else sinks.
    Prints the port, then serves until killed (run as its own process: see ``upstream``)."""
    listener = socket.create_server((LOOPBACK, 0))

    def route(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            first = conn.recv(1, socket.MSG_PEEK)
            if first == SLEEPING_ROLE:  # the floor: an echo that sleeps the RTT itself
                sleeping_echo(conn)
            else:
                (_echo if first == b"e" else _sink)(conn)

    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=route, args=(conn,), daemon=True).start()


@contextlib.contextmanager
def _tool_process(*args: str) -> Iterator[subprocess.Popen[str]]:
    """This module run as a child (own interpreter, own GIL: the measuring process only
    measures)."""
    child = subprocess.Popen(
        [sys.executable, "-m", "kit.tools.tapbench", *args], stdout=subprocess.PIPE, text=True
    )
    try:
        yield child
    finally:
        child.kill()
        child.wait()


@contextlib.contextmanager
def upstream() -> Iterator[int]:
    with _tool_process("upstream") as child:
        assert child.stdout is not None
        yield int(child.stdout.readline())


def flood_forever(port: int, kind: str = "ping", mbit_s: str = "") -> None:
    """``kind`` frames to ``port`` until killed: at full speed, or paced to ``mbit_s``."""
    if mbit_s:
        _flood_paced(port, kind, float(mbit_s))
    payload = flood(kind, 32 * MIB)
    print("flooding", flush=True)  # started (an interpreter's start-up is ~0.4 s here)
    while True:
        with contextlib.suppress(OSError):
            send_mib_s(port, payload)


PACE_S = 0.001


def _flood_paced(port: int, kind: str, mbit_s: float) -> None:
    """One connection, a burst every ``PACE_S`` on an absolute schedule (a late burst is
    caught up by the next), cutting the frames anywhere: the stream stays whole frames."""
    per_burst = max(1, round(mbit_s * 1e6 / 8 * PACE_S))
    stream = flood(kind, 4 * MIB)
    start = stream[: len(PREFACE) + 9]  # the preface and an empty SETTINGS
    units = stream[len(start) :]
    with socket.create_connection((LOOPBACK, port), timeout=60) as sock:
        sock.sendall(start)
        print("flooding", flush=True)
        due, offset = time.perf_counter(), 0
        while True:
            due += PACE_S
            sent = 0
            while sent < per_burst:
                piece = units[offset : offset + per_burst - sent]
                sock.sendall(piece)
                sent += len(piece)
                offset = (offset + len(piece)) % len(units)
            time.sleep(max(0.0, due - time.perf_counter()))


def blocking_rtts_ms(port: int, pings: int) -> list[float]:
    """Ping-pong with ordinary blocking sockets against ``echo_then_sink_server``."""
    rtts: list[float] = []
    with socket.create_connection((LOOPBACK, port), timeout=10) as client:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client.sendall(b"e")
        client.recv(64)
        for _ in range(pings):
            t0 = time.perf_counter_ns()
            client.sendall(b"e")
            if not client.recv(64):
                break
            rtts.append((time.perf_counter_ns() - t0) / 1e6)
            time.sleep(0.002)
    return rtts


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux


def ticker(port: int, ticks: int) -> None:
    """One byte every 2 ms (a blocking sender, in its own process)."""
    with socket.create_connection((LOOPBACK, port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(ticks):
            sock.sendall(b"t")
            time.sleep(0.002)


def read_wake_lag_us(ticks: int = 300) -> tuple[float, float]:
    """(p50, p99) of how late an idle asyncio reader runs after the kernel received the
    bytes (SO_TIMESTAMPNS, CLOCK_REALTIME): the part of the delay error that stamping
    chunks with the kernel's receive time instead of the reader's clock would remove."""
    lags: list[float] = []
    with (
        socket.create_server((LOOPBACK, 0)) as listener,
        _tool_process("ticker", str(listener.getsockname()[1]), str(ticks)),
    ):
        listener.settimeout(10)
        conn, _ = listener.accept()
        with conn:
            conn.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            conn.setblocking(False)
            asyncio.run(_collect_lags(conn, ticks, lags))
    return percentile(lags, 50), percentile(lags, 99)


async def _collect_lags(conn: socket.socket, ticks: int, lags: list[float]) -> None:
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    stamp = struct.Struct("@qq")

    def ready() -> None:
        now_ns = time.time_ns()
        try:
            data, ancillary, _flags, _addr = conn.recvmsg(4096, 64)
        except BlockingIOError:
            return
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = stamp.unpack(raw[: stamp.size])
                lags.append((now_ns - (sec * 1_000_000_000 + nsec)) / 1000)
        if (not data or len(lags) >= ticks) and not done.done():
            done.set_result(None)

    loop.add_reader(conn.fileno(), ready)
    try:
        await asyncio.wait_for(done, 30)
    except asyncio.TimeoutError:
        pass
    finally:
        loop.remove_reader(conn.fileno())


def main(argv: list[str]) -> int:
    if argv == ["upstream"]:
        serve_upstream()
    elif len(argv) in (2, 3, 4) and argv[0] == "flood":
        flood_forever(int(argv[1]), *argv[2:])
    elif len(argv) == 3 and argv[0] == "ticker":
        ticker(int(argv[1]), int(argv[2]))
    elif len(argv) == 3 and argv[0] == "pingpong":  # prints the RTTs (ms) as JSON
        print(json.dumps(blocking_rtts_ms(int(argv[1]), int(argv[2]))))
    else:
        print(
            "usage: python -m kit.tools.tapbench upstream | flood PORT | pingpong PORT N",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
