"""Pure rendering of ``kit.analysis.modelcheck``: the table and the load lines."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from kit.analysis.modelcheck import CheckRow, CpuUse, LoadShift
from kit.analysis.stats import Summary
from kit.plan.modelcheck import PAIRS
from kit.report.compare import fmt_interval

UNITS = {
    "throughput": "MiB/s",
    "delivered": "MiB/s delivered",
    "window_over_bdp": "window/BDP",
}


def _figure(s: Summary | None) -> str:
    if s is None:
        return "-"
    return f"{s.median:.3g} ({s.min:.3g}-{s.max:.3g})"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _ratio_ci(row: CheckRow) -> str:
    """model / real beside the interval its verdict was judged by: the bootstrap's over
    rounds, widened to the one the stacks' spreads give; "(n=2, no CI)" with fewer than 3."""
    figure = row.figure
    return fmt_interval(row.ratio, figure.shown if figure else None, row.rounds)


def _cpu(cpu: CpuUse | None, real: str) -> str:
    """The model client's core fraction and its CPU per MiB against the real client's."""
    if cpu is None:
        return "-"
    cost = cpu.cost_ratio
    return f"{cpu.model_cores:.2f} core" + ("" if cost is None else f", {cost:.1f}x {real}/MiB")


def _stacks(row: CheckRow) -> str:
    pair = PAIRS[row.cell.pair]
    return f"{pair.real_label} / {pair.model_label}"


def _machine(cpu: CpuUse | None) -> str:
    if cpu is None:
        return "-"
    return (
        f"{cpu.machine_busy_cores:.2f}/{cpu.cpus:g} busy, "
        f"{cpu.model_limited}/{cpu.model_runs} limited"
    )


def render_table(rows: Sequence[CheckRow]) -> str:
    table = [
        (
            row.cell.name,
            _stacks(row),
            UNITS[row.cell.metric],
            row.condition,
            _figure(row.real),
            _figure(row.model),
            _ratio_ci(row),
            f"±{row.cell.tolerance * 100:.0f}%",
            "-" if row.floor_pct is None else f"±{row.floor_pct:.0f}%",
            _cpu(row.cpu, PAIRS[row.cell.pair].real_label),
            _machine(row.cpu),
            row.verdict + (f" ({row.failed} failed)" if row.failed else ""),
        )
        for row in rows
    ]
    headers = (
        "cell",
        "real / model",
        "figure",
        "condition",
        "real",
        "model",
        "model/real [95% CI]",
        "tolerance",
        "noise floor",
        "model client CPU",
        "machine (model runs)",
        "verdict",
    )
    return tabulate(table, headers=headers, disable_numparse=True)


def render_load(shifts: Sequence[LoadShift]) -> str:
    lines = ["How each moved with one core busy (busy median / quiet median):"]
    for s in shifts:
        real = PAIRS[s.cell.pair].real_label
        lines.append(
            f"  {s.cell.name}: {real} {_ratio(s.real)}, model {_ratio(s.model)} - {s.note}"
        )
    return "\n".join(lines)


def render_cpu(rows: Sequence[CheckRow]) -> str:
    """One line per row that depends on the machine ("" when none does)."""
    lines = [f"  {row.cell.name} ({row.condition}): {row.cpu_note}" for row in rows if row.cpu_note]
    if not lines:
        return ""
    return "\n".join(["How the model depends on the machine:", *lines])


def render(rows: Sequence[CheckRow], shifts: Sequence[LoadShift]) -> str:
    notes = (
        "model/real = model median / real median, [95% CI] its percentile bootstrap over "
        "rounds (resampled by round, both stacks together), widened to the interval the "
        "stacks' spreads give; none with fewer than 3 rounds (n = rounds); "
        "verdict 'not decided' when the noise floor "
        "(the wider of the two stacks' duplicate-control floors) exceeds the tolerance, or "
        "when the ratio lies outside it but its interval (the bootstrap's, widened to the one "
        "the stacks' spreads give) still reaches it (with the "
        "rounds that would decide it); 'outside' only when that whole interval lies outside; "
        "'CPU-limited' instead of 'outside' when most model runs had no core to spare. "
        "model client CPU = its core fraction (median) and its CPU per MiB over the real "
        "client's; machine = busy cores (median) and the model runs that were CPU-limited (a "
        "process >= 90 % of a core, or the machine >= 90 % busy). 'MiB/s delivered' = what "
        "the link carried from its first byte to the client's end, per second (without the "
        "time the client took to send its first request)."
    )
    parts = [render_table(rows), render_load(shifts), render_cpu(rows), notes]
    return "\n\n".join(p for p in parts if p)
