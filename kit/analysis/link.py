"""Pure: what a link with a bottleneck says about a measurement.

Rates in bits per second, the bandwidth-delay product, and, from the delay line's delivery
trace (bytes released downstream per 2 ms bucket), how fast a window reached the rate:
the time and bytes from the start of the timed phase until the throughput over one RTT
(at least ``MIN_WINDOW_MS``) first reached ``RAMP_FRACTION`` of the rate, and the
steady-state throughput (the second half of the timed phase).
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.plan.trial import bdp_bytes, data_rate_bits_s
from kit.plan.units import MIB
from kit.results.records import DeliveryTrace, Measurement

RAMP_FRACTION = 0.9
MIN_WINDOW_MS = 10.0
BITS_PER_MIB = 8 * MIB


def mbit_s(mib_s: float | None) -> float | None:
    """MiB/s -> decimal Mbit/s (the unit links are sold in)."""
    return None if mib_s is None else mib_s * BITS_PER_MIB / 1e6


def rate_bits_s(m: Measurement) -> float | None:
    return data_rate_bits_s(m.trial)


def bdp_of(m: Measurement) -> int | None:
    return bdp_bytes(m.trial)


def window_final_bytes(m: Measurement) -> int | None:
    return m.frames.window_final_bytes if m.frames is not None else None


def largest_window_bytes(m: Measurement) -> int | None:
    """The final stream window, as the largest window a stream's sender had: what the client
    says (``ClientResult.stream_window_bytes``, the h2 client's), what the tap saw (each
    stream's window at the client's updates) and the last INITIAL_WINDOW_SIZE announced,
    whichever is largest. A policy that grows its streams by WINDOW_UPDATE keeps its start
    in SETTINGS (the tap's ``window_final_bytes`` alone): its window is what it granted."""
    frames, result = m.frames, m.result
    seen = [w for w in (result.stream_window_bytes if result is not None else ())]
    if frames is not None:
        seen += [p.window_bytes for p in frames.stream_windows]
        if frames.window_final_bytes is not None:
            seen.append(frames.window_final_bytes)
    return max(seen) if seen else None


def window_over_bdp(m: Measurement) -> float | None:
    window, bdp = window_final_bytes(m), bdp_of(m)
    return window / bdp if window and bdp else None


def delivered_mib_s(m: Measurement) -> float | None:
    """What the link delivered from its first byte after the client's start to the client's
    end (less the down delay), per second: throughput without the time a client takes to
    send its first request (a fresh JVM's first call), and without counting whole messages
    only. None without the link's delivery trace (a link with no rate)."""
    result, frames = m.result, m.frames
    if not m.ok or result is None or frames is None:
        return None
    trace = frames.delivered_down
    if not trace.bytes or trace.bucket_ns <= 0:
        return None
    end_ns = result.t_end_ns - round(m.trial.link.delay_down_ms * 1e6)
    first = max(0, (result.t_start_ns - trace.origin_ns) // trace.bucket_ns)
    last = (end_ns - trace.origin_ns) // trace.bucket_ns
    buckets = trace.bytes[first : last + 1]
    lead = next((i for i, n in enumerate(buckets) if n > 0), None)
    if lead is None:
        return None
    carried = buckets[lead:]
    return sum(carried) / MIB / (len(carried) * trace.bucket_ns / 1e9)


def rate_fraction(m: Measurement) -> float | None:
    """Whole-phase throughput / the link rate."""
    rate = rate_bits_s(m)
    tput = mbit_s(m.throughput_mib_s if m.ok else None)
    return tput * 1e6 / rate if tput is not None and rate else None


@dataclass(frozen=True)
class Ramp:
    """How the delivered rate rose over the timed phase (None: never got there)."""

    to_fraction_ms: float | None
    to_fraction_bytes: int | None
    steady_bits_s: float | None
    window_ms: float


def _phase_buckets(trace: DeliveryTrace, start_ns: int, end_ns: int) -> list[int]:
    if not trace.bytes or trace.bucket_ns <= 0 or end_ns <= start_ns:
        return []
    first = (start_ns - trace.origin_ns) // trace.bucket_ns
    last = (end_ns - trace.origin_ns) // trace.bucket_ns
    if last < 0:
        return []
    # A cold start begins before the link delivered its first byte: those buckets are empty.
    lead = [0] * -first if first < 0 else []
    return lead + list(trace.bytes[max(0, first) : last + 1])


def ramp(
    trace: DeliveryTrace,
    rate: float,
    rtt_ms: float,
    start_ns: int,
    end_ns: int,
    fraction: float = RAMP_FRACTION,
) -> Ramp:
    """Time and bytes from ``start_ns`` until the rate over one RTT first reached
    ``fraction`` x ``rate``; steady state = the second half of [start, end]."""
    buckets = _phase_buckets(trace, start_ns, end_ns)
    bucket_ms = trace.bucket_ns / 1e6 if trace.bucket_ns else 1.0
    width = max(2, round(max(rtt_ms, MIN_WINDOW_MS) / bucket_ms))
    target = fraction * rate / 8 * width * bucket_ms / 1000  # bytes per window
    hit_ms = hit_bytes = None
    window = cumulative = 0
    for i, n in enumerate(buckets):
        window += n
        cumulative += n
        if i >= width:
            window -= buckets[i - width]
        if i + 1 >= width and window >= target:
            hit_ms, hit_bytes = (i + 1) * bucket_ms, cumulative
            break
    half = buckets[len(buckets) // 2 :]
    steady = sum(half) * 8 / (len(half) * bucket_ms / 1000) if len(half) >= width else None
    return Ramp(hit_ms, hit_bytes, steady, width * bucket_ms)


def steady_mib_s(m: Measurement) -> float | None:
    """What the link delivered over the second half of the timed phase, per second (None
    without the link's delivery trace): a run's pace after its ramp (TCP's slow start, a
    window growing), on any link."""
    result, frames = m.result, m.frames
    if not m.ok or result is None or frames is None:
        return None
    trace = frames.delivered_down
    buckets = _phase_buckets(trace, result.t_start_ns, result.t_end_ns)
    half = buckets[len(buckets) // 2 :]
    if not half or trace.bucket_ns <= 0:
        return None
    return sum(half) / MIB / (len(half) * trace.bucket_ns / 1e9)


def ramp_of(m: Measurement) -> Ramp | None:
    """The ramp of a download through a rate-limited link (None otherwise)."""
    rate = rate_bits_s(m)
    if not m.ok or m.result is None or m.frames is None or rate is None:
        return None
    result = m.result
    return ramp(
        m.frames.delivered_down, rate, m.trial.link.rtt_ms, result.t_start_ns, result.t_end_ns
    )


def ramp_ms(m: Measurement) -> float | None:
    r = ramp_of(m)
    return r.to_fraction_ms if r is not None else None


def ramp_rtts(m: Measurement) -> float | None:
    ms, rtt = ramp_ms(m), m.trial.link.rtt_ms
    return ms / rtt if ms is not None and rtt > 0 else None


def ramp_bytes(m: Measurement) -> float | None:
    r = ramp_of(m)
    return None if r is None or r.to_fraction_bytes is None else float(r.to_fraction_bytes)


def steady_fraction(m: Measurement) -> float | None:
    """Steady-state delivered rate / the link rate."""
    r, rate = ramp_of(m), rate_bits_s(m)
    return r.steady_bits_s / rate if r is not None and r.steady_bits_s and rate else None


def bdp_pings(m: Measurement) -> float | None:
    """PINGs the client sent, less the kit's own RTT probes (BDP and keepalive pings)."""
    if not m.ok or m.frames is None:
        return None
    return float(m.frames.client.pings_sent - m.frames.rtt_probe_pings)


def link_json(m: Measurement) -> dict[str, object]:
    """The link's keys of a run's JSON object."""
    link = m.trial.link
    r = ramp_of(m)
    return {
        "rate_up_bits_s": link.rate_up_bits_s,
        "rate_down_bits_s": link.rate_down_bits_s,
        "jitter_ms": link.jitter_ms,
        "seed": link.seed,
        "bdp_bytes": bdp_of(m),
        "window_final_bytes": largest_window_bytes(m),
        "peak_queued_bytes": m.frames.peak_queued_bytes_down if m.frames is not None else None,
        "throughput_mbit_s": mbit_s(m.throughput_mib_s if m.ok else None),
        "rate_fraction": rate_fraction(m),
        "ramp_90_ms": None if r is None else r.to_fraction_ms,
        "ramp_90_bytes": None if r is None else r.to_fraction_bytes,
        "steady_bits_s": None if r is None else r.steady_bits_s,
    }


def peak_queued(m: Measurement) -> float | None:
    if not m.ok or m.frames is None:
        return None
    return float(m.frames.peak_queued_bytes_down)
