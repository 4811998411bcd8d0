"""The grpc-go model beside grpc-go: the cells ``python -m kit.tools.modelcheck`` runs.

Five cells, each measured with real grpc-go's client ("real") and the h2 client's
``dynamic`` policy ("model"), both against the grpc-go server through the same delay line:
three fixed-size downloads judged by throughput (tolerance 10 %) and two 32 MiB downloads
on a 100 Mbit/s bottleneck judged by the final stream window / BDP (tolerance 30 %).
Every stack runs twice per round (a duplicate control each: their spread is the noise
floor), in a seeded order reshuffled every round, on a quiet machine and with one core
kept busy beside it. A round of one condition is one campaign (``modelcheck-<cond>-r<i>``),
so the busy loop can run for exactly the campaigns of its condition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kit.errors import UsageError
from kit.plan.builder import parse_candidate
from kit.plan.campaign import CampaignSpec, Cell
from kit.plan.trial import Link, Trial, Workload
from kit.plan.units import MIB

Metric = Literal["throughput", "window_over_bdp"]
Condition = Literal["quiet", "busy"]
CONDITIONS: tuple[Condition, ...] = ("quiet", "busy")
STACKS = {
    "real": "grpc-go:server-stack=grpc-go",
    "model": "h2:server-stack=grpc-go",
}
COPY_SUFFIX = "#2"  # the duplicate of a cell (the schedule's control gets its copy itself)
DEFAULT_ROUNDS = 3
CAMPAIGN_PREFIX = "modelcheck"


@dataclass(frozen=True)
class CheckCell:
    """One link and transfer, the figure compared on it and how far the model may be off."""

    name: str
    rtt_ms: float
    transfer_bytes: int
    metric: Metric
    tolerance: float  # |model / real - 1| allowed
    rate_bits_s: float | None = None

    def trial(self, stack: str) -> Trial:
        candidate = parse_candidate(STACKS[stack], stack)
        link = Link(
            delay_up_ms=self.rtt_ms / 2,
            delay_down_ms=self.rtt_ms / 2,
            rate_up_bits_s=self.rate_bits_s,
            rate_down_bits_s=self.rate_bits_s,
        )
        workload = Workload(bytes_per_stream=self.transfer_bytes)
        return Trial(link, candidate.client, candidate.server, workload, label=stack)


CELLS: tuple[CheckCell, ...] = (
    CheckCell("8MiB@20ms", 20.0, 8 * MIB, "throughput", 0.10),
    CheckCell("16MiB@5ms", 5.0, 16 * MIB, "throughput", 0.10),
    CheckCell("16MiB@20ms", 20.0, 16 * MIB, "throughput", 0.10),
    CheckCell("100Mbit x 20ms", 20.0, 32 * MIB, "window_over_bdp", 0.30, 100e6),
    CheckCell("100Mbit x 50ms", 50.0, 32 * MIB, "window_over_bdp", 0.30, 100e6),
)
CONTROL_KEY = f"{CELLS[0].name}/real"


def cell_key(cell: CheckCell, stack: str) -> str:
    return f"{cell.name}/{stack}"


def split_key(key: str) -> tuple[str, str]:
    """A record's key -> (cell name, stack), the duplicate's suffix dropped."""
    name, _, stack = key.removesuffix(COPY_SUFFIX).rpartition("/")
    return name, stack


def campaign_name(condition: Condition, round_index: int) -> str:
    return f"{CAMPAIGN_PREFIX}-{condition}-r{round_index + 1}"


def parse_campaign(name: str) -> tuple[Condition, int] | None:
    """``modelcheck-busy-r2`` -> ("busy", 1); None for another campaign."""
    prefix, _, rest = name.partition("-")
    condition, _, number = rest.partition("-r")
    if prefix != CAMPAIGN_PREFIX or condition not in CONDITIONS or not number.isdigit():
        return None
    return ("quiet" if condition == "quiet" else "busy"), int(number) - 1


def campaign(condition: Condition, round_index: int, seed: int = 1) -> CampaignSpec:
    """One round of one condition: every cell x stack, each with its duplicate."""
    cells: list[Cell] = []
    for cell in CELLS:
        for stack in STACKS:
            key = cell_key(cell, stack)
            cells.append(Cell(key, cell.trial(stack)))
            if key != CONTROL_KEY:
                cells.append(Cell(key + COPY_SUFFIX, cell.trial(stack)))
    return CampaignSpec(
        campaign_name(condition, round_index),
        tuple(cells),
        CONTROL_KEY,
        rounds=1,
        seed=seed * 1000 + round_index * 2 + CONDITIONS.index(condition),
    )


def plan(rounds: int = DEFAULT_ROUNDS, seed: int = 1) -> list[tuple[Condition, CampaignSpec]]:
    """Quiet and busy campaigns alternating round by round, so drift hits both alike."""
    if not 1 <= rounds <= 100:
        raise UsageError(f"--rounds: {rounds} is outside 1..100")
    return [(c, campaign(c, r, seed)) for r in range(rounds) for c in CONDITIONS]
