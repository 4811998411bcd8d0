"""Pure rendering of benchmark entries (``kit.analysis.benchmark``) as the JSON list that
github-action-benchmark's ``customBiggerIsBetter`` tool reads: ``[{"name", "unit", "value",
"range"}]``, ``value`` the cell's median rounded as the flat row rounds a throughput (four
significant figures), ``range`` its runs' min-max as the tables print it."""

from __future__ import annotations

import json
from collections.abc import Sequence

from kit.analysis.benchmark import BenchmarkEntry
from kit.analysis.flat import round_to
from kit.report.format import sig3

THROUGHPUT_ROUNDING = ("figures", 4)  # the flat row's rule for a column ending in _mib_s


def entry_json(entry: BenchmarkEntry) -> dict[str, object]:
    s = entry.summary
    return {
        "name": entry.name,
        "unit": entry.unit,
        "value": round_to(s.median, THROUGHPUT_ROUNDING),
        "range": f"{sig3(s.min)}-{sig3(s.max)}",
    }


def benchmark_json(entries: Sequence[BenchmarkEntry]) -> str:
    return json.dumps([entry_json(e) for e in entries], indent=2) + "\n"
