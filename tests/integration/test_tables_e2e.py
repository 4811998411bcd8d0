"""`kit tables --quick` end to end over loopback, reduced to table 4 (the smallest table).

Real grpcio server, real delay line, real client processes. Asserts on the files and the
schedule (records exist, the control ran twice in the round), never on speeds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tables_resume import resume_quick_table

from kit.results.store import RECORDS_SCHEMA

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 90


def kit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def test_quick_table4_writes_tables_and_records(tmp_path: Path) -> None:
    records, out = tmp_path / "tables.jsonl", tmp_path / "tables.md"
    done = kit("tables", "--quick", "--only", "unary", "--records", str(records), "--out", str(out))
    # One round either decides the unary check or says "not decided"; exit 6 only for a
    # decided failure, named in the last line.
    failing = "- FAILS:" in done.stdout
    assert done.returncode == (6 if failing else 0), done.stderr
    if failing:
        assert "check(s) against the reference FAIL: unary" in done.stderr.splitlines()[-1]
    assert "[0/5]" in done.stderr and "left ~" in done.stderr  # the progress display
    assert all(len(line) <= 100 for line in done.stdout.splitlines())  # the checks, laid out

    lines = [json.loads(line) for line in records.read_text().splitlines()]
    plan, session = lines[0], lines[-1]
    assert plan["kind"] == "tables-plan" and plan["quick"] is True and plan["rounds"] == 1
    assert session["kind"] == "tables-session" and session["complete"] is True
    assert all(line["schema"] == RECORDS_SCHEMA for line in lines)
    cells = [line for line in lines if line["kind"] == "measurement"]
    keys = [c["tags"]["key"] for c in cells]
    assert sorted(keys) == sorted(
        ["grpcio-dynamic", "grpcio-dynamic", "grpcio-static-64KiB", "h2-dynamic", "h2-static-64KiB"]
    )
    assert {c["tags"]["round"] for c in cells} == {0}
    assert all(c["trial"]["link"]["delay_up_ms"] == 2.5 for c in cells)
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]

    text = out.read_text()
    assert "## Table 4" in text and "Noise floor (control `grpcio-dynamic`)" in text
    assert "## Table 1" not in text

    rerendered = kit("report", str(records), "--markdown")
    assert rerendered.returncode == 0 and rerendered.stdout == text  # no figures: no downloads
    laid_out = kit("report", str(records))
    assert laid_out.returncode == 0 and "## Table 4" in laid_out.stdout

    again = kit("tables", "--resume", "--records", str(records), "--out", str(out))
    assert again.returncode == done.returncode, again.stderr
    assert "0 cells" in again.stderr
    assert len([1 for line in records.read_text().splitlines() if '"trial"' in line]) == 5


def test_quick_sharing_table_renders_its_rows_and_checks(tmp_path: Path) -> None:
    """The sharing table from a stored quick run, three cells measured again (a pool, grpcio
    and h2's dynamic window; see tables_resume): every cell ran, the table and its four
    checks are there. Its bars are physics and are asserted in the e2e sharing tests, not
    here (one round on a loaded machine)."""
    take_out = {
        "table7-sharing/pool-8-streams",
        "table7-sharing/grpcio-beside-fast",
        "table7-sharing/h2-dynamic-beside-slow",
    }
    resumed = resume_quick_table("sharing", take_out, tmp_path)
    cells = resumed.cells
    text = resumed.text
    assert len(cells) == 14  # 13 cells and the control's copy
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    assert "## Table 7: one slow reader on a shared connection" in text
    for label in ("conn credit on read", "conn credit on receipt", "h2 pool 1.53 MiB", "grpcio"):
        assert label in text
    assert "### The pool: windows shared between receiving streams" in text
    assert text.count("sharing: ") == 4
