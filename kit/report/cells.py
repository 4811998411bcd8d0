"""Pure: a campaign's records grouped into cells, with the statistics every table needs.

A cell is every record of one configuration (one key) in one campaign: its ok rounds give
the median and min-max, its failed rounds are counted (a failed cell is shown as failed,
never as zero), and its CPU-bound rounds are counted (the result is then not window-bound).
The control cell's copies, grouped by round, give the campaign's noise floor.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kit.errors import UsageError
from kit.measure import CPU_BOUND_FRACTION, Measurement
from kit.plan import Trial
from kit.stats import NoiseFloor, Summary, flag_spread, noise_floor, summarize

Metric = Callable[[Measurement], float | None]


def throughput(m: Measurement) -> float | None:
    return m.throughput_mib_s if m.ok else None


def mean_latency_ms(m: Measurement) -> float | None:
    result = m.client_result if m.ok else None
    if result is None or not result.latencies_ms:
        return None
    return statistics.fmean(result.latencies_ms)


def total_time_ms(m: Measurement) -> float | None:
    result = m.client_result if m.ok else None
    return result.elapsed_s * 1000.0 if result is not None else None


@dataclass(frozen=True)
class CellView:
    """Every record of one configuration in one campaign, in file order."""

    campaign: str
    key: str
    runs: tuple[Measurement, ...]

    @property
    def trial(self) -> Trial:
        return Trial.from_dict(self.runs[0].trial)

    @property
    def is_control(self) -> bool:
        return any(bool(m.tags.get("control")) for m in self.runs)

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

    def cpu_bound_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.ok:
            for role in m.cpu_bound_roles:
                counts[role] = counts.get(role, 0) + 1
        return counts

    def saturated_rounds(self) -> int:
        """Rounds where the machine's cores were >= 90% busy (all processes, ours and others'),
        so the cell measured contention even when no single process was CPU-bound."""
        count = 0
        for m in self.ok:
            cpus = int(m.meta.get("cpus") or 0)
            if cpus and machine_busy_cores(m) >= CPU_BOUND_FRACTION * cpus:
                count += 1
        return count

    def other_load_rounds(self) -> int:
        """Rounds where processes outside the path kept at least half a core busy."""
        return sum(1 for m in self.ok if other_cores(m) >= OTHER_LOAD_CORES)

    def notes(self, metric: Metric) -> list[str]:
        """Marks for the table: control, CPU-bound rounds, spread > 10%, failed rounds."""
        out = ["control (2 copies per round)"] if self.is_control else []
        cpu = self.cpu_bound_counts()
        if cpu:
            shares = ", ".join(f"{role} {n}/{len(self.ok)}" for role, n in sorted(cpu.items()))
            out.append(f"CPU-bound: {shares}")
        saturated = self.saturated_rounds()
        if saturated:
            out.append(f"CPU-saturated machine {saturated}/{len(self.ok)}")
        others = self.other_load_rounds()
        if others:
            out.append(f"other work >= {OTHER_LOAD_CORES:g} core {others}/{len(self.ok)}")
        summary = self.summary(metric)
        if summary is not None and flag_spread(summary):
            out.append(f"spread {summary.spread_pct:.0f}% > 10%")
        if self.failed:
            out.append(f"failed {len(self.failed)}/{len(self.runs)}: {short_error(self.failed[0])}")
        return out


OTHER_LOAD_CORES = 0.5


def _machine(m: Measurement) -> dict[str, float]:
    """The machine's load in the timed window (Topology's meta; older records: tags)."""
    machine = m.meta.get("machine", m.tags.get("machine"))
    return machine if isinstance(machine, dict) else {}


def has_machine_load(m: Measurement) -> bool:
    return bool(_machine(m))


def machine_busy_cores(m: Measurement) -> float:
    """Cores the whole machine kept busy in the timed window (else the path's own sum)."""
    busy = _machine(m).get("busy_cores")
    return float(busy) if busy is not None else sum(c.cpu_fraction for c in m.cpu)


def other_cores(m: Measurement) -> float:
    """Cores used by processes outside the measurement path during the timed window."""
    return float(_machine(m).get("other_cores") or 0.0)


def short_error(m: Measurement, limit: int = 80) -> str:
    text = " ".join((m.error or "unknown error").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        if control is None:
            return None
        by_round: dict[int, list[float]] = {}
        for m in control.ok:
            value = metric(m)
            if value is not None:
                by_round.setdefault(int(m.tags.get("round", 0)), []).append(value)
        try:
            return noise_floor([by_round[r] for r in sorted(by_round)])
        except UsageError:
            return None


def group_campaigns(measurements: Sequence[Measurement]) -> dict[str, CampaignView]:
    """Records with a campaign tag, grouped by campaign and cell key."""
    grouped: dict[str, dict[str, list[Measurement]]] = {}
    for m in measurements:
        name = m.tags.get("campaign")
        if name is None:
            continue
        grouped.setdefault(str(name), {}).setdefault(str(m.tags.get("key")), []).append(m)
    return {
        name: CampaignView(name, tuple(CellView(name, k, tuple(rs)) for k, rs in cells.items()))
        for name, cells in grouped.items()
    }


def fmt_range(summary: Summary | None, fmt: Callable[[float], str]) -> str:
    """'123.4 (120.1-125.0)', or the single value for one sample, or '-'."""
    if summary is None:
        return "-"
    if summary.n == 1:
        return fmt(summary.median)
    return f"{fmt(summary.median)} ({fmt(summary.min)}-{fmt(summary.max)})"
