"""A 1-byte ping-pong through a delay line, with both ends in one thread (one clock).

The ends busy-poll non-blocking sockets: they never sleep, so the VM's wake-up latency of an
idle process (0.1-0.2 ms on a quiet host, more on a busy one) is not charged to the delay
line. Used by ``make bench`` (delay accuracy) and its link part (one-way delays, jitter).
"""

from __future__ import annotations

import socket
import time

from kit.plan.processes import LOOPBACK

PING_TIMEOUT_S = 5.0  # a ping not back within this ends the series


def spin_recv(sock: socket.socket, deadline: float) -> bytes:
    """Busy-poll a non-blocking socket until it yields bytes (b"" at the deadline or EOF)."""
    while time.perf_counter() < deadline:
        try:
            return sock.recv(64)
        except BlockingIOError:
            continue
    return b""


def one_way_delays_ms(
    proxy_port: int, listener: socket.socket, pings: int, gap_s: float = 0.001
) -> tuple[list[float], list[float]]:
    """(up, down) one-way delays in ms of up to ``pings`` ping-pongs through the delay line
    at ``proxy_port``, whose upstream is ``listener``; ``gap_s`` between pings."""
    up: list[float] = []
    down: list[float] = []
    with socket.create_connection((LOOPBACK, proxy_port), timeout=10) as client:
        listener.settimeout(10)
        echo, _ = listener.accept()
        with echo:
            for sock in (client, echo):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setblocking(False)
            for _ in range(pings):
                deadline = time.perf_counter() + PING_TIMEOUT_S
                t0 = time.perf_counter_ns()
                client.send(b"p")
                if not spin_recv(echo, deadline):
                    break
                t1 = time.perf_counter_ns()
                echo.send(b"p")
                if not spin_recv(client, deadline):
                    break
                t2 = time.perf_counter_ns()
                up.append((t1 - t0) / 1e6)
                down.append((t2 - t1) / 1e6)
                time.sleep(gap_s)
    return up, down


def round_trips_ms(
    proxy_port: int, listener: socket.socket, pings: int, gap_s: float = 0.002
) -> list[float]:
    """Round-trip times in ms of the same ping-pong."""
    up, down = one_way_delays_ms(proxy_port, listener, pings, gap_s)
    return [u + d for u, d in zip(up, down, strict=True)]
