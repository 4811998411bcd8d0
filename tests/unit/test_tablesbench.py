"""make bench's line for the full tables run: read from the newest full run's records, its
time and failing checks said from those records, and a quick run never taken for one."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kit.analysis.cells import group_campaigns
from kit.analysis.tables import evaluate_bars
from kit.results.store import read_records
from kit.tools.tablesbench import TABLES_GOAL_S, tables_lines

FIXTURE = Path(__file__).parent.parent / "fixtures" / "release-0.1" / "tables.jsonl"
FULL_PLAN = {"kind": "tables-plan", "quick": False, "rounds": 3, "seed": 1}


def _as_full_run(path: Path) -> Path:
    """The fixture's records under a full run's plan (every table, 3 rounds, not quick)."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([json.dumps(FULL_PLAN), *lines[1:]]) + "\n", encoding="utf-8")
    return path


def test_the_newest_full_run_gives_its_time_and_its_failing_checks(tmp_path: Path) -> None:
    full = _as_full_run(tmp_path / "tables-20261201-072438.jsonl")
    quick = tmp_path / "tables-20261202-000000.jsonl"
    quick.write_text(FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")  # newer, quick
    os.utime(quick, (full.stat().st_mtime + 60,) * 2)
    time_line, checks_line = tables_lines(tmp_path)
    read = read_records(full)
    session = read.sessions[0]
    assert full.name in time_line.name and "not run by the bench" in time_line.name
    assert time_line.value == f"{session.elapsed_s:.0f} s for {session.cells_run} cells"
    assert time_line.ok is (session.elapsed_s <= TABLES_GOAL_S)
    failing = [b for b in evaluate_bars(group_campaigns(read.measurements)) if b.holds is False]
    if failing:
        assert checks_line.value.startswith(f"{len(failing)} fail: ") and checks_line.ok is False
    else:
        assert (checks_line.value, checks_line.ok) == ("none fails", True)


def test_without_a_full_run_it_says_so_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "tables-20261202-000000.jsonl").write_text(
        FIXTURE.read_text(encoding="utf-8"), encoding="utf-8"
    )
    (line,) = tables_lines(tmp_path)
    assert (line.value, line.ok) == ("no full run in results/ (make tables)", None)
