"""Run campaigns over one topology: the engine behind tables, compare and knee.

The order comes from ``kit.plan.schedule`` (seeded, reshuffled every round, a duplicate
control). Every record is appended to the records file as soon as it exists, tagged with
its campaign and run id, so an interrupted run keeps what it measured and ``resume=True``
runs only what is missing. A failed or hung trial is recorded as a failed cell and the run
goes on; a topology that cannot start stops it. One progress line covers every campaign:
the runner says where it is (``ProgressLine``), the caller draws it (the CLI: on stderr).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kit.errors import UsageError
from kit.plan.campaign import CampaignSpec, Cell, expected_cell_s
from kit.plan.schedule import (
    Budget,
    ScheduledRun,
    Undecided,
    UntilOutcome,
    added_round,
    added_run_ids,
    estimate_remaining_s,
    remaining,
    unknown_run_ids,
)
from kit.plan.trial import Trial
from kit.results.records import Measurement, RunTags
from kit.results.store import append_record, read_records
from kit.topology.topology import Topology

Pending = tuple[CampaignSpec, ScheduledRun[Cell]]


@dataclass(frozen=True)
class CampaignOutcome:
    """What a run did: every record of its campaigns (old and new), cells run, time spent.

    Teardown problems are the topology's to tell (``Topology(on_teardown_problem=...)``), at
    once, so that a run ending in an error does not lose them."""

    measurements: tuple[Measurement, ...]
    cells_run: int
    elapsed_s: float
    # ``--until-decided``: what stayed undecided and why the rounds stopped (None: not asked)
    until: UntilOutcome | None = None


def campaign_records(records_path: Path, names: Sequence[str]) -> list[Measurement]:
    """The records of some campaigns in a records file (missing file -> none)."""
    if not records_path.exists():
        return []
    wanted = set(names)
    return [m for m in read_records(records_path).measurements if m.tags.campaign in wanted]


def check_resumable(specs: Sequence[CampaignSpec], records_path: Path) -> None:
    """``--resume`` finishes a campaign the records file holds: a missing file, or one with
    none of these campaigns (the plan changed), would silently start a new one: refused."""
    if not records_path.is_file():
        raise UsageError(f"--resume: {records_path} does not exist; there is nothing to resume")
    if campaign_records(records_path, [s.name for s in specs]):
        return
    held = sorted({m.tags.campaign for m in read_records(records_path).measurements} - {""})
    holds = f"it holds {', '.join(repr(n) for n in held[:3])}" if held else "it holds no campaign"
    raise UsageError(
        f"--resume: {records_path} has no run of this plan ({holds}); the plan changed (cells, "
        "link, workload) since: give the same plan, or drop --resume for another --records file"
    )


def pending_runs(
    specs: Sequence[CampaignSpec],
    records_path: Path,
    resume: bool,
    skip: Callable[[Trial], bool] | None = None,
) -> list[Pending]:
    """The runs still to do, campaign by campaign; refuses to mix a new run into old records.
    ``skip`` leaves out runs that cannot run here (a stack that is not built): still missing,
    a later ``--resume`` measures them."""
    existing = campaign_records(records_path, [s.name for s in specs])
    out: list[Pending] = []
    for spec in specs:
        done = {m.tags.run_id for m in existing if m.tags.campaign == spec.name}
        if done and not resume:
            raise UsageError(
                f"{records_path} already holds a campaign {spec.name!r}: pass --resume to "
                "finish it, or choose another --records file"
            )
        schedule = spec.schedule()
        stray = unknown_run_ids(schedule, done - added_run_ids(schedule, spec.cells, done))
        if stray:
            raise UsageError(
                f"--resume: {records_path} holds {len(stray)} runs this plan does not have "
                f"(e.g. {stray[0]}); the plan changed (rounds, cells): use another --records file"
            )
        out += [
            (spec, run)
            for run in remaining(schedule, done)
            if skip is None or not skip(run.cell.trial)
        ]
    return out


@dataclass(frozen=True)
class ProgressLine:
    """Where a run is as a cell starts: cells done / total, that cell, the time so far and
    an estimate of what is left (None until there is something to go on)."""

    done: int
    total: int
    cell: str
    elapsed_s: float
    left_s: float | None

    def text(self) -> str:
        left = "?" if self.left_s is None else f"{self.left_s:.0f}s"
        return (
            f"[{self.done}/{self.total}] {self.cell} | elapsed {self.elapsed_s:.0f}s, left ~{left}"
        )


OnProgress = Callable[[ProgressLine], None]


class Progress:
    """Cells done / total, the current cell, elapsed and an estimate (``ProgressLine``).

    The estimate is each pending cell's observed median time once it has run, else its
    planned measuring time plus the median overhead seen so far (process start,
    connection, warm-up), which differ by cell.
    """

    def __init__(self, pending: Sequence[Pending]) -> None:
        # Name the campaign only when there are several (tables, presets): a lone compare's
        # name is a hash, which tells the reader nothing.
        self.named = len({spec.name for spec, _ in pending}) > 1
        self.pending = [_key(spec, run) for spec, run in pending]
        self.planned = {_key(spec, run): expected_cell_s(run.cell.trial) for spec, run in pending}
        self.finished: dict[str, list[float]] = {}
        self.total, self.done = len(pending), 0
        self.started = time.monotonic()

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def line(self, spec: CampaignSpec, run: ScheduledRun[Cell]) -> ProgressLine:
        eta = estimate_remaining_s(self.pending[self.done :], self.finished, self.planned)
        where = f"{spec.name} round" if self.named else "round"
        cell = f"{where} {run.round_index + 1}: {run.key}"
        return ProgressLine(self.done, self.total, cell, self.elapsed_s(), eta)

    def finish(self, spec: CampaignSpec, run: ScheduledRun[Cell], wall_s: float) -> None:
        self.finished.setdefault(_key(spec, run), []).append(wall_s)
        self.done += 1

    def extend(self, pending: Sequence[Pending]) -> None:
        """Runs added on the way (``--until-decided``'s rounds)."""
        self.pending += [_key(spec, run) for spec, run in pending]
        self.planned.update({_key(s, r): expected_cell_s(r.cell.trial) for s, r in pending})
        self.total += len(pending)
        self.named = self.named or len({spec.name for spec, _ in pending}) > 1

    def left_s(self, pending: Sequence[Pending]) -> float:
        """The estimated seconds of ``pending`` runs (the median of each cell seen so far)."""
        keys = [_key(spec, run) for spec, run in pending]
        planned = {
            **self.planned,
            **{_key(s, r): expected_cell_s(r.cell.trial) for s, r in pending},
        }
        return estimate_remaining_s(keys, self.finished, planned) or 0.0


def _key(spec: CampaignSpec, run: ScheduledRun[Cell]) -> str:
    """A cell's key across campaigns (table 1 has the same keys at every RTT)."""
    return f"{spec.name}/{run.key}"


def run_tags(spec: CampaignSpec, run: ScheduledRun[Cell]) -> RunTags:
    return RunTags(
        campaign=spec.name,
        run_id=run.run_id,
        round=run.round_index,
        key=run.key,
        copy=run.copy,
        control=run.key == spec.control_key,
    )


def _batches(pending: Sequence[Pending]) -> list[list[Pending]]:
    """One run at a time, except a together campaign's runs of one round: all at once."""
    batches: list[list[Pending]] = []
    for spec, run in pending:
        last = batches[-1][-1] if batches else None
        same = last is not None and last[0] is spec and last[1].round_index == run.round_index
        if spec.together and same:
            batches[-1].append((spec, run))
        else:
            batches.append([(spec, run)])
    return batches


# The analysis a command decides by: a campaign and its records so far -> what is open.
Judge = Callable[[CampaignSpec, Sequence[Measurement]], Undecided]


@dataclass(frozen=True)
class UntilDecided:
    """``--until-decided``: add rounds to the undecided cells (and the control) until every
    cell is decided or the budget is spent."""

    judge: Judge
    budget: Budget


def run_campaigns(
    specs: Sequence[CampaignSpec],
    records_path: Path,
    *,
    resume: bool = False,
    progress: OnProgress | None = None,
    topology_factory: Callable[[], Topology] = Topology,
    on_record: Callable[[Measurement], None] | None = None,
    skip: Callable[[Trial], bool] | None = None,
    until: UntilDecided | None = None,
    started: float | None = None,
) -> CampaignOutcome:
    """Run what is missing of the campaigns, interleaved within each; records as made.

    ``progress`` sees where the run is as each cell starts; ``on_record`` sees each record
    once it is on disk (a caller that must account for an interrupted run counts there,
    without reading the file back); ``skip`` leaves runs out (see ``pending_runs``).
    ``until`` then adds rounds, one at a time, to the cells it has not decided (with the
    control), recorded like any round, within its budget (``started``: the monotonic time
    the command began, which ``--time-limit`` counts from; default now).
    """
    pending = pending_runs(specs, records_path, resume, skip)
    bar = Progress(pending)
    begun = time.monotonic() if started is None else started
    outcome: UntilOutcome | None = None
    with topology_factory() as topo:
        _run_pending(topo, pending, bar, records_path, progress, on_record)
        if until is not None:
            outcome = _until_decided(
                topo, specs, until, bar, records_path, begun, progress, on_record
            )
    return CampaignOutcome(
        measurements=tuple(campaign_records(records_path, [s.name for s in specs])),
        cells_run=bar.done,
        elapsed_s=bar.elapsed_s(),
        until=outcome,
    )


def _run_pending(
    topo: Topology,
    pending: Sequence[Pending],
    bar: Progress,
    records_path: Path,
    progress: OnProgress | None,
    on_record: Callable[[Measurement], None] | None,
) -> None:
    for batch in _batches(pending):
        spec, first = batch[0]
        if progress is not None:
            progress(bar.line(spec, first))
        started = time.monotonic()
        if spec.together:
            cells = [(run.cell.trial, run_tags(spec, run)) for _, run in batch]
            measurements = topo.measure_together(cells)
        else:
            measurements = [topo.measure(first.cell.trial, tags=run_tags(spec, first))]
        for (spec, run), measurement in zip(batch, measurements, strict=True):
            append_record(records_path, measurement)
            bar.finish(spec, run, (time.monotonic() - started) / len(batch))
            if on_record is not None:
                on_record(measurement)


def _until_decided(
    topo: Topology,
    specs: Sequence[CampaignSpec],
    until: UntilDecided,
    bar: Progress,
    records_path: Path,
    started: float,
    progress: OnProgress | None,
    on_record: Callable[[Measurement], None] | None,
) -> UntilOutcome:
    """Rounds added one at a time to what is still open, until nothing is or the budget is
    spent: the next round would take a cell past ``max_rounds`` or end past the time limit."""
    added = 0
    while True:
        records = campaign_records(records_path, [s.name for s in specs])
        open_, stopped_by, batch = next_added_rounds(specs, records, until)
        if not batch:
            return UntilOutcome(added, open_, stopped_by)
        limit = until.budget.time_limit_s
        if limit is not None and time.monotonic() - started + bar.left_s(batch) > limit:
            why = f"--time-limit {limit:g}s: the next round would end after it"
            return UntilOutcome(added, open_, why)
        bar.extend(batch)
        _run_pending(topo, batch, bar, records_path, progress, on_record)
        added += 1


def next_added_rounds(
    specs: Sequence[CampaignSpec], records: Sequence[Measurement], until: UntilDecided
) -> tuple[dict[str, Mapping[str, int | None]], str, list[Pending]]:
    """Pure: what is open per campaign, why no round is added ("" when one is, or when
    nothing is open), and the runs of the next added round of every campaign with cells
    open (each campaign's next round: one past its last recorded)."""
    open_: dict[str, Mapping[str, int | None]] = {}
    batch: list[Pending] = []
    stopped_by = ""
    for spec in specs:
        mine = [m for m in records if m.tags.campaign == spec.name]
        judged = until.judge(spec, mine)
        if not judged.cells:
            continue
        open_[spec.name] = judged.cells
        next_round = 1 + max((m.tags.round for m in mine), default=spec.rounds - 1)
        if next_round >= until.budget.max_rounds:
            stopped_by = f"--max-rounds {until.budget.max_rounds} reached"
            continue
        keys = [*judged.cells, *judged.with_cells]
        runs = added_round(spec.cells, keys, next_round, spec.seed, spec.control_key)
        batch += [(spec, run) for run in runs]
    return open_, ("" if batch else stopped_by), batch
