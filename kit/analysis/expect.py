"""Pure: ``kit check``'s expectations over the flat row, each judged on a median.

An expectation is ``COLUMN OP NUMBER [where COL=VALUE[,COL=VALUE...]]``: a numeric column
of the flat row (``kit.analysis.flat``, the ``--csv`` / ``--json`` columns), one of
``>= <= > < == !=``, and a number; ``where`` keeps the rows in which every named column
equals its value. It is judged on the **median** (``kit.quantile``'s one rule) of the column
over the rows it keeps that have a value there: a failed run's throughput is null, counted
but not judged. An expectation that keeps no row, or no value, does not hold: a gate that
passes on nothing would pass a broken job.

The rows are the compact flat rows, rounded as ``--csv`` writes them: what is judged is
what a user sees in the CSV. A mistake in an expression (a column the row does not have, a
text column compared as a number, an operator that is none of the six) is a ``UsageError``
naming the expression and the closest columns; it is found before any record is read.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kit.analysis.flat import SAME_AS, Kind, Row, column_kinds
from kit.errors import UsageError
from kit.quantile import percentile

# Two-character operators first: ">=" must not parse as ">" and "=0.9".
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
SYNTAX = "COLUMN OP NUMBER [where COL=VALUE[,COL=VALUE]], OP one of " + " ".join(OPERATORS)
NUMERIC: frozenset[Kind] = frozenset({"int", "float"})
SHOWN_VALUES = 8  # a where column's values named when it keeps no row
_OPERATOR = "|".join(re.escape(op) for op in OPERATORS)
_EXPRESSION = re.compile(rf"^\s*([A-Za-z0-9_]+)\s*({_OPERATOR})\s*(\S+)\s*$")
_WHERE = re.compile(r"\s+where\s+", re.IGNORECASE)
_CONDITION_START = re.compile(r",(?=\s*([A-Za-z0-9_]+)\s*=)")


@dataclass(frozen=True)
class Condition:
    """``COLUMN=VALUE`` of a ``where``: the row's value equals ``value`` as typed (a number
    compared as a number, ``true``/``false`` as a boolean, empty or ``null`` as no value)."""

    column: str
    value: str
    kind: Kind = "str"

    def matches(self, row: Row) -> bool:
        have = row.get(self.column)
        if have is None:
            return self.value in ("", "null")
        if isinstance(have, bool):
            return self.value.lower() == str(have).lower()
        if isinstance(have, int | float):
            return _number(self.value) == have
        return str(have) == self.value

    @property
    def text(self) -> str:
        return f"{self.column}={self.value}"


@dataclass(frozen=True)
class Expectation:
    """One parsed expectation; ``text`` is how it is printed (spaces normalised)."""

    column: str
    op: str
    threshold: float
    where: tuple[Condition, ...] = ()

    @property
    def text(self) -> str:
        head = f"{self.column}{self.op}{number_text(self.threshold)}"
        return head + (" where " + ",".join(c.text for c in self.where) if self.where else "")

    def keeps(self, row: Row) -> bool:
        return all(c.matches(row) for c in self.where)

    def holds_for(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.threshold)


@dataclass(frozen=True)
class Judgement:
    """An expectation judged: the median that decided it, the rows its ``where`` kept and
    how many of them had a value; ``seen``: each where column's values in the records (to
    name when it kept no row)."""

    expectation: Expectation
    median: float | None
    rows: int
    values: int
    seen: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def holds(self) -> bool:
        return self.median is not None and self.expectation.holds_for(self.median)


def number_text(value: float) -> str:
    """A number as short as it reads back exactly: 100, 0.9, 1234567."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _refuse(text: str, why: str) -> UsageError:
    return UsageError(f"--expect {text!r}: {why}")


def _known(column: str, kinds: Mapping[str, Kind], text: str) -> Kind:
    """The column's kind, or a one-line refusal naming the closest columns."""
    if column in SAME_AS:
        raise _refuse(text, f"{column} repeats {SAME_AS[column]}: use {SAME_AS[column]}")
    if column in kinds:
        return kinds[column]
    close = difflib.get_close_matches(column, list(kinds), n=4, cutoff=0.6)
    hint = f" (closest: {', '.join(close)})" if close else " (see docs/reference/flat-row.md)"
    raise _refuse(text, f"the flat row has no column {column!r}{hint}")


def _conditions(where: str, kinds: Mapping[str, Kind], text: str) -> tuple[Condition, ...]:
    """``a=1,b=x`` -> conditions. A comma splits only before a known column's ``NAME=``, so
    a value may hold commas and ``=`` (``tags_key=h2:window=4MiB,conn-window=16MiB``)."""
    parts: list[str] = []
    start = 0
    for match in _CONDITION_START.finditer(where):
        if match.group(1) in kinds:
            parts.append(where[start : match.start()])
            start = match.end()
    parts.append(where[start:])
    return tuple(_condition(part, kinds, text) for part in parts)


def _condition(part: str, kinds: Mapping[str, Kind], text: str) -> Condition:
    column, equals, value = part.partition("=")
    column, value = column.strip(), value.strip()
    if not equals or not column:
        raise _refuse(text, f"where {part.strip()!r} is not COL=VALUE")
    kind = _known(column, kinds, text)
    if kind == "json":
        raise _refuse(text, f"{column} holds a list or an object: it cannot be filtered on")
    if kind in NUMERIC and value not in ("", "null") and _number(value) is None:
        raise _refuse(text, f"where {column}={value}: {column} is a number")
    if kind == "bool" and value.lower() not in ("true", "false"):
        raise _refuse(text, f"where {column}={value}: {column} is true or false")
    return Condition(column, value, kind)


def parse_expectation(text: str, kinds: Mapping[str, Kind] | None = None) -> Expectation:
    """``efficiency>=0.9 where client=h2`` -> an ``Expectation``; ``UsageError`` in one line
    (naming the expression) for anything else."""
    kinds = column_kinds() if kinds is None else kinds
    head, *rest = _WHERE.split(text.strip(), maxsplit=1)
    match = _EXPRESSION.match(head)
    if match is None:
        raise _refuse(text, f"not an expectation; write {SYNTAX}")
    column, op, number = match.groups()
    kind = _known(column, kinds, text)
    if kind not in NUMERIC:
        what = {"bool": "true or false", "json": "a list or an object"}.get(kind, "text")
        raise _refuse(
            text, f"{column} is {what}, not a number: filter on it with where {column}=VALUE"
        )
    threshold = _number(number)
    if threshold is None:
        raise _refuse(text, f"{number!r} is not a number (expectations compare a median)")
    where = _conditions(rest[0], kinds, text) if rest else ()
    return Expectation(column, op, threshold, where)


@dataclass
class _Tally:
    """One expectation's pass over the rows: the values it keeps, a few values of each
    where column (for the line that says it kept nothing)."""

    expectation: Expectation
    rows: int = 0
    values: list[float] = field(default_factory=list)
    seen: dict[str, dict[str, None]] = field(default_factory=dict)

    def add(self, row: Row) -> None:
        for c in self.expectation.where:
            values = self.seen.setdefault(c.column, {})
            if len(values) < SHOWN_VALUES:
                values[_shown(row.get(c.column))] = None
        if not self.expectation.keeps(row):
            return
        self.rows += 1
        value = row.get(self.expectation.column)
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.values.append(float(value))

    def judged(self) -> Judgement:
        median = percentile(self.values, 50) if self.values else None
        seen = tuple((column, tuple(values)) for column, values in self.seen.items())
        return Judgement(self.expectation, median, self.rows, len(self.values), seen)


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def judge(expectations: Sequence[Expectation], rows: Iterable[Row]) -> tuple[Judgement, ...]:
    """Every expectation judged in one pass over the rows (only their values are held)."""
    tallies = [_Tally(e) for e in expectations]
    for row in rows:
        for tally in tallies:
            tally.add(row)
    return tuple(t.judged() for t in tallies)
