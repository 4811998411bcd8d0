"""The documents every command makes from a records file: the HTML report (``--html``),
the one JSON shape (``--json``) and the benchmark entries (``--benchmark-json``).

``kit report`` makes them from the file it is given; ``kit tables``, ``compare`` and ``knee``
from the records they just wrote (``compare`` and ``knee``: only their own campaigns' records,
whatever else the file holds), so ``kit compare ... --html OUT`` writes what ``kit report
RECORDS --html OUT`` would. Records are read in passes, a record at a time.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path

import orjson
import typer

from kit.analysis.benchmark import BenchmarkCells
from kit.cli.export import STDOUT
from kit.cli.output import echo_err, write_chunks, write_text
from kit.errors import UsageError
from kit.report.benchmark import benchmark_json
from kit.report.document import ReportScan, report_json_chunks, scan_records
from kit.report.figures import describe
from kit.report.html import figures_of, html_chunks
from kit.report.plot import render_data
from kit.results.records import Measurement
from kit.results.store import Record, SkippedLines, iter_records

RecordsPass = Callable[[], Iterator[Record]]


def records_pass(
    file: Path,
    campaigns: Collection[str] | None = None,
    summaries: bool = False,
    whole_from: int = 0,
) -> RecordsPass:
    """A fresh pass over the file's records per call, quietly (the first pass warned);
    with ``campaigns``, only those campaigns' measurements (and every other kind of line);
    ``summaries``, ``whole_from``: lone runs as their summary lines need them (see
    ``iter_records``)."""

    def again() -> Iterator[Record]:
        for r in iter_records(file, SkippedLines(keep=0), summaries, whole_from):
            if not isinstance(r, Measurement) or campaigns is None or r.tags.campaign in campaigns:
                yield r

    return again


def check_document_paths(
    html: Path | None, benchmark: Path | None, csv: Path | None, as_json: bool
) -> None:
    """Before reading: the page goes to a file; the benchmark list may go to stdout ('-'),
    then as stdout's one format."""
    if html == STDOUT:
        raise UsageError("--html -: the page is written to a file; name one (--html report.html)")
    if benchmark == STDOUT and (as_json or csv == STDOUT):
        other = "--json" if as_json else "--csv -"
        raise UsageError(
            f"--benchmark-json - and {other}: both would print on stdout; "
            "stdout carries one format (write the other to a file)"
        )


def write_html(
    out: Path, scan: ReportScan, records: RecordsPass, name: str, all_runs: bool = False
) -> None:
    """The HTML report, its figures drawn from ``scan``'s plot data (``figures=True``)."""
    figures = figures_of(describe(scan.plots), render_data(scan.plots))
    write_chunks(out, html_chunks(scan, records, name, figures, all_runs), "--html")
    echo_err(f"html report -> {out} ({_size(out)})")


def _size(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError:
        return "?"
    return f"{size / 1024:.0f} KiB" if size < 1 << 20 else f"{size / (1 << 20):.1f} MiB"


def html_of_records(out: Path, file: Path, campaigns: Collection[str] | None = None) -> None:
    """``--html`` of a command that just wrote ``file``: its report, as ``kit report``."""
    records = records_pass(file, campaigns)
    write_html(out, scan_records(records(), figures=True), records, str(file))


def echo_json(
    scan: ReportScan,
    records: RecordsPass,
    name: str,
    expectations: Sequence[Mapping[str, object]] = (),
    findings: str | None = None,
) -> None:
    for chunk in report_json_chunks(scan, records, name, expectations, findings):
        typer.echo(chunk, nl=False)


def json_of_records(
    file: Path, campaigns: Collection[str] | None = None, findings: str | None = None
) -> None:
    """``--json`` of a command that just wrote ``file``: the one shape ``kit report`` prints."""
    records = records_pass(file, campaigns)
    echo_json(scan_records(records()), records, str(file), findings=findings)


def write_benchmark_json(out: Path, records: RecordsPass) -> None:
    """``--benchmark-json``: one entry per cell median (``kit.analysis.benchmark``)."""
    cells = BenchmarkCells()
    for r in records():
        if isinstance(r, Measurement):
            cells.add(r)
    entries = cells.entries()
    if not entries:
        raise UsageError(
            "--benchmark-json: the records hold no cell with an ok throughput run "
            "(unary cells measure latency and are left out)"
        )
    if out == STDOUT:
        typer.echo(benchmark_json(entries), nl=False)
        return
    write_text(out, benchmark_json(entries), "--benchmark-json")
    echo_err(f"{len(entries)} benchmark entries written to {out}")


class SpilledRows:
    """The summary's rows of a long records file, kept in a temporary file (one JSON array a
    line) instead of memory: the summary then takes one pass over the records whatever
    their number, in memory bounded by a row. Closed (and gone) when read back."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(mode="w+b")  # noqa: SIM115  (closed by __iter__)

    def append(self, row: tuple[str, ...], /) -> None:
        self._file.write(orjson.dumps(row) + b"\n")

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        try:
            self._file.seek(0)
            for line in self._file:
                yield tuple(orjson.loads(line))
        finally:
            self._file.close()
