"""The delay line against this machine's floor: what any process pays to wake after an idle wait.

The floor is the same blocking 1-byte ping-pong with *no* proxy, where the echo itself sleeps
to an absolute due time (arrival + configured RTT, on a timerfd, like the delay line's timer)
before it replies. A delay line cannot beat it: it pays the same wake-up, plus its own work.
Each figure is measured beside its floor, interleaved in short bursts on connections that
stay open (so a burst of machine noise lands on both), and reported as the error of each
(RTT - configured RTT) and the proxy's p50/p99 minus the floor's.

``variants`` runs several delay lines side by side (each its own process, with its own
environment), e.g. to measure a lever against the default in the same minute.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from kit.plan.processes import LOOPBACK
from kit.plan.programs import Program
from kit.plan.units import MIB
from kit.quantile import percentile
from kit.tools.tapbench import (
    SLEEP_DELAY,
    SLEEPING_ROLE,
    _tool_process,
    flood,
    proxy,
    send_mib_s,
)

ECHO_ROLE = b"e"
BURST = 20
GAP_S = 0.002


@dataclass(frozen=True)
class Errors:
    """p50/p99 of RTT minus configured RTT, ms, of one series."""

    p50_ms: float
    p99_ms: float
    samples: int


def errors_of(rtts_ms: list[float], rtt_ms: float) -> Errors:
    errs = [r - rtt_ms for r in rtts_ms] or [float("nan")]
    return Errors(percentile(errs, 50), percentile(errs, 99), len(rtts_ms))


@contextlib.contextmanager
def _client(port: int, hello: bytes) -> Iterator[socket.socket]:
    with socket.create_connection((LOOPBACK, port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(hello)
        if hello == ECHO_ROLE and not sock.recv(64):  # the plain echo answers its role byte
            raise OSError("the echo closed the connection")
        yield sock


def _burst(sock: socket.socket, pings: int, out: list[float]) -> None:
    for _ in range(pings):
        t0 = time.perf_counter_ns()
        sock.sendall(b"e")
        if not sock.recv(64):
            raise OSError("the echo closed the connection")
        out.append((time.perf_counter_ns() - t0) / 1e6)
        time.sleep(GAP_S)


@contextlib.contextmanager
def _env(extra: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# A delay line to measure: (upstream port, delay up ms, delay down ms) -> its port, while open.
Starter = Callable[[int, float, float], contextlib.AbstractContextManager[int]]


def kit_line(program: Program | None = None, env: Mapping[str, str] | None = None) -> Starter:
    """The kit's delay line (``program``: the kit's choice when None), started in ``env``."""

    @contextlib.contextmanager
    def start(port: int, up_ms: float, down_ms: float) -> Iterator[int]:
        with contextlib.ExitStack() as stack:
            with _env(env or {}):  # the environment it starts in
                child = stack.enter_context(proxy(port, up_ms, None, down_ms, program=program))
            yield child.port

    return start


def against_floor(
    delay_up_ms: float,
    delay_down_ms: float,
    variants: Mapping[str, Mapping[str, str]] | None = None,
    rounds: int = 10,
    bulk: bool = False,
    starters: Mapping[str, Starter] | None = None,
    bulk_mbit_s: float | None = None,
) -> dict[str, Errors]:
    """Errors of each delay line variant (default: one, "proxy") and of the floor, measured
    interleaved in ``rounds`` bursts of ``BURST`` pings each; ``bulk``: a transfer of 16 KiB
    DATA frames crosses each delay line on another connection meanwhile, at full speed or
    paced to ``bulk_mbit_s`` (the same load through every line). A variant is
    the kit's delay line in an environment of its own (``variants``) or any line a
    ``Starter`` starts (``starters``: another program, toxiproxy)."""
    lines = dict(starters or {})
    lines.update({name: kit_line(env=env) for name, env in (variants or {}).items()})
    lines = lines or {"proxy": kit_line()}
    rtt_ms = delay_up_ms + delay_down_ms
    series: dict[str, list[float]] = {name: [] for name in (*lines, "floor")}
    with _upstream() as port, contextlib.ExitStack() as stack:
        socks: dict[str, socket.socket] = {}
        for name, start in lines.items():
            line_port = stack.enter_context(start(port, delay_up_ms, delay_down_ms))
            if bulk:
                pace = () if bulk_mbit_s is None else (f"{bulk_mbit_s:g}",)
                flooder = _tool_process("flood", str(line_port), "large-data", *pace)
                _started(stack.enter_context(flooder))
            socks[name] = stack.enter_context(_client(line_port, ECHO_ROLE))
        hello = SLEEPING_ROLE + SLEEP_DELAY.pack(round(rtt_ms * 1e6))
        socks["floor"] = stack.enter_context(_client(port, hello))
        for sock in socks.values():  # warm-up: first wake-ups, lead estimate, page faults
            _burst(sock, 5, [])
        for i in range(rounds):
            order = list(socks) if i % 2 == 0 else list(reversed(socks))
            for name in order:
                _burst(socks[name], BURST, series[name])
    return {name: errors_of(rtts, rtt_ms) for name, rtts in series.items()}


def _started(flooder: subprocess.Popen[str]) -> None:
    """Wait until a flood process says it sends (bounded: it prints at once when it runs)."""
    assert flooder.stdout is not None
    ready, _, _ = select.select([flooder.stdout], [], [], 15)
    if not ready or not flooder.stdout.readline():
        raise OSError("the flood process did not start")


@contextlib.contextmanager
def _upstream() -> Iterator[int]:
    with _tool_process("upstream") as child:
        assert child.stdout is not None
        yield int(child.stdout.readline())


def flood_neighbour(
    delay_ms: float = 5.0,
    rounds: int = 5,
    tap: Path | None = None,
    program: Program | None = None,
) -> tuple[dict[str, Errors], float]:
    """A 2 x ``delay_ms`` ping-pong's error through a delay line while a max-rate PING flood
    crosses it on another connection, beside the floor measured meanwhile (interleaved), and
    the flood's forwarding rate (MiB/s) through that delay line, measured right after."""
    rtt_ms = 2 * delay_ms
    series: dict[str, list[float]] = {"neighbour": [], "floor": []}
    with _upstream() as port, proxy(port, delay_ms, tap, program=program) as line:
        with contextlib.ExitStack() as stack:
            _started(stack.enter_context(_tool_process("flood", str(line.port))))
            socks = {
                "neighbour": stack.enter_context(_client(line.port, ECHO_ROLE)),
                "floor": stack.enter_context(
                    _client(port, SLEEPING_ROLE + SLEEP_DELAY.pack(round(rtt_ms * 1e6)))
                ),
            }
            time.sleep(0.2)  # the flood is at full rate
            for i in range(rounds):
                for name in socks if i % 2 == 0 else reversed(socks):
                    _burst(socks[name], BURST, series[name])
        rate = send_mib_s(line.port, flood("ping", 16 * MIB))
    return {name: errors_of(rtts, rtt_ms) for name, rtts in series.items()}, rate
