"""Pure: what the window matrix measured on the window-tuning study's two questions.

That study found both windows must rise together (raising one leaves the other binding),
and spreading downloads over connections beats one small shared window. Per download
count, each finding is the median ratio of a cell to the defaults, and its verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kit.analysis.compare import CompareReport
from kit.plan.presets import BOTH, CONN_ONLY, STREAM_ONLY, conns_key

CHECKS = (
    (BOTH, "both raised"),
    (STREAM_ONLY, "stream window raised alone"),
    (CONN_ONLY, "connection window raised alone"),
)
SPREAD = "same small windows over separate connections"


@dataclass(frozen=True)
class Finding:
    what: str
    ratio: float | None  # candidate median / defaults median
    verdict: str


@dataclass(frozen=True)
class MatrixGroup:
    downloads: int
    findings: tuple[Finding, ...]


def _finding(report: CompareReport, key: str, what: str) -> Finding | None:
    try:
        row, base = report.row(key), report.row(report.meta.baseline_key)
    except KeyError:
        return None
    ratio = None
    if row.summary is not None and base.summary is not None and base.summary.median != 0:
        ratio = row.summary.median / base.summary.median
    return Finding(what, ratio, row.verdict)


def matrix_groups(reports: Sequence[tuple[int, CompareReport]]) -> list[MatrixGroup]:
    groups = []
    for downloads, report in reports:
        checks = [*CHECKS, (conns_key(downloads), SPREAD)]
        found = (_finding(report, key, what) for key, what in checks)
        groups.append(MatrixGroup(downloads, tuple(f for f in found if f is not None)))
    return groups
