"""Every model of another stack's receive-window policy, end to end through `kit run`: one
short download each on a 4 ms link (real server, real delay line, the h2 client).

Physics, with room for a loaded machine: the window a model grants ends above its start
where the model grows it at this size, never above its cap, and throughput never beats
the largest window the sender had over the RTT (+50 % for timing noise on 4 ms).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import kit_here

from kit.clients.h2 import policies
from kit.clients.h2.policies import dotnet, grpc_java, hyper, linux, quic_go, quiche

pytestmark = pytest.mark.integration

MIB = 1 << 20
RTT_S = 0.004
CAPS = {
    "grpc-java": grpc_java.MAX_WINDOW_BYTES,
    "hyper": hyper.BDP_LIMIT_BYTES,
    "dotnet": dotnet.MAX_STREAM_WINDOW_BYTES,
    "quic-go": quic_go.MAX_STREAM_WINDOW_BYTES,
    "quiche": quiche.STREAM_LIMIT_BYTES,
    "linux": linux.RMEM_MAX_BYTES,
}
# grpc-java starts at 1 MiB: a 4 ms loopback link never needs more.
GROWS = {"hyper", "dotnet", "quic-go", "quiche", "linux"}


@pytest.mark.parametrize("policy", sorted(CAPS))
def test_each_model_grows_within_its_cap_and_its_window_bounds_throughput(
    tmp_path: Path, policy: str
) -> None:
    proc = kit_here(
        "run", "--json", "--records", str(tmp_path / "r"), "--client", "h2",
        "--window-policy", policy, "--rtt", "4ms", "--bytes", "2MiB",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["client_window_mode"] == policy
    (window,) = data["result_stream_window_bytes"]
    start, _ = policies.initial_windows(policy)
    assert start <= window <= CAPS[policy]
    if policy in GROWS:
        assert window > start
    bound_mib_s = window / RTT_S / MIB
    assert data["throughput_mib_s"] <= 1.5 * bound_mib_s
