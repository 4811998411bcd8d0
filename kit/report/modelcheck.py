"""Pure rendering of ``kit.analysis.modelcheck``: the table and the load lines."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from kit.analysis.modelcheck import CheckRow, LoadShift
from kit.analysis.stats import Summary

UNITS = {"throughput": "MiB/s", "window_over_bdp": "window/BDP"}


def _figure(s: Summary | None) -> str:
    if s is None:
        return "-"
    return f"{s.median:.3g} ({s.min:.3g}-{s.max:.3g})"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render_table(rows: Sequence[CheckRow]) -> str:
    table = [
        (
            row.cell.name,
            UNITS[row.cell.metric],
            row.condition,
            _figure(row.real),
            _figure(row.model),
            _ratio(row.ratio),
            f"±{row.cell.tolerance * 100:.0f}%",
            "-" if row.floor_pct is None else f"±{row.floor_pct:.0f}%",
            row.verdict + (f" ({row.failed} failed)" if row.failed else ""),
        )
        for row in rows
    ]
    headers = (
        "cell",
        "figure",
        "condition",
        "real grpc-go",
        "model (h2 dynamic)",
        "ratio",
        "tolerance",
        "noise floor",
        "verdict",
    )
    return tabulate(table, headers=headers, disable_numparse=True)


def render_load(shifts: Sequence[LoadShift]) -> str:
    lines = ["How each moved with one core busy (busy median / quiet median):"]
    for s in shifts:
        lines.append(
            f"  {s.cell.name}: grpc-go {_ratio(s.real)}, model {_ratio(s.model)} - {s.note}"
        )
    return "\n".join(lines)


def render(rows: Sequence[CheckRow], shifts: Sequence[LoadShift]) -> str:
    notes = (
        "ratio = model median / real median; verdict 'not decided' when the noise floor "
        "(the wider of the two stacks' duplicate-control floors) exceeds the tolerance."
    )
    return "\n\n".join([render_table(rows), render_load(shifts), notes])
