"""Pure: what the window matrix shows, in sentences computed from its reports.

The reference (SEEDS B) found: both windows must rise together (raising one leaves the
other binding), and spreading downloads over connections beats one small shared window.
These lines state, per download count, what *this* run measured on those questions.
"""

from __future__ import annotations

from collections.abc import Sequence

from kit.presets import BOTH, CONN_ONLY, DEFAULTS, STREAM_ONLY, conns_key
from kit.report.compare import CompareReport, Row


def _ratio(row: Row, base: Row) -> str:
    if row.summary is None or base.summary is None or base.summary.median == 0:
        return "-"
    return f"x{row.summary.median / base.summary.median:.2f}"


def _line(report: CompareReport, key: str, what: str) -> str | None:
    try:
        row, base = report.row(key), report.row(report.meta.baseline_key)
    except KeyError:
        return None
    return f"  {what}: {_ratio(row, base)} of {DEFAULTS} - {row.verdict}"


def group_findings(report: CompareReport, downloads: int) -> list[str]:
    lines = [f"{downloads} concurrent download(s):"]
    checks = [
        (BOTH, "both raised"),
        (STREAM_ONLY, "stream window raised alone"),
        (CONN_ONLY, "connection window raised alone"),
        (conns_key(downloads), "same small windows over separate connections"),
    ]
    lines += [line for key, what in checks if (line := _line(report, key, what)) is not None]
    return lines


def matrix_findings(reports: Sequence[tuple[int, CompareReport]]) -> str:
    lines = ["What the matrix shows (median ratio to the defaults, and the verdict):"]
    for downloads, report in reports:
        lines += group_findings(report, downloads)
    return "\n".join(lines)
