"""The h2 client's grpc-go model beside real grpc-go, on the frames (not on speed).

The rule that differed: grpc-go's BDP estimator runs from the connection's start, so the
warm-up call's reply already triggers a BDP PING (its first RTT sample), preceded by a
connection WINDOW_UPDATE returning the bytes of that reply; the model used to start at the
timed phase, so its first connection update was those bytes plus a quarter window
(16384 + 11) and the warm-up carried no PING. Both now: the same first update, a PING per
sample from the warm-up on, and a first window step of 2 x 65535 (the first sample is the
whole initial window) within one frame.
"""

from __future__ import annotations

import pytest
from stacks_support import need_built

from kit.plan.modelcheck import CheckCell
from kit.plan.units import MIB
from kit.results.records import Measurement
from kit.topology.topology import Topology

CELL = CheckCell("8MiB@20ms", 20.0, 8 * MIB, "throughput", 0.10)
FRAME_BYTES = 16_384

pytestmark = [pytest.mark.integration, pytest.mark.alone]


@pytest.fixture(scope="module")
def pair() -> dict[str, Measurement]:
    need_built("grpc-go")
    out = {}
    with Topology() as topo:
        for stack in ("real", "model"):
            out[stack] = topo.measure(CELL.trial(stack))
    return out


def test_both_ran(pair: dict[str, Measurement]) -> None:
    for stack, m in pair.items():
        assert m.ok, f"{stack}: {m.error}"


def test_first_connection_update_is_the_warm_up_reply(pair: dict[str, Measurement]) -> None:
    firsts = {}
    for stack, m in pair.items():
        assert m.frames is not None
        firsts[stack] = m.frames.client.conn_window_updates.first[0]
    assert firsts["model"] == firsts["real"], firsts
    assert firsts["real"] < FRAME_BYTES  # a small reply's bytes, not a quarter window


def test_first_window_step_matches(pair: dict[str, Measurement]) -> None:
    steps = {}
    for stack, m in pair.items():
        assert m.frames is not None
        grown = [w.window_bytes for w in m.frames.client.window_growth if w.window_bytes > 65_535]
        assert grown, f"{stack}: the window never grew"
        steps[stack] = grown[0]
    assert abs(steps["model"] - steps["real"]) <= FRAME_BYTES, steps
    assert abs(steps["real"] - 2 * 65_535) <= 2 * FRAME_BYTES, steps


def test_pings_per_step_alike(pair: dict[str, Measurement]) -> None:
    """One BDP PING per sample from the warm-up on: the counts differ by a few at most (one
    more or fewer sample per doubling, as the transfer's timing falls)."""
    pings = {s: m.frames.client.pings_sent for s, m in pair.items() if m.frames is not None}
    assert abs(pings["model"] - pings["real"]) <= max(4, pings["real"] // 2), pings
