"""Pure: a compare campaign's records -> per-candidate medians, noise floor, verdicts.

The baseline is the campaign's control cell: every copy of it (two per round) is a
baseline sample, and the spread between the copies of one round is the noise floor
(``kit.stats.noise_floor``). A candidate's verdict is ``kit.stats.verdict`` against those
samples; a within-noise change is shown in parentheses, never as a bare percentage.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tabulate import tabulate

from kit.errors import UsageError
from kit.measure import Measurement
from kit.report.common import fmt_mib_s, ping_rtt_ms
from kit.stats import (
    MIN_ROUNDS,
    NoiseFloor,
    Summary,
    noise_floor,
    p50,
    relative_sigma_pct,
    summarize,
    too_few_rounds,
    verdict,
)

Metric = Literal["throughput", "latency"]
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

    @property
    def runs_ok(self) -> int:
        return 0 if self.summary is None else self.summary.n


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


# --- building -----------------------------------------------------------------------------


def sample_of(m: Measurement, metric: Metric) -> float | None:
    """One run's sample: its throughput, or the median latency of its calls."""
    result = m.client_result if m.ok else None
    if result is None:
        return None
    if metric == "latency":
        return p50(result.latencies_ms) if result.latencies_ms else None
    return result.throughput_mib_s


def build_report(meta: CompareMeta, measurements: Sequence[Measurement]) -> CompareReport:
    by_key = _group(measurements)
    base_runs = by_key.get(meta.baseline_key, [])
    floor, floor_problem = _floor(base_runs, meta.metric)
    base_samples = _samples(base_runs, meta.metric)
    rows = [_baseline_row(meta, base_runs, base_samples)]
    for key in meta.keys:
        if key != meta.baseline_key:
            rows.append(_candidate_row(meta, key, by_key.get(key, []), base_samples, floor))
    rounds_done = len({m.tags.get("round") for m in measurements})
    warnings = _global_warnings(rounds_done, floor, floor_problem, measurements)
    return CompareReport(meta, tuple(rows), floor, rounds_done, tuple(warnings))


def _group(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    out: dict[str, list[Measurement]] = {}
    for m in measurements:
        out.setdefault(str(m.tags.get("key")), []).append(m)
    return out


def _samples(runs: Sequence[Measurement], metric: Metric) -> list[float]:
    return [s for s in (sample_of(m, metric) for m in runs) if s is not None]


def _floor(base_runs: Sequence[Measurement], metric: Metric) -> tuple[NoiseFloor | None, str]:
    by_round: dict[int, list[float]] = {}
    for m in base_runs:
        sample = sample_of(m, metric)
        if sample is not None:
            by_round.setdefault(int(m.tags.get("round", 0)), []).append(sample)
    try:
        return noise_floor([by_round[r] for r in sorted(by_round)]), ""
    except UsageError as exc:
        return None, str(exc)


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
    }


def _baseline_row(meta: CompareMeta, runs: Sequence[Measurement], samples: list[float]) -> Row:
    common = _common(runs, meta.metric)
    text = "control (2 copies per round)" if samples else "no result (every run failed)"
    return Row(
        meta.baseline_key,
        meta.specs.get(meta.baseline_key, ""),
        label="baseline",
        verdict=text,
        **common,
    )


def _candidate_row(
    meta: CompareMeta,
    key: str,
    runs: Sequence[Measurement],
    base_samples: list[float],
    floor: NoiseFloor | None,
) -> Row:
    common = _common(runs, meta.metric)
    spec = meta.specs.get(key, "")
    samples = _samples(runs, meta.metric)
    if not samples:
        return Row(key, spec, verdict="no result (every run failed)", **common)
    if not base_samples or floor is None:
        return Row(key, spec, verdict="no verdict (no noise floor)", **common)
    try:
        v = verdict(
            base_samples, samples, floor.floor_pct, higher_is_better=meta.metric == "throughput"
        )
    except UsageError as exc:
        return Row(key, spec, verdict=f"no verdict ({exc})", **common)
    warnings = (
        *common.pop("warnings"),
        *_rounds_warning(v.change_pct, v.significant, v.reason, base_samples, samples),
    )
    return Row(
        key,
        spec,
        change_pct=v.change_pct,
        label=v.label,
        verdict=v.describe(),
        warnings=warnings,
        **common,
    )


def _rounds_warning(
    change_pct: float, significant: bool, reason: str, base: list[float], cand: list[float]
) -> tuple[str, ...]:
    """Too few rounds for this candidate's change at the spread seen (never for a change
    below the floor: more rounds do not lower the floor)."""
    if (
        len(base) < 2
        or len(cand) < 2
        or abs(change_pct) == 0
        or (not significant and reason != "rounds overlap")
    ):
        return ()
    noisier = max((base, cand), key=relative_sigma_pct)
    try:
        text = too_few_rounds(len(cand), noisier, abs(change_pct))
    except UsageError:
        return ()
    if text is None:
        return ()
    return (f"{text}{'' if not significant else ' (this verdict is fragile)'}",)


def _global_warnings(
    rounds_done: int,
    floor: NoiseFloor | None,
    floor_problem: str,
    measurements: Sequence[Measurement],
) -> list[str]:
    warnings = []
    if floor is None:
        warnings.append(f"no noise floor: {floor_problem or 'no control runs'}; no verdicts given")
    if 0 < rounds_done < MIN_ROUNDS:
        warnings.append(
            f"only {rounds_done} round(s): with fewer than {MIN_ROUNDS} "
            "one unlucky run moves a median"
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


# --- rendering ----------------------------------------------------------------------------


def fmt_value(value: float, metric: Metric) -> str:
    return fmt_mib_s(value) if metric == "throughput" else f"{value:.2f}"


def fmt_summary(summary: Summary | None, metric: Metric) -> str:
    if summary is None:
        return "-"
    lo, mid, hi = (fmt_value(v, metric) for v in (summary.min, summary.median, summary.max))
    return f"{mid} ({lo}-{hi})"


def fmt_change(row: Row) -> str:
    if row.change_pct is None:
        return "-"
    text = f"{row.change_pct:+.1f}%"
    return text if row.label in ("faster", "slower") else f"({text})"


def fmt_cpu(row: Row) -> str:
    if not row.cpu_bound_runs:
        return "-"
    return f"{row.cpu_bound_runs}/{row.runs_ok} ({', '.join(row.cpu_bound_roles)})"


def _table_rows(report: CompareReport) -> tuple[list[str], list[list[str]]]:
    meta = report.meta
    base_key = meta.baseline_key
    show_spec = any(r.spec and r.spec != r.key for r in report.rows if r.key != base_key)
    head = ["candidate", *(["spec"] if show_spec else []), f"median (min-max) {meta.unit}"]
    head += ["theory MiB/s"] if meta.metric == "throughput" else []
    head += ["change", "verdict", "runs ok/failed", "CPU-bound runs"]
    rows = []
    for r in report.rows:
        name = f"{r.key}: {r.spec}" if r.key == base_key and r.spec and not show_spec else r.key
        line = [name, *([r.spec] if show_spec else []), fmt_summary(r.summary, meta.metric)]
        line += [fmt_mib_s(r.theory_mib_s)] if meta.metric == "throughput" else []
        line += [fmt_change(r), r.verdict, f"{r.runs_ok}/{r.runs_failed}", fmt_cpu(r)]
        rows.append(line)
    return head, rows


def _notes(report: CompareReport) -> list[str]:
    notes = [report.floor.describe() if report.floor else "noise floor: none"]
    notes.append(
        f"rounds: {report.rounds_done} done of {report.meta.rounds} planned; "
        "(x%) = change within noise"
    )
    notes += [f"warning: {r.key}: {w}" for r in report.rows for w in r.warnings]
    notes += [f"warning: {w}" for w in report.warnings]
    return notes


def render_text(report: CompareReport) -> str:
    head, rows = _table_rows(report)
    lines = [
        f"{report.meta.title}: {report.meta.setup}",
        tabulate(rows, head, tablefmt="simple"),
        *_notes(report),
    ]
    return "\n".join(lines)


def render_markdown(report: CompareReport) -> str:
    head, rows = _table_rows(report)
    notes = [f"- {n}" for n in _notes(report)]
    table = tabulate(rows, head, tablefmt="github")
    return "\n".join([f"### {report.meta.title}", "", report.meta.setup, "", table, "", *notes, ""])


def report_json(report: CompareReport) -> dict[str, Any]:
    meta, floor = report.meta, report.floor
    return {
        "title": meta.title,
        "setup": meta.setup,
        "metric": meta.metric,
        "unit": meta.unit,
        "rounds_planned": meta.rounds,
        "rounds_done": report.rounds_done,
        "noise_floor": None
        if floor is None
        else {
            "floor_pct": floor.floor_pct,
            "paired_pct": floor.paired_pct,
            "pooled_pct": floor.pooled_pct,
            "rounds": floor.rounds,
            "copies": floor.copies,
        },
        "rows": [_row_json(r) for r in report.rows],
        "warnings": list(report.warnings),
    }


def _row_json(r: Row) -> dict[str, Any]:
    s = r.summary
    return {
        "name": r.key,
        "spec": r.spec,
        "runs_ok": r.runs_ok,
        "runs_failed": r.runs_failed,
        "median": s.median if s else None,
        "min": s.min if s else None,
        "max": s.max if s else None,
        "spread_pct": s.spread_pct if s else None,
        "theory_mib_s": r.theory_mib_s,
        "change_pct": r.change_pct,
        "label": r.label,
        "verdict": r.verdict,
        "cpu_bound_runs": r.cpu_bound_runs,
        "cpu_bound_roles": list(r.cpu_bound_roles),
        "ping_rtt_ms": r.ping_rtt_ms,
        "warnings": list(r.warnings),
    }
