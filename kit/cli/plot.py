"""``kit plot``: records -> PNG figures (thin: read, render, write)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from kit.cli.output import echo_warnings
from kit.errors import UsageError
from kit.report.plot import render_plots
from kit.results.records import Measurement
from kit.results.store import SkippedLines, iter_records


def write_plots(figures: dict[str, bytes], out: Path) -> list[Path]:
    """Write each figure into ``out`` (created); failures are one line naming --out."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, png in figures.items():
            (out / name).write_bytes(png)
            written.append(out / name)
    except OSError as exc:
        raise UsageError(f"--out: cannot write into {out}: {exc.strerror or exc}") from None
    return written


def plot(
    file: Annotated[Path, typer.Argument(help="A records file (JSON lines) of any kit command.")],
    out: Annotated[
        Path | None, typer.Option(help="Directory for the PNGs (default: beside the records).")
    ] = None,
) -> None:
    """Draw records as PNGs: throughput vs window and over time, window growth, stream finish,
    estimators, comparisons."""
    skipped = SkippedLines()
    records = 0

    def measurements() -> Iterator[Measurement]:
        nonlocal records
        for r in iter_records(file, skipped):
            records += 1
            if isinstance(r, Measurement):
                yield r

    # Streamed: each record is aggregated and dropped, so a file of any size fits in memory.
    figures = render_plots(measurements())
    echo_warnings(f"kit plot: {file}", skipped)
    if not records and skipped.count:
        raise UsageError(f"{file} is not a kit records file (no line of it is a record)")
    if not figures:
        raise UsageError(f"{file}: no successful measurement to plot")
    for path in write_plots(figures, out if out is not None else file.parent):
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    app.command()(plot)
