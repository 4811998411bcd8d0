"""Pure: the knee of a window sweep - the smallest window reaching 90 % of the best median.

Sizing is the knee, not a round number (SEEDS B: 4 MiB took a read from 216 ms to 17 ms,
2 MiB only to 29 ms). "Best" is the best *measured* median, so when the largest windows
are CPU-bound the knee is where the machine, not the window, starts to bind; the report
says so instead of pretending the window did it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from kit.errors import UsageError
from kit.report.common import fmt_mib_s
from kit.report.compare import CompareReport, fmt_cpu, fmt_summary
from kit.units import format_bytes

KNEE_FRACTION = 0.90
# PINGs slower than this x the configured RTT: data queued in the processes (machine-bound).
INFLATED_RTT_FACTOR = 1.5


@dataclass(frozen=True)
class KneePoint:
    window_bytes: int
    median: float
    min: float
    max: float
    theory_mib_s: float | None
    cpu_bound: bool
    ping_rtt_ms: float | None = None

    def rtt_inflated(self, rtt_ms: float) -> bool:
        return self.ping_rtt_ms is not None and self.ping_rtt_ms > INFLATED_RTT_FACTOR * rtt_ms


@dataclass(frozen=True)
class Knee:
    """The knee of one sweep: ``knee`` is the smallest window at >= fraction x best."""

    points: tuple[KneePoint, ...]
    best: KneePoint
    knee: KneePoint
    fraction: float = KNEE_FRACTION

    @property
    def best_is_cpu_bound(self) -> bool:
        return self.best.cpu_bound


def find_knee(points: Sequence[KneePoint], fraction: float = KNEE_FRACTION) -> Knee:
    """The smallest window whose median reaches ``fraction`` of the best median."""
    if not points:
        raise UsageError("knee: no window of the sweep has a result")
    if not 0 < fraction <= 1:
        raise UsageError(f"knee: fraction {fraction} is outside (0, 1]")
    ordered = tuple(sorted(points, key=lambda p: p.window_bytes))
    best = max(ordered, key=lambda p: p.median)
    knee = next(p for p in ordered if p.median >= fraction * best.median)
    return Knee(ordered, best, knee, fraction)


def knee_points(report: CompareReport, windows: Mapping[str, int]) -> list[KneePoint]:
    """A compare report of a sweep -> its points (cells without a result are left out)."""
    points = []
    for row in report.rows:
        if row.summary is None or row.key not in windows:
            continue
        s = row.summary
        bound = row.cpu_bound_runs * 2 > row.runs_ok  # most runs CPU-bound
        window = windows[row.key]
        points.append(
            KneePoint(window, s.median, s.min, s.max, row.theory_mib_s, bound, row.ping_rtt_ms)
        )
    return points


def knee_sentence(knee: Knee, swept: str, rtt_ms: float = 0.0) -> str:
    best, at = knee.best, knee.knee
    text = (
        f"knee: {swept} {format_bytes(at.window_bytes)} reaches "
        f"{at.median / best.median:.0%} of the best ({fmt_mib_s(at.median)} of "
        f"{fmt_mib_s(best.median)} MiB/s at {format_bytes(best.window_bytes)})"
    )
    if knee.best_is_cpu_bound:
        text += "; the best is CPU-bound: the machine, not the window, binds there"
    elif rtt_ms > 0 and best.rtt_inflated(rtt_ms):
        text += (
            f"; the best runs saw PINGs at {best.ping_rtt_ms:.0f} ms against {rtt_ms:g} ms: "
            "data queued in the processes, so the machine, not the window, bound the top"
        )
    if at is knee.points[-1]:
        text += "; the largest window tried is the knee: it may lie beyond (raise --max-window)"
    return text


def _table(knee: Knee, report: CompareReport, windows: Mapping[str, int], swept: str) -> str:
    rows_by_window = {windows[r.key]: r for r in report.rows if r.key in windows}
    head = [swept, "median (min-max) MiB/s", "% of best", "theory MiB/s", "PING RTT ms"]
    head += ["vs largest", "CPU-bound runs"]
    lines = []
    for p in knee.points:
        row = rows_by_window[p.window_bytes]
        mark = " <- knee" if p is knee.knee else ""
        ping = "-" if p.ping_rtt_ms is None else f"{p.ping_rtt_ms:.1f}"
        share = f"{p.median / knee.best.median:.0%}"
        lines.append([format_bytes(p.window_bytes) + mark, fmt_summary(row.summary, "throughput")])
        lines[-1] += [share, fmt_mib_s(p.theory_mib_s), ping, row.verdict, fmt_cpu(row)]
    return tabulate(lines, head, tablefmt="simple")


def render_knee(
    report: CompareReport, windows: Mapping[str, int], swept: str, rtt_ms: float = 0.0
) -> str:
    knee = find_knee(knee_points(report, windows))
    title = f"{report.meta.title}: {report.meta.setup}"
    floor = report.floor.describe() if report.floor else "noise floor: none"
    warnings = [f"warning: {w}" for w in report.warnings]
    table = _table(knee, report, windows, swept)
    return "\n".join([title, table, floor, knee_sentence(knee, swept, rtt_ms), *warnings])


def knee_json(
    report: CompareReport, windows: Mapping[str, int], swept: str, rtt_ms: float = 0.0
) -> dict[str, Any]:
    knee = find_knee(knee_points(report, windows))
    return {
        "title": report.meta.title,
        "setup": report.meta.setup,
        "swept": swept,
        "fraction": knee.fraction,
        "knee_window_bytes": knee.knee.window_bytes,
        "best_window_bytes": knee.best.window_bytes,
        "best_mib_s": knee.best.median,
        "best_is_cpu_bound": knee.best_is_cpu_bound,
        "summary": knee_sentence(knee, swept, rtt_ms),
        "points": [_point_json(p) for p in knee.points],
        "noise_floor_pct": report.floor.floor_pct if report.floor else None,
    }


def _point_json(p: KneePoint) -> dict[str, Any]:
    return {
        "window_bytes": p.window_bytes,
        "median_mib_s": p.median,
        "min": p.min,
        "max": p.max,
        "theory_mib_s": p.theory_mib_s,
        "cpu_bound": p.cpu_bound,
        "ping_rtt_ms": p.ping_rtt_ms,
    }
