"""How long the cells of tables 1, 3 and 4 run, and their hard timeouts.

Cells are sized by their expected throughput: a timed cell lasts at least 20 RTTs and long
enough to carry ``min_bytes`` at window/RTT, capped so the whole run stays within a few
minutes; a fixed transfer is given ten times its expected time before it is stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kit.plan.trial import ClientConfig, Link, Trial, Workload, theory_mib_s
from kit.plan.units import MIB

MIN_RTTS_PER_CELL = 20


@dataclass(frozen=True)
class CellTiming:
    """How long cells run: timed cells last base_s..max_s (never under 20 RTTs)."""

    base_s: float
    max_s: float
    min_bytes: int
    unary_calls: int
    timeout_floor_s: float = 10.0


DEFAULT_TIMING = CellTiming(base_s=1.0, max_s=1.5, min_bytes=4 * MIB, unary_calls=200)
QUICK_TIMING = CellTiming(base_s=0.3, max_s=0.5, min_bytes=MIB, unary_calls=100)


def timed_duration_s(rtt_ms: float, expected_mib_s: float | None, timing: CellTiming) -> float:
    """base_s, longer for slow cells (min_bytes at the expected rate), capped, >= 20 RTTs."""
    wanted = timing.base_s
    if expected_mib_s:
        wanted = max(wanted, timing.min_bytes / MIB / expected_mib_s)
    return max(min(wanted, timing.max_s), MIN_RTTS_PER_CELL * rtt_ms / 1000.0)


def cell_timeout_s(expected_s: float, timing: CellTiming) -> float:
    return max(timing.timeout_floor_s, 10 * expected_s)


def timed_trial(link: Link, client: ClientConfig, timing: CellTiming, label: str) -> Trial:
    probe = Trial(link=link, client=client)
    duration = timed_duration_s(link.rtt_ms, theory_mib_s(probe), timing)
    workload = Workload(duration_s=duration, timeout_s=cell_timeout_s(duration, timing))
    return Trial(link=link, client=client, workload=workload, label=label)


def fixed_trial(
    link: Link, client: ClientConfig, workload: Workload, timing: CellTiming, label: str
) -> Trial:
    trial = Trial(link=link, client=client, workload=workload, label=label)
    total = (workload.bytes_per_stream or 0) * workload.streams
    expected = theory_mib_s(trial)
    expected_s = total / MIB / expected if expected else 1.0
    return replace(trial, workload=replace(workload, timeout_s=cell_timeout_s(expected_s, timing)))
