"""Run an interleaved, resumable campaign of trials: the engine behind tables and compare.

The schedule comes from ``kit.rounds`` (seeded order, reshuffled every round, a duplicate
control). Every record is appended to the records file as soon as it exists, tagged with
the campaign name and the run id, so an interrupted campaign keeps what it measured and
``resume=True`` runs only what is missing. A failed or hung trial is recorded as a failed
cell and the campaign goes on; a topology that cannot start stops the campaign.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from kit.errors import UsageError
from kit.measure import Measurement
from kit.plan import Trial
from kit.records import append_record, read_records
from kit.rounds import (
    Cell,
    ScheduledRun,
    estimate_remaining_s,
    plan_rounds,
    remaining,
    unknown_run_ids,
)
from kit.topology import Topology


@dataclass(frozen=True)
class CampaignSpec:
    """What to run: named cells (key -> Trial), rounds, seed, the control cell."""

    name: str
    cells: tuple[Cell[Trial], ...]
    control_key: str
    rounds: int = 3
    seed: int = 1

    def __post_init__(self) -> None:
        if not self.name or ":" in self.name:
            raise UsageError(f"campaign name {self.name!r} must be non-empty and without ':'")
        keys = [c.key for c in self.cells]
        if len(set(keys)) != len(keys):
            raise UsageError("campaign cells must have distinct keys")
        if self.control_key not in keys:
            raise UsageError(f"control cell {self.control_key!r} is not one of the cells")
        if not 1 <= self.rounds <= 1000:
            raise UsageError(f"--rounds: {self.rounds} is outside 1..1000")

    def schedule(self) -> list[ScheduledRun[Trial]]:
        return plan_rounds(list(self.cells), self.rounds, self.seed, self.control_key)


def campaign_records(records_path: Path, name: str) -> list[Measurement]:
    """The records of one campaign in a records file (missing file -> none)."""
    if not records_path.exists():
        return []
    return [m for m in read_records(records_path).measurements if m.tags.get("campaign") == name]


class Progress:
    """One status line on stderr: cells done / total, current cell, elapsed, estimate."""

    def __init__(self, total: int, out: TextIO | None) -> None:
        self.total, self.out = total, out
        self.started = time.monotonic()
        self.live = bool(out is not None and out.isatty())

    def show(self, done: int, run: ScheduledRun[Trial], eta_s: float | None) -> None:
        if self.out is None:
            return
        elapsed = time.monotonic() - self.started
        eta = "?" if eta_s is None else f"{eta_s:.0f}s"
        line = f"[{done}/{self.total}] round {run.round_index + 1}: {run.key} | elapsed {elapsed:.0f}s, left ~{eta}"
        self.out.write(("\r\x1b[2K" + line) if self.live else line + "\n")
        self.out.flush()

    def finish(self) -> None:
        if self.out is not None and self.live:
            self.out.write("\n")
            self.out.flush()


def run_campaign(
    spec: CampaignSpec,
    records_path: Path,
    *,
    resume: bool = False,
    progress: TextIO | None = sys.stderr,
    topology_factory: Callable[[], Topology] = Topology,
) -> list[Measurement]:
    """Run what is missing of the campaign; return all its records (old and new)."""
    schedule = spec.schedule()
    done = _done_run_ids(records_path, spec, resume)
    pending = remaining(schedule, done)
    bar = Progress(len(pending), progress)
    durations: dict[str, list[float]] = {}
    with topology_factory() as topo:
        for index, run in enumerate(pending):
            bar.show(index, run, estimate_remaining_s(pending[index:], durations))
            started = time.monotonic()
            measurement = topo.measure(run.cell.payload, tags=_tags(spec, run))
            append_record(records_path, measurement)
            durations.setdefault(run.key, []).append(time.monotonic() - started)
    bar.finish()
    return campaign_records(records_path, spec.name)


def _done_run_ids(records_path: Path, spec: CampaignSpec, resume: bool) -> set[str]:
    if not resume:
        if campaign_records(records_path, spec.name):
            raise UsageError(
                f"{records_path} already holds a campaign {spec.name!r}: pass --resume to finish it, "
                "or choose another --records file"
            )
        return set()
    done = {str(m.tags.get("run_id")) for m in campaign_records(records_path, spec.name)}
    stray = unknown_run_ids(spec.schedule(), done)
    if stray:
        raise UsageError(
            f"--resume: {records_path} holds {len(stray)} runs this plan does not have "
            f"(e.g. {stray[0]}); the plan changed (rounds, cells): use another --records file"
        )
    return done


def _tags(spec: CampaignSpec, run: ScheduledRun[Trial]) -> dict[str, object]:
    return {
        "campaign": spec.name,
        "run_id": run.run_id,
        "round": run.round_index,
        "key": run.key,
        "copy": run.copy,
        "control": run.key == spec.control_key,
    }


def samples_by_key(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    """Group a campaign's ok records by cell key (failed records are left out)."""
    out: dict[str, list[Measurement]] = {}
    for m in measurements:
        if m.ok:
            out.setdefault(str(m.tags.get("key")), []).append(m)
    return out
