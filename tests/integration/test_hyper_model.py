"""The h2 client's hyper model beside real tonic (hyper's adaptive window on), on the frames.

The rule that differed: hyper's ``Ponger`` sees a PING's ack only at its next poll, after h2
has handed over every DATA frame read with it, so those frames count in the sample (on the
wire: a 65535-byte burst, the PONG in one read with 49152 more, the next window
2 x 114687); the model closed the sample at the ack. Both now: windows from 65535, every
step a SETTINGS_INITIAL_WINDOW_SIZE with the connection window raised to the same value,
first steps alike.
"""

from __future__ import annotations

import pytest
from stacks_support import need_built

from kit.clients.h2.policies.hyper import BDP_LIMIT_BYTES, SPEC_WINDOW_BYTES
from kit.plan.modelcheck import CheckCell
from kit.plan.units import MIB
from kit.results.records import Measurement
from kit.topology.topology import Topology

CELL = CheckCell("tonic 100Mbit x 20ms", 20.0, 4 * MIB, "window_over_bdp", 0.30, 100e6, "hyper")
FRAME_BYTES = 16_384

pytestmark = [pytest.mark.integration, pytest.mark.alone]


@pytest.fixture(scope="module")
def pair() -> dict[str, Measurement]:
    need_built("tonic")
    out = {}
    with Topology() as topo:
        for stack in ("real", "model"):
            out[stack] = topo.measure(CELL.trial(stack))
    return out


def steps(m: Measurement) -> list[int]:
    assert m.frames is not None
    return [w.window_bytes for w in m.frames.client.window_growth]


def test_both_ran_against_tonics_server(pair: dict[str, Measurement]) -> None:
    for stack, m in pair.items():
        assert m.ok, f"{stack}: {m.error}"
        assert m.trial.server.kind == "tonic"


def test_both_start_at_the_spec_window(pair: dict[str, Measurement]) -> None:
    for stack, m in pair.items():
        assert m.frames is not None
        assert m.frames.client.settings.get("INITIAL_WINDOW_SIZE") == SPEC_WINDOW_BYTES, stack
        assert m.frames.conn_window_start_bytes == SPEC_WINDOW_BYTES, stack


def test_the_windows_grow_alike(pair: dict[str, Measurement]) -> None:
    """Each step is 2 x a sample, capped at 16 MiB; the first within two frames' worth of
    each other (both count what the first PING's round trip brought), and as many steps
    give or take a few (one more or fewer sample as the transfer's timing falls)."""
    grown = {s: [w for w in steps(m) if w > SPEC_WINDOW_BYTES] for s, m in pair.items()}
    for stack, values in grown.items():
        assert values, f"{stack}: the window never grew"
        assert all(w % 2 == 0 or w == BDP_LIMIT_BYTES for w in values), (stack, values)
        assert values == sorted(values), (stack, values)
    assert abs(grown["model"][0] - grown["real"][0]) <= 2 * 2 * FRAME_BYTES, grown
    assert abs(len(grown["model"]) - len(grown["real"])) <= 3, grown
