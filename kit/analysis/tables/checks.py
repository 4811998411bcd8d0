"""Pure: a check against the reference study (a "bar"), as every table evaluates its own.

Each check holds, fails, or is "not measured" (a cell it needs is missing or failed every
round) or "not decided" (measured, but the noise is wider than the check's tolerance); its figures come from the records, never from typed-in numbers. Each table's module
evaluates its checks, ``kit.analysis.tables.evaluate_bars`` gathers them and
``kit.report.tables.checks`` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bar:
    name: str
    holds: bool | None  # None: not measured (or not decided)
    detail: str
    undecided: bool = False  # measured, but noisier than the check's tolerance
