"""Pure: a compare campaign's records -> per-candidate medians, noise floor, verdicts.

``kit.report.compare`` renders the ``CompareReport`` built here.

The baseline is the campaign's control cell: every copy of it (two per round) is a
baseline sample, and the spread between the copies of one round is the noise floor
(``kit.analysis.stats.noise_floor``). A candidate's verdict is ``kit.analysis.stats.verdict``
against those samples, grouped by round (its ratio's bootstrap interval resamples whole
rounds): faster / slower, within noise, or not decided with the rounds that would decide it
(``undecided_of``: what ``--until-decided`` adds rounds to).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kit.analysis.cells import floor_of, p50_latency_ms, ping_rtt_ms, throughput
from kit.analysis.limits import Limit, limit_of
from kit.analysis.stats import (
    MIN_BOOTSTRAP_ROUNDS,
    MIN_ROUNDS,
    ByRound,
    ConfidenceInterval,
    NoiseFloor,
    Summary,
    summarize,
    verdict,
)
from kit.errors import UsageError
from kit.plan.compare import BASELINE_KEY, CompareMetric, ComparePlan, describe_setup
from kit.plan.schedule import Undecided
from kit.results.records import Measurement

Metric = CompareMetric
LOUD_FLOOR_PCT = 10.0


@dataclass(frozen=True)
class CompareMeta:
    """What the report needs from the plan: order, specs, metric, heading."""

    title: str
    baseline_key: str
    keys: tuple[str, ...]
    specs: Mapping[str, str] = field(default_factory=dict)
    metric: Metric = "throughput"
    rounds: int = 0
    setup: str = ""

    @property
    def unit(self) -> str:
        return "MiB/s" if self.metric == "throughput" else "ms (p50 per run)"

    @classmethod
    def of(cls, plan: ComparePlan) -> CompareMeta:
        return cls(
            title=plan.title,
            baseline_key=BASELINE_KEY,
            keys=tuple(c.key for c in plan.cells()),
            specs=plan.specs,
            metric=plan.metric,
            rounds=plan.rounds,
            setup=plan.setup,
        )

    @classmethod
    def of_records(cls, measurements: Sequence[Measurement]) -> CompareMeta:
        """The meta of a compare campaign rebuilt from its records alone (``kit report``):
        cells in first-seen order, the baseline first; rounds as far as they were run."""
        keys = list(dict.fromkeys(m.tags.key for m in measurements))
        if BASELINE_KEY in keys:
            keys.remove(BASELINE_KEY)
        first = measurements[0].trial
        specs = {m.tags.key: m.trial.label or m.trial.client.label for m in measurements}
        name = measurements[0].tags.campaign
        return cls(
            title=name.rsplit("-", 1)[0] if "-" in name else name,
            baseline_key=BASELINE_KEY,
            keys=(BASELINE_KEY, *keys),
            specs=specs,
            metric="latency" if first.workload.kind == "unary" else "throughput",
            rounds=1 + max(m.tags.round for m in measurements),
            setup=describe_setup(first.link, first.workload),
        )


@dataclass(frozen=True)
class Row:
    """One cell of the comparison (the baseline included)."""

    key: str
    spec: str
    summary: Summary | None
    runs_failed: int = 0
    theory_mib_s: float | None = None
    change_pct: float | None = None
    label: str = "-"
    verdict: str = "-"
    cpu_bound_runs: int = 0
    cpu_bound_roles: tuple[str, ...] = ()
    ping_rtt_ms: float | None = None
    warnings: tuple[str, ...] = ()
    limit: Limit | None = None  # what limited the cell's median run
    # candidate median / baseline median, its 95% bootstrap interval over rounds (None:
    # fewer than 3 rounds), and, when not decided, the rounds that would decide it
    ratio: float | None = None
    ci: ConfidenceInterval | None = None
    needs: int | None = None
    rounds: int = 0  # the rounds the cell has a result in
    # the cell's samples per round (what its intervals resample)
    by_round: Mapping[int, tuple[float, ...]] = field(default_factory=dict)
    reason: str = ""  # why it is within noise or not decided (and what would decide it)

    @property
    def runs_ok(self) -> int:
        return 0 if self.summary is None else self.summary.n

    @property
    def undecided(self) -> bool:
        """Measured against a floor, and neither faster, slower nor within noise yet."""
        return self.label == "not decided"


@dataclass(frozen=True)
class CompareReport:
    meta: CompareMeta
    rows: tuple[Row, ...]
    floor: NoiseFloor | None
    rounds_done: int
    warnings: tuple[str, ...] = ()

    def row(self, key: str) -> Row:
        for row in self.rows:
            if row.key == key:
                return row
        raise KeyError(key)

    def undecided(self) -> dict[str, int | None]:
        """The candidates not decided yet -> the rounds that would decide them (None: no
        estimate)."""
        return {r.key: r.needs for r in self.rows if r.undecided}


def undecided_of(report: CompareReport) -> Undecided:
    """The candidates ``--until-decided`` adds rounds to (the control runs in every round)."""
    return Undecided(report.undecided())


def no_result_rows(report: CompareReport) -> tuple[Row, ...]:
    """The cells none of whose runs gave a result (every one failed, or none ran)."""
    return tuple(row for row in report.rows if row.runs_ok == 0)


# --- building -----------------------------------------------------------------------------


def sample_of(m: Measurement, metric: Metric) -> float | None:
    """One run's sample: its throughput, or the median latency of its calls."""
    return p50_latency_ms(m) if metric == "latency" else throughput(m)


def build_report(meta: CompareMeta, measurements: Sequence[Measurement]) -> CompareReport:
    by_key = _group(measurements)
    base_runs = by_key.get(meta.baseline_key, [])
    floor, floor_problem = _floor(base_runs, meta.metric)
    base_samples = samples_by_round(base_runs, meta.metric)
    rows = [_baseline_row(meta, base_runs, _samples(base_runs, meta.metric))]
    for key in meta.keys:
        if key != meta.baseline_key:
            rows.append(_candidate_row(meta, key, by_key.get(key, []), base_samples, floor))
    rounds_done = len({m.tags.round for m in measurements})
    warnings = _global_warnings(rounds_done, floor, floor_problem, measurements)
    return CompareReport(meta, tuple(rows), floor, rounds_done, tuple(warnings))


def _group(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    out: dict[str, list[Measurement]] = {}
    for m in measurements:
        out.setdefault(m.tags.key, []).append(m)
    return out


def _samples(runs: Sequence[Measurement], metric: Metric) -> list[float]:
    return [s for s in (sample_of(m, metric) for m in runs) if s is not None]


def samples_by_round(runs: Sequence[Measurement], metric: Metric) -> dict[int, list[float]]:
    """A cell's samples per round (the control's two copies together): what the bootstrap
    resamples."""
    out: dict[int, list[float]] = {}
    for m in runs:
        value = sample_of(m, metric)
        if value is not None:
            out.setdefault(m.tags.round, []).append(value)
    return out


def _floor(base_runs: Sequence[Measurement], metric: Metric) -> tuple[NoiseFloor | None, str]:
    floor = floor_of([m for m in base_runs if m.ok], lambda m: sample_of(m, metric))
    if floor is not None:
        return floor, ""
    return None, (
        "noise_floor: no round has two control copies; the noise floor is the spread "
        "between duplicate controls, so run at least one round with the control twice"
    )


def _common(runs: Sequence[Measurement], metric: Metric) -> dict[str, Any]:
    samples = _samples(runs, metric)
    bound = [m for m in runs if m.ok and m.cpu_bound_roles]
    roles = sorted({r for m in bound for r in m.cpu_bound_roles})
    theories = [m.theory_mib_s for m in runs if m.theory_mib_s is not None]
    pings = [p for p in (ping_rtt_ms(m) for m in runs if m.ok) if p is not None]
    errors = [m.error for m in runs if not m.ok]
    warnings = [f"{len(errors)} run(s) failed, e.g.: {errors[0][:160]}"] if errors else []
    return {
        "summary": summarize(samples) if samples else None,
        "runs_failed": len(runs) - len(samples),
        "theory_mib_s": statistics.median(theories) if theories else None,
        "cpu_bound_runs": len(bound),
        "cpu_bound_roles": tuple(roles),
        "ping_rtt_ms": statistics.median(pings) if pings else None,
        "warnings": tuple(warnings),
        "limit": _median_limit(runs, metric),
        "rounds": len({m.tags.round for m in runs if sample_of(m, metric) is not None}),
        "by_round": {r: tuple(v) for r, v in samples_by_round(runs, metric).items()},
    }


def _median_limit(runs: Sequence[Measurement], metric: Metric) -> Limit | None:
    """The verdict of the run nearest the cell's median (its first on a tie)."""
    scored = [(s, i, m) for i, m in enumerate(runs) if (s := sample_of(m, metric)) is not None]
    if not scored:
        return None
    median = statistics.median(s for s, _, _ in scored)
    return limit_of(min(scored, key=lambda sim: (abs(sim[0] - median), sim[1]))[2])


def _baseline_row(meta: CompareMeta, runs: Sequence[Measurement], samples: list[float]) -> Row:
    common = _common(runs, meta.metric)
    text = "control (2 copies per round)" if samples else "no result (every run failed)"
    return Row(
        meta.baseline_key,
        meta.specs.get(meta.baseline_key, ""),
        label="baseline",
        verdict=text,
        ratio=1.0 if samples else None,
        **common,
    )


def _candidate_row(
    meta: CompareMeta,
    key: str,
    runs: Sequence[Measurement],
    base_samples: ByRound,
    floor: NoiseFloor | None,
) -> Row:
    common = _common(runs, meta.metric)
    spec = meta.specs.get(key, "")
    samples = samples_by_round(runs, meta.metric)
    if not samples:
        return Row(key, spec, verdict="no result (every run failed)", **common)
    if not base_samples or floor is None:
        return Row(key, spec, verdict="no verdict (no noise floor)", **common)
    try:
        v = verdict(
            base_samples,
            samples,
            floor.floor_pct,
            higher_is_better=meta.metric == "throughput",
            seed=f"compare:{key}",
        )
    except UsageError as exc:
        return Row(key, spec, verdict=f"no verdict ({exc})", **common)
    return Row(
        key,
        spec,
        change_pct=v.change_pct,
        label=v.label,
        verdict=v.describe(),
        ratio=v.ratio,
        ci=v.ci,
        needs=v.needs,
        reason=v.reason,
        **common,
    )


def _global_warnings(
    rounds_done: int,
    floor: NoiseFloor | None,
    floor_problem: str,
    measurements: Sequence[Measurement],
) -> list[str]:
    warnings = []
    if floor is None:
        warnings.append(f"no noise floor: {floor_problem or 'no control runs'}; no verdicts given")
    if 0 < rounds_done < max(MIN_ROUNDS, MIN_BOOTSTRAP_ROUNDS):
        warnings.append(
            f"only {rounds_done} round(s): with fewer than {MIN_ROUNDS} "
            "one unlucky run moves a median, and a bootstrap has too few rounds for an interval"
        )
    if floor is not None and floor.floor_pct > LOUD_FLOOR_PCT:
        warnings.append(
            f"the noise floor is ±{floor.floor_pct:.1f}%: smaller changes cannot be seen here; "
            "quieten the machine or use longer runs (--duration)"
        )
    bound = sum(1 for m in measurements if m.ok and m.cpu_bound_roles)
    if bound:
        warnings.append(
            f"{bound} of {len(measurements)} runs had a CPU-bound process: "
            "those measure CPU, not windows"
        )
    return warnings
