"""Pure: the knee of a window sweep - the smallest window reaching 90 % of the best median.

Sizing is the knee, not a round number (in the window-tuning study a 4 MiB window took a
read from 216 ms to 17 ms, 2 MiB only to 29 ms). "Best" is the best *measured* median, so when the largest windows
are CPU-bound the knee is where the machine, not the window, starts to bind; the report
says so instead of pretending the window did it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kit.analysis.compare import CompareReport
from kit.errors import UsageError
from kit.plan.compare import BASELINE_KEY, ComparePlan

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

    def share_of_best(self, point: KneePoint) -> float | None:
        """point's median / the best median (None when even the best moved nothing)."""
        return point.median / self.best.median if self.best.median > 0 else None


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


def knee_windows(plan: ComparePlan) -> dict[str, int]:
    """Cell key -> the swept window of that cell (the connection window: the sweeps set the
    stream window to it too, so it is the swept one in both)."""
    out = {BASELINE_KEY: plan.baseline.client.conn_window_bytes or 0}
    out |= {c.name: c.client.conn_window_bytes or 0 for c in plan.candidates}
    return out


def swept_layer(plan: ComparePlan) -> str:
    return "stream window" if plan.workload.streams == 1 else "connection window"


@dataclass(frozen=True)
class Sweep:
    """One analysed sweep: its comparison, its knee, which window each cell set, what layer."""

    report: CompareReport
    knee: Knee
    windows: Mapping[str, int]
    swept: str
    rtt_ms: float


def analyse_sweep(plan: ComparePlan, report: CompareReport) -> Sweep:
    windows = knee_windows(plan)
    knee = find_knee(knee_points(report, windows))
    return Sweep(report, knee, windows, swept_layer(plan), plan.link.rtt_ms)
