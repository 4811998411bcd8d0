"""``kit tables`` (measure the reference tables) and ``kit report`` (re-render from records).

Thin: parse options, build the settings, call ``kit.campaign.tables.run_tables``, render
with ``kit.report.tables``. ``kit.cli`` turns every ``KitError`` into one line and an exit code.
"""

from __future__ import annotations

import collections
import itertools
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated

import typer

from kit.analysis.findings import findings
from kit.analysis.series import PlotData
from kit.campaign.tables import RECORDS_GLOB, check_records_file, run_tables
from kit.cli.documents import (
    SpilledRows,
    check_document_paths,
    echo_json,
    html_of_records,
    json_of_records,
    records_pass,
    write_benchmark_json,
    write_html,
)
from kit.cli.export import (
    STDOUT,
    Csv,
    campaign_progress,
    check_one_stdout_format,
    check_records,
    csv_on_stdout,
    terminal_width,
    write_csv_stream,
)
from kit.cli.options import RESULTS_DIR, AsJson, FreshClients, Html
from kit.cli.output import echo_warnings, topology, write_chunks
from kit.cli.plot import write_plots
from kit.errors import ChecksFailed, UsageError
from kit.plan.tables import TABLE_NAMES, TablesSettings, parse_only
from kit.plan.tables.pairs import PAIRS_CAMPAIGN
from kit.report.document import MAX_RUN_TABLES, report_chunks, scan_records
from kit.report.findings import render_findings
from kit.report.plot import plot_links, render_data, render_plots
from kit.report.tables import failed_checks_line, render_bars_of, render_tables
from kit.report.terminal import markdown_for_terminal
from kit.results.records import Measurement
from kit.results.store import (
    Record,
    RecordsRead,
    SkippedLines,
    decode_raw,
    iter_records,
    read_records,
)

DEFAULT_OUT = RESULTS_DIR / "tables.md"


def write_document(out: Path, markdown: str, read: RecordsRead | PlotData) -> None:
    """The markdown report, with its figures written beside it and linked at its end."""
    write_document_chunks(out, [markdown], read)


def write_document_chunks(out: Path, chunks: Iterable[str], read: RecordsRead | PlotData) -> None:
    """``write_document`` for a markdown report made a piece at a time."""
    pngs = render_data(read) if isinstance(read, PlotData) else render_plots(read.measurements)
    figures = write_plots(pngs, out.parent)
    links = plot_links([f.name for f in figures])
    write_chunks(out, itertools.chain(chunks, ["\n" + links] if links else []), "--out")


def _new_records_path() -> Path:
    return RESULTS_DIR / f"tables-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


def _latest_records_path() -> Path:
    found = sorted(RESULTS_DIR.glob(RECORDS_GLOB), key=lambda p: p.stat().st_mtime)
    if not found:
        raise UsageError(
            f"--resume: no {RESULTS_DIR / RECORDS_GLOB} to resume; pass --records FILE"
        )
    return found[-1]


def _settings(
    quick: bool, rounds: int | None, seed: int | None, only: str | None
) -> TablesSettings:
    return TablesSettings(
        quick=quick,
        rounds=rounds if rounds is not None else (1 if quick else 3),
        seed=seed if seed is not None else 1,
        only=parse_only(only),
    )


def _check_resume_options(
    stored: TablesSettings, quick: bool, rounds: int | None, seed: int | None, only: str | None
) -> None:
    """--resume runs the stored plan; an option that contradicts it is a mistake, not a wish."""
    given = {
        "--quick": (quick or None, stored.quick),
        "--rounds": (rounds, stored.rounds),
        "--seed": (seed, stored.seed),
        "--only": (parse_only(only) if only is not None else None, stored.only),
    }
    for option, (value, kept) in given.items():
        if value is not None and value != kept:
            raise UsageError(
                f"--resume: the records were started with {option} {kept}, not {value}"
            )


def tables(
    quick: Annotated[
        bool,
        typer.Option("--quick", help="One round of short cells: a first look in under a minute."),
    ] = False,
    rounds: Annotated[
        int | None, typer.Option(help="Rounds per table (default 3; 1 with --quick).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Seed of the per-round shuffle (default 1).")
    ] = None,
    only: Annotated[
        str | None,
        typer.Option(
            help="Tables to run by name (or number): "
            + ", ".join(TABLE_NAMES)
            + ". wire reads the windows table's 20 ms cells."
        ),
    ] = None,
    records: Annotated[
        Path | None, typer.Option(help="JSON-lines records (default results/tables-<time>.jsonl).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Markdown tables written here.")] = DEFAULT_OUT,
    resume: Annotated[
        bool, typer.Option(help="Finish an interrupted run (default: the newest records file).")
    ] = False,
    fresh_clients: FreshClients = False,
    html: Html = None,
    as_json: AsJson = False,
) -> None:
    """Measure the reference study's tables with our stacks; write markdown and records."""
    check_document_paths(html, None, None, as_json)
    if resume:
        path = records if records is not None else _latest_records_path()
        settings = check_records_file(path, _settings(quick, rounds, seed, only), resume=True)
        _check_resume_options(settings, quick, rounds, seed, only)
    else:
        path = records if records is not None else _new_records_path()
        settings = check_records_file(path, _settings(quick, rounds, seed, only), resume=False)
    check_records(path)
    typer.echo(f"kit tables: records -> {path}", err=True)
    with campaign_progress() as progress:
        outcome = run_tables(
            settings,
            path,
            resume=resume,
            progress=progress,
            topology_factory=lambda: topology(fresh_clients=fresh_clients),
            on_skip=lambda line: typer.echo(f"kit tables: {line}", err=True),
        )
    read = read_records(path)
    write_document(out, render_tables(read, str(path)), read)
    typer.echo(
        f"kit tables: {outcome.cells_run} cells in {outcome.elapsed_s:.0f} s; "
        f"{_failed_text(outcome.measurements)}; tables -> {out}",
        err=True,
    )
    if html is not None:
        html_of_records(html, path)
    if as_json:
        json_of_records(path)
    else:
        typer.echo(
            markdown_for_terminal(render_bars_of(read.measurements), terminal_width()), nl=False
        )
    failing = failed_checks_line(read.measurements)
    if failing is not None:  # after the tables: a newcomer sees what failed, and CI fails
        raise ChecksFailed(failing)


def report(
    file: Annotated[Path, typer.Argument(help="A records file (JSON lines) of any kit command.")],
    out: Annotated[Path | None, typer.Option(help="Also write the markdown here.")] = None,
    csv: Csv = None,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a tables run as markdown, not laid out.")
    ] = False,
    all_runs: Annotated[
        bool,
        typer.Option(
            "--all",
            help=f"Every run's own table (else the latest {MAX_RUN_TABLES}'s, below "
            "the one-line-per-run summary).",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the report as one JSON object (docs/reference/json.md)."
        ),
    ] = False,
    summary: Annotated[
        bool,
        typer.Option(
            "--summary", help="Only what the lone runs show together (make run ends with it)."
        ),
    ] = False,
    html: Html = None,
    benchmark_json: Annotated[
        Path | None,
        typer.Option(
            "--benchmark-json",
            help="Each cell's median as github-action-benchmark's JSON list ('-': stdout).",
        ),
    ] = None,
) -> None:
    """Re-render tables, comparisons or runs from records, without measuring."""
    if summary:
        given = [n for n, v in (("--csv", csv), ("--json", as_json), ("--markdown", markdown),
                                ("--out", out), ("--all", all_runs), ("--html", html),
                                ("--benchmark-json", benchmark_json)) if v]  # fmt: skip
        if given:
            raise UsageError(f"--summary prints the summary alone; drop {', '.join(given)}")
        _summary(file)
        return
    check_one_stdout_format(csv, as_json)
    if as_json and markdown:
        raise UsageError("--json and --markdown: both would print on stdout; choose one")
    check_document_paths(html, benchmark_json, csv, as_json)
    skipped = SkippedLines()
    # Streamed, in passes over the file: no pass holds its lone runs, so memory stays
    # bounded whatever the file's size (later passes skip the same lines quietly).
    figures = out is not None or html is not None
    # Lone runs read as their summary lines need them, unless a document wants them whole:
    # decoding a run's frames was most of a long file's summary.
    light = not (figures or as_json or csv is not None or benchmark_json is not None)
    late: collections.deque[bytes] = collections.deque(maxlen=MAX_RUN_TABLES)
    scan = scan_records(
        iter_records(file, skipped, summaries=light, keep_raw=late if light else None),
        csv=csv is not None,
        figures=figures,
        rows=SpilledRows() if light else None,
    )
    echo_warnings(f"kit report: {file}", skipped)
    if not scan.renders():
        if scan.records == 0 and skipped.count:
            raise UsageError(f"{file} is not a kit records file (no line of it is a record)")
        raise UsageError(
            f"{file}: no measurement records to render (kit run, compare, knee or tables)"
        )

    again = records_pass(file)
    if csv is not None:
        write_csv_stream(csv, scan.csv_columns, (r for r in again() if isinstance(r, Measurement)))
    if out is not None:
        chunks = report_chunks(scan, again, str(file), markdown=True, all_runs=all_runs)
        write_document_chunks(out, chunks, scan.plots)
    if html is not None:
        write_html(html, scan, again, str(file), all_runs)
    if benchmark_json is not None:
        write_benchmark_json(benchmark_json, again)
    if as_json:
        echo_json(scan, again, str(file))
    elif not csv_on_stdout(csv) and benchmark_json != STDOUT:
        summaries = records_pass(file, summaries=True)

        def whole(first: int) -> Iterator[Record]:
            return records_pass(file, summaries=True, whole_from=first)()

        def kept() -> Iterator[Measurement]:
            runs = (decode_raw(raw) for raw in late)
            return (m for m in runs if isinstance(m, Measurement))

        chunks = report_chunks(
            scan, summaries, str(file), markdown, terminal_width(), all_runs, whole, kept
        )
        for chunk in chunks:
            typer.echo(chunk, nl=False)


def _summary(file: Path) -> None:
    """``kit report FILE --summary``: the lone runs' findings, a record at a time."""
    skipped = SkippedLines()
    runs = (r for r in iter_records(file, skipped) if isinstance(r, Measurement))
    found = findings(runs)
    echo_warnings(f"kit report: {file}", skipped)
    typer.echo(render_findings(found))


def _failed_text(measurements: Sequence[Measurement]) -> str:
    """ "3 failed", with the stack pairs' apart: a pair that hangs up is that table's finding."""
    failed = [m for m in measurements if not m.ok]
    pairs = sum(1 for m in failed if m.tags.campaign == PAIRS_CAMPAIGN)
    text = f"{len(failed) - pairs} failed"
    if pairs:
        text += f" (and {pairs} stack pair(s) whose run ended in error: the pairs table says why)"
    return text


def register(app: typer.Typer) -> None:
    app.command()(tables)
    app.command()(report)
