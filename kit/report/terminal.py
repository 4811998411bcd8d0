"""Pure: a markdown document (``kit report``'s tables) -> plain text that fits a terminal.

Generic over the document: every GitHub table is re-laid out by rich with its cells wrapped
(never cut: a number is folded onto the next line rather than lost), every other paragraph
is wrapped; headings and list items keep their marks. So a table added to the markdown
report shows on the terminal without an edit here.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterator

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

DEFAULT_WIDTH = 100
MIN_COLUMN = 12  # a column is never narrower than its longest word, up to this


def markdown_for_terminal(markdown: str, width: int = DEFAULT_WIDTH) -> str:
    out: list[str] = []
    for block in _blocks(markdown):
        if block[0].startswith("|"):
            out.append(_table(block, width))
        else:
            out.append(_paragraph(block, width))
    return "\n\n".join(out) + "\n"


def _blocks(markdown: str) -> Iterator[list[str]]:
    """Runs of non-empty lines; a table is a run whose lines start with '|'."""
    block: list[str] = []
    for line in markdown.splitlines():
        if line.strip():
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(lines: list[str], width: int) -> str:
    """A rich table; columns with no value in any row are left out (named below it)."""
    head, rows = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    rows = [[*row[: len(head)], *[""] * (len(head) - len(row))] for row in rows]
    keep = [i for i in range(len(head)) if any(row[i] not in ("", "-") for row in rows)]
    mins = []
    for i in keep:
        words = [w for row in rows for w in row[i].split()] + head[i].split()
        mins.append(min(max((len(w) for w in words), default=1), MIN_COLUMN))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i, least in zip(keep, mins, strict=True):
        table.add_column(head[i], overflow="fold", min_width=least)
    for row in rows:
        table.add_row(*(row[i] for i in keep))
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, legacy_windows=False)
    if Measurement.get(console, console.options, table).minimum > width:
        return _records(head, rows, keep, width)
    console.print(table, crop=False)
    text = [line.rstrip() for line in buffer.getvalue().splitlines()]
    if any(len(line) > width for line in text):  # rich could not fit it after all
        return _records(head, rows, keep, width)
    empty = [head[i] for i in range(len(head)) if i not in keep]
    if empty:
        text += textwrap.wrap(f"(no values: {', '.join(empty)})", width)
    return "\n".join(text)


def _records(head: list[str], rows: list[list[str]], keep: list[int], width: int) -> str:
    """A table too wide for the terminal, one block per row: its first two cells as a title,
    then "column: value" lines."""
    out: list[str] = []
    for row in rows:
        title = " | ".join(row[i] for i in keep[:2])
        out += textwrap.wrap(title, width) or [""]
        for i in keep[2:]:
            if not row[i]:
                continue
            out += textwrap.wrap(
                f"{head[i]}: {row[i]}", width, initial_indent="  ", subsequent_indent="    "
            )
    return "\n".join(out)


def _paragraph(lines: list[str], width: int) -> str:
    """Each line wrapped; list items and their continuation lines hang under the text."""
    out: list[str] = []
    for line in lines:
        text = line.replace("**", "").replace("`", "")
        hang = "  " if text.startswith(("- ", "  ")) else ""
        out += textwrap.wrap(text, width, initial_indent="", subsequent_indent=hang) or [""]
    return "\n".join(out)
