"""--timeout bounds the whole measurement: a server that never answers fails the trial in
about the timeout, not twice it (warm-up plus measured run) or more."""

from __future__ import annotations

import os
import signal
import time

import pytest

from kit.plan.trial import Link, Trial, Workload
from kit.topology.topology import Topology

pytestmark = [pytest.mark.integration, pytest.mark.alone]


def test_a_silent_server_fails_within_about_the_timeout() -> None:
    timeout_s = 4.0
    trial = Trial(link=Link.from_rtt(2.0), workload=Workload(timeout_s=timeout_s))
    with Topology() as topo:
        server = topo.server(trial.server)
        topo.proxy(trial.server, trial.link)
        os.kill(server.pid, signal.SIGSTOP)  # accepts TCP (the kernel does), never answers
        try:
            t0 = time.monotonic()
            m = topo.measure(trial)
            elapsed = time.monotonic() - t0
        finally:
            os.kill(server.pid, signal.SIGCONT)
    assert m.status == "failed" and "timeout" in m.error, m.error
    # The timeout, plus process start-up (a few seconds on a loaded machine): never twice it.
    assert timeout_s <= elapsed < 2 * timeout_s, elapsed
