"""Shared fixtures: no kit process may outlive the integration test that started it; property
tests run without timing checks.

The check is by PID: every descendant of the pytest process that exists after a test but
did not exist before it must be gone within a few seconds. A survivor is killed (so one
leak does not cascade into later tests) and the test fails naming it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import psutil
import pytest
from hypothesis import HealthCheck, settings

from kit.plan.programs import FORWARDER_PROGRAMS, PROXY_PROGRAMS

# These machines are shared and noisy: a property test is about its property, never about how
# fast examples come (hypothesis's per-example deadline and its "too slow" health check both
# failed here under load, with nothing wrong in the code).
settings.register_profile("kit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kit")

LEFTOVER_GRACE_S = 5.0


def descendants() -> dict[int, str]:
    """PID -> command line of every live process started (transitively) by this one."""
    found: dict[int, str] = {}
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if proc.status() != psutil.STATUS_ZOMBIE:
                found[proc.pid] = " ".join(proc.cmdline())
    return found


def wait_gone(pids: set[int], timeout_s: float) -> set[int]:
    """The PIDs among ``pids`` still alive (not zombies) after ``timeout_s`` (bounded poll)."""
    deadline = time.monotonic() + timeout_s
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        alive = {pid for pid in alive if _alive(pid)}
        if alive:
            time.sleep(0.05)
    return {pid for pid in alive if _alive(pid)}


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture(autouse=True)
def no_leftover_processes(request: pytest.FixtureRequest) -> Iterator[None]:
    """Integration tests: every child process they started is gone when they end."""
    if request.node.get_closest_marker("integration") is None:
        yield
        return
    before = set(descendants())
    yield
    new = {pid: cmd for pid, cmd in descendants().items() if pid not in before}
    survivors = wait_gone(set(new), LEFTOVER_GRACE_S)
    for pid in survivors:
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    assert not survivors, "processes left running: " + "; ".join(
        f"{pid}: {new[pid][:120]}" for pid in sorted(survivors)
    )


# The delay lines every delay-line test runs on: the compiled one (``linkd/``) where built, and
# the Python one (its fallback, and the reference of the schedule's vectors). The compiled
# line not built is a skip, except in CI (``KIT_REQUIRE_STACKS=1``), where it is a failure.
DELAY_LINES = ("python", "compiled")


@pytest.fixture(params=DELAY_LINES)
def line(request: pytest.FixtureRequest) -> str:
    kind = str(request.param)
    why = PROXY_PROGRAMS[kind].missing()
    if why is not None:
        if os.environ.get("KIT_REQUIRE_STACKS") == "1":
            pytest.fail(f"the {kind} delay line: {why}")
        pytest.skip(f"the {kind} delay line: {why}")
    return kind


@pytest.fixture(params=DELAY_LINES)
def forwarder(request: pytest.FixtureRequest) -> str:
    """The packet link's forwarders, likewise: the compiled one (``kit-linkfwd``) where built,
    and the Python one."""
    kind = str(request.param)
    why = FORWARDER_PROGRAMS[kind].missing()
    if why is not None:
        if os.environ.get("KIT_REQUIRE_STACKS") == "1":
            pytest.fail(f"the {kind} forwarder: {why}")
        pytest.skip(f"the {kind} forwarder: {why}")
    return kind
