"""A seeded, interleaved schedule of benchmark rounds, resumable after an interruption.

Every round runs every cell once plus extra copies of the control cell, in an order
reshuffled every round from one seeded ``random.Random``. Why: run sequentially, results
improve down the list (the first cell absorbs warm-up and any drift); the spread between
the control's copies measured in the same rounds is the noise floor (``kit.analysis.stats``).

Each run has a stable ``run_id`` (round, key, copy - not its position), so a resumed run
skips exactly what is already in the records file, even when resumed with another seed.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from kit.errors import UsageError
from kit.plan.units import parse_duration_ms


class Keyed(Protocol):
    """Anything with a unique key: a campaign's cells (``kit.plan.campaign.Cell``)."""

    @property
    def key(self) -> str: ...


P = TypeVar("P", bound=Keyed)

DEFAULT_CONTROL_COPIES = 2


@dataclass(frozen=True)
class ScheduledRun(Generic[P]):
    """One run in the schedule: which round, where in it, which cell and which copy."""

    round_index: int
    position: int
    cell: P
    copy: int = 0

    @property
    def key(self) -> str:
        return self.cell.key

    @property
    def run_id(self) -> str:
        """Stable across seeds and reorderings; unique because round and copy bracket the key."""
        return run_id(self.round_index, self.cell.key, self.copy)


def run_id(round_index: int, key: str, copy: int = 0) -> str:
    """The id a run's record carries (``RunTags.run_id``)."""
    return f"r{round_index}:{key}:{copy}"


def validate(cells: Sequence[P], rounds: int, control_key: str, copies: int) -> None:
    if not cells:
        raise UsageError("cells: a schedule needs at least one cell")
    keys = [c.key for c in cells]
    if any(not k for k in keys):
        raise UsageError("cells: every cell needs a non-empty key")
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise UsageError(f"cells: duplicate keys {', '.join(duplicates)}")
    if control_key not in keys:
        raise UsageError(f"control: {control_key!r} is not one of the cells ({', '.join(keys)})")
    if not 1 <= rounds <= 100_000:
        raise UsageError(f"rounds: {rounds} is outside 1..100000")
    if not 2 <= copies <= 64:
        raise UsageError(f"control copies: {copies} is outside 2..64 (the floor needs two)")


def _round_order(
    others: list[P], control: P, copies: int, rng: random.Random
) -> list[tuple[P, int]]:
    """One round's order: others shuffled, control copies dropped into distinct gaps.

    Copies are kept apart when there are enough other cells, because two back-to-back
    copies share one machine moment and understate the noise a candidate sees. This is
    uniform over all such orders, and copy numbers are assigned at random so copy 0 is
    not biased toward the start of the round (where warm-up lives).
    """
    order: list[tuple[P, int]] = [(c, 0) for c in others]
    rng.shuffle(order)
    labels = list(range(copies))
    rng.shuffle(labels)
    if copies <= len(others) + 1:
        gaps = sorted(rng.sample(range(len(others) + 1), copies), reverse=True)
        for gap, label in zip(gaps, labels, strict=True):
            order.insert(gap, (control, label))
        return order
    # Too few other cells to separate every copy: place them anywhere.
    order.extend((control, label) for label in labels)
    rng.shuffle(order)
    return order


def plan_rounds(
    cells: Sequence[P],
    rounds: int,
    seed: int,
    control_key: str,
    control_copies: int = DEFAULT_CONTROL_COPIES,
) -> list[ScheduledRun[P]]:
    """The whole schedule: ``rounds`` rounds, each every cell once plus control copies.

    Deterministic for a seed and a *set* of cells: cells are sorted by key first, so
    building the cell list in another order does not change the schedule.
    """
    validate(cells, rounds, control_key, control_copies)
    ordered = sorted(cells, key=lambda c: c.key)
    control = next(c for c in ordered if c.key == control_key)
    others = [c for c in ordered if c.key != control_key]
    rng = random.Random(seed)
    schedule: list[ScheduledRun[P]] = []
    for r in range(rounds):
        for position, (cell, copy) in enumerate(_round_order(others, control, control_copies, rng)):
            schedule.append(ScheduledRun(r, position, cell, copy))
    return schedule


def remaining(
    schedule: Sequence[ScheduledRun[P]], done_run_ids: Iterable[str]
) -> list[ScheduledRun[P]]:
    """The runs still to do, in schedule order: every run whose id is not done."""
    done = set(done_run_ids)
    return [run for run in schedule if run.run_id not in done]


def unknown_run_ids(schedule: Sequence[ScheduledRun[P]], done_run_ids: Iterable[str]) -> list[str]:
    """Done ids that this schedule does not contain: a sign the plan changed before a resume."""
    known = {run.run_id for run in schedule}
    return sorted({i for i in done_run_ids if i not in known})


def estimate_remaining_s(
    pending: Sequence[str],
    finished_s: Mapping[str, Sequence[float]],
    planned_s: Mapping[str, float] | None = None,
    default_overhead_s: float = 0.8,
) -> float | None:
    """Seconds left for the ``pending`` runs (their cells' keys): each costs its cell's
    median finished duration.

    Per cell, because cells differ by orders of magnitude (a 100 ms RTT cell against
    loopback); the median, because one timed-out run should not skew the estimate. A cell
    not yet seen costs its planned measuring time (``planned_s``) plus the median overhead
    observed so far (a finished cell's duration minus its plan; ``default_overhead_s``
    before any), or without a plan the median over all finished runs (None before any).
    """
    if not pending:
        return 0.0
    per_key = {k: statistics.median(v) for k, v in finished_s.items() if v}
    if planned_s is not None:
        extra = [d - planned_s.get(k, 0.0) for k, v in finished_s.items() for d in v]
        overhead = statistics.median(extra) if extra else default_overhead_s
        unseen = {k: planned_s[k] + max(0.0, overhead) for k in planned_s}
        return sum(per_key.get(key, unseen.get(key, overhead)) for key in pending)
    all_s = [d for durations in finished_s.values() for d in durations]
    if not all_s:
        return None
    fallback = statistics.median(all_s)
    return sum(per_key.get(key, fallback) for key in pending)


# --- rounds added until every cell is decided (``--until-decided``) --------------------------

DEFAULT_MAX_ROUNDS = 20


@dataclass(frozen=True)
class Budget:
    """How far ``--until-decided`` may go: no cell beyond ``max_rounds`` rounds in all, and
    no round started that would end after ``time_limit_s`` seconds of the command (None: no
    limit)."""

    max_rounds: int = DEFAULT_MAX_ROUNDS
    time_limit_s: float | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.max_rounds <= 1000:
            raise UsageError(f"--max-rounds: {self.max_rounds} is outside 1..1000")
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            raise UsageError(f"--time-limit: {self.time_limit_s:g} s must be above 0")

    def describe(self) -> str:
        limit = "" if self.time_limit_s is None else f", --time-limit {self.time_limit_s:g}s"
        return f"--max-rounds {self.max_rounds}{limit}"


def budget_of(until_decided: bool, max_rounds: int | None, time_limit: str | None) -> Budget | None:
    """``--until-decided [--max-rounds N] [--time-limit DURATION]`` -> a Budget (None: not
    asked); a budget option without ``--until-decided`` is refused, not ignored."""
    if not until_decided:
        given = [o for o, v in (("--max-rounds", max_rounds), ("--time-limit", time_limit)) if v]
        if given:
            raise UsageError(f"{' and '.join(given)}: only with --until-decided")
        return None
    seconds = None
    if time_limit is not None:
        seconds = parse_duration_ms(time_limit, option="--time-limit") / 1000.0
    return Budget(max_rounds if max_rounds is not None else DEFAULT_MAX_ROUNDS, seconds)


def added_round(
    cells: Sequence[P],
    keys: Iterable[str],
    round_index: int,
    seed: int,
    control_key: str,
    control_copies: int = DEFAULT_CONTROL_COPIES,
) -> list[ScheduledRun[P]]:
    """One more round for some cells only (those ``keys``) and the control's copies, which
    every round needs (the noise floor and the comparisons pair with it by round). Seeded by
    the campaign's seed and the round, so a rerun draws the same order; its run ids are the
    ones a full round would give those cells (``run_id``), so a resume skips them."""
    wanted = set(keys)
    unknown = sorted(wanted - {c.key for c in cells})
    if unknown:
        raise UsageError(f"added round: {', '.join(unknown)} is not a cell of the campaign")
    ordered = sorted(cells, key=lambda c: c.key)
    control = next(c for c in ordered if c.key == control_key)
    others = [c for c in ordered if c.key in wanted and c.key != control_key]
    rng = random.Random(f"{seed}:added:{round_index}")
    order = _round_order(others, control, control_copies, rng)
    return [ScheduledRun(round_index, i, cell, copy) for i, (cell, copy) in enumerate(order)]


def added_run_ids(
    schedule: Sequence[ScheduledRun[P]], cells: Sequence[P], done_run_ids: Iterable[str]
) -> set[str]:
    """Done ids from rounds added beyond the ``schedule`` (``added_round``): a round past
    the schedule's last, of one of its cells, a copy the cell can have. A resume keeps them;
    anything else it does not know is a sign the plan changed."""
    last = max((run.round_index for run in schedule), default=-1)
    copies = {c.key: 1 for c in cells}
    for run in schedule:
        copies[run.key] = max(copies.get(run.key, 1), run.copy + 1)
    out = set()
    for done in done_run_ids:
        parts = done.split(":")
        if len(parts) < 3 or not parts[0].startswith("r") or not parts[0][1:].isdigit():
            continue
        key, copy = ":".join(parts[1:-1]), parts[-1]
        if int(parts[0][1:]) > last and copy.isdigit() and int(copy) < copies.get(key, 0):
            out.add(done)
    return out


@dataclass(frozen=True)
class Undecided:
    """What one campaign has not decided yet: cell key -> the rounds that would decide it
    (None: no estimate), and the cells its figures also need in every added round (a
    knee's best window: the shares are against it)."""

    cells: Mapping[str, int | None]
    with_cells: tuple[str, ...] = ()


@dataclass(frozen=True)
class UntilOutcome:
    """How ``--until-decided`` ended: rounds added, what is still open per campaign (cell ->
    the rounds it needs) and why it stopped ("" when everything was decided)."""

    rounds_added: int
    still_open: Mapping[str, Mapping[str, int | None]]
    stopped_by: str = ""
