"""Pure: records grouped into cells, the metrics read from them, and the facts every table marks.

A cell is every record of one configuration (one key) in one campaign: its ok rounds give
the median and min-max, its failed rounds are counted (a failed cell is shown as failed,
never as zero), and its CPU-bound rounds are counted (the result is then not window-bound).
The control cell's copies, grouped by round, give the campaign's noise floor.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kit.analysis.stats import (
    NoiseFloor,
    Summary,
    flag_spread,
    noise_floor,
    p50,
    summarize,
)
from kit.errors import UsageError
from kit.plan.trial import Trial
from kit.quantile import percentile
from kit.results.records import CPU_BOUND_FRACTION, Measurement

Metric = Callable[[Measurement], float | None]
OTHER_LOAD_CORES = 0.5


# --- metrics: one number per record ------------------------------------------------------


def throughput(m: Measurement) -> float | None:
    return m.throughput_mib_s if m.ok else None


def mean_latency_ms(m: Measurement) -> float | None:
    result = m.result if m.ok else None
    if result is None or not result.latencies_ms:
        return None
    return statistics.fmean(result.latencies_ms)


def p50_latency_ms(m: Measurement) -> float | None:
    result = m.result if m.ok else None
    if result is None or not result.latencies_ms:
        return None
    return p50(result.latencies_ms)


def total_time_ms(m: Measurement) -> float | None:
    result = m.result if m.ok else None
    return result.elapsed_s * 1000.0 if result is not None else None


def efficiency(throughput_mib_s: float | None, theory_mib_s: float | None) -> float | None:
    if throughput_mib_s is None or not theory_mib_s:
        return None
    return throughput_mib_s / theory_mib_s


def ping_rtt_ms(m: Measurement) -> float | None:
    """RTT seen by HTTP/2 PINGs during the transfer: the client's own, else the tap's estimate."""
    if m.result is not None and m.result.ping_rtt_ms:
        return float(statistics.median(m.result.ping_rtt_ms))
    return m.frames.ping_rtt_ms.client.median_ms if m.frames is not None else None


@dataclass(frozen=True)
class LatencyStats:
    mean_ms: float
    p50_ms: float
    p99_ms: float


def latency_stats(latencies_ms: Sequence[float]) -> LatencyStats | None:
    """Mean, p50 and p99 of a run's calls (one percentile rule: ``kit.quantile``)."""
    if not latencies_ms:
        return None
    return LatencyStats(
        statistics.fmean(latencies_ms), percentile(latencies_ms, 50), percentile(latencies_ms, 99)
    )


# --- CPU and machine load ---------------------------------------------------------------------


def machine_busy_cores(m: Measurement) -> float:
    """Cores the whole machine kept busy in the timed window (else the path's own sum)."""
    machine = m.meta.machine
    return machine.busy_cores if machine is not None else sum(c.cpu_fraction for c in m.cpu)


def other_cores(m: Measurement) -> float:
    """Cores used by processes outside the measurement path during the timed window."""
    return m.meta.machine.other_cores if m.meta.machine is not None else 0.0


@dataclass(frozen=True)
class CpuLimit:
    """Why a result measures CPU rather than the window: one process near a full core
    (``processes``), or, on a 2-core machine, three busy processes saturating it together."""

    processes: tuple[tuple[str, float], ...] = ()
    busy_cores: float = 0.0
    cpus: float = 0.0
    other_cores: float = 0.0


def cpu_limit(m: Measurement) -> CpuLimit | None:
    bound = tuple((c.role, c.cpu_fraction) for c in m.cpu if c.bound)
    if bound:
        return CpuLimit(processes=bound)
    machine = m.meta.machine
    if (
        machine is not None
        and machine.cpus
        and machine.busy_cores >= CPU_BOUND_FRACTION * machine.cpus
    ):
        return CpuLimit(
            busy_cores=machine.busy_cores, cpus=machine.cpus, other_cores=machine.other_cores
        )
    return None


# --- cells ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellFlags:
    """What a table marks about a cell: control, CPU-bound or loaded rounds, spread, failures."""

    control: bool
    ok_runs: int
    runs: int
    cpu_bound: tuple[tuple[str, int], ...] = ()
    saturated: int = 0
    other_load: int = 0
    spread_pct: float | None = None  # set only when ``flag_spread`` flags it (> 10%)
    failed: int = 0
    first_error: str = ""


@dataclass(frozen=True)
class CellView:
    """Every record of one configuration in one campaign, in file order."""

    campaign: str
    key: str
    runs: tuple[Measurement, ...]

    @property
    def trial(self) -> Trial:
        return self.runs[0].trial

    @property
    def theory_mib_s(self) -> float | None:
        return self.runs[0].theory_mib_s

    @property
    def is_control(self) -> bool:
        return any(m.tags.control for m in self.runs)

    @property
    def ok(self) -> tuple[Measurement, ...]:
        return tuple(m for m in self.runs if m.ok)

    @property
    def failed(self) -> tuple[Measurement, ...]:
        return tuple(m for m in self.runs if not m.ok)

    def values(self, metric: Metric) -> list[float]:
        return [v for v in (metric(m) for m in self.ok) if v is not None]

    def summary(self, metric: Metric) -> Summary | None:
        values = self.values(metric)
        return summarize(values) if values else None

    def median_run(self, metric: Metric) -> Measurement | None:
        """The ok record closest to the median (its frames and finish times are shown)."""
        summary = self.summary(metric)
        scored = [
            (abs(v - summary.median), i, m)
            for i, m in enumerate(self.ok)
            if summary is not None and (v := metric(m)) is not None
        ]
        return min(scored)[2] if scored else None

    def median_ping_ms(self) -> float | None:
        pings = [p for p in (ping_rtt_ms(m) for m in self.ok) if p is not None]
        return statistics.median(pings) if pings else None

    def cpu_bound_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.ok:
            for role in m.cpu_bound_roles:
                counts[role] = counts.get(role, 0) + 1
        return counts

    def saturated_rounds(self) -> int:
        """Rounds where the machine's cores were >= 90% busy (all processes, ours and others'),
        so the cell measured contention even when no single process was CPU-bound."""
        return sum(
            1
            for m in self.ok
            if m.meta.cpus and machine_busy_cores(m) >= CPU_BOUND_FRACTION * m.meta.cpus
        )

    def other_load_rounds(self) -> int:
        """Rounds where processes outside the path kept at least half a core busy."""
        return sum(1 for m in self.ok if other_cores(m) >= OTHER_LOAD_CORES)

    def flags(self, metric: Metric) -> CellFlags:
        summary = self.summary(metric)
        unstable = summary is not None and flag_spread(summary) is not None
        failed = self.failed
        return CellFlags(
            control=self.is_control,
            ok_runs=len(self.ok),
            runs=len(self.runs),
            cpu_bound=tuple(sorted(self.cpu_bound_counts().items())),
            saturated=self.saturated_rounds(),
            other_load=self.other_load_rounds(),
            spread_pct=summary.spread_pct if unstable and summary is not None else None,
            failed=len(failed),
            first_error=failed[0].error if failed else "",
        )


@dataclass(frozen=True)
class CampaignView:
    """One campaign's cells, in first-seen order."""

    name: str
    cells: tuple[CellView, ...]

    def cell(self, key: str) -> CellView | None:
        return next((c for c in self.cells if c.key == key), None)

    @property
    def control(self) -> CellView | None:
        return next((c for c in self.cells if c.is_control), None)

    def dynamic_of(self, cell: CellView) -> CellView | None:
        """The window-effect baseline of a cell: the dynamic row of the same client."""
        kind = cell.trial.client.kind
        return next(
            (
                c
                for c in self.cells
                if c.trial.client.kind == kind and c.trial.client.window_mode == "dynamic"
            ),
            None,
        )

    def floor(self, metric: Metric) -> NoiseFloor | None:
        """The noise floor from the control's copies, or None when no round has two."""
        control = self.control
        return None if control is None else floor_of(control.ok, metric)


def median_of(cell: CellView | None, metric: Metric = throughput) -> float | None:
    summary = cell.summary(metric) if cell is not None else None
    return summary.median if summary is not None else None


def median_ratio(
    num: CellView | None, den: CellView | None, metric: Metric = throughput
) -> float | None:
    """median(num) / median(den), or None when either is missing or the divisor is 0."""
    a, b = median_of(num, metric), median_of(den, metric)
    return a / b if a is not None and b else None


def floor_of(control_runs: Sequence[Measurement], metric: Metric) -> NoiseFloor | None:
    """The noise floor from a control cell's ok runs grouped by round; None without a pair."""
    by_round: dict[int, list[float]] = {}
    for m in control_runs:
        value = metric(m)
        if value is not None:
            by_round.setdefault(m.tags.round, []).append(value)
    try:
        return noise_floor([by_round[r] for r in sorted(by_round)])
    except UsageError:
        return None


def group_campaigns(measurements: Sequence[Measurement]) -> dict[str, CampaignView]:
    """Records with a campaign tag, grouped by campaign and cell key."""
    grouped: dict[str, dict[str, list[Measurement]]] = {}
    for m in measurements:
        if not m.tags.campaign:
            continue
        grouped.setdefault(m.tags.campaign, {}).setdefault(m.tags.key, []).append(m)
    return {
        name: CampaignView(name, tuple(CellView(name, k, tuple(rs)) for k, rs in cells.items()))
        for name, cells in grouped.items()
    }
