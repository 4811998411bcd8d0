"""``make bench``'s packet-link bars: its delay error beside the stream delay line's, and the
zero-loss check (packet link / stream link on window-bound cells).

1. delay error: the same 1-byte blocking ping-pong (each end wakes as the kernel delivers) through the
   stream delay line and through the packet link (both ends in this process: one socket
   opened in each of the forwarder's namespaces, ``setns``), interleaved in bursts at the
   same RTT; error = RTT - the configured RTT, p50/p99 of each side by side, and the
   forwarder's own lateness (each packet written after its due time, from its result);
2. zero loss: the h2 client with a static window below the BDP on both links, interleaved
   pairs, the same window, RTT and rate. The whole timed phase includes the kernels' slow
   start on the packet link (each measurement is a new TCP connection that starts at ten
   segments; on the stream link TCP runs over loopback and never sees the RTT): it is
   reported beside the steady state (the second half of the timed phase, from both links'
   delivery traces), which is the link's own figure. Bar: steady state within 10%.

Needs root and /dev/net/tun (``kit.delayline.netns.missing``); without them one line says so.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass

from kit.analysis.link import ramp_of
from kit.delayline.netns import CLIENT_NS_FD, SERVER_NS_FD, inside, missing
from kit.plan.packet import SERVER_ADDR, ForwarderConfig
from kit.plan.processes import LOOPBACK, ProxyConfig
from kit.plan.trial import ClientConfig, Link, LinkKind, Trial, Workload
from kit.plan.units import KIB, format_rate
from kit.quantile import percentile
from kit.results.codec import from_json
from kit.results.records import Measurement, PacketTotals
from kit.tools.linkbench import LinkLine
from kit.tools.pingpong import PING_TIMEOUT_S
from kit.topology.packet import FORWARDER_PROGRAM
from kit.topology.processes import Child, spawn
from kit.topology.programs import PROXY_PROGRAM
from kit.topology.topology import Topology

DELAY_RTT_MS = 20.0
DELAY_BURSTS, DELAY_BURST = 10, 40
ZERO_LOSS_CELLS = ((100e6, 50.0, 256 * KIB), (100e6, 20.0, 64 * KIB))
ZERO_LOSS_S = 3.0
ZERO_LOSS_PAIRS = 2
ZERO_LOSS_BAR = 0.10


@dataclass(frozen=True)
class PingPair:
    """A connected ping-pong pair: ``client`` sends, ``echo`` answers."""

    client: socket.socket
    echo: socket.socket


def _pair(listener: socket.socket, client: socket.socket) -> PingPair:
    listener.settimeout(10)
    echo, _ = listener.accept()
    listener.close()
    for sock in (client, echo):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(PING_TIMEOUT_S)
    return PingPair(client, echo)


def _packet_pair(forwarder_pid: int) -> PingPair:
    with _handle(forwarder_pid, SERVER_NS_FD) as server_ns, inside(server_ns):
        listener = socket.create_server((SERVER_ADDR, 0))
    port = listener.getsockname()[1]
    with _handle(forwarder_pid, CLIENT_NS_FD) as client_ns, inside(client_ns):
        client = socket.create_connection((SERVER_ADDR, port), timeout=10)
    return _pair(listener, client)


@contextlib.contextmanager
def _handle(forwarder_pid: int, ns_fd: int) -> Iterator[int]:
    """A handle of one of the forwarder's namespaces, held while in use."""
    fd = os.open(f"/proc/{forwarder_pid}/fd/{ns_fd}", os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


def _stream_pair(proxy: Child, listener: socket.socket) -> PingPair:
    return _pair(listener, socket.create_connection((LOOPBACK, proxy.port), timeout=10))


def _burst(pair: PingPair, pings: int, out: list[float]) -> None:
    for _ in range(pings):
        t0 = time.perf_counter_ns()
        pair.client.send(b"p")
        if not pair.echo.recv(64):
            raise OSError("the echo closed the connection")
        pair.echo.send(b"p")
        if not pair.client.recv(64):
            raise OSError("the echo closed the connection")
        out.append((time.perf_counter_ns() - t0) / 1e6)
        time.sleep(0.001)


def _totals(child: Child) -> PacketTotals | None:
    child.close()
    final = child.final
    data = getattr(final, "data", None)
    return None if data is None else from_json(PacketTotals, data, "forwarder result")


def delay_series(
    rtt_ms: float = DELAY_RTT_MS, bursts: int = DELAY_BURSTS
) -> tuple[dict[str, list[float]], PacketTotals | None]:
    """Round trips (ms) through each link, interleaved; and the forwarder's totals."""
    half = rtt_ms / 2
    link = Link(half, half)
    series: dict[str, list[float]] = {"stream": [], "packet": []}
    listener = socket.create_server((LOOPBACK, 0))
    proxy = spawn(
        "proxy", PROXY_PROGRAM, ProxyConfig(upstream_port=listener.getsockname()[1], link=link)
    )
    forwarder = spawn(
        "forwarder", FORWARDER_PROGRAM, ForwarderConfig(link=Link(half, half, kind="packet"))
    )
    pairs = {}
    try:
        pairs = {"stream": _stream_pair(proxy, listener), "packet": _packet_pair(forwarder.pid)}
        for pair in pairs.values():
            _burst(pair, 5, [])  # first wake-ups, page faults, ARP-free /32 routes
        for i in range(bursts):
            for name in pairs if i % 2 == 0 else reversed(pairs):
                _burst(pairs[name], DELAY_BURST, series[name])
    finally:
        for pair in pairs.values():
            pair.client.close()
            pair.echo.close()
        listener.close()
        proxy.close()
        totals = _totals(forwarder)
    return series, totals


def delay_lines(rtt_ms: float = DELAY_RTT_MS) -> list[LinkLine]:
    series, totals = delay_series(rtt_ms)
    lines = []
    for name, rtts in series.items():
        errs = [r - rtt_ms for r in rtts]
        value = f"p50 {percentile(errs, 50):+.3f} / p99 {percentile(errs, 99):+.3f} ms"
        lines.append(LinkLine(f"{name} link @ {rtt_ms:g} ms, blocking ping-pong: delay error",
                              value, "report (side by side)", None))  # fmt: skip
    if totals is not None:
        value = (
            f"p50 {totals.late_p50_us:.0f} / p99 {totals.late_p99_us:.0f} us; "
            f"{totals.device_drops} dropped by the devices"
        )
        lines.append(LinkLine("packet forwarder: packets written after their due time",
                              value, "report", None))  # fmt: skip
    return lines


def _link(kind: LinkKind, rate: float, rtt_ms: float) -> Link:
    half = rtt_ms / 2
    return Link(half, half, rate, rate, kind=kind, congestion="reno" if kind == "packet" else "")


def _figures(m: Measurement) -> tuple[float, float] | None:
    """(whole timed phase, steady state) in MiB/s."""
    steady = ramp_of(m)
    whole = m.throughput_mib_s if m.ok else None
    if whole is None or steady is None or not steady.steady_bits_s:
        return None
    return whole, steady.steady_bits_s / 8 / 2**20


def zero_loss_pairs(
    topo: Topology, rate: float, rtt_ms: float, window: int, pairs: int = ZERO_LOSS_PAIRS
) -> list[tuple[float, float]]:
    """Per interleaved pair: (whole, steady) ratios packet / stream."""
    client = ClientConfig(kind="h2", window_mode="static", window_bytes=window)
    workload = Workload(duration_s=ZERO_LOSS_S)
    ratios = []
    for i in range(pairs):
        found = {}
        kinds: tuple[LinkKind, LinkKind] = ("stream", "packet")
        for kind in kinds if i % 2 == 0 else kinds[::-1]:
            trial = Trial(link=_link(kind, rate, rtt_ms), client=client, workload=workload)
            found[kind] = _figures(topo.measure(trial))
        stream, packet = found["stream"], found["packet"]
        if stream is not None and packet is not None:
            ratios.append((packet[0] / stream[0], packet[1] / stream[1]))
    return ratios


def zero_loss_lines(topo: Topology) -> list[LinkLine]:
    lines = []
    for rate, rtt_ms, window in ZERO_LOSS_CELLS:
        ratios = zero_loss_pairs(topo, rate, rtt_ms, window)
        where = f"{window // KIB} KiB on {format_rate(rate)} x {rtt_ms:g} ms"
        if not ratios:
            lines.append(LinkLine(f"zero loss, {where}: packet / stream", "failed", "-", False))
            continue
        whole = statistics.median(r[0] for r in ratios)
        steady = statistics.median(r[1] for r in ratios)
        ok = abs(steady - 1) <= ZERO_LOSS_BAR
        lines += [
            LinkLine(f"zero loss, {where}: packet / stream, steady (2nd half)",
                     f"{steady:.3f} ({len(ratios)} pairs)",
                     f"1 +-{ZERO_LOSS_BAR:g}", ok),
            LinkLine(f"zero loss, {where}: packet / stream, whole {ZERO_LOSS_S:g} s",
                     f"{whole:.3f}", "report: TCP's slow start from 10 segments", None),
        ]  # fmt: skip
    return lines


def packet_bench(topo: Topology) -> list[LinkLine]:
    """Every packet-link bar (about 40 s), or one line saying what is missing."""
    why = missing() or (None if os.geteuid() == 0 else "its bench needs root (setns)")
    if why is not None:
        return [LinkLine("packet link", f"skipped: {why}", "-", None)]
    return [*delay_lines(), *zero_loss_lines(topo)]
