"""Pure: the grpc-go model beside grpc-go, from the records of ``kit.tools.modelcheck``.

Per cell and condition: real grpc-go's and the model's samples (median, min-max), their
ratio model / real, the noise floor (the wider of the two stacks' duplicate-control
floors, ``kit.analysis.stats.noise_floor``) and a verdict: *within* when the ratio is
inside the tolerance, *outside* when not, *not decided* when the noise floor is wider than
the tolerance (the measurement cannot tell). Per cell, how each stack moved from quiet to
busy, so a model that depends on the machine's load where grpc-go does not says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from kit.analysis.cells import throughput
from kit.analysis.link import window_over_bdp
from kit.analysis.stats import Summary, noise_floor, summarize
from kit.plan.modelcheck import CELLS, CONDITIONS, CheckCell, parse_campaign, split_key
from kit.results.records import Measurement

Samples = dict[int, list[float]]  # round -> the samples of that round (copies)


@dataclass(frozen=True)
class CheckRow:
    cell: CheckCell
    condition: str
    real: Summary | None
    model: Summary | None
    floor_pct: float | None  # None: no round with two copies of each stack
    failed: int

    @property
    def ratio(self) -> float | None:
        if self.real is None or self.model is None or self.real.median == 0:
            return None
        return self.model.median / self.real.median

    @property
    def verdict(self) -> str:
        ratio = self.ratio
        if ratio is None:
            return "no data"
        if self.floor_pct is None or self.floor_pct > self.cell.tolerance * 100:
            return "not decided"
        return "within" if abs(ratio - 1) <= self.cell.tolerance else "outside"


@dataclass(frozen=True)
class LoadShift:
    """How far each stack's median moved from quiet to busy (busy / quiet)."""

    cell: CheckCell
    real: float | None
    model: float | None

    @property
    def note(self) -> str:
        if self.real is None or self.model is None:
            return "not measured in both conditions"
        tol = self.cell.tolerance
        real_moved, model_moved = abs(self.real - 1) > tol, abs(self.model - 1) > tol
        if model_moved and not real_moved:
            return "the model moves with the load, grpc-go does not"
        if real_moved and not model_moved:
            return "grpc-go moves with the load, the model does not"
        if real_moved:
            return "both move with the load"
        return "neither moves beyond the tolerance"


def sample(m: Measurement, cell: CheckCell) -> float | None:
    if not m.ok:
        return None
    return throughput(m) if cell.metric == "throughput" else window_over_bdp(m)


def _collect(
    measurements: Sequence[Measurement],
) -> tuple[dict[tuple[str, str, str], Samples], dict[tuple[str, str], int]]:
    samples: dict[tuple[str, str, str], Samples] = defaultdict(lambda: defaultdict(list))
    failed: dict[tuple[str, str], int] = defaultdict(int)
    cells = {c.name: c for c in CELLS}
    for m in measurements:
        where = parse_campaign(m.tags.campaign)
        name, stack = split_key(m.tags.key)
        if where is None or name not in cells:
            continue
        condition, round_index = where
        value = sample(m, cells[name])
        if value is None:
            failed[(name, condition)] += 1
        else:
            samples[(name, condition, stack)][round_index].append(value)
    return samples, failed


def _floor_pct(by_round: Samples | None) -> float | None:
    if not by_round or not any(len(v) >= 2 for v in by_round.values()):
        return None
    return noise_floor([by_round[r] for r in sorted(by_round)]).floor_pct


def _summary(by_round: Samples | None) -> Summary | None:
    values = [v for r in (by_round or {}).values() for v in r]
    return summarize(values) if values else None


def check_rows(measurements: Sequence[Measurement]) -> list[CheckRow]:
    """One row per cell and condition that has any record."""
    samples, failed = _collect(measurements)
    rows = []
    for cell in CELLS:
        for condition in CONDITIONS:
            real = samples.get((cell.name, condition, "real"))
            model = samples.get((cell.name, condition, "model"))
            if real is None and model is None and not failed.get((cell.name, condition)):
                continue
            floors = [_floor_pct(real), _floor_pct(model)]
            floor = None if None in floors else max(f for f in floors if f is not None)
            rows.append(
                CheckRow(
                    cell,
                    condition,
                    _summary(real),
                    _summary(model),
                    floor,
                    failed.get((cell.name, condition), 0),
                )
            )
    return rows


def load_shifts(rows: Sequence[CheckRow]) -> list[LoadShift]:
    """Per cell measured in both conditions: busy / quiet medians of each stack."""
    by_cell: dict[str, dict[str, CheckRow]] = defaultdict(dict)
    for row in rows:
        by_cell[row.cell.name][row.condition] = row
    shifts = []
    for cell in CELLS:
        pair = by_cell.get(cell.name, {})
        quiet, busy = pair.get("quiet"), pair.get("busy")
        if quiet is None or busy is None:
            continue
        shifts.append(
            LoadShift(
                cell,
                _moved(quiet.real, busy.real),
                _moved(quiet.model, busy.model),
            )
        )
    return shifts


def _moved(quiet: Summary | None, busy: Summary | None) -> float | None:
    if quiet is None or busy is None or quiet.median == 0:
        return None
    return busy.median / quiet.median
