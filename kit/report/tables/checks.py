"""Pure rendering of the checks against the reference (``kit.analysis.tables.checks``)."""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.tables.checks import Bar

_MARKS = {True: "holds", False: "FAILS", None: "not measured"}


def render_bars(bars: Sequence[Bar]) -> str:
    lines = ["## Checks against the reference, evaluated from these records", ""]
    lines += [f"- {_MARKS[b.holds]}: {b.name} ({b.detail})" for b in bars]
    return "\n".join(lines)
