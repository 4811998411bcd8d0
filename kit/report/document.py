"""Pure: whatever a records file holds -> the report ``kit report`` prints, in chunks.

A tables run renders as the tables (``kit.report.tables``); compare and knee campaigns as
their comparisons, rebuilt from the records; lone ``kit run`` records as a table of the
runs, one line each, then the latest runs' own tables (every run's with ``all_runs``).

A records file can hold any number of runs, so the report is built in passes over its
records (``records`` is called once per pass) and never holds them: the first pass
(``scan_records``) keeps the campaigns' records (bounded by their plans), counts the lone
runs and measures the summary's columns; the second prints the summary a line at a time
and keeps only the last ``MAX_RUN_TABLES`` runs' tables; ``all_runs`` prints every run's
table in a third. Memory is bounded by the campaigns and that cap, not by the file.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kit import __version__
from kit.analysis.cells import group_campaigns
from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.compare import Row as CompareRow
from kit.analysis.flat import flat_row
from kit.analysis.knee import is_knee_campaign, sweep_of_records
from kit.analysis.limits import limit_of
from kit.analysis.series import PlotData
from kit.analysis.tables import evaluate_bars, tables_in
from kit.plan.compare import BASELINE_KEY
from kit.plan.tables import TablesSettings
from kit.report.compare import render_text, report_json
from kit.report.format import ColumnWidths
from kit.report.knee import knee_json, knee_markdown, render_knee
from kit.report.limits import limit_json
from kit.report.run import run_table, summary_layout, summary_row, summary_widths
from kit.report.tables import render_tables
from kit.report.tables.checks import bar_json
from kit.report.terminal import DEFAULT_WIDTH, markdown_for_terminal
from kit.results.records import Measurement, SessionRecord
from kit.results.store import Record, RecordsRead

# The lone runs whose full tables a report prints (the latest ones; ``--all`` for every
# run): each is ~40 lines, the summary above them already has a line per run.
MAX_RUN_TABLES = 20
# The summary rows a first pass keeps (about 0.6 KB each): a file of more runs has its
# summary printed from a second pass instead, so memory stays bounded.
MAX_KEPT_ROWS = 1_000

Records = Callable[[], Iterable[Record]]  # a fresh pass over the same records, per call
# A fresh pass giving the lone runs from the k-th on whole (the ones before as summaries).
Whole = Callable[[int], Iterable[Record]]
Late = Callable[[], Iterable[Measurement]]  # the last lone runs, whole, the first pass kept


class RowStore(Protocol):
    """Where a first pass keeps the summary's rows: appended in order, read back once."""

    def append(self, row: tuple[str, ...], /) -> None: ...

    def __iter__(self) -> Iterator[tuple[str, ...]]: ...


def is_tables_run(read: RecordsRead) -> bool:
    return bool(read.tables_plans) or bool(tables_in((), group_campaigns(read.measurements)))


def compare_campaigns(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    """Campaigns with a baseline cell (compare, knee), in first-seen order."""
    found: dict[str, list[Measurement]] = {}
    for m in measurements:
        if m.tags.campaign:
            found.setdefault(m.tags.campaign, []).append(m)
    return {name: ms for name, ms in found.items() if any(m.tags.key == BASELINE_KEY for m in ms)}


def campaign_text(measurements: Sequence[Measurement], markdown: bool = False) -> str:
    """A compare campaign's report, or a knee sweep's (its table, knee and answer)."""
    if is_knee_campaign(measurements):
        sweep = sweep_of_records(measurements)
        return knee_markdown(sweep) if markdown else render_knee(sweep)
    return render_text(build_report(CompareMeta.of_records(measurements), measurements))


def is_lone_run(record: Record) -> bool:
    return isinstance(record, Measurement) and not record.tags.campaign


@dataclass
class ReportScan:
    """The first pass over a records file (``add``, one record at a time): the campaigns'
    records (their tables need them all), the tables plans and sessions, how many lone runs
    there are and how wide their summary's columns are; the figures' data (``PlotData``)
    when ``figures`` are asked, the CSV's columns when ``csv`` is. Lone runs themselves are
    not kept."""

    csv: bool = False
    figures: bool = False
    campaigns: list[Measurement] = field(default_factory=list)
    plans: list[TablesSettings] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)
    records: int = 0  # every record read, of any kind
    runs: int = 0
    widths: ColumnWidths = field(default_factory=summary_widths)
    # The summary's rows themselves (then the summary needs no second pass): in a store the
    # caller gives (a file, for any number), else in memory while they are few enough to
    # hold, None past that.
    rows: RowStore | list[tuple[str, ...]] | None = field(default_factory=list)
    plots: PlotData = field(default_factory=PlotData)
    csv_columns: dict[str, None] = field(default_factory=dict)

    def add_all(self, records: Iterable[Record]) -> None:
        for r in records:
            self.add(r)

    def add(self, record: Record) -> None:
        self.records += 1
        if isinstance(record, TablesSettings):
            self.plans.append(record)
        elif isinstance(record, SessionRecord):
            self.sessions.append(record)
        else:
            self._add_measurement(record)

    def _add_measurement(self, m: Measurement) -> None:
        if self.figures:  # a float per run and configuration: only for ``--out``
            self.plots.add(m)
        if self.csv:
            self.csv_columns.update(dict.fromkeys(flat_row(m)))
        if m.tags.campaign:
            self.campaigns.append(m)
        else:
            self.runs += 1
            row = summary_row(self.runs, m)
            self.widths.measure(row)
            if self.rows is not None:
                self.rows.append(row)
                if isinstance(self.rows, list) and len(self.rows) > MAX_KEPT_ROWS:
                    self.rows = None

    def read(self) -> RecordsRead:
        """The campaigns' records, as a whole-file read holds them (lone runs left out)."""
        return RecordsRead(tuple(self.campaigns), tuple(self.plans), tuple(self.sessions))

    def renders(self) -> bool:
        """Whether the records hold anything a report shows (else the CLI refuses them)."""
        read = self.read()
        return self.runs > 0 or is_tables_run(read) or bool(compare_campaigns(read.measurements))


def scan_records(
    records: Iterable[Record],
    csv: bool = False,
    figures: bool = False,
    rows: RowStore | None = None,
) -> ReportScan:
    scan = ReportScan(csv=csv, figures=figures)
    if rows is not None:
        scan.rows = rows
    scan.add_all(records)
    return scan


def report_chunks(
    scan: ReportScan,
    records: Records,
    records_name: str,
    markdown: bool = False,
    width: int = DEFAULT_WIDTH,
    all_runs: bool = False,
    whole: Whole | None = None,
    late: Late | None = None,
) -> Iterator[str]:
    """The report, a piece at a time (their concatenation is the text; nothing when the
    records hold nothing to show). ``records`` is read again for the lone runs' lines; where
    it gives them as their summary lines need them (``iter_records(summaries=True)``),
    ``whole(k)`` is a pass that gives the lone runs from the k-th on whole, for their tables.
    ``late()``: the last ``MAX_RUN_TABLES`` lone runs whole, kept by the first pass: with the
    rows the scan kept, the summary needs no further pass at all."""
    read = scan.read()
    if is_tables_run(read):
        text = render_tables(read, records_name)
        yield text if markdown else markdown_for_terminal(text, width)
        return
    gap = ""
    for ms in compare_campaigns(read.measurements).values():
        yield gap + campaign_text(ms, markdown)
        gap = "\n\n"
    if late is not None and scan.runs and not all_runs:
        yield gap
        yield from _late_runs_chunks(scan, records, late, records_name, width)
        gap = "\n\n"
    elif scan.runs == 1:
        for m in _lone_runs((lambda: whole(1)) if whole else records, 1):
            yield gap + run_table(m)
        gap = "\n\n"
    elif scan.runs > 1:
        yield gap
        yield from _runs_chunks(scan, records, records_name, width, all_runs, whole)
        gap = "\n\n"
    if gap:
        yield "\n"


def _lone_runs(records: Records, limit: int) -> Iterator[Measurement]:
    """The first ``limit`` lone runs of a pass (a file appended to since the first pass
    shows what that pass counted)."""
    seen = 0
    for r in records():
        if seen >= limit:
            return
        if isinstance(r, Measurement) and not r.tags.campaign:
            seen += 1
            yield r


def _runs_chunks(
    scan: ReportScan,
    records: Records,
    records_name: str,
    width: int,
    all_runs: bool,
    whole: Whole | None = None,
) -> Iterator[str]:
    """The summary, a line per run; then the last ``MAX_RUN_TABLES`` runs' tables (kept
    while the summary is printed, or read whole in a pass of their own: ``whole``), or every
    run's in a third pass (``all_runs``)."""
    table = summary_layout(scan.widths, width)
    yield f"{scan.runs} runs\n\n{table.header()}"
    shown = scan.runs if all_runs else min(scan.runs, MAX_RUN_TABLES)
    first = scan.runs - shown + 1
    kept: collections.deque[str] = collections.deque(maxlen=0 if all_runs else shown)
    for n, m in enumerate(_lone_runs(records, scan.runs), start=1):
        yield "\n" + table.row(summary_row(n, m))
        if whole is None and not all_runs and n >= first:
            kept.append(_numbered(n, scan.runs, run_table(m)))
    if whole is not None and not all_runs:
        late = enumerate(_lone_runs(lambda: whole(first), scan.runs), start=1)
        kept.extend(_numbered(n, scan.runs, run_table(m)) for n, m in late if n >= first)
    if shown < scan.runs:
        yield (
            f"\n\nthe latest {shown} runs' tables follow; every run's table "
            f"({first - 1} more):\n  kit report --all {records_name}"
        )
    if all_runs:
        runs = (lambda: whole(1)) if whole else records
        for n, m in enumerate(_lone_runs(runs, scan.runs), start=1):
            yield "\n\n" + _numbered(n, scan.runs, run_table(m))
    for text in kept:
        yield "\n\n" + text


def _late_runs_chunks(
    scan: ReportScan, records: Records, late: Late, records_name: str, width: int
) -> Iterator[str]:
    """The lone runs' part with the last runs the first pass kept whole (``late``): the
    summary's rows as that pass kept them, or (too many to keep) from ``records`` again;
    then the last runs' tables. One run: its table alone."""
    runs = list(late())
    if scan.runs == 1:
        yield run_table(runs[-1])
        return
    table = summary_layout(scan.widths, width)
    yield f"{scan.runs} runs\n\n{table.header()}"
    if scan.rows is not None:
        rows: Iterable[tuple[str, ...]] = scan.rows
    else:
        rows = (summary_row(n, m) for n, m in enumerate(_lone_runs(records, scan.runs), 1))
    for row in rows:
        yield "\n" + table.row(row)
    first = scan.runs - len(runs) + 1
    if first > 1:
        yield (
            f"\n\nthe latest {len(runs)} runs' tables follow; every run's table "
            f"({first - 1} more):\n  kit report --all {records_name}"
        )
    for n, m in enumerate(runs, start=first):
        yield "\n\n" + _numbered(n, scan.runs, run_table(m))


def _numbered(n: int, runs: int, table: str) -> str:
    return f"run {n} of {runs}\n{table}"


# --- ``kit report --json`` -----------------------------------------------------------------

REPORT_JSON_SHAPE = 1  # bumped when a key is renamed or changes meaning (never for a new one)


def report_json_chunks(
    scan: ReportScan,
    records: Records,
    records_name: str,
    expectations: Sequence[Mapping[str, object]] = (),
    findings: str | None = None,
) -> Iterator[str]:
    """The one JSON shape of the ``--json`` of ``kit report``, ``compare``, ``knee``,
    ``tables`` and ``check`` (``kit run --json`` prints its one flat row): one object, every
    key always present (an empty list or null where the records hold none of that kind),
    made a piece at a time so that no run is held:

    ``{"kit_report": 1, "kit": VERSION, "records": NAME, "runs": [...], "comparisons":
    [...], "knees": [...], "tables": null | {...}, "expectations": [...], "findings": null
    | TEXT, "rows": [...]}``

    - ``runs``: each lone run, ``{"run": N, "row": FLAT ROW, "limited_by": VERDICT}`` (the
      ``--json`` / ``--csv`` row of ``kit.analysis.flat``; the verdict is
      ``kit.report.limits.limit_json``: kind, sentence, bound, efficiency, why);
    - ``comparisons``: each compare campaign (``kit.report.compare.report_json``), with
      ``limited_by``: cell key -> the verdict of its median run;
    - ``knees``: each knee sweep (``kit.report.knee.knee_json``: its ``answer`` the line the
      terminal ends with), with ``limited_by`` likewise;
    - ``tables``: a tables run's checks (``name``, ``holds``: true, false or null when not
      measured or not decided, ``undecided``, ``detail``, ``value``, ``ci_low``,
      ``ci_high``: the figure and its interval, ``kit.report.tables.checks.bar_json``)
      and its report as ``markdown``;
    - ``expectations``: ``kit check``'s judgements (``kit.report.expect.judgement_json``);
    - ``findings``: what the window matrix shows (``kit compare --preset``), else null;
    - ``rows``: every measurement's flat row, in file order (campaigns' runs included).
    """
    read = scan.read()
    yield (
        f'{{"kit_report": {REPORT_JSON_SHAPE}, "kit": {json.dumps(__version__)}, '
        f'"records": {json.dumps(records_name)}, "runs": ['
    )
    for n, m in enumerate(_lone_runs(records, scan.runs), start=1):
        entry = {"run": n, "row": flat_row(m), "limited_by": limit_json(limit_of(m))}
        yield ("" if n == 1 else ", ") + json.dumps(entry)
    campaigns = [] if is_tables_run(read) else list(compare_campaigns(read.measurements).values())
    comparisons = [_comparison_json(ms) for ms in campaigns if not is_knee_campaign(ms)]
    knees = [_knee_json(ms) for ms in campaigns if is_knee_campaign(ms)]
    yield f'], "comparisons": {json.dumps(comparisons)}, "knees": {json.dumps(knees)}, '
    yield f'"tables": {json.dumps(_tables_json(read, records_name))}, '
    yield f'"expectations": {json.dumps(list(expectations))}, "findings": {json.dumps(findings)}'
    yield ', "rows": ['
    measurements = (r for r in records() if isinstance(r, Measurement))
    for n, m in enumerate(measurements):
        yield ("" if n == 0 else ", ") + json.dumps(flat_row(m))
    yield "]}\n"


def _limits_json(rows: Iterable[CompareRow]) -> dict[str, object]:
    return {r.key: None if r.limit is None else limit_json(r.limit) for r in rows}


def _comparison_json(measurements: Sequence[Measurement]) -> dict[str, object]:
    report = build_report(CompareMeta.of_records(measurements), measurements)
    return report_json(report) | {"limited_by": _limits_json(report.rows)}


def _knee_json(measurements: Sequence[Measurement]) -> dict[str, object]:
    sweep = sweep_of_records(measurements)
    return knee_json(sweep) | {"limited_by": _limits_json(sweep.report.rows)}


def _tables_json(read: RecordsRead, records_name: str) -> dict[str, object] | None:
    if not is_tables_run(read):
        return None
    bars = evaluate_bars(group_campaigns(read.measurements))
    checks = [bar_json(b) for b in bars]
    return {"checks": checks, "markdown": render_tables(read, records_name)}


def render_records(
    read: RecordsRead,
    records_name: str,
    markdown: bool = False,
    width: int = DEFAULT_WIDTH,
    all_runs: bool = False,
) -> str | None:
    """The report of records already read whole, as one text (None when there is nothing
    to show): the same chunks a streamed report prints."""

    def records() -> Iterable[Record]:
        return (*read.measurements, *read.tables_plans, *read.sessions)

    scan = scan_records(records())
    if not scan.renders():
        return None
    return "".join(report_chunks(scan, records, records_name, markdown, width, all_runs))
