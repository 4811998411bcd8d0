"""The h2 client's grpc-java model beside real grpc-java (Netty auto flow control), on the
frames, against the grpc-java server.

Both open 1 MiB windows before any DATA (SETTINGS_INITIAL_WINDOW_SIZE 1048576 and a
connection WINDOW_UPDATE of 1048576 - 65535 = 983041), and on a 100 Mbit/s x 20 ms link
(BDP 250 kB) both grow once the queue inflates the round trip, to at most 8 MiB.
"""

from __future__ import annotations

import pytest
from stacks_support import need_built

from kit.clients.h2.policies.grpc_java import INITIAL_WINDOW_BYTES, MAX_WINDOW_BYTES
from kit.plan.modelcheck import CheckCell
from kit.plan.units import MIB
from kit.results.records import Measurement
from kit.topology.topology import Topology

CELL = CheckCell("java 100Mbit x 20ms", 20.0, 8 * MIB, "window_over_bdp", 0.30, 100e6, "grpc-java")

pytestmark = [pytest.mark.integration, pytest.mark.alone]


@pytest.fixture(scope="module")
def pair() -> dict[str, Measurement]:
    need_built("grpc-java")
    out = {}
    with Topology() as topo:
        for stack in ("real", "model"):
            out[stack] = topo.measure(CELL.trial(stack))
    return out


def test_both_ran_against_grpc_javas_server(pair: dict[str, Measurement]) -> None:
    for stack, m in pair.items():
        assert m.ok, f"{stack}: {m.error}"
        assert m.trial.server.kind == "grpc-java"


def test_both_open_one_mib_before_any_data(pair: dict[str, Measurement]) -> None:
    for stack, m in pair.items():
        assert m.frames is not None
        client = m.frames.client
        assert client.settings.get("INITIAL_WINDOW_SIZE") == INITIAL_WINDOW_BYTES, stack
        assert client.conn_window_updates.first[0] == INITIAL_WINDOW_BYTES - 65_535, stack
        assert m.frames.conn_window_start_bytes == INITIAL_WINDOW_BYTES, stack


def test_final_windows_alike_and_capped(pair: dict[str, Measurement]) -> None:
    finals = {s: m.frames.window_final_bytes for s, m in pair.items() if m.frames is not None}
    for final in finals.values():
        assert final is not None and INITIAL_WINDOW_BYTES <= final <= MAX_WINDOW_BYTES, finals
    ratio = (finals["model"] or 0) / (finals["real"] or 1)
    assert 0.5 <= ratio <= 2.0, finals  # one doubling apart at most
