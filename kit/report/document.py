"""Pure: whatever a records file holds -> the report ``kit report`` prints.

A tables run renders as the tables (``kit.report.tables``); compare and knee campaigns as
their comparisons, rebuilt from the records; lone ``kit run`` records as their run tables.
``None`` when the file holds nothing of these (the CLI refuses it).
"""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.cells import group_campaigns
from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.tables import tables_in
from kit.plan.compare import BASELINE_KEY
from kit.report.compare import render_text
from kit.report.run import run_table, runs_summary
from kit.report.tables import render_tables
from kit.report.terminal import DEFAULT_WIDTH, markdown_for_terminal
from kit.results.records import Measurement
from kit.results.store import RecordsRead


def is_tables_run(read: RecordsRead) -> bool:
    return bool(read.tables_plans) or bool(tables_in((), group_campaigns(read.measurements)))


def compare_campaigns(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    """Campaigns with a baseline cell (compare, knee), in first-seen order."""
    found: dict[str, list[Measurement]] = {}
    for m in measurements:
        if m.tags.campaign:
            found.setdefault(m.tags.campaign, []).append(m)
    return {name: ms for name, ms in found.items() if any(m.tags.key == BASELINE_KEY for m in ms)}


def render_records(
    read: RecordsRead, records_name: str, markdown: bool = False, width: int = DEFAULT_WIDTH
) -> str | None:
    """The report; a tables run as markdown (``markdown``) or laid out for a terminal."""
    if is_tables_run(read):
        text = render_tables(read, records_name)
        return text if markdown else markdown_for_terminal(text, width)
    parts = [
        render_text(build_report(CompareMeta.of_records(ms), ms))
        for ms in compare_campaigns(read.measurements).values()
    ]
    runs = [m for m in read.measurements if not m.tags.campaign]
    if len(runs) > 1:  # a table of the runs first, each run's own table after it
        parts.append(f"{len(runs)} runs\n\n{runs_summary(runs)}")
    parts += [run_table(m) for m in runs]
    return "\n\n".join(parts) + "\n" if parts else None
