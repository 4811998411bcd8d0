"""Run the reference tables' campaigns: the plan line first, every cell, a session line last.

The records file starts with the tables' settings (so ``--resume`` runs exactly the stored
plan) and gets one session record per run or resumed part, whatever ended it, with the
machine's load average: on a shared 2-core box other work skews every cell.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from kit.campaign.runner import CampaignOutcome, OnProgress, pending_runs, run_campaigns
from kit.delayline.netns import missing as packet_link_missing
from kit.errors import UsageError
from kit.plan.campaign import CampaignSpec
from kit.plan.programs import CLIENT_PROGRAMS, SERVER_PROGRAMS
from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.trial import Trial
from kit.results.records import Measurement, SessionRecord
from kit.results.store import SkippedLines, append_record, iter_records
from kit.topology.topology import Topology

RECORDS_GLOB = "tables-*.jsonl"  # in results/: each run's records, named by its start time


def check_records_file(
    records_path: Path, settings: TablesSettings, resume: bool
) -> TablesSettings:
    """The settings to run with: a fresh file gets ours; --resume adopts the stored plan."""
    stored = stored_settings(records_path)
    if not resume:
        if records_path.exists() and records_path.stat().st_size > 0:
            raise UsageError(
                f"{records_path} already holds records: pass --resume to finish that run, "
                "or choose another --records file"
            )
        return settings
    if stored is None:
        raise UsageError(f"--resume: {records_path} holds no tables run to resume")
    return stored


def stored_settings(records_path: Path) -> TablesSettings | None:
    """The tables' settings a records file starts with (read up to them, not the whole
    file), or None: no such file, or no plan in it."""
    if not records_path.exists():
        return None
    for record in iter_records(records_path, SkippedLines()):
        if isinstance(record, TablesSettings):
            return record
    return None


def _load_1min() -> float | None:
    """The machine's 1-minute load average: other work on a 2-core box skews every cell."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


PACKET_LINK = "packet link"  # skipped like a stack that is not built: without root or TUN


def unbuilt_stacks(specs: list[CampaignSpec]) -> dict[str, str]:
    """Each stack a cell of these campaigns needs that cannot start here -> why (not built);
    also the packet link (``PACKET_LINK``) where this machine cannot make namespaces."""
    why: dict[str, str] = {}
    for spec in specs:
        for cell in spec.cells:
            packet = cell.trial.link.kind == "packet" and PACKET_LINK not in why
            if packet and (reason := packet_link_missing()) is not None:
                why[PACKET_LINK] = reason
            for kind, program in (
                (cell.trial.client.kind, CLIENT_PROGRAMS[cell.trial.client.kind]),
                (cell.trial.server.kind, SERVER_PROGRAMS[cell.trial.server.kind]),
            ):
                if kind not in why and (missing := program.missing()) is not None:
                    why[kind] = missing
    return why


def _needs(trial: Trial, kinds: dict[str, str]) -> bool:
    packet = trial.link.kind == "packet" and PACKET_LINK in kinds
    return packet or trial.client.kind in kinds or trial.server.kind in kinds


def run_tables(
    settings: TablesSettings,
    records_path: Path,
    *,
    resume: bool = False,
    progress: OnProgress | None = None,
    topology_factory: Callable[[], Topology] = Topology,
    on_skip: Callable[[str], None] | None = None,
) -> CampaignOutcome:
    """Run every missing cell of the selected tables; records are appended as they are made.

    A stack that is not built here is skipped, with one line to ``on_skip`` (and in the
    session record): its cells stay missing, the rest runs."""
    specs = [c.spec for c in plan_tables(settings)]
    if not resume:
        append_record(records_path, settings)
    unbuilt = unbuilt_stacks(specs)
    skip = (lambda trial: _needs(trial, unbuilt)) if unbuilt else None
    skipped = tuple(f"{kind} skipped: {why}" for kind, why in unbuilt.items())
    for line in skipped:
        if on_skip is not None:
            on_skip(line)
    planned = len(pending_runs(specs, records_path, resume=True, skip=skip))
    made: list[Measurement] = []
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    started, load_start = time.monotonic(), _load_1min()
    try:
        return run_campaigns(
            specs,
            records_path,
            resume=True,
            progress=progress,
            topology_factory=topology_factory,
            on_record=made.append,
            skip=skip,
        )
    finally:
        done = len(made)
        append_record(
            records_path,
            SessionRecord(
                started_at=started_at,
                elapsed_s=round(time.monotonic() - started, 3),
                cells_run=done,
                cells_planned=planned,
                complete=done == planned,
                load_1min=(load_start, _load_1min()),
                skipped=skipped,
            ),
        )
