"""Slow start after idle on the packet link: the h2 client primes its connection with a
4 MiB download, carries nothing for a second, then the timed phase starts. The kernels'
TCP (Linux, net.ipv4.tcp_slow_start_after_idle on by default) shrinks the congestion window
it grew, so the timed phase ramps again over RTTs; a window kept whole would reach the rate
within about one RTT of its first byte.

Needs root (or user namespaces) and /dev/net/tun (CI has both); skipped with the reason
elsewhere."""

from __future__ import annotations

import dataclasses

import pytest

from kit.analysis.tables.loss import first_byte_ms, to_rate_ms
from kit.delayline.netns import missing
from kit.plan.tables.loss import IDLE_S, IDLE_WINDOW, LOSS_RTT_MS, idle_cell
from kit.topology.topology import Topology

REASON = missing()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.alone,
    pytest.mark.skipif(REASON is not None, reason=REASON or ""),
]


def test_after_an_idle_second_the_timed_phase_ramps_again_over_rtts() -> None:
    trial = idle_cell(quick=True).trial
    trial = dataclasses.replace(trial, workload=dataclasses.replace(trial.workload, duration_s=1.0))
    with Topology() as topo:
        m = topo.measure(trial)
    assert m.ok and m.result is not None and m.frames is not None, m.error
    trace, result = m.frames.delivered_down, m.result
    # The link carried the 4 MiB priming download, then nothing for the idle second, and
    # only then the timed phase (2 ms buckets; the last priming bytes up to a bucket early).
    start = (result.t_start_ns - trace.origin_ns) // trace.bucket_ns
    before = list(trace.bytes[: max(0, start)])
    assert sum(before) >= IDLE_WINDOW, "the priming download crossed the link"
    quiet = len(before) - max(i for i, n in enumerate(before) if n > 1024) - 1
    assert quiet * trace.bucket_ns / 1e9 >= 0.9 * IDLE_S, f"idle {quiet} buckets before the phase"
    first, ramp = first_byte_ms(m), to_rate_ms(m)
    assert first is not None and first >= LOSS_RTT_MS  # the request's way and the data's back
    # Restarted slow start: several RTTs from the first data to 90% of the rate (measured:
    # ~3 RTTs); a congestion window kept through the idle would take about one.
    assert ramp is not None and ramp - first >= 2 * LOSS_RTT_MS, (first, ramp)
