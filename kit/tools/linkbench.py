"""``make bench``'s link bars: the bottleneck's rate, the min rule, jitter, the estimators.

Measured through the real delay line with real clients (see ``kit.tools.bench``); no
absolute speed is a bar, every bar is a ratio or a distribution against what was set:

1. rate accuracy: a static h2 window far above the BDP (8 x, at least 1 MiB) carries the
   set rate within -5%/+2%, from 10 Mbit/s upwards; the highest rate that still does is the
   machine's ceiling (reported, with the CPU of the busiest process there);
2. min rule: a window below the BDP follows window / RTT (efficiency >= 0.9); the windows
   are small against the BDP (W/rate, the window's own serialisation, is < 5% of the RTT);
3. jitter: one-way delays of a ping-pong through a link with +-J match the configured
   uniform distribution (median within 0.3 ms of the delay, the spread read from the lower
   half, (p45 - p5) / 0.4, within 10% of 2J);
4. estimators: grpcio's and our h2 client's dynamic windows carry >= 0.8 of the rate over a
   cold 3 s transfer on 100 Mbit/s x 50 ms.
"""

from __future__ import annotations

import socket
import statistics
from collections.abc import Callable
from dataclasses import replace

from kit.analysis.cells import efficiency
from kit.analysis.link import mbit_s
from kit.plan.processes import LOOPBACK, ProxyConfig
from kit.plan.programs import proxy_program
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import KIB, MIB, format_rate
from kit.quantile import percentile
from kit.results.records import Measurement
from kit.tools.benchline import BenchLine
from kit.tools.pingpong import one_way_delays_ms
from kit.topology.processes import spawn
from kit.topology.topology import Topology

RATES_BITS_S = (10e6, 100e6, 500e6, 1e9, 2e9, 4e9, 8e9)
RATE_RTT_MS = 20.0
RATE_LOW, RATE_HIGH = 0.95, 1.02
MIN_RULE_CASES = ((1e9, 20.0, 64 * KIB), (1e9, 50.0, 256 * KIB))
MIN_RULE_BAR = 0.90
JITTER_DELAY_MS, JITTER_MS = 10.0, 5.0
JITTER_PINGS = 400
JITTER_MEDIAN_MS, JITTER_SPREAD = 0.3, 0.10
ESTIMATOR_LINK = (100e6, 50.0)
ESTIMATOR_S = 3.0
ESTIMATOR_BAR = 0.8


def _link(rate_bits_s: float, rtt_ms: float, jitter_ms: float = 0.0) -> Link:
    half = rtt_ms / 2
    return Link(half, half, rate_bits_s, rate_bits_s, jitter_ms)


def _fraction(m: Measurement, rate_bits_s: float) -> float | None:
    tput = mbit_s(m.throughput_mib_s) if m.ok else None
    return None if tput is None else tput * 1e6 / rate_bits_s


def _busiest(m: Measurement) -> str:
    if not m.cpu:
        return ""
    top = max(m.cpu, key=lambda c: c.cpu_fraction)
    return f"{top.role} {top.cpu_fraction:.0%}"


def _workload(bytes_per_s: float, duration_s: float) -> Workload:
    """Throughput counts whole messages: keep one message under 0.5% of the transfer."""
    message = min(256 * KIB, max(16 * KIB, int(bytes_per_s * duration_s / 200)))
    return Workload(duration_s=duration_s, message_bytes=message)


def rate_accuracy(topo: Topology, duration_s: float = 2.0) -> list[BenchLine]:
    """Each rate with a window >> BDP; stops after the first rate that misses (the ceiling)."""
    lines, ceiling = [], None
    for rate in RATES_BITS_S:
        bdp = rate / 8 * RATE_RTT_MS / 1000
        window = min(max(MIB, int(8 * bdp)), 256 * MIB)
        client = ClientConfig(kind="h2", window_mode="static", window_bytes=window)
        workload = _workload(rate / 8, duration_s)
        m = topo.measure(Trial(link=_link(rate, RATE_RTT_MS), client=client, workload=workload))
        frac = _fraction(m, rate)
        ok = frac is not None and RATE_LOW <= frac <= RATE_HIGH
        value = "failed" if frac is None else f"{frac:.3f} ({_busiest(m)})"
        lines.append(BenchLine(f"rate {format_rate(rate)} @ 20 ms: throughput / rate", value,
                              f"{RATE_LOW:g} .. {RATE_HIGH:g}", ok))  # fmt: skip
        if not ok:
            break
        ceiling = rate
    text = "none" if ceiling is None else format_rate(ceiling)
    lines.append(BenchLine("rate ceiling (highest rate within the bar)", text, "report", None))
    return lines


def min_rule(topo: Topology, duration_s: float = 2.0) -> list[BenchLine]:
    lines = []
    for rate, rtt_ms, window in MIN_RULE_CASES:
        client = ClientConfig(kind="h2", window_mode="static", window_bytes=window)
        workload = _workload(window / (rtt_ms / 1000), duration_s)
        m = topo.measure(Trial(link=_link(rate, rtt_ms), client=client, workload=workload))
        eff = efficiency(m.throughput_mib_s, m.theory_mib_s) if m.ok else None
        bdp = rate / 8 * rtt_ms / 1000
        name = (
            f"min rule: {window // KIB} KiB on {format_rate(rate)} x {rtt_ms:g} ms "
            f"(W/BDP {window / bdp:.2f}): efficiency vs window/RTT"
        )
        value = "failed" if eff is None else f"{eff:.3f}"
        lines.append(
            BenchLine(name, value, f">= {MIN_RULE_BAR:g}", eff is not None and eff >= MIN_RULE_BAR)
        )
    return lines


def _proxy_delays(
    config: ProxyConfig, listener: socket.socket, pings: int
) -> tuple[list[float], list[float]]:
    child = spawn("proxy", proxy_program(), config)
    try:
        return one_way_delays_ms(child.port, listener, pings)
    finally:
        child.close()


def jitter_distribution(pings: int = JITTER_PINGS) -> list[BenchLine]:
    """One-way delays with +-J against the configured U[d-J, d+J] (both directions)."""
    with socket.create_server((LOOPBACK, 0)) as listener:
        port = listener.getsockname()[1]
        zero_up, zero_down = _proxy_delays(ProxyConfig(upstream_port=port), listener, 50)
        link = Link(JITTER_DELAY_MS, JITTER_DELAY_MS, jitter_ms=JITTER_MS)
        config = ProxyConfig(upstream_port=port, link=link)
        up, down = _proxy_delays(config, listener, pings)
        steady = replace(config, link=replace(link, jitter_ms=0.0))
        steady_up, _ = _proxy_delays(steady, listener, pings // 3)
    lines = []
    for name, delays, zero in (("up", up, zero_up), ("down", down, zero_down)):
        lines += _jitter_lines(name, delays, statistics.median(zero) if zero else 0.0)
    # The same link without jitter, for scale: late wake-ups of a loaded machine add delay to
    # every ping, jittered or not, and only ever add it.
    forwarding = statistics.median(zero_up) if zero_up else 0.0
    late = [d - JITTER_DELAY_MS - forwarding for d in steady_up]
    if late:
        text = f"p50 {percentile(late, 50):+.3f} ms, p90 {percentile(late, 90):+.3f} ms"
        lines.append(BenchLine("same link without jitter, up: delay error", text, "report", None))
    return lines


def _jitter_lines(name: str, delays_ms: list[float], forwarding_ms: float) -> list[BenchLine]:
    if len(delays_ms) < 100:
        return [BenchLine(f"jitter {name}", "failed (too few pings)", "-", False)]
    median_error = percentile(delays_ms, 50) - forwarding_ms - JITTER_DELAY_MS
    # U[d-J, d+J] has the linear quantiles d - J + 2J p. Late wake-ups of a loaded machine
    # only ever add delay (10% of pings came 4+ ms late here with no jitter at all), so 2J is
    # read from the lower half: (p45 - p5) / 0.4.
    spread = (percentile(delays_ms, 45) - percentile(delays_ms, 5)) / 0.4
    want = 2 * JITTER_MS
    where = f"{JITTER_DELAY_MS:g} ms +-{JITTER_MS:g} ms, {name}"
    return [
        BenchLine(f"jitter {where}: median - delay", f"{median_error:+.3f} ms",
                 f"within +-{JITTER_MEDIAN_MS:g} ms", abs(median_error) <= JITTER_MEDIAN_MS),
        BenchLine(f"jitter {where}: spread ((p45 - p5) / 0.4) vs 2J", f"{spread:.2f} ms",
                 f"{want:g} ms +-{JITTER_SPREAD:.0%}", abs(spread - want) <= JITTER_SPREAD * want),
    ]  # fmt: skip


def estimators(topo: Topology) -> list[BenchLine]:
    rate, rtt_ms = ESTIMATOR_LINK
    lines = []
    workload = Workload(duration_s=ESTIMATOR_S, warmup=False, timeout_s=30.0)
    for kind in ("grpcio", "h2"):
        client = ClientConfig(kind=kind, window_mode="dynamic")
        m = topo.measure(Trial(link=_link(rate, rtt_ms), client=client, workload=workload))
        frac = _fraction(m, rate)
        name = (
            f"{kind} dynamic on {format_rate(rate)} x {rtt_ms:g} ms, cold {ESTIMATOR_S:g} s: / rate"
        )
        value = "failed" if frac is None else f"{frac:.3f}"
        lines.append(
            BenchLine(
                name, value, f">= {ESTIMATOR_BAR:g}", frac is not None and frac >= ESTIMATOR_BAR
            )
        )
    return lines


def link_bench(topo: Topology) -> list[BenchLine]:
    """Every link bar, in order (about a minute)."""
    steps: tuple[Callable[[], list[BenchLine]], ...] = (
        lambda: rate_accuracy(topo),
        lambda: min_rule(topo),
        jitter_distribution,
        lambda: estimators(topo),
    )
    return [line for step in steps for line in step()]
