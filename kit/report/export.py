"""Pure rendering of flat rows (``kit.analysis.flat``): CSV text and the ``--json`` object."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kit.analysis.flat import Row, columns_of, csv_cell, flat_rows
from kit.results.records import Measurement


def render_csv(measurements: Sequence[Measurement]) -> str:
    """One header line, then one row per measurement; columns of every record's fields."""
    rows = flat_rows(measurements)
    return rows_csv(rows)


def rows_csv(rows: Sequence[Row]) -> str:
    columns = columns_of(rows)
    lines = [_csv_line(columns)]
    lines += [_csv_line([csv_cell(row.get(name)) for name in columns]) for row in rows]
    return "".join(lines)


def _csv_line(cells: Sequence[str]) -> str:
    """One CSV line, "\n"-terminated: csv's minimal quoting, and a cell holding a bare CR
    quoted too (csv's writer leaves it bare when the line terminator is "\n", splitting the
    row for every reader)."""
    return ",".join(_quoted(c) if _NEEDS_QUOTES.search(c) else c for c in cells) + "\n"


_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def _quoted(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"'
