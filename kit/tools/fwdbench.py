"""The packet link's two forwarders side by side (part of ``make bench``'s packet-link bars):
the compiled one (``kit-linkfwd``) and the Python one, interleaved, on the same machine.

1. delivered rate: a bulk TCP transfer between the namespaces on a 1 Gbit/s x 10 ms link,
   MTU 1500: its payload rate over the second half of the transfer / the rate's payload
   share (each full packet carries MTU - 52 payload bytes). Bar: the compiled one >= 0.95;
2. ceiling: the same transfer with no rate and no delay, at MTU 1500 and 9000 (Gbit/s of
   payload; the machine's cores, shared by the sender, the receiver and the forwarder, bound
   it);
3. delay error: a blocking 1-byte ping-pong through each forwarder at 20 ms RTT, beside the
   machine's floor (the same ping-pong over loopback, the echo sleeping the 20 ms itself to
   an absolute timerfd deadline), interleaved in bursts: RTT - 20 ms, p50/p99; bar: the
   compiled one's p99 within 0.5 ms of the floor's;
4. the kit's own cell (``kit run --link packet --client h2 --window 1MiB --rtt 20ms``) on each
   forwarder / the same cell on the stream link. Bar: the compiled one within 10%.

The bulk lines also run the compiled forwarder without segmentation offload on its TUN
devices (``KIT_LINKFWD_OFFLOAD=off``: one read and one write per MTU-sized packet, as the
Python forwarder). Each line gives the ratio compiled / Python; absolute figures are this
machine's.
"""

from __future__ import annotations

import functools
import os
import select
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from tabulate import tabulate

from kit.delayline.netns import missing
from kit.delayline.timer import open_timerfd
from kit.plan.packet import TCP_IP_HEADER_BYTES, ForwarderConfig
from kit.plan.processes import LOOPBACK
from kit.plan.programs import DELAYLINE_ENV, FORWARDER_PROGRAMS
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import MIB
from kit.quantile import percentile
from kit.results.records import PacketTotals
from kit.tools.benchline import BenchLine
from kit.tools.nspairs import PingPair, forwarder_totals, packet_pair, pair_of, ping_burst
from kit.topology.processes import Child, spawn
from kit.topology.topology import Topology

KINDS = ("python", "compiled")
# The bulk lines also run the compiled forwarder without segmentation offload on its devices.
NO_OFFLOAD = "compiled, no offload"
BULK_KINDS = ("python", NO_OFFLOAD, "compiled")
OFFLOAD_ENV = "KIT_LINKFWD_OFFLOAD"
BULK_S = 3.0
BULK_RATE = 1e9
BULK_RTT_MS = 10.0
RATE_BAR = 0.95
DELAY_RTT_MS = 20.0
DELAY_BAR_MS = 0.5
DELAY_BURSTS, DELAY_BURST = 10, 40
CELL_BAR = 0.10
CHUNK = bytes(256 * 1024)


@dataclass
class _Received:
    """What the receiving end read: (monotonic ns, bytes) per read."""

    reads: list[tuple[int, int]]


def _receive(pair: PingPair, out: _Received) -> None:
    while True:
        n = len(pair.client.recv(1 << 20))
        if not n:
            return
        out.reads.append((time.monotonic_ns(), n))


def _send(pair: PingPair, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            pair.echo.sendall(CHUNK)
    finally:
        pair.echo.close()


def _second_half_bits_s(received: _Received) -> float | None:
    """The payload rate over the second half of the transfer."""
    if len(received.reads) < 2:
        return None
    start, end = received.reads[0][0], received.reads[-1][0]
    half = start + (end - start) // 2
    later = [(t, n) for t, n in received.reads if t >= half]
    span_ns = later[-1][0] - later[0][0]
    if span_ns <= 0:
        return None
    return sum(n for _, n in later[1:]) * 8 / (span_ns / 1e9)


def _spawn(kind: str, link: Link) -> Child:
    """``kind``'s forwarder for ``link`` (the compiled one without offload: told by its
    environment)."""
    if kind != NO_OFFLOAD:
        return spawn("forwarder", FORWARDER_PROGRAMS[kind], ForwarderConfig(link=link))
    os.environ[OFFLOAD_ENV] = "off"
    try:
        return spawn("forwarder", FORWARDER_PROGRAMS["compiled"], ForwarderConfig(link=link))
    finally:
        del os.environ[OFFLOAD_ENV]


def bulk_bits_s(kind: str, link: Link, seconds: float = BULK_S) -> float | None:
    """One bulk transfer server -> client through ``kind``'s forwarder: payload bit/s."""
    forwarder = _spawn(kind, link)
    try:
        pair = packet_pair(forwarder.pid)
        for sock in (pair.client, pair.echo):
            sock.settimeout(30)
        received = _Received([])
        reader = threading.Thread(target=_receive, args=(pair, received), daemon=True)
        reader.start()
        _send(pair, seconds)
        reader.join(timeout=30)
        pair.client.close()
    finally:
        forwarder.close()
    return _second_half_bits_s(received)


def _interleaved(measure: Callable[[str], float | None], rounds: int = 2) -> dict[str, float]:
    """The median of each forwarder's figure over ``rounds``, in alternating order."""
    found: dict[str, list[float]] = {k: [] for k in BULK_KINDS}
    for i in range(rounds):
        for kind in BULK_KINDS if i % 2 == 0 else BULK_KINDS[::-1]:
            value = measure(kind)
            if value is not None:
                found[kind].append(value)
    return {k: statistics.median(v) for k, v in found.items() if v}


def _ratio_text(values: dict[str, float], fmt: Callable[[float], str]) -> str:
    shown = ", ".join(f"{k} {fmt(values[k])}" for k in BULK_KINDS if k in values)
    if "compiled" in values and values.get("python"):
        shown += f"; compiled / python {values['compiled'] / values['python']:.2f}"
    return shown


def rate_lines() -> list[BenchLine]:
    half = BULK_RTT_MS / 2
    link = Link(half, half, BULK_RATE, BULK_RATE, kind="packet")
    share = (link.mtu - TCP_IP_HEADER_BYTES) / link.mtu
    found = _interleaved(lambda k: _fraction(bulk_bits_s(k, link), BULK_RATE * share))
    ok = None if "compiled" not in found else found["compiled"] >= RATE_BAR
    name = f"forwarders, bulk TCP on 1 Gbit/s x {BULK_RTT_MS:g} ms, MTU 1500: delivered / rate"
    return [BenchLine(name, _ratio_text(found, lambda v: f"{v:.3f}"), f">= {RATE_BAR}", ok)]


def _fraction(bits_s: float | None, of: float) -> float | None:
    return None if bits_s is None else bits_s / of


def _unlimited_bits_s(kind: str, mtu: int) -> float | None:
    return bulk_bits_s(kind, Link(kind="packet", mtu=mtu))


def ceiling_lines() -> list[BenchLine]:
    lines = []
    for mtu in (1500, 9000):
        found = _interleaved(functools.partial(_unlimited_bits_s, mtu=mtu))
        name = f"forwarders, bulk TCP, no rate, no delay, MTU {mtu}: payload Gbit/s"
        value = _ratio_text(found, lambda v: f"{v / 1e9:.2f}")
        lines.append(BenchLine(name, value, "report (this machine's cores)", None))
    return lines


def _floor_burst(pair: PingPair, rtt_ms: float, pings: int, out: list[float]) -> None:
    """The floor: the echo replies at the ping's arrival + ``rtt_ms`` (an absolute timerfd)."""
    timer = open_timerfd()
    try:
        for _ in range(pings):
            t0 = time.perf_counter_ns()
            pair.client.send(b"p")
            if not pair.echo.recv(64):
                raise OSError("the echo closed the connection")
            timer.set_abs_ns(time.monotonic_ns() + round(rtt_ms * 1e6))
            select.select([timer.fd], [], [])
            timer.drain()
            pair.echo.send(b"p")
            if not pair.client.recv(64):
                raise OSError("the echo closed the connection")
            out.append((time.perf_counter_ns() - t0) / 1e6)
            time.sleep(0.001)
    finally:
        timer.close()


def _loopback_pair() -> PingPair:
    listener = socket.create_server((LOOPBACK, 0))
    client = socket.create_connection(listener.getsockname(), timeout=10)
    return pair_of(listener, client)


def delay_errors(
    rtt_ms: float = DELAY_RTT_MS,
) -> tuple[dict[str, list[float]], dict[str, PacketTotals]]:
    """Ping-pong RTT - ``rtt_ms`` (ms) through each forwarder and of the floor, interleaved
    in bursts; and each forwarder's totals (how late it wrote packets)."""
    half = rtt_ms / 2
    link = Link(half, half, kind="packet")
    children: dict[str, Child] = {}
    pairs: dict[str, PingPair] = {}
    names = (*KINDS, "floor")
    series: dict[str, list[float]] = {k: [] for k in names}
    late: dict[str, PacketTotals] = {}

    def burst(name: str, pings: int, out: list[float]) -> None:
        if name == "floor":
            _floor_burst(pairs[name], rtt_ms, pings, out)
        else:
            ping_burst(pairs[name], pings, out)

    try:
        for kind in KINDS:
            children[kind] = spawn(
                "forwarder", FORWARDER_PROGRAMS[kind], ForwarderConfig(link=link)
            )
            pairs[kind] = packet_pair(children[kind].pid)
        pairs["floor"] = _loopback_pair()
        for name in names:
            burst(name, 5, [])
        for i in range(DELAY_BURSTS):
            for name in names if i % 2 == 0 else names[::-1]:
                burst(name, DELAY_BURST, series[name])
    finally:
        for pair in pairs.values():
            pair.client.close()
            pair.echo.close()
        for kind, child in children.items():
            totals = forwarder_totals(child)
            if totals is not None:
                late[kind] = totals
    return {k: [r - rtt_ms for r in v] for k, v in series.items()}, late


def delay_lines() -> list[BenchLine]:
    errors, late = delay_errors()
    lines = [
        BenchLine(
            "forwarders, ping-pong: packets written after their due time, p50 / p99 (us)",
            ", ".join(f"{k} {t.late_p50_us:g} / {t.late_p99_us:g}" for k, t in late.items()),
            "report",
            None,
        )
    ]
    for pct in (50, 99):
        found = {k: percentile(v, pct) for k, v in errors.items() if v}
        ok = None
        if pct == 99 and "compiled" in found and "floor" in found:
            ok = found["compiled"] - found["floor"] <= DELAY_BAR_MS
        name = f"forwarders, ping-pong @ {DELAY_RTT_MS:g} ms: delay error p{pct} (ms)"
        shown = ", ".join(f"{k} {found[k]:+.3f}" for k in (*KINDS, "floor") if k in found)
        bar = f"compiled <= floor + {DELAY_BAR_MS}" if pct == 99 else "report"
        lines.append(BenchLine(name, shown, bar, ok))
    return lines


def _cell(kind: str) -> float | None:
    """``kit run --client h2 --window 1MiB --rtt 20ms`` on ``kind``'s link (a topology of its
    own): MiB/s over the timed phase."""
    client = ClientConfig(kind="h2", window_mode="static", window_bytes=MIB)
    half = DELAY_RTT_MS / 2
    link = Link(half, half, kind="packet" if kind != "stream" else "stream")
    saved = os.environ.get(DELAYLINE_ENV)
    if kind in KINDS:
        os.environ[DELAYLINE_ENV] = kind
    try:
        with Topology() as topo:
            m = topo.measure(Trial(link=link, client=client, workload=Workload(duration_s=BULK_S)))
    finally:
        os.environ.pop(DELAYLINE_ENV, None)
        if saved is not None:
            os.environ[DELAYLINE_ENV] = saved
    return m.throughput_mib_s if m.ok else None


def cell_lines() -> list[BenchLine]:
    """Each forwarder's cell / the stream link's (the whole phase: on the packet link it
    includes TCP's slow start from ten segments; the stream link's TCP runs over loopback)."""
    found = {kind: _cell(kind) for kind in ("stream", *KINDS)}
    stream = found["stream"]
    ratios = {k: v / stream for k, v in found.items() if k in KINDS and v and stream}
    ok = None if "compiled" not in ratios else abs(ratios["compiled"] - 1) <= CELL_BAR
    name = "kit run --link packet --client h2 --window 1MiB --rtt 20ms / the stream link"
    return [BenchLine(name, _ratio_text(ratios, lambda v: f"{v:.3f}"), f"1 +-{CELL_BAR:g}", ok)]


def forwarder_bench() -> list[BenchLine]:
    """Every forwarder line (about 90 s), or one line saying why they cannot run."""
    why = missing() or (None if os.geteuid() == 0 else "its bench needs root (setns)")
    if why is None and FORWARDER_PROGRAMS["compiled"].missing() is not None:
        why = "the compiled forwarder is not built (make install)"
    if why is not None:
        return [BenchLine("forwarders side by side", f"skipped: {why}", "-", None)]
    return [*rate_lines(), *ceiling_lines(), *delay_lines(), *cell_lines()]


def main(argv: list[str] | None = None) -> int:
    """``python -m kit.tools.fwdbench``: only the forwarders side by side."""
    if sys.argv[1:] if argv is None else argv:
        print("usage: python -m kit.tools.fwdbench (no arguments)", file=sys.stderr)
        return 2
    verdict = {True: "ok", False: "MISSED", None: "-"}
    rows = [(b.name, b.value, b.bar, verdict[b.ok]) for b in forwarder_bench()]
    print(tabulate(rows, headers=["measure", "value", "bar", ""], tablefmt="github"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
