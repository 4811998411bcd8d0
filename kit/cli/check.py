"""``kit check``: a gate for CI over records, as k6's thresholds (thin: parse the
expectations, judge them over the flat rows in ``kit.analysis.expect``, print the lines of
``kit.report.expect``; a failed expectation is exit 6 after every line is out)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from kit.analysis.expect import Judgement, judge, parse_expectation
from kit.analysis.flat import Row, flat_row
from kit.cli.documents import echo_json, records_pass
from kit.cli.output import echo_warnings
from kit.errors import ChecksFailed, UsageError
from kit.report.document import scan_records
from kit.report.expect import (
    failed_line,
    header_lines,
    judgement_json,
    judgement_line,
    passed_line,
)
from kit.results.records import Measurement
from kit.results.store import SkippedLines, iter_records

CHECK_EXAMPLES = """Examples:

  kit check results/run.jsonl --expect 'efficiency>=0.9'

  kit check results/run.jsonl -e 'throughput_mib_s>=100 where client=grpc-go'

  kit check results/compare.jsonl -e 'throughput_mib_s>=50 where tags_key=baseline'
"""


def check(
    file: Annotated[Path, typer.Argument(help="A records file (JSON lines) of any kit command.")],
    expect: Annotated[
        list[str],
        typer.Option(
            "--expect",
            "-e",
            help="'COLUMN OP NUMBER', then optionally 'where COL=VALUE,COL=VALUE': a flat-row "
            "column's median over the matching rows against a number; OP: >= <= > < == != "
            "(repeatable).",
        ),
    ],
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the report's JSON, each judgement in it, not lines."),
    ] = False,
) -> None:
    """Gate CI on records: each expectation is judged on the median of the rows it matches;
    exit 6 when one fails."""
    expectations = [parse_expectation(text) for text in expect]  # exit 2 before any read
    skipped = SkippedLines()
    rows = _Rows(iter_records(file, skipped))
    judgements = judge(expectations, rows)
    echo_warnings(f"kit check: {file}", skipped)
    if rows.count == 0:
        if rows.records == 0 and skipped.count:
            raise UsageError(f"{file} is not a kit records file (no line of it is a record)")
        raise UsageError(f"{file}: no measurement records to check")
    if as_json:
        again = records_pass(file)
        echo_json(scan_records(again()), again, str(file), [judgement_json(j) for j in judgements])
    else:
        _print(str(file), rows.count, judgements)
    failing = failed_line(judgements)
    if failing is not None:
        raise ChecksFailed(failing)


def _print(name: str, rows: int, judgements: tuple[Judgement, ...]) -> None:
    typer.echo("\n".join(header_lines(name, rows)))
    for j in judgements:
        typer.echo("  " + judgement_line(j))
    if all(j.holds for j in judgements):
        typer.echo(passed_line(judgements))


class _Rows:
    """The flat rows of a file's measurements, a record at a time, counted."""

    def __init__(self, records: Iterator[object]) -> None:
        self.source = records
        self.records = 0
        self.count = 0

    def __iter__(self) -> Iterator[Row]:
        for r in self.source:
            self.records += 1
            if isinstance(r, Measurement):
                self.count += 1
                yield flat_row(r)


def register(app: typer.Typer) -> None:
    app.command("check", epilog=CHECK_EXAMPLES)(check)
