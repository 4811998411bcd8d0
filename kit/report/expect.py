"""Pure rendering of ``kit check``'s judgements (``kit.analysis.expect``): a line per
expectation, as k6 prints its thresholds, with the median that decided it and how many rows
it was taken over; the closing line; the ``--json`` entries."""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.expect import Judgement

HOLDS, FAILS = "✓ holds", "✗ fails"
MEDIAN_RULE = "each expectation is judged on the median of the rows it matches"


def header_lines(records_name: str, rows: int) -> list[str]:
    return [f"kit check: {rows} row(s) of {records_name}", f"{MEDIAN_RULE}:"]


def median_text(value: float) -> str:
    """The median as it decided: ten significant figures, without binary noise."""
    return f"{value:.10g}"


def judgement_line(j: Judgement) -> str:
    """``✓ holds  efficiency>=0.9: median 0.934 of 6 rows``; what is missing when no median."""
    mark = HOLDS if j.holds else FAILS
    return f"{mark}  {j.expectation.text}: {_evidence(j)}"


def _evidence(j: Judgement) -> str:
    if j.rows == 0:
        seen = "; ".join(
            f"{column} is {', '.join(values) or 'never set'}" for column, values in j.seen
        )
        return "no row matches" + (f" ({seen})" if seen else "")
    column = j.expectation.column
    if j.median is None:
        return f"no value of {column} in the {j.rows} matching row(s) (did every run fail?)"
    without = j.rows - j.values
    note = f"; {without} of {j.rows} without a value, left out" if without else ""
    return f"median {median_text(j.median)} of {j.values} row(s){note}"


def failed_line(judgements: Sequence[Judgement]) -> str | None:
    """The one line ``kit check`` exits 6 with (None: every expectation holds)."""
    failed = [j for j in judgements if not j.holds]
    if not failed:
        return None
    names = "; ".join(j.expectation.text for j in failed[:3])
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    return f"{len(failed)} of {len(judgements)} expectation(s) failed: {names}{more}"


def passed_line(judgements: Sequence[Judgement]) -> str:
    return f"kit check: every expectation holds ({len(judgements)})"


def judgement_json(j: Judgement) -> dict[str, object]:
    e = j.expectation
    return {
        "expectation": e.text,
        "column": e.column,
        "op": e.op,
        "threshold": e.threshold,
        "where": [{"column": c.column, "value": c.value} for c in e.where],
        "median": j.median,
        "rows": j.rows,
        "values": j.values,
        "holds": j.holds,
    }
