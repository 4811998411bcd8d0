"""``kit report --benchmark-json``'s entries (``kit.analysis.benchmark``): one per cell, its
median and min-max the tables' own, its name the same from one CI run to the next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit.analysis import flat
from kit.analysis.benchmark import benchmark_entries, campaign_stem, run_label
from kit.analysis.cells import group_campaigns, throughput
from kit.report.benchmark import THROUGHPUT_ROUNDING, benchmark_json
from kit.results.store import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_a_campaigns_digest_is_left_out_of_its_names() -> None:
    assert campaign_stem("compare-27695f61f9") == "compare"
    assert campaign_stem("knee-1stream-619be56792") == "knee-1stream"
    assert campaign_stem("table8-windows") == "table8-windows"  # the tables' names are stable


@pytest.mark.parametrize(
    "name", ["release-0.1/compare.jsonl", "knee/grpc-go.jsonl", "tables-quick/stacks.jsonl"]
)
def test_each_campaign_cell_is_one_entry_with_the_tables_median(name: str) -> None:
    read = read_records(FIXTURES / name)
    entries = {e.name: e for e in benchmark_entries(read.measurements)}
    cells = [
        cell
        for view in group_campaigns(read.measurements).values()
        for cell in view.cells
        if cell.trial.workload.kind != "unary" and cell.values(throughput)
    ]
    assert len(entries) == len(cells)
    for cell in cells:
        entry = entries[f"{campaign_stem(cell.campaign)}/{cell.key}"]
        assert entry.summary == cell.summary(throughput)
        assert entry.unit == "MiB/s"


def test_lone_runs_of_one_configuration_are_one_cell() -> None:
    read = read_records(FIXTURES / "runs" / "make-run.jsonl")
    entries = benchmark_entries([*read.measurements, *read.measurements])
    assert len(entries) == len({run_label(m.trial) for m in read.measurements})
    assert all(e.name.startswith("run/") and e.summary.n == 2 for e in entries)
    names = [e.name for e in entries]
    assert "run/h2 static 4 MiB, download x1, RTT 20 ms" in names


def test_unary_cells_are_left_out() -> None:
    read = read_records(FIXTURES / "release-0.1" / "tables.jsonl")
    names = [e.name for e in benchmark_entries(read.measurements)]
    assert names and not any(n.startswith("table4-unary/") for n in names)


def test_the_json_is_the_list_github_action_benchmark_reads() -> None:
    read = read_records(FIXTURES / "release-0.1" / "compare.jsonl")
    entries = benchmark_entries(read.measurements)
    loaded = json.loads(benchmark_json(entries))
    assert [set(e) for e in loaded] == [{"name", "unit", "value", "range"}] * len(entries)
    assert loaded[0] == {
        "name": "compare/baseline",
        "unit": "MiB/s",
        "value": flat.round_to(entries[0].summary.median, THROUGHPUT_ROUNDING),
        "range": "422-528",
    }


def test_the_value_is_rounded_as_the_flat_rows_throughput() -> None:
    assert flat._rule("throughput_mib_s") == THROUGHPUT_ROUNDING
