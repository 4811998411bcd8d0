"""Pure rendering of ``kit run --interval``: one line per interval, as iperf3 ``-i`` prints
them (span, bytes moved, throughput), and the run table's summary of those same lines.

Both come from the record's series (``kit.analysis.intervals``: the delay line's delivery
trace over the client's timed phase), so the summary is the min, median and max of the
printed lines, to the figure: a last interval cut short by the end of the timed phase is
printed and marked partial, and left out of the summary (a few ms of a transfer say
nothing of its pace).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from kit.analysis.intervals import MIN_INTERVAL_MS, Interval
from kit.plan.units import MIB
from kit.report.format import UNITS, sig3

PARTIAL = "(partial)"


def interval_header(unit: str = "MiB/s") -> str:
    return f"{'interval':>15}  {'transfer':>12}  {unit:>10}"


def interval_line(
    start_s: float, end_s: float, n_bytes: int, unit: str = "MiB/s", partial: bool = False
) -> str:
    """``  0.00-  0.10 s      1.23 MiB        12.3`` (the throughput in ``unit``, three
    significant figures; `` (partial)`` after a last interval cut short)."""
    span = end_s - start_s
    rate = n_bytes / MIB / span * UNITS[unit] if span > 0 else 0.0
    line = f"{start_s:6.2f}-{end_s:6.2f} s  {n_bytes / MIB:8.2f} MiB  {sig3(rate):>10}"
    return f"{line} {PARTIAL}" if partial else line


def is_partial(intervals: Sequence[Interval], i: int, interval_ms: float) -> bool:
    """The last interval, when the timed phase ended before it was whole."""
    span = intervals[i].end_s - intervals[i].start_s
    return i == len(intervals) - 1 and span < interval_ms / 1000 * (1 - 1e-6)


def interval_lines(
    intervals: Sequence[Interval], interval_ms: float, unit: str = "MiB/s"
) -> list[str]:
    """The header and a line per interval of the timed phase; a last partial one shorter
    than ``MIN_INTERVAL_MS`` (a few trace buckets: its rate is noise) is not printed."""
    lines = [interval_header(unit)]
    for i, iv in enumerate(intervals):
        partial = is_partial(intervals, i, interval_ms)
        if not partial or (iv.end_s - iv.start_s) * 1000 >= MIN_INTERVAL_MS - 1e-6:
            lines.append(interval_line(iv.start_s, iv.end_s, iv.bytes, unit, partial))
    return lines


def intervals_text(intervals: Sequence[Interval], interval_ms: float, unit: str = "MiB/s") -> str:
    """The run table's row: the min, median and max of the whole intervals' lines, as printed
    (each rate at three significant figures)."""
    whole = [iv for i, iv in enumerate(intervals) if not is_partial(intervals, i, interval_ms)]
    if not whole:
        return f"no whole {interval_ms:g} ms interval in the timed phase"
    shown = sorted(float(sig3(iv.mib_s * UNITS[unit])) for iv in whole)
    text = (
        f"min {sig3(shown[0])}, median {sig3(statistics.median(shown))}, max {sig3(shown[-1])} "
        f"{unit} over {len(whole)} x {interval_ms:g} ms"
    )
    if len(whole) < len(intervals):
        last = intervals[-1]
        text += f" (the last {sig3((last.end_s - last.start_s) * 1000)} ms, partial, left out)"
    return text
