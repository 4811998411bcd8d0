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
from kit.plan.campaign import RUN_SETUP_S, expected_cell_s
from kit.plan.compare import BASELINE_KEY, ComparePlan
from kit.plan.units import MIB

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


def find_knee(
    points: Sequence[KneePoint], fraction: float = KNEE_FRACTION, ceiling: float | None = None
) -> Knee:
    """The smallest window whose median reaches ``fraction`` of min(``ceiling``, the best
    median); ``ceiling`` is the link rate in MiB/s (None: no rate)."""
    if not points:
        raise UsageError("knee: no window of the sweep has a result")
    if not 0 < fraction <= 1:
        raise UsageError(f"knee: fraction {fraction} is outside (0, 1]")
    ordered = tuple(sorted(points, key=lambda p: p.window_bytes))
    best = max(ordered, key=lambda p: p.median)
    top = best.median if ceiling is None else min(ceiling, best.median)
    knee = next(p for p in ordered if p.median >= fraction * top)
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
    client: str = "h2"
    rate_mib_s: float | None = None
    # Expected seconds of one more window of the sweep at its top (all rounds): the cost of
    # raising --max-window.
    top_cell_s: float = 0.0
    streams: int = 1


def analyse_sweep(plan: ComparePlan, report: CompareReport) -> Sweep:
    windows = knee_windows(plan)
    rate = link_rate_mib_s(plan)
    knee = find_knee(knee_points(report, windows), ceiling=rate)
    top_cell_s = (expected_cell_s(plan.trial(plan.baseline)) + RUN_SETUP_S) * plan.rounds
    return Sweep(
        report,
        knee,
        windows,
        swept_layer(plan),
        plan.link.rtt_ms,
        plan.baseline.client.kind,
        rate,
        top_cell_s,
        plan.workload.streams,
    )


def link_rate_mib_s(plan: ComparePlan) -> float | None:
    """The download direction's rate in MiB/s (None: unlimited)."""
    bits = plan.link.rate_down_bits_s
    return None if bits is None else bits / 8 / MIB
