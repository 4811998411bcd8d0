"""A quick table finished from a stored run: the command measures a few cells, renders all.

A whole ``kit tables --quick --only NAME`` costs 15-30 s here, almost all of it process
start-up per cell. The table tests instead take a stored quick run of the same table
(``tests/fixtures/tables-quick/NAME.jsonl``, a real run on this kind of machine), take a few
cells out, and let ``kit tables --resume`` measure exactly those, for real, then render the
whole table from old and new records together: the same command, plan, resume, checks and
rendering a user gets, at the price of the cells taken out. The stored runs predate the
campaigns' renaming after their tables' numbers (``table5-links`` is now ``table6-links``):
cells are named by today's campaigns, as the kit reads them, so each resume also shows that
a run stored under the old names resumes as before.

``KIT_REGENERATE=1`` runs the whole quick table again first and stores it (do that when a
table's plan changes: the resume refuses records whose runs the plan no longer has).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_support import REPO, kit, kit_here

from kit.results.store import RENAMED_CAMPAIGNS

STORED = REPO / "tests" / "fixtures" / "tables-quick"


@dataclass(frozen=True)
class Resumed:
    done: subprocess.CompletedProcess[str]  # the `kit tables --resume` run
    lines: list[dict[str, Any]]  # every record line afterwards
    measured_now: list[str]  # "campaign/key" of each cell this run measured
    text: str  # the markdown written

    @property
    def cells(self) -> list[dict[str, Any]]:
        """Every measurement record, old and new."""
        return [line for line in self.lines if line["kind"] == "measurement"]


def cell_name(record: dict[str, Any]) -> str:
    """``campaign/key``, under the campaign's name of today (as ``kit.results`` reads it)."""
    campaign = record["tags"]["campaign"]
    return f"{RENAMED_CAMPAIGNS.get(campaign, campaign)}/{record['tags']['key']}"


def resume_quick_table(
    name: str, take_out: set[str], tmp_path: Path, flags: tuple[str, ...] = ()
) -> Resumed:
    """Finish a stored quick run of table ``name`` with the cells ``take_out`` (campaign/key)
    removed; every copy of a removed cell, and nothing else, is measured again (asserted), with
    the command's ``flags``."""
    stored = STORED / f"{name}.jsonl"
    if os.environ.get("KIT_REGENERATE"):
        stored.unlink(missing_ok=True)
        fresh = kit(
            *("tables", "--quick", "--only", name, "--records", str(stored)),
            *("--out", str(tmp_path / "fresh.md")),
            timeout_s=300,
        )
        assert fresh.returncode == 0, fresh.stderr
    kept, removed = [], set()
    for line in stored.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["kind"] == "tables-session":
            continue  # the stored run's end: the resumed run writes its own
        if record["kind"] == "measurement" and cell_name(record) in take_out:
            removed.add(cell_name(record))
            continue
        kept.append(line)
    assert removed == take_out, f"not in the stored run: {take_out - removed} (KIT_REGENERATE=1?)"
    records, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.md"
    records.write_text("\n".join(kept) + "\n", encoding="utf-8")
    before = len(kept)
    done = kit_here("tables", "--resume", "--records", str(records), "--out", str(out), *flags)
    # A check the re-measured cells make fail on a loaded machine is the tables' verdict,
    # not this test's: it exits 6 exactly then, saying so; anything else is a defect.
    failing = "check(s) against the reference FAIL" in done.stderr
    assert done.returncode == (6 if failing else 0), done.stderr
    lines = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    measured_now = [cell_name(r) for r in lines[before:] if r["kind"] == "measurement"]
    assert sorted(measured_now) == sorted(take_out), "the resume measures exactly those cells"
    new = [r["tags"]["campaign"] for r in lines[before:] if r["kind"] == "measurement"]
    assert not set(new) & set(RENAMED_CAMPAIGNS), "new records carry today's campaign names"
    return Resumed(done, lines, measured_now, out.read_text(encoding="utf-8"))
