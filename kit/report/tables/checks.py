"""Pure rendering of the checks against the reference (``kit.analysis.tables.checks``)."""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.tables.checks import Bar

_MARKS = {True: "holds", False: "FAILS", None: "not measured"}


def _mark(bar: Bar) -> str:
    return "not decided" if bar.holds is None and bar.undecided else _MARKS[bar.holds]


def failed_line(bars: Sequence[Bar]) -> str | None:
    """One line for the end of a tables run: which checks fail, or None when none does."""
    failed = [b.name for b in bars if b.holds is False]
    if not failed:
        return None
    more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    return f"{len(failed)} check(s) against the reference FAIL: {failed[0]}{more} (see the tables)"


def render_bars(bars: Sequence[Bar]) -> str:
    lines = ["## Checks against the reference, evaluated from these records", ""]
    lines += [f"- {_mark(b)}: {b.name} ({b.detail})" for b in bars]
    return "\n".join(lines)
