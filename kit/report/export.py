"""Pure rendering of flat rows (``kit.analysis.flat``): CSV text and the ``--json`` object."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from kit.analysis.flat import Row, columns_of, csv_cell, flat_row, flat_rows
from kit.results.records import Measurement


def render_csv(measurements: Sequence[Measurement], full: bool = False) -> str:
    """One header line, then one row per measurement; columns of every record's fields
    (compact, unless ``full``: see ``kit.analysis.flat``)."""
    rows = flat_rows(measurements, full)
    return rows_csv(rows)


def rows_csv(rows: Sequence[Row]) -> str:
    columns = columns_of(rows)
    return "".join([csv_header(columns), *(csv_row(row, columns) for row in rows)])


def csv_header(columns: Sequence[str]) -> str:
    return _csv_line(columns)


def csv_row(row: Row, columns: Sequence[str]) -> str:
    """One row's line under ``columns`` (a column it lacks is empty): rows can be written
    one at a time once the columns are known (``kit report --csv`` on a file of any size)."""
    return _csv_line([csv_cell(row.get(name)) for name in columns])


def _csv_line(cells: Sequence[str]) -> str:
    """One CSV line, "\n"-terminated: csv's minimal quoting, and a cell holding a bare CR
    quoted too (csv's writer leaves it bare when the line terminator is "\n", splitting the
    row for every reader)."""
    return ",".join(_quoted(c) if _NEEDS_QUOTES.search(c) else c for c in cells) + "\n"


_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def _quoted(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"'


def render_json(measurement: Measurement, full: bool = False) -> str:
    """``kit run --json``: the flat row, one column per line and each value compact (a list
    stays on its line), so that it reads as a table and greps by column."""
    row = flat_row(measurement, full)
    lines = [json.dumps(k) + ":" + json.dumps(v, separators=(",", ":")) for k, v in row.items()]
    return "{\n" + ",\n".join(lines) + "\n}"
