"""Pure: the knee of a window sweep - the smallest window reaching 90 % of the best median.

Sizing is the knee, not a round number (in the window-tuning study a 4 MiB window took a
read from 216 ms to 17 ms, 2 MiB only to 29 ms). "Best" is the best *measured* median, so when the largest windows
are CPU-bound the knee is where the machine, not the window, starts to bind; the report
says so instead of pretending the window did it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kit.analysis.compare import CompareMeta, CompareReport, build_report
from kit.analysis.stats import ConfidenceInterval, Decision, Figure, decide, ratio_interval
from kit.errors import UsageError
from kit.plan.campaign import RUN_SETUP_S, expected_cell_s
from kit.plan.compare import BASELINE_KEY, ComparePlan
from kit.plan.presets import KNEE_TITLE_PREFIX
from kit.plan.schedule import Undecided
from kit.plan.trial import Trial
from kit.plan.units import MIB
from kit.results.records import Measurement

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
    # The cell's connection window (None: the client's own, e.g. C-core's) and its key.
    conn_window_bytes: int | None = None
    key: str = ""
    # Its samples per round: what its interval against the best resamples.
    by_round: Mapping[int, tuple[float, ...]] = field(default_factory=dict)

    def rtt_inflated(self, rtt_ms: float) -> bool:
        return self.ping_rtt_ms is not None and self.ping_rtt_ms > INFLATED_RTT_FACTOR * rtt_ms


@dataclass(frozen=True)
class Share:
    """A window's median over the best median, its 95% bootstrap interval over the rounds
    both have (None: fewer than 3), and whether it reaches the knee's share of the best
    (``decide`` against [share needed, inf): inside = reaches it)."""

    ratio: float
    ci: ConfidenceInterval | None
    decision: Decision


@dataclass(frozen=True)
class Knee:
    """The knee of one sweep: ``knee`` is the smallest window at >= fraction x best."""

    points: tuple[KneePoint, ...]
    best: KneePoint
    knee: KneePoint
    fraction: float = KNEE_FRACTION
    # Window -> its share of the best with its interval and decision (absent: the best is 0).
    shares: Mapping[int, Share] = field(default_factory=dict)

    @property
    def best_is_cpu_bound(self) -> bool:
        return self.best.cpu_bound

    def share_of_best(self, point: KneePoint) -> float | None:
        """point's median / the best median (None when even the best moved nothing)."""
        return point.median / self.best.median if self.best.median > 0 else None

    def share(self, point: KneePoint) -> Share | None:
        return self.shares.get(point.window_bytes)

    def undecided(self) -> list[KneePoint]:
        """The windows below the knee that might still reach it (their interval reaches the
        share needed): more rounds there could move the knee down."""
        return [
            p
            for p in self.points
            if p.window_bytes < self.knee.window_bytes
            and (share := self.share(p)) is not None
            and share.decision.verdict == "not decided"
            and share.decision.needs is not None  # None: no noise to judge it by
        ]


def find_knee(
    points: Sequence[KneePoint],
    fraction: float = KNEE_FRACTION,
    ceiling: float | None = None,
    floor_pct: float | None = None,
) -> Knee:
    """The smallest window whose median reaches ``fraction`` of min(``ceiling``, the best
    median); ``ceiling`` is the link rate in MiB/s (None: no rate). Each window's share of
    the best carries its interval and decision (``floor_pct``, the control's noise floor,
    judges a share with fewer than 3 rounds)."""
    if not points:
        raise UsageError("knee: no window of the sweep has a result")
    if not 0 < fraction <= 1:
        raise UsageError(f"knee: fraction {fraction} is outside (0, 1]")
    ordered = tuple(sorted(points, key=lambda p: p.window_bytes))
    best = max(ordered, key=lambda p: p.median)
    top = best.median if ceiling is None else min(ceiling, best.median)
    knee = next(p for p in ordered if p.median >= fraction * top)
    shares = _shares(ordered, best, fraction * top, floor_pct)
    return Knee(ordered, best, knee, fraction, shares)


def _shares(
    points: Sequence[KneePoint], best: KneePoint, needed: float, floor_pct: float | None
) -> dict[int, Share]:
    """Each window's median / the best's, judged against [needed / best, inf) by ``decide``:
    the interval is the bootstrap's over the rounds both have, or with fewer than 3 rounds
    the one the noise floor gives (two medians at the floor)."""
    if best.median <= 0:
        return {}
    out = {}
    for p in points:
        ratio = p.median / best.median
        ci = None
        if p is not best:
            ci = ratio_interval(p.by_round, best.by_round, f"knee:{p.key or p.window_bytes}")
        rounds = len(set(p.by_round) & set(best.by_round)) or 1
        spread = None if ci is not None or floor_pct is None else math.sqrt(2) * floor_pct
        figure = Figure(ratio, spread, rounds, ci)
        out[p.window_bytes] = Share(ratio, ci, decide(figure, (needed / best.median, math.inf)))
    return out


def knee_points(
    report: CompareReport,
    windows: Mapping[str, int],
    conn_windows: Mapping[str, int | None] | None = None,
) -> list[KneePoint]:
    """A compare report of a sweep -> its points (cells without a result are left out)."""
    points = []
    for row in report.rows:
        if row.summary is None or row.key not in windows:
            continue
        s = row.summary
        bound = row.cpu_bound_runs * 2 > row.runs_ok  # most runs CPU-bound
        conn = (conn_windows or {}).get(row.key)
        points.append(
            KneePoint(
                windows[row.key],
                s.median,
                s.min,
                s.max,
                row.theory_mib_s,
                bound,
                row.ping_rtt_ms,
                conn,
                row.key,
                row.by_round,
            )
        )
    return points


def swept_window(trial: Trial) -> int | None:
    """The window a sweep's cell set: its stream window, which every client's record holds
    (the h2 sweeps set the connection window to it too; the stacks size theirs by their own
    rule, ``Trial.conn_window_bytes``). None: not a static cell."""
    return trial.client.window_bytes


def knee_windows(plan: ComparePlan) -> dict[str, int]:
    """Cell key -> the swept (stream) window of that cell."""
    return {c.key: swept_window(c.trial) or 0 for c in plan.cells()}


def swept_layer(trial: Trial) -> str:
    """Which layer the sweep's windows bind: the stream window, unless the streams on a
    connection share a connection window smaller than their stream windows together (the h2
    sweeps, grpc-js's one window)."""
    per_conn, stream = trial.streams_per_connection, trial.client.window_bytes or 0
    conn = trial.conn_window_bytes
    if per_conn > 1 and conn is not None and conn < stream * per_conn:
        return "connection window"
    return "stream window"


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
    # Cell key -> its trial (what each cell ran: the answer's setting and command).
    trials: Mapping[str, Trial] = field(default_factory=dict)

    @property
    def knee_trial(self) -> Trial | None:
        return self.trials.get(self.knee.knee.key)


def analyse_sweep(plan: ComparePlan, report: CompareReport) -> Sweep:
    """A sweep just measured: its cells' trials are the plan's."""
    return sweep_of(report, {c.key: c.trial for c in plan.cells()}, plan.rounds)


def sweep_of(report: CompareReport, trials: Mapping[str, Trial], rounds: int) -> Sweep:
    """The knee of a sweep's report; each cell's window is read from its trial, the one
    field every client's record holds (``swept_window``)."""
    windows = {k: w for k, t in trials.items() if (w := swept_window(t)) is not None}
    conns = {k: t.conn_window_bytes for k, t in trials.items()}
    base = trials[BASELINE_KEY] if BASELINE_KEY in trials else next(iter(trials.values()))
    rate = link_rate_mib_s(base)
    floor = report.floor.floor_pct if report.floor is not None else None
    knee = find_knee(knee_points(report, windows, conns), ceiling=rate, floor_pct=floor)
    top_cell_s = (expected_cell_s(base) + RUN_SETUP_S) * max(1, rounds)
    return Sweep(
        report,
        knee,
        windows,
        swept_layer(base),
        base.link.rtt_ms,
        base.client.kind,
        rate,
        top_cell_s,
        base.workload.streams,
        trials,
    )


def undecided_of(sweep: Sweep) -> Undecided:
    """The windows below the knee that might still reach it, for ``--until-decided``; the
    best window runs with them (their shares are against it)."""
    knee = sweep.knee
    cells = {p.key: s.decision.needs for p in knee.undecided() if (s := knee.share(p))}
    return Undecided(cells, (knee.best.key,) if cells and knee.best.key else ())


def is_knee_campaign(measurements: Sequence[Measurement]) -> bool:
    """A campaign ``kit knee`` wrote: its title, and every cell a static window."""
    return bool(measurements) and (
        measurements[0].tags.campaign.startswith(KNEE_TITLE_PREFIX)
        and all(swept_window(m.trial) is not None for m in measurements)
    )


def sweep_of_records(measurements: Sequence[Measurement]) -> Sweep:
    """A knee campaign's sweep rebuilt from its records alone (``kit report``)."""
    meta = CompareMeta.of_records(measurements)
    trials: dict[str, Trial] = {}
    for m in measurements:
        trials.setdefault(m.tags.key, m.trial)
    return sweep_of(build_report(meta, measurements), trials, meta.rounds)


def link_rate_mib_s(trial: Trial) -> float | None:
    """The download direction's rate in MiB/s (None: unlimited)."""
    bits = trial.link.rate_down_bits_s
    return None if bits is None else bits / 8 / MIB
