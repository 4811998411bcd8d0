"""Campaigns as data: named cells (key -> Trial), rounds, seed and the duplicate-control cell.

``kit.campaign`` turns a ``CampaignSpec`` into a seeded, interleaved schedule and runs it;
tables, compare, knee and the presets only build specs.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.errors import UsageError
from kit.plan.schedule import DEFAULT_CONTROL_COPIES, ScheduledRun, plan_rounds, validate
from kit.plan.trial import Trial, theory_mib_s
from kit.plan.units import MIB

MAX_ROUNDS = 1000
# A planning guess of one run's cost beyond its measuring: starting the server, the delay line
# and the client, connecting, warming up (about 1 s a run on a shared 2-core machine).
RUN_SETUP_S = 1.0


@dataclass(frozen=True)
class Cell:
    """One configuration to measure: a unique key and its trial."""

    key: str
    trial: Trial


@dataclass(frozen=True)
class CampaignSpec:
    """What to run: cells, rounds, seed, and the control cell (run twice per round)."""

    name: str
    cells: tuple[Cell, ...]
    control_key: str
    rounds: int = 3
    seed: int = 1
    # Each round's cells run at once (``Topology.measure_together``): for cells that mostly
    # wait, such as connections left idle for keepalive rules to act.
    together: bool = False

    def __post_init__(self) -> None:
        if not self.name or ":" in self.name:
            raise UsageError(f"campaign name {self.name!r} must be non-empty and without ':'")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise UsageError(f"--rounds: {self.rounds} is outside 1..{MAX_ROUNDS}")
        validate(self.cells, self.rounds, self.control_key, DEFAULT_CONTROL_COPIES)

    def schedule(self) -> list[ScheduledRun[Cell]]:
        return plan_rounds(self.cells, self.rounds, self.seed, self.control_key)


def expected_cell_s(trial: Trial) -> float:
    """A planning guess of a cell's measuring time (for progress estimates only)."""
    workload = trial.workload
    if workload.kind == "unary":
        return workload.calls * max(trial.link.rtt_ms, 0.2) / 1000.0
    if workload.bytes_per_stream is None:
        return workload.timed_duration_s(trial.link.rtt_ms)
    theory = theory_mib_s(trial)
    return workload.bytes_per_stream * workload.streams / MIB / theory if theory else 0.3


def expected_campaign_s(spec: CampaignSpec) -> float:
    """A planning guess of a campaign's wall time: every scheduled run (cells x rounds, the
    control's copies included) at its expected cell time plus its setup."""
    return sum(expected_cell_s(run.cell.trial) + RUN_SETUP_S for run in spec.schedule())
