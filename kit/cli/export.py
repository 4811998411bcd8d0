"""Where results go: the records file (or none, or stdout), CSV files, progress on a terminal.

Every command saves and exports through here, so ``--records``, ``--no-records`` and
``--csv`` mean the same everywhere.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from kit.analysis.flat import Row, flat_row, flat_rows
from kit.campaign.runner import OnProgress, ProgressLine
from kit.cli.output import echo_err, lines_above, write_chunks, write_text
from kit.errors import UsageError
from kit.plan.campaign import expected_cell_s
from kit.plan.trial import Trial
from kit.report.export import csv_header, csv_row, render_json, rows_csv
from kit.report.format import ELLIPSIS, UNITS
from kit.results.records import Measurement
from kit.results.store import append_record, check_records_path, encode_record

T = TypeVar("T")
STDOUT = Path("-")

Csv = Annotated[
    Path | None,
    typer.Option("--csv", help="A flat row per measurement here ('-': stdout)."),
]
Full = Annotated[
    bool,
    typer.Option(
        "--full",
        help="--json / --csv: every field, unrounded.",
    ),
]
NoRecords = Annotated[bool, typer.Option("--no-records", help="Keep no record of this run.")]


def check_one_stdout_format(csv: Path | None, as_json: bool, records: Path | None = None) -> None:
    """Stdout carries one format, so that it can be piped: the report (table or ``--json``),
    the record line (``--records -``) or the CSV (``--csv -``), never two mixed."""
    named = [
        option
        for option, given in (
            ("--records -", records == STDOUT),
            ("--csv -", csv == STDOUT),
            ("--json", as_json),
        )
        if given
    ]
    if len(named) > 1:
        raise UsageError(
            f"{' and '.join(named)}: both would print on stdout; "
            "stdout carries one format (write the other to a file)"
        )


def csv_on_stdout(csv: Path | None) -> bool:
    """``--csv -``: the CSV is stdout's only output (the report is not printed)."""
    return csv == STDOUT


def check_records(path: Path | None) -> None:
    """Before measuring: a records file that could not be written is refused now."""
    if path is not None and path != STDOUT:
        check_records_path(path)


def save_record(path: Path | None, measurement: Measurement) -> None:
    """Append the record and say where it went (stderr): "-" is stdout, None is nowhere."""
    if path is None:
        return
    if path == STDOUT:
        typer.echo(json.dumps(encode_record(measurement), separators=(",", ":")))
        return
    append_record(path, measurement)
    echo_err(f"record appended to {path}")


def write_csv(path: Path | None, measurements: Sequence[Measurement], full: bool = False) -> None:
    if path is not None:
        write_csv_rows(path, flat_rows(measurements, full))


def write_csv_stream(
    path: Path, columns: Iterable[str], measurements: Iterable[Measurement]
) -> None:
    """The CSV of measurements read a record at a time, under columns known beforehand
    (``kit report --csv``: a file of any size, never held)."""
    names = list(columns)
    lines = itertools.chain(
        [csv_header(names)], (csv_row(flat_row(m), names) for m in measurements)
    )
    if path == STDOUT:
        for line in lines:
            typer.echo(line, nl=False)
        return
    count = CountedLines(lines)
    write_chunks(path, count, "--csv")
    echo_err(f"{count.n - 1} row(s) written to {path}")


@dataclass
class CountedLines:
    """Lines passed through, counted."""

    lines: Iterable[str]
    n: int = 0

    def __iter__(self) -> Iterator[str]:
        for line in self.lines:
            self.n += 1
            yield line


def write_csv_rows(path: Path | None, rows: Sequence[Row]) -> None:
    if path is None:
        return
    if path == STDOUT:
        typer.echo(rows_csv(rows), nl=False)
        return
    write_text(path, rows_csv(rows), "--csv")
    echo_err(f"{len(rows)} row(s) written to {path}")


def run_json_text(measurement: Measurement, full: bool = False) -> str:
    """``kit run --json``: the measurement's flat row (the CSV schema), a column a line."""
    return render_json(measurement, full)


def check_units(unit: str) -> str:
    if unit not in UNITS:
        raise UsageError(f"--units: {unit!r} is not one of {', '.join(UNITS)}")
    return unit


def terminal_width() -> int:
    """The terminal's width ($COLUMNS wins; 100 when there is no terminal), at most 100."""
    return min(shutil.get_terminal_size((100, 24)).columns, 100)


def interactive() -> bool:
    return sys.stderr.isatty()


@contextmanager
def _progress(trial: Trial) -> Iterator[None]:
    """A transient progress bar with elapsed time and ETA on stderr (terminals only)."""
    expected = max(expected_cell_s(trial), 0.1) + 1.5  # process start, connection, warm-up
    columns = (
        TextColumn("measuring"),
        BarColumn(),
        TimeElapsedColumn(),
        TextColumn("of ~{task.total:.0f}s"),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("measure", total=expected)
        stop = _ticker(lambda elapsed: bar.update(task, completed=min(elapsed, expected)))
        try:
            yield
        finally:
            stop()


def _ticker(tick: Callable[[float], None]) -> Callable[[], None]:
    done = threading.Event()
    started = time.monotonic()

    def loop() -> None:
        while not done.wait(0.1):
            tick(time.monotonic() - started)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join(timeout=1.0)

    return stop


def with_progress(trial: Trial, measure: Callable[[], T]) -> T:
    """``measure()``, with a progress bar on stderr when stderr is a terminal."""
    if not interactive():
        return measure()
    with _progress(trial):
        return measure()


PROGRESS_WIDTH = 100


def fitted(line: ProgressLine, width: int = PROGRESS_WIDTH) -> ProgressLine:
    """The progress line with its cell's name cut ("...") so that it fits ``width``
    columns (a candidate's spec can be long); the counts and times stay whole."""
    excess = len(line.text()) - width
    if excess <= 0:
        return line
    keep = max(8, len(line.cell) - excess - 1)
    return replace(line, cell=line.cell[:keep] + ELLIPSIS)


@contextmanager
def campaign_progress() -> Iterator[OnProgress]:
    """The campaign runner's progress line on stderr: redrawn in place on a terminal (the
    last one stays when the run ends), one plain line per cell elsewhere (pipes, CI logs)."""
    if not interactive():
        yield lambda line: echo_err(fitted(line).text())
        return
    # Redrawn only as a cell starts (the line's figures change then); one row, cut to the
    # terminal's width rather than wrapped, so the redraw never leaves a stale line above.
    console = Console(stderr=True)
    with Live(console=console, auto_refresh=False) as live, lines_above(console):

        def draw(line: ProgressLine) -> None:
            live.update(Text(line.text(), no_wrap=True, overflow="ellipsis"), refresh=True)

        yield draw
