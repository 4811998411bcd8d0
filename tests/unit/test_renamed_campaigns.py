"""Campaigns renamed after their tables' numbers still read, render and resume as before.

Earlier releases named the uploads, links and sharing campaigns ``uploads-rtt20ms``,
``uploads-rtt103ms``, ``table5-links`` (table 6) and ``table6-sharing`` (table 7).
``kit.results.store`` reads them under today's names, so a stored run resumes with nothing
to do, and a cell taken out of one is measured again, alone, under today's name. The stored
quick runs in ``tests/fixtures/tables-quick`` were written under the old names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tables_support import synthetic

from kit.campaign.tables import check_records_file, run_tables
from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.trial import Link, Trial
from kit.results.codec import to_json
from kit.results.records import Measurement, RunTags
from kit.results.store import RENAMED_CAMPAIGNS, decode_record, encode_record, read_records
from kit.topology.topology import Topology

STORED = Path(__file__).resolve().parents[1] / "fixtures" / "tables-quick"
TRIAL = Trial(link=Link(2.5, 2.5))


def test_every_old_name_becomes_a_planned_campaign_and_no_planned_one_is_renamed() -> None:
    planned = {c.name for c in plan_tables(TablesSettings())}
    assert set(RENAMED_CAMPAIGNS.values()) <= planned
    assert not set(RENAMED_CAMPAIGNS) & planned


def test_old_names_read_as_todays_in_every_schema() -> None:
    line = encode_record(Measurement(trial=TRIAL, status="ok", tags=RunTags(campaign="mine")))
    for old, new in RENAMED_CAMPAIGNS.items():
        renamed = decode_record(line | {"tags": line["tags"] | {"campaign": old}})
        assert isinstance(renamed, Measurement) and renamed.tags.campaign == new
    release_0_1 = {"trial": to_json(TRIAL), "status": "ok", "tags": {"campaign": "table5-links"}}
    renamed = decode_record(release_0_1)
    assert isinstance(renamed, Measurement) and renamed.tags.campaign == "table6-links"
    kept = decode_record(line)
    assert isinstance(kept, Measurement) and kept.tags.campaign == "mine"


class FakeTopology(Topology):
    """Measures nothing: records which runs it was asked for."""

    def __init__(self, calls: list[str]) -> None:
        super().__init__(warm_up=False)
        self.calls = calls

    def measure(self, trial: Trial, tags: RunTags | None = None) -> Measurement:
        tags = tags or RunTags()
        self.calls.append(f"{tags.campaign}/{tags.run_id}")
        return synthetic(trial, tags, mib_s=10.0)


def _resume(records: Path) -> list[str]:
    calls: list[str] = []
    settings = check_records_file(records, TablesSettings(), resume=True)
    run_tables(
        settings, records, resume=True, progress=None, topology_factory=lambda: FakeTopology(calls)
    )
    return calls


@pytest.mark.parametrize(
    ("table", "old", "new"),
    [
        ("uploads", "uploads-rtt103ms", "table5-rtt103ms"),
        ("links", "table5-links", "table6-links"),
        ("sharing", "table6-sharing", "table7-sharing"),
    ],
)
def test_a_stored_run_under_old_names_resumes_as_before(
    table: str, old: str, new: str, tmp_path: Path
) -> None:
    lines = (STORED / f"{table}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    records = tmp_path / "stored.jsonl"
    records.write_text("".join(lines), encoding="utf-8")
    assert _resume(records) == []  # complete: nothing to measure, nothing refused
    assert {m.tags.campaign for m in read_records(records).measurements} >= {new}

    taken = next(i for i, line in enumerate(lines) if f'"campaign":"{old}"' in line)
    run_id = json.loads(lines[taken])["tags"]["run_id"]
    records.write_text("".join(lines[:taken] + lines[taken + 1 :]), encoding="utf-8")
    assert _resume(records) == [f"{new}/{run_id}"]  # the one cell taken out, renamed
