"""The models beside the stacks they model: the cells ``python -m kit.tools.modelcheck`` runs.

Three pairs, each a real client and the h2 client running its model, both against the real
stack's own server through the same delay line:

- ``grpc-go``: real grpc-go's client and the h2 client's ``dynamic`` policy; three fixed-size
  downloads judged by throughput (tolerance 10 %) and two 32 MiB downloads on a 100 Mbit/s
  bottleneck judged by the final stream window / BDP (tolerance 30 %).
- ``hyper``: tonic's client with its adaptive window on (``http2_adaptive_window=1``: hyper's
  BDP estimator) and the ``hyper`` policy; a ramp-bound 8 MiB on 100 Mbit/s x 50 ms and
  16 MiB on 1 Gbit/s x 20 ms by throughput, 16 MiB on 100 Mbit/s x 20 and x 50 ms by final
  window / BDP.
- ``grpc-java``: grpc-java's client (Netty, auto flow control) and the ``grpc-java`` policy;
  16 MiB on 100 Mbit/s x 100 ms (its 1 MiB window below the BDP) and 32 MiB on 1 Gbit/s x
  20 ms by *delivered* throughput (what the link carried from its first byte to the client's
  end: a fresh JVM spends 40-120 ms setting up its first call before the request leaves,
  which the client's own clock counts and no window rule causes), 16 MiB on 100 Mbit/s x
  20 and x 50 ms by final window / BDP.

Every stack runs twice per round (a duplicate control each: their spread is the noise
floor), in a seeded order reshuffled every round, on a quiet machine and with one core kept
busy beside it. A round of one condition of one pair is one campaign
(``modelcheck-<cond>-r<i>`` for grpc-go, ``modelcheck-<pair>-<cond>-r<i>`` for the others),
so the busy loop can run for exactly the campaigns of its condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from kit.errors import UsageError
from kit.plan.builder import parse_candidate
from kit.plan.campaign import CampaignSpec, Cell
from kit.plan.trial import Link, Trial, Workload
from kit.plan.units import MIB

Metric = Literal["throughput", "delivered", "window_over_bdp"]
Condition = Literal["quiet", "busy"]
CONDITIONS: tuple[Condition, ...] = ("quiet", "busy")
STACK_ROLES = ("real", "model")
COPY_SUFFIX = "#2"  # the duplicate of a cell (the schedule's control gets its copy itself)
DEFAULT_ROUNDS = 3
CAMPAIGN_PREFIX = "modelcheck"


@dataclass(frozen=True)
class Pair:
    """A real stack and the h2 client's model of its receiver, as candidate specs (both
    against the real stack's server)."""

    name: str  # the pair's name: the model's --window-policy (grpc-go's is ``dynamic``)
    real_label: str
    model_label: str
    real: str
    model: str

    def spec(self, stack: str) -> str:
        return self.real if stack == "real" else self.model


PAIRS: dict[str, Pair] = {
    "grpc-go": Pair(
        "grpc-go",
        "grpc-go",
        "h2 dynamic",
        "grpc-go:server-stack=grpc-go",
        "h2:server-stack=grpc-go",
    ),
    "hyper": Pair(
        "hyper",
        "tonic",
        "h2 hyper",
        "tonic:http2_adaptive_window=1,server-stack=tonic",
        "h2:window-policy=hyper,server-stack=tonic",
    ),
    "grpc-java": Pair(
        "grpc-java",
        "grpc-java",
        "h2 grpc-java",
        "grpc-java:server-stack=grpc-java",
        "h2:window-policy=grpc-java,server-stack=grpc-java",
    ),
}
PAIR_NAMES: tuple[str, ...] = tuple(PAIRS)


@dataclass(frozen=True)
class CheckCell:
    """One link and transfer, the figure compared on it and how far the model may be off."""

    name: str
    rtt_ms: float
    transfer_bytes: int
    metric: Metric
    tolerance: float  # |model / real - 1| allowed
    rate_bits_s: float | None = None
    pair: str = "grpc-go"

    def trial(self, stack: str) -> Trial:
        candidate = parse_candidate(PAIRS[self.pair].spec(stack), stack)
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
    CheckCell("tonic 8MiB@100Mbit x 50ms", 50.0, 8 * MIB, "throughput", 0.10, 100e6, "hyper"),
    CheckCell("tonic 16MiB@1Gbit x 20ms", 20.0, 16 * MIB, "throughput", 0.10, 1e9, "hyper"),
    CheckCell("tonic 100Mbit x 20ms", 20.0, 16 * MIB, "window_over_bdp", 0.30, 100e6, "hyper"),
    CheckCell("tonic 100Mbit x 50ms", 50.0, 16 * MIB, "window_over_bdp", 0.30, 100e6, "hyper"),
    CheckCell("java 16MiB@100Mbit x 100ms", 100.0, 16 * MIB, "delivered", 0.10, 100e6, "grpc-java"),
    CheckCell("java 32MiB@1Gbit x 20ms", 20.0, 32 * MIB, "delivered", 0.10, 1e9, "grpc-java"),
    CheckCell("java 100Mbit x 20ms", 20.0, 16 * MIB, "window_over_bdp", 0.30, 100e6, "grpc-java"),
    CheckCell("java 100Mbit x 50ms", 50.0, 16 * MIB, "window_over_bdp", 0.30, 100e6, "grpc-java"),
)


def pair_cells(pair: str) -> tuple[CheckCell, ...]:
    return tuple(c for c in CELLS if c.pair == pair)


def control_key(pair: str) -> str:
    """The first cell's real stack: the campaign's control."""
    return cell_key(pair_cells(pair)[0], "real")


CONTROL_KEY = "8MiB@20ms/real"  # grpc-go's


def cell_key(cell: CheckCell, stack: str) -> str:
    return f"{cell.name}/{stack}"


def split_key(key: str) -> tuple[str, str]:
    """A record's key -> (cell name, stack), the duplicate's suffix dropped."""
    name, _, stack = key.removesuffix(COPY_SUFFIX).rpartition("/")
    return name, stack


def campaign_name(condition: Condition, round_index: int, pair: str = "grpc-go") -> str:
    middle = "" if pair == "grpc-go" else f"{pair}-"
    return f"{CAMPAIGN_PREFIX}-{middle}{condition}-r{round_index + 1}"


def parse_campaign(name: str) -> tuple[Condition, int] | None:
    """``modelcheck-busy-r2`` or ``modelcheck-hyper-busy-r2`` -> ("busy", 1); None for
    another campaign (the pair is in the cells' names)."""
    prefix, _, rest = name.partition("-")
    for pair in PAIR_NAMES:
        if pair != "grpc-go" and rest.startswith(pair + "-"):
            rest = rest.removeprefix(pair + "-")
            break
    condition, _, number = rest.partition("-r")
    if prefix != CAMPAIGN_PREFIX or condition not in CONDITIONS or not number.isdigit():
        return None
    return ("quiet" if condition == "quiet" else "busy"), int(number) - 1


def campaign(
    condition: Condition, round_index: int, seed: int = 1, pair: str = "grpc-go"
) -> CampaignSpec:
    """One round of one condition of one pair: every cell x stack, each with its duplicate."""
    control = control_key(pair)
    cells: list[Cell] = []
    for cell in pair_cells(pair):
        for stack in STACK_ROLES:
            key = cell_key(cell, stack)
            cells.append(Cell(key, cell.trial(stack)))
            if key != control:
                cells.append(Cell(key + COPY_SUFFIX, cell.trial(stack)))
    offset = PAIR_NAMES.index(pair) * 100_000
    return CampaignSpec(
        campaign_name(condition, round_index, pair),
        tuple(cells),
        control,
        rounds=1,
        seed=offset + seed * 1000 + round_index * 2 + CONDITIONS.index(condition),
    )


def parse_pairs(text: str) -> tuple[str, ...]:
    """``--pair hyper,grpc-java`` (or ``all``) -> the pairs, in the order given."""
    names = PAIR_NAMES if text.strip() == "all" else tuple(p.strip() for p in text.split(","))
    for name in names:
        if name not in PAIRS:
            raise UsageError(f"--pair: {name!r} is not one of {', '.join(PAIR_NAMES)} (or all)")
    if not names or len(set(names)) != len(names):
        raise UsageError(f"--pair: {text!r} names no pair or one twice")
    return names


def plan(
    rounds: int = DEFAULT_ROUNDS, seed: int = 1, pairs: Sequence[str] = ("grpc-go",)
) -> list[tuple[Condition, CampaignSpec]]:
    """Quiet and busy campaigns alternating round by round (each pair's in turn), so drift
    hits both conditions alike."""
    if not 1 <= rounds <= 100:
        raise UsageError(f"--rounds: {rounds} is outside 1..100")
    return [(c, campaign(c, r, seed, p)) for r in range(rounds) for c in CONDITIONS for p in pairs]
