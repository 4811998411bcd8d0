"""Pure: whatever a records file holds -> the report ``kit report`` prints.

A tables run renders as the tables (``kit.report.tables``); compare and knee campaigns as
their comparisons, rebuilt from the records; lone ``kit run`` records as their run tables.
``None`` when the file holds nothing of these (the CLI refuses it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kit.analysis.cells import group_campaigns
from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.flat import Row, flat_row
from kit.analysis.series import PlotData
from kit.analysis.tables import tables_in
from kit.plan.compare import BASELINE_KEY
from kit.plan.tables import TablesSettings
from kit.report.compare import render_text
from kit.report.run import run_table, summary_row, summary_table
from kit.report.tables import render_tables
from kit.report.terminal import DEFAULT_WIDTH, markdown_for_terminal
from kit.results.records import Measurement, SessionRecord
from kit.results.store import Record, RecordsRead


def is_tables_run(read: RecordsRead) -> bool:
    return bool(read.tables_plans) or bool(tables_in((), group_campaigns(read.measurements)))


def compare_campaigns(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    """Campaigns with a baseline cell (compare, knee), in first-seen order."""
    found: dict[str, list[Measurement]] = {}
    for m in measurements:
        if m.tags.campaign:
            found.setdefault(m.tags.campaign, []).append(m)
    return {name: ms for name, ms in found.items() if any(m.tags.key == BASELINE_KEY for m in ms)}


@dataclass
class StreamedRecords:
    """A records file read one record at a time (``add``), for ``kit report``: a lone run is
    rendered as it comes and only its text kept (its record, with its frame summary, is
    dropped); campaigns' records, bounded by their plans, are kept for their tables; the
    figures' data is aggregated (``PlotData``); CSV rows kept only when ``rows`` is asked."""

    keep_rows: bool = False
    campaigns: list[Measurement] = field(default_factory=list)
    plans: list[TablesSettings] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)
    lone: list[str] = field(default_factory=list)
    lone_lines: list[tuple[str, ...]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    plots: PlotData = field(default_factory=PlotData)

    def add_all(self, records: Iterable[Record]) -> None:
        for r in records:
            self.add(r)

    def add(self, record: Record) -> None:
        if isinstance(record, TablesSettings):
            self.plans.append(record)
        elif isinstance(record, SessionRecord):
            self.sessions.append(record)
        else:
            self._add_measurement(record)

    def _add_measurement(self, m: Measurement) -> None:
        self.plots.add(m)
        if self.keep_rows:
            self.rows.append(flat_row(m))
        if m.tags.campaign:
            self.campaigns.append(m)
        else:
            self.lone.append(run_table(m))
            self.lone_lines.append(summary_row(len(self.lone), m))

    def read(self) -> RecordsRead:
        """The campaigns' records, as a whole-file read holds them (the lone runs rendered)."""
        return RecordsRead(tuple(self.campaigns), tuple(self.plans), tuple(self.sessions))

    def render(
        self, records_name: str, markdown: bool = False, width: int = DEFAULT_WIDTH
    ) -> str | None:
        lone = (self.lone, self.lone_lines)
        return render_records(self.read(), records_name, markdown, width, lone=lone)


def render_records(
    read: RecordsRead,
    records_name: str,
    markdown: bool = False,
    width: int = DEFAULT_WIDTH,
    lone: tuple[Sequence[str], Sequence[tuple[str, ...]]] | None = None,
) -> str | None:
    """The report; a tables run as markdown (``markdown``) or laid out for a terminal.
    ``lone``: the lone runs' tables and summary lines, already rendered (else rendered
    from ``read``)."""
    if is_tables_run(read):
        text = render_tables(read, records_name)
        return text if markdown else markdown_for_terminal(text, width)
    parts = [
        render_text(build_report(CompareMeta.of_records(ms), ms))
        for ms in compare_campaigns(read.measurements).values()
    ]
    if lone is None:
        runs = [m for m in read.measurements if not m.tags.campaign]
        lone = ([run_table(m) for m in runs], [summary_row(i + 1, m) for i, m in enumerate(runs)])
    tables, lines = lone
    if len(lines) > 1:  # a table of the runs first, each run's own table after it
        parts.append(f"{len(lines)} runs\n\n{summary_table(lines)}")
    parts += tables
    return "\n\n".join(parts) + "\n" if parts else None
