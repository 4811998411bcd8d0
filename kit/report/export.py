"""Pure rendering of flat rows (``kit.analysis.flat``): CSV text and the ``--json`` object."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from kit.analysis.flat import Row, columns_of, csv_cell, flat_rows
from kit.results.records import Measurement


def render_csv(measurements: Sequence[Measurement]) -> str:
    """One header line, then one row per measurement; columns of every record's fields."""
    rows = flat_rows(measurements)
    return rows_csv(rows)


def rows_csv(rows: Sequence[Row]) -> str:
    columns = columns_of(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row.get(name)) for name in columns])
    return out.getvalue()
