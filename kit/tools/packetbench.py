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
   delivery traces), which is the link's own figure. Bar: steady state within 10%;
3. slow start after idle (TCP's own, no HTTP/2): a bulk transfer between the namespaces,
   an idle second, another: the time to the first byte and to 90% of the rate after it,
   with the namespaces' tcp_slow_start_after_idle on (Linux's default: the congestion
   window is halved for every RTO of idle time, down to ten segments) and off, beside the
   cold start.

Needs root and /dev/net/tun (``kit.delayline.netns.missing``); without them one line says so.
"""

from __future__ import annotations

import os
import socket
import statistics
import sys
import threading
import time
from dataclasses import dataclass

from tabulate import tabulate

from kit.analysis.link import ramp_of
from kit.delayline.netns import SERVER_NS_FD, inside, missing
from kit.plan.packet import ForwarderConfig
from kit.plan.processes import LOOPBACK, ProxyConfig
from kit.plan.programs import forwarder_program, proxy_program
from kit.plan.trial import ClientConfig, Link, LinkKind, Trial, Workload
from kit.plan.units import KIB, format_rate
from kit.quantile import percentile
from kit.results.records import Measurement, PacketTotals
from kit.tools.benchline import BenchLine
from kit.tools.fwdbench import forwarder_bench
from kit.tools.nspairs import (
    PingPair,
    forwarder_totals,
    ns_handle,
    packet_pair,
    pair_of,
    ping_burst,
)
from kit.topology.processes import Child, spawn
from kit.topology.topology import Topology

DELAY_RTT_MS = 20.0
DELAY_BURSTS, DELAY_BURST = 10, 40
ZERO_LOSS_CELLS = ((100e6, 50.0, 256 * KIB), (100e6, 20.0, 64 * KIB))
ZERO_LOSS_S = 3.0
ZERO_LOSS_PAIRS = 2
ZERO_LOSS_BAR = 0.10


def _stream_pair(proxy: Child, listener: socket.socket) -> PingPair:
    return pair_of(listener, socket.create_connection((LOOPBACK, proxy.port), timeout=10))


def delay_series(
    rtt_ms: float = DELAY_RTT_MS, bursts: int = DELAY_BURSTS
) -> tuple[dict[str, list[float]], PacketTotals | None]:
    """Round trips (ms) through each link, interleaved; and the forwarder's totals."""
    half = rtt_ms / 2
    link = Link(half, half)
    series: dict[str, list[float]] = {"stream": [], "packet": []}
    listener = socket.create_server((LOOPBACK, 0))
    proxy = spawn(
        "proxy", proxy_program(), ProxyConfig(upstream_port=listener.getsockname()[1], link=link)
    )
    forwarder = spawn(
        "forwarder", forwarder_program(), ForwarderConfig(link=Link(half, half, kind="packet"))
    )
    pairs = {}
    try:
        pairs = {"stream": _stream_pair(proxy, listener), "packet": packet_pair(forwarder.pid)}
        for pair in pairs.values():
            ping_burst(pair, 5, [])  # first wake-ups, page faults, ARP-free /32 routes
        for i in range(bursts):
            for name in pairs if i % 2 == 0 else reversed(pairs):
                ping_burst(pairs[name], DELAY_BURST, series[name])
    finally:
        for pair in pairs.values():
            pair.client.close()
            pair.echo.close()
        listener.close()
        proxy.close()
        totals = forwarder_totals(forwarder)
    return series, totals


def delay_lines(rtt_ms: float = DELAY_RTT_MS) -> list[BenchLine]:
    series, totals = delay_series(rtt_ms)
    lines = []
    for name, rtts in series.items():
        errs = [r - rtt_ms for r in rtts]
        value = f"p50 {percentile(errs, 50):+.3f} / p99 {percentile(errs, 99):+.3f} ms"
        lines.append(BenchLine(f"{name} link @ {rtt_ms:g} ms, blocking ping-pong: delay error",
                              value, "report (side by side)", None))  # fmt: skip
    if totals is not None:
        value = (
            f"p50 {totals.late_p50_us:.0f} / p99 {totals.late_p99_us:.0f} us; "
            f"{totals.device_drops} dropped by the devices"
        )
        lines.append(BenchLine("packet forwarder: packets written after their due time",
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


def zero_loss_lines(topo: Topology) -> list[BenchLine]:
    lines = []
    for rate, rtt_ms, window in ZERO_LOSS_CELLS:
        ratios = zero_loss_pairs(topo, rate, rtt_ms, window)
        where = f"{window // KIB} KiB on {format_rate(rate)} x {rtt_ms:g} ms"
        if not ratios:
            lines.append(BenchLine(f"zero loss, {where}: packet / stream", "failed", "-", False))
            continue
        whole = statistics.median(r[0] for r in ratios)
        steady = statistics.median(r[1] for r in ratios)
        ok = abs(steady - 1) <= ZERO_LOSS_BAR
        lines += [
            BenchLine(f"zero loss, {where}: packet / stream, steady (2nd half)",
                     f"{steady:.3f} ({len(ratios)} pairs)",
                     f"1 +-{ZERO_LOSS_BAR:g}", ok),
            BenchLine(f"zero loss, {where}: packet / stream, whole {ZERO_LOSS_S:g} s",
                     f"{whole:.3f}", "report: TCP's slow start from 10 segments", None),
        ]  # fmt: skip
    return lines


def packet_bench(topo: Topology) -> list[BenchLine]:
    """Every packet-link bar (about 40 s), or one line saying what is missing."""
    why = missing() or (None if os.geteuid() == 0 else "its bench needs root (setns)")
    if why is not None:
        return [BenchLine("packet link", f"skipped: {why}", "-", None)]
    return [*delay_lines(), *zero_loss_lines(topo), *idle_lines()]


IDLE_LINK = (100e6, 50.0)
IDLE_S = 1.0
IDLE_BURST_BYTES = 12 * 1024 * 1024  # ~1 s at the rate: cwnd reaches the BDP first
# The receiver's buffer bounds its TCP window near 2 BDPs, under what the link holds (BDP +
# a 4 MiB queue): nothing is lost, so Reno never leaves slow start's regime and the second
# burst shows the idle restart alone (a loss would show Reno's halved window instead).
IDLE_RCVBUF_BYTES = 1250 * 1000
IDLE_QUEUE_BYTES = 4 * 1024 * 1024
PAYLOAD_SHARE = 1448 / 1500  # a full packet's TCP payload, timestamps on


@dataclass
class _Arrivals:
    """What the receiving end read, with its times (ns)."""

    times_ns: list[int]
    sizes: list[int]

    def total(self) -> int:
        return sum(self.sizes)


def _receive(sock: socket.socket, want: int, out: _Arrivals) -> None:
    got = 0
    while got < want:
        data = sock.recv(1 << 20)
        if not data:
            return
        got += len(data)
        out.times_ns.append(time.monotonic_ns())
        out.sizes.append(len(data))


def _set_idle_restart(on: bool) -> None:
    with open("/proc/sys/net/ipv4/tcp_slow_start_after_idle", "w", encoding="ascii") as f:
        f.write("1" if on else "0")


def _to_rate_ms(arrivals: _Arrivals, since_ns: int, rate: float, rtt_ms: float) -> float | None:
    """From ``since_ns`` until the bytes read over one RTT first carried 90% of the rate's
    payload share."""
    want = 0.9 * rate / 8 * PAYLOAD_SHARE * rtt_ms / 1000
    window_ns = round(rtt_ms * 1e6)
    times = [
        (t, n) for t, n in zip(arrivals.times_ns, arrivals.sizes, strict=True) if t >= since_ns
    ]
    start = total = 0
    for t, n in times:
        total += n
        while times[start][0] < t - window_ns:
            total -= times[start][1]
            start += 1
        if total >= want and t - since_ns >= window_ns:
            return (t - since_ns) / 1e6
    return None


def _first_ms(arrivals: _Arrivals, since_ns: int) -> float | None:
    later = [t for t in arrivals.times_ns if t >= since_ns]
    return (later[0] - since_ns) / 1e6 if later else None


@dataclass(frozen=True)
class IdleRestart:
    """Times from the start of each burst (ms; None: never): to 90% of the rate cold, and
    after the idle second to the first byte and to 90% of the rate."""

    cold_ms: float | None
    first_byte_ms: float | None
    after_idle_ms: float | None


def idle_restart(after_idle: bool) -> IdleRestart:
    """A bulk TCP transfer between the packet link's namespaces (100 Mbit/s x 50 ms, Reno),
    an idle second, and a second bulk; ``after_idle``: the server namespace's
    tcp_slow_start_after_idle (Linux's default is on)."""
    rate, rtt_ms = IDLE_LINK
    link = Link(rtt_ms / 2, rtt_ms / 2, rate, rate, kind="packet", congestion="reno",
                queue_bytes=IDLE_QUEUE_BYTES)  # fmt: skip
    forwarder = spawn("forwarder", forwarder_program(), ForwarderConfig(link=link))
    try:
        with ns_handle(forwarder.pid, SERVER_NS_FD) as server_ns, inside(server_ns):
            _set_idle_restart(after_idle)
        pair = packet_pair(forwarder.pid, IDLE_RCVBUF_BYTES)
        for sock in (pair.client, pair.echo):
            sock.settimeout(30)
        arrivals = _Arrivals([], [])
        found, first = [], None
        for burst in range(2):
            reader = threading.Thread(
                target=_receive, args=(pair.client, IDLE_BURST_BYTES, arrivals), daemon=True
            )
            since = time.monotonic_ns()
            reader.start()
            pair.echo.sendall(bytes(IDLE_BURST_BYTES))
            reader.join(timeout=60)
            found.append(_to_rate_ms(arrivals, since, rate, rtt_ms))
            first = _first_ms(arrivals, since)
            if burst == 0:
                time.sleep(IDLE_S)
        pair.client.close()
        pair.echo.close()
    finally:
        forwarder.close()
    return IdleRestart(found[0], first, found[1])


def idle_lines() -> list[BenchLine]:
    lines = []
    for on in (True, False):
        found = idle_restart(on)
        cold, first, warm = (
            "never" if v is None else f"{v:.0f} ms"
            for v in (found.cold_ms, found.first_byte_ms, found.after_idle_ms)
        )
        name = (
            f"TCP on 100 Mbit/s x 50 ms, slow start after idle {'on' if on else 'off'}: to 90% "
            "of the rate cold; after an idle second, to the first byte and to 90%"
        )
        lines.append(BenchLine(name, f"{cold}; {first}, {warm}", "report: TCP's own", None))
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m kit.tools.packetbench``: only the packet link's lines, its forwarders side
    by side last (about three minutes)."""
    if sys.argv[1:] if argv is None else argv:
        print("usage: python -m kit.tools.packetbench (no arguments)", file=sys.stderr)
        return 2
    with Topology() as topo:
        lines = packet_bench(topo)
    lines += forwarder_bench()
    verdict = {True: "ok", False: "MISSED", None: "-"}
    rows = [(b.name, b.value, b.bar, verdict[b.ok]) for b in lines]
    print(tabulate(rows, headers=["measure", "value", "bar", ""], tablefmt="github"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
