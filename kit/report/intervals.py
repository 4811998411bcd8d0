"""Pure rendering of ``kit run --interval``: one line per interval, as iperf3 ``-i`` prints
them (span, bytes moved, throughput), and the run table's summary of the recorded series."""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.intervals import Interval
from kit.plan.units import MIB
from kit.report.format import UNITS, sig3


def interval_header(unit: str = "MiB/s") -> str:
    return f"{'interval':>15}  {'transfer':>12}  {unit:>10}"


def interval_line(start_s: float, end_s: float, n_bytes: int, unit: str = "MiB/s") -> str:
    """``   0.00-0.10   s      1.23 MiB        12.3`` (the throughput in ``unit``)."""
    span = end_s - start_s
    rate = n_bytes / MIB / span * UNITS[unit] if span > 0 else 0.0
    return f"{start_s:6.2f}-{end_s:6.2f} s  {n_bytes / MIB:8.2f} MiB  {rate:10.1f}"


def intervals_text(intervals: Sequence[Interval], interval_ms: float, unit: str = "MiB/s") -> str:
    """The run table's row: how the per-interval throughput spread (from the record)."""
    rates = sorted(i.mib_s * UNITS[unit] for i in intervals)
    median = rates[len(rates) // 2]
    return (
        f"min {sig3(rates[0])}, median {sig3(median)}, max {sig3(rates[-1])} {unit} "
        f"over {len(rates)} x {interval_ms:g} ms"
    )
