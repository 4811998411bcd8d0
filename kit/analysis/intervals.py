"""Pure: a download's throughput per interval (``kit run --interval``, like iperf3 ``-i``).

The series is derived from the delay line's delivery trace (the bytes it released
downstream per 2 ms bucket, ``FrameSummary.delivered_down``) over the client's timed phase,
so the record keeps it once, in the trace, and only the interval (``RunMeta.interval_ms``)
besides. The lines ``kit run`` prints while it runs come from the delay line's live byte
counter at each tick; these, from the trace, are exact to the bucket.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.plan.units import MIB
from kit.results.records import DeliveryTrace, Measurement

MIN_INTERVAL_MS = 10.0  # five trace buckets: a shorter interval would show the buckets


@dataclass(frozen=True)
class Interval:
    """Bytes delivered in [start_s, end_s) of the timed phase."""

    start_s: float
    end_s: float
    bytes: int

    @property
    def mib_s(self) -> float:
        span = self.end_s - self.start_s
        return self.bytes / MIB / span if span > 0 else 0.0


def rebin(trace: DeliveryTrace, start_ns: int, end_ns: int, interval_ms: float) -> list[Interval]:
    """The trace's buckets in [start_ns, end_ns) summed per ``interval_ms`` (the last
    interval may be shorter). A bucket counts in the interval its start falls in."""
    if not trace.bytes or trace.bucket_ns <= 0 or end_ns <= start_ns or interval_ms <= 0:
        return []
    step_ns = max(trace.bucket_ns, round(interval_ms * 1e6 / trace.bucket_ns) * trace.bucket_ns)
    count = -(-(end_ns - start_ns) // step_ns)
    totals = [0] * count
    for index, n_bytes in enumerate(trace.bytes):
        at = trace.origin_ns + index * trace.bucket_ns - start_ns
        if n_bytes and 0 <= at < end_ns - start_ns:
            totals[at // step_ns] += n_bytes
    return [
        Interval(i * step_ns / 1e9, min((i + 1) * step_ns, end_ns - start_ns) / 1e9, n)
        for i, n in enumerate(totals)
    ]


def intervals_of(m: Measurement) -> list[Interval]:
    """The recorded run's intervals ([] when it asked for none or the trace is missing)."""
    interval_ms = m.meta.interval_ms
    if not interval_ms or not m.ok or m.result is None or m.frames is None:
        return []
    result = m.result
    return rebin(m.frames.delivered_down, result.t_start_ns, result.t_end_ns, interval_ms)
