"""kit.campaign over a fake topology: records as made, resume, progress, session lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tables_support import synthetic

from kit.campaign.runner import ProgressLine
from kit.campaign.tables import check_records_file, run_tables
from kit.cli.export import campaign_progress
from kit.errors import UsageError
from kit.plan.tables import TablesSettings
from kit.plan.trial import Trial
from kit.results.records import Measurement, RunTags
from kit.results.store import read_records
from kit.topology.topology import Topology


class FakeTopology(Topology):
    """A Topology whose measure() starts no server, proxy or client."""

    def __init__(self, calls: list[str], stop_after: int | None = None) -> None:
        super().__init__(warm_up=False)
        self.calls, self.stop_after = calls, stop_after

    def measure(self, trial: Trial, tags: RunTags | None = None) -> Measurement:
        if self.stop_after is not None and len(self.calls) >= self.stop_after:
            raise KeyboardInterrupt
        tags = tags or RunTags()
        self.calls.append(f"{tags.campaign}/{tags.run_id}")
        return synthetic(trial, tags, mib_s=10.0)


SETTINGS = TablesSettings(quick=True, rounds=2, seed=3, only=("starvation", "unary"))


def test_records_appended_as_made_with_plan_and_session(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines: list[ProgressLine] = []
    calls: list[str] = []
    outcome = run_tables(
        SETTINGS, path, progress=lines.append, topology_factory=lambda: FakeTopology(calls)
    )
    read = read_records(path)
    # table 3: 2 cells + control copy; table 4: 4 cells + control copy; 2 rounds each.
    assert outcome.cells_run == 2 * 3 + 2 * 5 == len(read.measurements) == len(calls)
    assert read.tables_plans == (SETTINGS,)
    assert len(read.sessions) == 1
    assert read.sessions[0].cells_run == 16 and read.sessions[0].complete is True
    # One line as each cell starts; tables are several campaigns, so each line names its own.
    assert [(line.done, line.total) for line in lines] == [(i, 16) for i in range(16)]
    assert lines[0].left_s is not None and lines[0].elapsed_s >= 0.0
    assert lines[0].cell.startswith("table3-starvation round 1: ")
    assert re.fullmatch(
        r"\[15/16\] table4-unary round 2: \S+ \| elapsed \d+s, left ~\d+s", lines[-1].text()
    )


def test_interrupted_run_resumes_only_what_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    calls: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_tables(SETTINGS, path, progress=None, topology_factory=lambda: FakeTopology(calls, 5))
    first = read_records(path)
    assert len(first.measurements) == 5
    assert first.sessions[-1].cells_run == 5 and first.sessions[-1].complete is False
    stored = check_records_file(path, TablesSettings(), resume=True)
    assert stored == SETTINGS  # --resume adopts the stored plan
    outcome = run_tables(
        stored, path, resume=True, progress=None, topology_factory=lambda: FakeTopology([])
    )
    assert outcome.cells_run == 16 - 5
    run_ids = [(m.tags.campaign, m.tags.run_id) for m in read_records(path).measurements]
    assert len(run_ids) == len(set(run_ids)) == 16
    assert read_records(path).sessions[-1].complete is True


def test_records_file_rules(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    assert check_records_file(path, SETTINGS, resume=False) == SETTINGS
    with pytest.raises(UsageError, match="holds no tables run"):
        check_records_file(path, SETTINGS, resume=True)
    path.write_text('{"kind": "something else"}\n')
    with pytest.raises(UsageError, match="--resume"):
        check_records_file(path, SETTINGS, resume=False)


def test_the_progress_line_reads_as_before() -> None:
    assert ProgressLine(0, 5, "round 1: a", 0.4, None).text() == (
        "[0/5] round 1: a | elapsed 0s, left ~?"
    )
    assert ProgressLine(2, 5, "round 1: b", 12.6, 30.2).text() == (
        "[2/5] round 1: b | elapsed 13s, left ~30s"
    )


def test_off_a_terminal_the_cli_prints_one_plain_line_per_cell(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with campaign_progress() as progress:
        progress(ProgressLine(0, 2, "round 1: a", 0.0, None))
        progress(ProgressLine(1, 2, "round 1: b", 1.0, 1.0))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "[0/2] round 1: a | elapsed 0s, left ~?\n[1/2] round 1: b | elapsed 1s, left ~1s\n"
    )
