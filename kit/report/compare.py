"""Pure rendering of a comparison (``kit.analysis.compare.CompareReport``): text, markdown, JSON.

A within-noise change is shown in parentheses, never as a bare percentage.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from tabulate import tabulate

from kit.analysis.compare import CompareReport, Metric, Row
from kit.analysis.stats import (
    CI_METHOD,
    CONFIDENCE,
    MAX_ROUNDS_TO_DECIDE,
    MIN_BOOTSTRAP_ROUNDS,
    RESAMPLES,
    ConfidenceInterval,
    Summary,
    ratio_text,
)
from kit.plan.schedule import UntilOutcome
from kit.report.format import fmt_mib_s, fmt_rate, one_line_table, short_verdict, sig3
from kit.report.limits import limit_sentence

# --- rendering ----------------------------------------------------------------------------


WIDTH = 100
RULE_NOTE = (
    "x baseline = candidate / baseline median, [95% CI] its seeded percentile bootstrap over "
    f"rounds (n = rounds; no CI with fewer than {MIN_BOOTSTRAP_ROUNDS}); faster / slower only "
    "when that whole interval lies beyond 1 ± the noise floor"
)


def fmt_value(value: float, metric: Metric, unit: str = "MiB/s") -> str:
    return fmt_rate(value, unit) if metric == "throughput" else sig3(value)


def fmt_summary(summary: Summary | None, metric: Metric, unit: str = "MiB/s") -> str:
    if summary is None:
        return "-"
    values = (summary.min, summary.median, summary.max)
    lo, mid, hi = (fmt_value(v, metric, unit) for v in values)
    return f"{mid} ({lo}-{hi})"


def fmt_interval(
    value: float | None, ci: ConfidenceInterval | None, rounds: int | None = None
) -> str:
    """A ratio beside its 95% interval, "1.12 [1.04, 1.21]"; with too few rounds for one,
    "1.12 (n=2, no CI)" (n: the rounds) rather than a meaningless interval."""
    if value is None:
        return "-"
    if ci is not None:
        return f"{ratio_text(value)} {ci.text()}"
    if rounds is not None and rounds < MIN_BOOTSTRAP_ROUNDS:
        return f"{ratio_text(value)} (n={rounds}, no CI)"
    return ratio_text(value)


def fmt_row_ratio(row: Row, baseline_key: str) -> str:
    if row.key == baseline_key:
        return "1 (control)" if row.ratio is not None else "-"
    return fmt_interval(row.ratio, row.ci, row.rounds)


def fmt_change(row: Row) -> str:
    if row.change_pct is None:
        return "-"
    text = f"{row.change_pct:+.1f}%"
    return text if row.label in ("faster", "slower") else f"({text})"


def fmt_cpu(row: Row) -> str:
    if not row.cpu_bound_runs:
        return "-"
    return f"{row.cpu_bound_runs}/{row.runs_ok} ({', '.join(row.cpu_bound_roles)})"


def _text_rows(report: CompareReport, unit: str) -> tuple[list[str], list[list[str]]]:
    """The terminal's table: fewer, shorter columns (the change is in the verdict)."""
    meta = report.meta
    shown_unit = unit if meta.metric == "throughput" else meta.unit
    head = ["candidate", f"{shown_unit} (min-max)", "x baseline [95% CI]"]
    head += ["theory"] if meta.metric == "throughput" else []
    head += ["verdict", "runs", "CPU-bound"]
    rows = []
    for r in report.rows:
        name = f"{r.key}: {r.spec}" if r.key == meta.baseline_key and r.spec else r.key
        if r.key != meta.baseline_key and r.spec and r.spec != r.key:
            name = f"{r.key} ({r.spec})"
        line = [
            name,
            fmt_summary(r.summary, meta.metric, unit),
            fmt_row_ratio(r, meta.baseline_key),
        ]
        line += [fmt_rate(r.theory_mib_s, unit)] if meta.metric == "throughput" else []
        within = r.change_pct is not None and r.label == "within noise"
        # within noise is always below the floor; its change is the ratio beside it, so no
        # percentage is printed for it (never a bare one)
        verdict = short_verdict(r.verdict, reason=not within)
        if r.key == meta.baseline_key and r.summary is not None:
            verdict = "control"  # its copies: in the noise floor's line
        if r.undecided:
            verdict = "not decided"  # why: in a line under the table (``undecided_notes``)
        line += [verdict, f"{r.runs_ok}/{r.runs_failed}", fmt_cpu_count(r)]
        rows.append(line)
    return head, rows


def undecided_notes(rows: Sequence[Row], names: Mapping[str, str]) -> list[str]:
    """Why each candidate is not decided, and what would decide it (a line each)."""
    return [
        f"not decided: {names.get(r.key, r.key)}: its interval reaches into 1 ± the noise "
        f"floor; {r.reason}"
        for r in rows
        if r.undecided
    ]


def fmt_cpu_count(row: Row) -> str:
    """The terminal's CPU-bound cell: the runs only (the roles go under the table)."""
    return f"{row.cpu_bound_runs}/{row.runs_ok}" if row.cpu_bound_runs else "-"


def cpu_notes(rows: tuple[Row, ...] | list[Row], names: dict[str, str]) -> list[str]:
    """Which processes used a core, per row with CPU-bound runs (by the row's shown name)."""
    return [f"CPU-bound: {names.get(r.key, r.key)}: {fmt_cpu(r)}" for r in rows if r.cpu_bound_runs]


def _wrap(lines: list[str]) -> list[str]:
    return [part for line in lines for part in textwrap.wrap(line, WIDTH, subsequent_indent="  ")]


def _table_rows(report: CompareReport) -> tuple[list[str], list[list[str]]]:
    meta = report.meta
    base_key = meta.baseline_key
    show_spec = any(r.spec and r.spec != r.key for r in report.rows if r.key != base_key)
    head = ["candidate", *(["spec"] if show_spec else []), f"median (min-max) {meta.unit}"]
    head += ["x baseline [95% CI]"]
    head += ["theory MiB/s"] if meta.metric == "throughput" else []
    head += ["change", "verdict", "runs ok/failed", "CPU-bound runs"]
    rows = []
    for r in report.rows:
        name = f"{r.key}: {r.spec}" if r.key == base_key and r.spec and not show_spec else r.key
        line = [name, *([r.spec] if show_spec else []), fmt_summary(r.summary, meta.metric)]
        line += [fmt_row_ratio(r, base_key)]
        line += [fmt_mib_s(r.theory_mib_s)] if meta.metric == "throughput" else []
        line += [fmt_change(r), r.verdict, f"{r.runs_ok}/{r.runs_failed}", fmt_cpu(r)]
        rows.append(line)
    return head, rows


def _notes(report: CompareReport, change_column: bool = True) -> list[str]:
    notes = [report.floor.describe() if report.floor else "noise floor: none"]
    notes.append(
        f"rounds: {report.rounds_done} done of {report.meta.rounds} planned"
        + ("; (x%) = change within noise" if change_column else "")
    )
    notes.append(RULE_NOTE)
    notes += [f"warning: {r.key}: {w}" for r in report.rows for w in r.warnings]
    notes += [f"warning: {w}" for w in report.warnings]
    return notes


def render_text(report: CompareReport, unit: str = "MiB/s") -> str:
    """The terminal's report: every line within ``WIDTH`` columns and every candidate on one
    line (a name too long is cut and keyed under the table), throughput in ``unit``."""
    head, rows = _text_rows(report, unit)
    table, legend, shown = one_line_table(rows, head, WIDTH)
    names = {r.key: name for r, name in zip(report.rows, shown, strict=True)}
    lines = [
        *_wrap([f"{report.meta.title}: {report.meta.setup}"]),
        table,
        *_wrap(legend),
        *_wrap(
            [
                *undecided_notes(report.rows, names),
                *_notes(report, change_column=False),
                *cpu_notes(report.rows, names),
                "runs = ok/failed; CPU-bound = runs where a process used a core; theory = "
                "min(link rate, window / RTT), the bound the cell's window sets",
            ]
        ),
        *limit_lines(report.rows, names, unit),
    ]
    return "\n".join(lines)


def limit_lines(
    rows: Sequence[Row],
    names: Mapping[str, str],
    unit: str = "MiB/s",
    width: int | None = WIDTH,
) -> list[str]:
    """What limited each cell (its median run), a sentence each under the table (wrapped
    to ``width``; None: a line each, for markdown)."""
    found = [(r, r.limit) for r in rows if r.limit is not None]
    if not found:
        return []
    lines = ["what limited each (its median run):"]
    for row, limit in found:
        text = f"{names.get(row.key, row.key)}: {limit_sentence(limit, unit)}"
        if width is None:
            lines.append(f"  {text}")
        else:
            lines += textwrap.wrap(text, width, initial_indent="- ", subsequent_indent="  ")
    return lines


def _md_cell(text: str) -> str:
    """A markdown table cell: a ``|`` in a name would end the cell, so it is escaped."""
    return text.replace("|", "\\|")


def render_markdown(report: CompareReport) -> str:
    head, rows = _table_rows(report)
    notes = [f"- {n}" for n in _notes(report)]
    cells = [[_md_cell(cell) for cell in row] for row in rows]
    table = tabulate(cells, [_md_cell(h) for h in head], tablefmt="github")
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
        "confidence": CONFIDENCE,
        "ci_method": f"{CI_METHOD}, {RESAMPLES} resamples, seeded by the cell's name",
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
        "ratio": r.ratio,
        "ci_low": r.ci.low if r.ci else None,
        "ci_high": r.ci.high if r.ci else None,
        "ci_rounds": r.ci.rounds if r.ci else None,
        "needs_rounds": r.needs,
        "label": r.label,
        "verdict": r.verdict,
        "cpu_bound_runs": r.cpu_bound_runs,
        "cpu_bound_roles": list(r.cpu_bound_roles),
        "ping_rtt_ms": r.ping_rtt_ms,
        "warnings": list(r.warnings),
    }


def until_lines(outcome: UntilOutcome, names: Mapping[str, str] | None = None) -> list[str]:
    """How ``--until-decided`` ended: the rounds it added and, when its budget ran out first,
    each cell still not decided with the rounds its interval says it would need (``names``:
    campaign -> the name to show it by, for a command of several campaigns)."""
    added = f"{outcome.rounds_added} round{'s' if outcome.rounds_added != 1 else ''} added"
    if not outcome.still_open:
        return [f"until decided: every cell is decided ({added})"]
    lines = [f"until decided: {added}; stopped: {outcome.stopped_by}; still not decided:"]
    several = len(outcome.still_open) > 1
    for campaign, cells in outcome.still_open.items():
        where = f"{(names or {}).get(campaign, campaign)}: " if several else ""
        for key, needs in cells.items():
            more = "+" if needs is not None and needs >= MAX_ROUNDS_TO_DECIDE else ""
            need = "no estimate" if needs is None else f"needs {needs}{more} rounds"
            lines += textwrap.wrap(
                f"{where}{key}: {need}", WIDTH, initial_indent="- ", subsequent_indent="  "
            )
    return lines
