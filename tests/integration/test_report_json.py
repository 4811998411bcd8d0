"""``kit report --json``: one documented shape for every records file, loaded back here and
checked against the records and against what the terminal report says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit_here

from kit.analysis.flat import column_kinds, flat_row
from kit.results.store import read_records

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDS = sorted(FIXTURES.rglob("*.jsonl"))
KEYS = [
    "kit_report",
    "kit",
    "records",
    "runs",
    "comparisons",
    "knees",
    "tables",
    "expectations",
    "findings",
    "rows",
]
DOCUMENTED = Path(__file__).resolve().parents[2] / "docs" / "reference" / "json.md"


def _report(path: Path) -> dict[str, Any]:
    done = kit_here("report", "--json", str(path))
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_records_file_loads_back_in_one_shape(path: Path) -> None:
    data = _report(path)
    assert list(data) == KEYS and data["kit_report"] == 1 and data["records"] == str(path)
    assert json.loads(json.dumps(data)) == data  # plain JSON values only: it round-trips
    measurements = read_records(path).measurements
    assert data["rows"] == [json.loads(json.dumps(flat_row(m))) for m in measurements]
    lone = [m for m in measurements if not m.tags.campaign]
    assert [r["run"] for r in data["runs"]] == list(range(1, len(lone) + 1))
    kinds = column_kinds()
    for entry, m in zip(data["runs"], lone, strict=True):
        assert entry["row"] == json.loads(json.dumps(flat_row(m)))
        assert all(_fits(entry["row"][k], kinds.get(k, "json")) for k in entry["row"])
        assert entry["limited_by"]["sentence"].startswith(("Limited by", "What limited it"))
    for item in data["comparisons"]:
        assert set(item["limited_by"]) == {row["name"] for row in item["rows"]}
    for item in data["knees"]:
        assert {p["key"] for p in item["points"]} <= set(item["limited_by"])


def _fits(value: Any, kind: str) -> bool:
    types = {"int": int, "float": (int, float), "bool": bool, "str": str}
    return value is None or kind in ("json", "str?") or isinstance(value, types[kind])


def test_a_knees_json_answer_is_the_terminals() -> None:
    path = FIXTURES / "knee" / "grpc-go.jsonl"
    data = _report(path)
    text = " ".join(kit_here("report", str(path)).stdout.split())
    assert len(data["knees"]) == 2  # the 1-stream and the 2-stream sweeps
    for knee in data["knees"]:
        assert " ".join(knee["answer"].split()) in text
        assert "grpc.WithStaticStreamWindowSize(" in knee["answer"]
        assert knee["knee_window_bytes"] in {p["window_bytes"] for p in knee["points"]}


def test_a_tables_runs_json_holds_its_checks() -> None:
    data = _report(FIXTURES / "tables-quick" / "loss.jsonl")
    assert data["runs"] == [] and data["tables"] is not None
    assert any(c["name"].startswith("loss:") for c in data["tables"]["checks"])
    assert data["tables"]["markdown"].startswith("# The reference tables")


def test_the_shape_is_the_one_the_docs_document() -> None:
    text = DOCUMENTED.read_text(encoding="utf-8")
    documented = re.search(r"```json\n(.*?)```", text, re.S)
    assert documented is not None
    assert all(f'"{key}"' in documented.group(1) for key in KEYS)
    assert all(f"| `{key}` |" in text for key in KEYS)


def test_json_refuses_a_second_stdout_format() -> None:
    path = str(FIXTURES / "release-0.1" / "runs.jsonl")
    for other in (("--csv", "-"), ("--markdown",)):
        done = kit_here("report", "--json", *other, path)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1
