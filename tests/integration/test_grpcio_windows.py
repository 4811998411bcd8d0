"""grpcio's window behaviour as seen on the wire by the delay line's frame tap.

These pin down the C-core facts the kit's reports rely on, with our grpcio version.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kit.plan.grpc_args import CCORE_EXTRA_CREDIT_BYTES
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import MIB
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration

RTT_MS = 20.0


@pytest.fixture
def topo() -> Iterator[Topology]:
    with Topology() as topology:
        yield topology


def test_dynamic_client_starts_at_4_mib_and_grows(topo: Topology) -> None:
    trial = Trial(link=Link.from_rtt(RTT_MS), workload=Workload(duration_s=1.0))
    m = topo.measure(trial)
    assert m.ok, m.error
    frames = m.frames
    assert frames is not None
    assert frames.client.settings["INITIAL_WINDOW_SIZE"] == 4 * MIB
    assert frames.client.conn_window_updates.first[0] == 4 * MIB - 65535
    assert frames.client.pings_sent > 0
    growth = [step.window_bytes for step in frames.client.window_growth]
    assert len(growth) >= 2 and growth == sorted(growth) and growth[-1] > growth[0]
    times = [step.t_ns for step in frames.client.window_growth]
    assert all(t is not None for t in times) and times == sorted(times)  # timestamped


def test_static_window_is_on_the_wire_and_bounded(topo: Topology) -> None:
    window = 64 * 1024
    client = ClientConfig(window_mode="static", window_bytes=window)
    trial = Trial(link=Link.from_rtt(RTT_MS), client=client, workload=Workload(duration_s=1.0))
    m = topo.measure(trial)
    assert m.ok, m.error
    frames, result = m.frames, m.result
    assert frames is not None and result is not None
    assert frames.client.settings["INITIAL_WINDOW_SIZE"] == window
    assert frames.client.pings_sent == 0  # bdp_probe=0: no BDP pings
    # C-core may add per-message extra credit (min(missing bytes, 1 MiB)), never more:
    # the window plus that credit per RTT, plus one initial window, bounds the transfer.
    elapsed = result.elapsed_s
    rtt_s = RTT_MS / 1000
    ceiling = (window + min(trial.workload.message_bytes, CCORE_EXTRA_CREDIT_BYTES)) * (
        elapsed / rtt_s + 1
    )
    assert result.bytes <= ceiling * 1.05
    # ... and the window does bind: far below loopback speed.
    assert m.throughput_mib_s is not None and m.throughput_mib_s < 100
