"""``--html`` and ``--json`` on the commands that measure (``kit tables``, ``compare``,
``knee``): each writes exactly what ``kit report`` makes of the records it just wrote, so
there is one page and one JSON shape, whichever command made them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit, kit_here

pytestmark = pytest.mark.integration


def _same_as_report(records: Path, stdout: str, page: Path, tmp_path: Path) -> dict[str, Any]:
    again = tmp_path / "again.html"
    report = kit_here("report", str(records), "--json", "--html", str(again))
    assert report.returncode == 0, report.stderr
    assert stdout == report.stdout
    assert page.read_bytes() == again.read_bytes()
    data: dict[str, Any] = json.loads(stdout)
    return data


def test_tables_writes_the_reports_page_and_json(tmp_path: Path) -> None:
    records, page = tmp_path / "tables.jsonl", tmp_path / "tables.html"
    done = kit(
        "tables", "--quick", "--only", "unary", "--records", str(records),
        "--out", str(tmp_path / "tables.md"), "--json", "--html", str(page),
        timeout_s=240,
    )  # fmt: skip
    assert done.returncode in (0, 6), done.stderr  # 6: a decided failure of the unary check
    data = _same_as_report(records, done.stdout, page, tmp_path)
    tables = data["tables"]
    assert isinstance(tables, dict) and any(c["name"].startswith("unary") for c in tables["checks"])
    assert f"html report -> {page}" in done.stderr


def test_compare_and_knee_write_the_reports_page_and_json(tmp_path: Path) -> None:
    records, page = tmp_path / "compare.jsonl", tmp_path / "compare.html"
    done = kit(
        "compare", "--rtt", "4ms", "--duration", "200ms", "--rounds", "1",
        "--candidate", "h2:window=256KiB,conn-window=256KiB",
        "--records", str(records), "--json", "--html", str(page),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = _same_as_report(records, done.stdout, page, tmp_path)
    (comparison,) = data["comparisons"]
    assert [r["name"] for r in comparison["rows"]][-1] == "h2:window=256KiB,conn-window=256KiB"
    assert data["findings"] is None and len(data["rows"]) == 3

    records, page = tmp_path / "knee.jsonl", tmp_path / "knee.html"
    done = kit(
        "knee", "--rtt", "4ms", "--streams", "1", "--min-window", "64KiB",
        "--max-window", "128KiB", "--rounds", "1", "--duration", "200ms",
        "--records", str(records), "--json", "--html", str(page),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = _same_as_report(records, done.stdout, page, tmp_path)
    (sweep,) = data["knees"]
    assert sweep["answer"].startswith("answer: at 4 ms")
    assert "knee-1stream-png" in page.read_text(encoding="utf-8")
