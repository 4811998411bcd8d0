"""Pure rendering of the checks against the reference (``kit.analysis.tables.checks``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kit.analysis.tables.checks import Bar

_MARKS = {True: "holds", False: "FAILS", None: "not measured"}
# The failing line is printed after "kit: error: " and must fit 100 columns with it.
FAILED_LINE_COLUMNS = 100 - len("kit: error: ")


def _mark(bar: Bar) -> str:
    return "not decided" if bar.holds is None and bar.undecided else _MARKS[bar.holds]


def failed_line(bars: Sequence[Bar]) -> str | None:
    """One line for the end of a tables run: which checks fail, or None when none does."""
    failed = [b.name for b in bars if b.holds is False]
    if not failed:
        return None
    more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    head = f"{len(failed)} check(s) against the reference FAIL: "
    tail = f"{more} (see the checks above)"
    return head + shortened(failed[0], FAILED_LINE_COLUMNS - len(head) - len(tail)) + tail


def shortened(name: str, room: int) -> str:
    """``name`` cut at a word to fit ``room`` columns, "..." marking the cut."""
    if len(name) <= room:
        return name
    cut = name.rfind(" ", 0, room - 3)
    return name[: cut if cut > 0 else room - 3].rstrip(" ,;:") + "..."


def render_bars(bars: Sequence[Bar]) -> str:
    lines = ["## Checks against the reference, evaluated from these records", ""]
    lines += [f"- {_mark(b)}: {b.name} ({b.detail})" for b in bars]
    return "\n".join(lines)


def bar_json(bar: Bar) -> dict[str, Any]:
    """A check as ``--json`` gives it: its verdict, detail, and the figure it turned on with
    the interval it was judged by (``ci_low`` / ``ci_high``: null with fewer than 3 rounds,
    or for a check that is not a ratio of medians)."""
    return {
        "name": bar.name,
        "holds": bar.holds,
        "undecided": bar.undecided,
        "detail": bar.detail,
        "value": bar.value,
        "ci_low": bar.ci.low if bar.ci else None,
        "ci_high": bar.ci.high if bar.ci else None,
    }
