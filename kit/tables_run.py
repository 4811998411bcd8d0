"""Run the reference tables' campaigns: warm-up, progress, records, machine load.

``run_tables`` drives ``kit.campaign`` once per campaign of ``kit.tables.plan_tables`` with a
topology that runs one discarded warm-up trial per (server, link) and shows one progress line
over the whole run. Every cell's record also carries how busy the whole machine was during
its timed window (``tags["machine"]``): on a shared 2-core box other work skews every cell,
and the path's own processes cannot show it.
"""

from __future__ import annotations

import functools
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from kit.campaign import campaign_records, run_campaign
from kit.errors import UsageError
from kit.measure import Measurement
from kit.plan import Trial
from kit.records import append_record, read_records
from kit.rounds import ScheduledRun, remaining
from kit.tables import (
    PLAN_KIND,
    SESSION_KIND,
    TableCampaign,
    TablesSettings,
    expected_cell_s,
    plan_tables,
)
from kit.topology import Topology


class TablesProgress:
    """Cells done / total, the current cell, elapsed and an estimate, on one stderr line.

    The estimate is each pending cell's planned measuring time plus the median observed
    overhead per cell (process start, connection, warm-up), which differ by cell.
    """

    DEFAULT_OVERHEAD_S = 0.8

    def __init__(
        self, pending: Sequence[tuple[str, ScheduledRun[Trial]]], out: TextIO | None
    ) -> None:
        self.planned = {
            (name, run.run_id): expected_cell_s(run.cell.payload) for name, run in pending
        }
        self.total, self.done = len(pending), 0
        self.overheads: list[float] = []
        self.out = out
        self.started = time.monotonic()
        self.live = bool(out is not None and out.isatty())

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def eta_s(self) -> float:
        overhead = statistics.median(self.overheads) if self.overheads else self.DEFAULT_OVERHEAD_S
        return sum(self.planned.values()) + overhead * len(self.planned)

    def show(self, text: str) -> None:
        if self.out is None:
            return
        clock = f"elapsed {self.elapsed_s():.0f}s, left ~{self.eta_s():.0f}s"
        line = f"[{self.done}/{self.total}] {text} | {clock}"
        self.out.write(("\r\x1b[2K" + line) if self.live else line + "\n")
        self.out.flush()

    def finished(self, campaign: str, run_id: str, wall_s: float) -> None:
        planned = self.planned.pop((campaign, run_id), 0.0)
        self.overheads.append(max(0.0, wall_s - planned))
        self.done += 1

    def close(self) -> None:
        if self.out is not None and self.live:
            self.out.write("\n")
            self.out.flush()


class ProgressTopology(Topology):
    """A topology that reports each cell to the tables' progress line.

    Warm-up runs and machine-load sampling are the Topology's own (kit.topology).
    """

    def __init__(self, campaign: TableCampaign, progress: TablesProgress) -> None:
        super().__init__()
        self.campaign, self.progress = campaign, progress

    def measure(self, trial: Trial, tags: dict[str, Any] | None = None) -> Measurement:
        tags = dict(tags or {})
        label = f"{self.campaign.name} round {int(tags.get('round', 0)) + 1}: {tags.get('key')}"
        self.progress.show(label)
        started = time.monotonic()
        measurement = super().measure(trial, tags)
        self.progress.finished(
            self.campaign.name, str(tags.get("run_id")), time.monotonic() - started
        )
        return measurement


@dataclass(frozen=True)
class TablesOutcome:
    """What a ``run_tables`` call did: records of the selected campaigns, time spent."""

    measurements: tuple[Measurement, ...]
    cells_run: int
    elapsed_s: float


def _done_ids(records_path: Path, name: str) -> set[str]:
    return {str(m.tags.get("run_id")) for m in campaign_records(records_path, name)}


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
    if not records_path.exists():
        return None
    plans = [o for o in read_records(records_path).others if o.get("kind") == PLAN_KIND]
    return TablesSettings.from_record(plans[0]) if plans else None


def _load_1min() -> float | None:
    """The machine's 1-minute load average: other work on a 2-core box skews every cell."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def run_tables(
    settings: TablesSettings,
    records_path: Path,
    *,
    resume: bool = False,
    progress: TextIO | None = sys.stderr,
    topology_factory: Callable[[TableCampaign, TablesProgress], Topology] = ProgressTopology,
) -> TablesOutcome:
    """Run every missing cell of the selected tables; records are appended as they are made."""
    campaigns = plan_tables(settings)
    if not resume:
        append_record(records_path, settings.to_record())
    pending = [
        (c.name, run)
        for c in campaigns
        for run in remaining(c.spec.schedule(), _done_ids(records_path, c.name))
    ]
    bar = TablesProgress(pending, progress)
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    load_start = _load_1min()
    measurements: list[Measurement] = []
    try:
        for campaign in campaigns:
            measurements += run_campaign(
                campaign.spec,
                records_path,
                resume=resume,
                progress=None,
                topology_factory=functools.partial(topology_factory, campaign, bar),
            )
    finally:
        bar.close()
        append_record(
            records_path,
            {
                "kind": SESSION_KIND,
                "started_at": started_at,
                "elapsed_s": round(bar.elapsed_s(), 3),
                "cells_run": bar.done,
                "cells_planned": bar.total,
                "complete": bar.done == bar.total,
                "load_1min": [load_start, _load_1min()],
            },
        )
    return TablesOutcome(tuple(measurements), bar.done, bar.elapsed_s())
