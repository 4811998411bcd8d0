"""kit.tables_run without processes: records as made, warm-up, resume, progress, load."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tables_support import synthetic

from kit.errors import UsageError
from kit.measure import Measurement
from kit.plan import Trial
from kit.records import read_records
from kit.tables import SESSION_KIND, TableCampaign, TablesSettings
from kit.tables_run import (
    ProgressTopology,
    TablesProgress,
    check_records_file,
    run_tables,
)


class FakeProcesses(ProgressTopology):
    """ProgressTopology over a fake Topology.measure: no server, proxy or client is started."""

    calls: ClassVar[list[tuple[str, str]]] = []
    stop_after: ClassVar[int | None] = None

    def __init__(self, campaign: TableCampaign, progress: TablesProgress) -> None:
        super().__init__(campaign, progress)

    def _fake(self, trial: Trial, tags: dict[str, Any] | None = None) -> Measurement:
        tags = dict(tags or {})
        if (
            FakeProcesses.stop_after is not None
            and len(self.measured()) >= FakeProcesses.stop_after
        ):
            raise KeyboardInterrupt
        FakeProcesses.calls.append((self.campaign.name, str(tags.get("run_id", "warm-up"))))
        return synthetic(trial, tags, mib_s=10.0)

    @staticmethod
    def measured() -> list[tuple[str, str]]:
        return [c for c in FakeProcesses.calls if c[1] != "warm-up"]


def _patch_measure(monkeypatch: pytest.MonkeyPatch) -> None:
    FakeProcesses.calls = []
    FakeProcesses.stop_after = None
    # ProgressTopology.measure calls Topology.measure once per cell.
    monkeypatch.setattr("kit.topology.Topology.measure", FakeProcesses._fake)


SETTINGS = TablesSettings(quick=True, rounds=2, seed=3, only=(3, 4))


def test_records_appended_as_made_with_plan_and_session(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _patch_measure(monkeypatch)
    path = tmp_path / "t.jsonl"
    out = io.StringIO()
    outcome = run_tables(SETTINGS, path, progress=out, topology_factory=FakeProcesses)
    read = read_records(path)
    # table 3: 2 cells + control copy; table 4: 4 cells + control copy; 2 rounds each.
    assert outcome.cells_run == 2 * 3 + 2 * 5 == len(read.measurements)
    kinds = [o["kind"] for o in read.others]
    assert kinds == ["tables-plan", SESSION_KIND]
    assert read.others[1]["cells_run"] == 16 and read.others[1]["complete"] is True
    assert "[16/16]" not in out.getvalue() and "[15/16]" in out.getvalue()
    assert "left ~" in out.getvalue()


def test_interrupted_run_resumes_only_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _patch_measure(monkeypatch)
    path = tmp_path / "t.jsonl"
    FakeProcesses.stop_after = 5
    with pytest.raises(KeyboardInterrupt):
        run_tables(SETTINGS, path, progress=None, topology_factory=FakeProcesses)
    first = read_records(path)
    assert len(first.measurements) == 5
    assert first.others[-1]["kind"] == SESSION_KIND and first.others[-1]["complete"] is False
    FakeProcesses.stop_after = None
    stored = check_records_file(path, TablesSettings(), resume=True)
    assert stored == SETTINGS  # --resume adopts the stored plan
    outcome = run_tables(stored, path, resume=True, progress=None, topology_factory=FakeProcesses)
    assert outcome.cells_run == 16 - 5
    run_ids = [m.tags["run_id"] for m in read_records(path).measurements]
    assert len(run_ids) == len(set(run_ids)) == 16


def test_records_file_rules(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    assert check_records_file(path, SETTINGS, resume=False) == SETTINGS
    with pytest.raises(UsageError, match="holds no tables run"):
        check_records_file(path, SETTINGS, resume=True)
    path.write_text('{"kind": "something else"}\n')
    with pytest.raises(UsageError, match="--resume"):
        check_records_file(path, SETTINGS, resume=False)


