"""Pure: the models beside the stacks they model, from the records of ``kit.tools.modelcheck``.

Per cell and condition (each cell belongs to one pair: grpc-go, hyper / tonic, grpc-java):
the real stack's and the model's samples (median, min-max), their ratio model / real, the
noise floor (the wider of the two stacks' duplicate-control floors,
``kit.analysis.stats.noise_floor``) and a verdict: *within* when the ratio is inside the
tolerance, *outside* when its whole interval lies outside it, *not decided* when the noise
floor is wider than the tolerance (the measurement cannot tell) or the ratio lies outside
by less than its noise over the rounds run: "not decided (needs N rounds)", by the rule
every check against the reference follows (``kit.analysis.tables.checks.decide``). Per
cell, how each stack moved from quiet to busy, so a model that depends on the machine's
load where the real stack does not says so.

Per row also what the model costs the machine (``CpuUse``): its client's core fraction and
CPU per MiB beside the real client's, and in how many runs the client was CPU-bound or the whole
machine saturated (``kit.analysis.cells.cpu_limit``). The Python client parses every 16 KiB
frame in h2 at ~3x grpc-go's CPU per byte; where cores are scarce its PING acks and credit
wait for one (the frames show it: the next BDP PING leaves 1-10 ms after the ack's read,
against < 1 ms for grpc-go), so a row whose model runs were mostly CPU-limited is not a
verdict on the model's rules: it says "CPU-limited" instead of "outside".
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from kit.analysis.cells import cpu_limit, machine_busy_cores, throughput
from kit.analysis.link import delivered_mib_s, window_over_bdp
from kit.analysis.stats import ConfidenceInterval, Summary, noise_floor, ratio_interval, summarize
from kit.analysis.tables.checks import Decision, Figure, decide, ratio_spread_pct, spread_of
from kit.plan.modelcheck import (
    CELLS,
    CONDITIONS,
    PAIRS,
    CheckCell,
    parse_campaign,
    split_key,
)
from kit.plan.units import MIB
from kit.results.records import Measurement

Samples = dict[int, list[float]]  # round -> the samples of that round (copies)


@dataclass(frozen=True)
class CpuUse:
    """What one row's runs cost the machine: the model client's core fraction (median),
    CPU milliseconds per MiB of each client (median), how many of the model's runs were
    CPU-limited (its client near a core, or the machine >= 90 % busy) and the machine's
    busy cores (median over the model's runs) of ``cpus``."""

    model_cores: float
    model_ms_per_mib: float | None
    real_ms_per_mib: float | None
    model_runs: int
    model_limited: int
    model_client_bound: int
    machine_busy_cores: float
    cpus: float

    @property
    def cost_ratio(self) -> float | None:
        """The model client's CPU per MiB over the real client's."""
        if not self.model_ms_per_mib or not self.real_ms_per_mib:
            return None
        return self.model_ms_per_mib / self.real_ms_per_mib

    @property
    def mostly_limited(self) -> bool:
        """At least half of the model's runs had no core to spare (client or machine)."""
        return self.model_runs > 0 and 2 * self.model_limited >= self.model_runs


@dataclass(frozen=True)
class CheckRow:
    cell: CheckCell
    condition: str
    real: Summary | None
    model: Summary | None
    floor_pct: float | None  # None: no round with two copies of each stack
    failed: int
    cpu: CpuUse | None = None
    rounds: int = 1  # the rounds both stacks have a sample in
    # model / real's 95% bootstrap interval over those rounds (None: fewer than 3)
    ci: ConfidenceInterval | None = None

    @property
    def figure(self) -> Figure | None:
        """model / real with its noise: the bootstrap interval over rounds, widened to the one
        the two stacks' spreads give (their samples' own, or the floor when wider)."""
        ratio = self.ratio
        if ratio is None or self.real is None or self.model is None:
            return None
        spreads = [
            spread_of(s.spread_pct if s.n > 1 else None, self.floor_pct)
            for s in (self.real, self.model)
        ]
        return Figure(ratio, ratio_spread_pct(*spreads), self.rounds, self.ci)

    @property
    def decision(self) -> Decision | None:
        """The ratio against 1 +- tolerance by the one rule (``kit.analysis.stats.decide``)."""
        figure = self.figure
        if figure is None:
            return None
        tol = self.cell.tolerance
        return decide(figure, (1 - tol, 1 + tol))

    @property
    def undecided(self) -> bool:
        """Outside the tolerance by less than its interval: more rounds would decide it (a
        floor wider than the tolerance is not decided either, but rounds do not narrow it)."""
        decision = self.decision
        return decision is not None and decision.verdict == "not decided"

    @property
    def ratio(self) -> float | None:
        if self.real is None or self.model is None or self.real.median == 0:
            return None
        return self.model.median / self.real.median

    @property
    def verdict(self) -> str:
        """within | outside | CPU-limited | not decided [(needs N rounds)] | no data.
        "within" also needs a floor no wider than the tolerance (else agreement is noise's);
        "outside" only when the ratio's whole interval lies outside the tolerance."""
        decision = self.decision
        if decision is None:
            return "no data"
        if decision.verdict == "inside":
            floor = self.floor_pct
            decidable = floor is not None and floor <= self.cell.tolerance * 100
            return "within" if decidable else "not decided"
        if decision.verdict == "not decided":
            return "not decided" + ("" if decision.needs is None else f" ({decision.rounds_text})")
        # Off, but on a machine with no core to spare: that measures the machine (the
        # Python client's cost), not the model's rules.
        return "CPU-limited" if self.cpu is not None and self.cpu.mostly_limited else "outside"

    @property
    def cpu_note(self) -> str:
        """How this row depends on the machine, in one sentence ("" unless most of the
        model's runs were CPU-limited)."""
        cpu = self.cpu
        if cpu is None or not cpu.mostly_limited:
            return ""
        where = (
            f"model client CPU-bound in {cpu.model_client_bound}/{cpu.model_runs} runs"
            if cpu.model_client_bound
            else (
                f"machine saturated in {cpu.model_limited}/{cpu.model_runs} model runs "
                f"({cpu.machine_busy_cores:.2f}/{cpu.cpus:g} cores busy)"
            )
        )
        cost = cpu.cost_ratio
        real = PAIRS[self.cell.pair].real_label
        per_mib = (
            f"; the model's client costs {cost:.1f}x {real}'s CPU per MiB "
            f"({cpu.model_ms_per_mib:.1f} vs {cpu.real_ms_per_mib:.1f} ms)"
            if cost is not None
            else ""
        )
        return (
            f"{where}{per_mib}, so its PING acks and credit can wait for a core: "
            "a measure of the machine as much as of the model"
        )


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
        real = PAIRS[self.cell.pair].real_label
        real_moved, model_moved = abs(self.real - 1) > tol, abs(self.model - 1) > tol
        if model_moved and not real_moved:
            return f"the model moves with the load, {real} does not"
        if real_moved and not model_moved:
            return f"{real} moves with the load, the model does not"
        if real_moved:
            return "both move with the load"
        return "neither moves beyond the tolerance"


def sample(m: Measurement, cell: CheckCell) -> float | None:
    if not m.ok:
        return None
    if cell.metric == "delivered":
        return delivered_mib_s(m)
    return throughput(m) if cell.metric == "throughput" else window_over_bdp(m)


Runs = dict[tuple[str, str, str], list[Measurement]]  # (cell, condition, stack) -> ok runs


def _collect(
    measurements: Sequence[Measurement],
) -> tuple[dict[tuple[str, str, str], Samples], dict[tuple[str, str], int], Runs]:
    samples: dict[tuple[str, str, str], Samples] = defaultdict(lambda: defaultdict(list))
    failed: dict[tuple[str, str], int] = defaultdict(int)
    runs: Runs = defaultdict(list)
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
            runs[(name, condition, stack)].append(m)
    return samples, failed, runs


def _floor_pct(by_round: Samples | None) -> float | None:
    if not by_round or not any(len(v) >= 2 for v in by_round.values()):
        return None
    return noise_floor([by_round[r] for r in sorted(by_round)]).floor_pct


def ms_per_mib(m: Measurement) -> float | None:
    """The client's CPU milliseconds per MiB it received in the timed window."""
    result = m.result
    if result is None or not result.bytes or result.cpu_s is None:
        return None
    return result.cpu_s * 1e3 / (result.bytes / MIB)


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def cpu_use(real: Sequence[Measurement], model: Sequence[Measurement]) -> CpuUse | None:
    """The CPU side of one row, from its ok runs (None without a model run)."""
    if not model:
        return None
    client = [c.cpu_fraction for m in model for c in m.cpu if c.role == "client"]
    return CpuUse(
        model_cores=statistics.median(client) if client else 0.0,
        model_ms_per_mib=_median([ms_per_mib(m) for m in model]),
        real_ms_per_mib=_median([ms_per_mib(m) for m in real]),
        model_runs=len(model),
        model_limited=sum(1 for m in model if cpu_limit(m) is not None),
        model_client_bound=sum(1 for m in model if "client" in m.cpu_bound_roles),
        machine_busy_cores=statistics.median(machine_busy_cores(m) for m in model),
        cpus=float(model[0].meta.cpus),
    )


def _summary(by_round: Samples | None) -> Summary | None:
    values = [v for r in (by_round or {}).values() for v in r]
    return summarize(values) if values else None


def check_rows(measurements: Sequence[Measurement]) -> list[CheckRow]:
    """One row per cell and condition that has any record."""
    samples, failed, runs = _collect(measurements)
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
                    cpu_use(
                        runs.get((cell.name, condition, "real"), []),
                        runs.get((cell.name, condition, "model"), []),
                    ),
                    rounds=max(1, len(set(real or {}) & set(model or {}))),
                    ci=ratio_interval(
                        model or {}, real or {}, f"modelcheck:{cell.name}:{condition}"
                    ),
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
