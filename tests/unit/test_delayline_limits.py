"""Pure pieces of the delay line's limits (the quiet log, the total buffer budget) and its
optional scheduling priority."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from kit.delayline.limits import Budget, QuietLog, ensure_fd_room
from kit.delayline.priority import PRIORITY_ENV, PROXY_NICE, raise_priority


def test_quiet_log_lets_one_line_per_interval_through_and_counts_the_rest() -> None:
    now = [0.0]
    lines: list[str] = []
    log = QuietLog(lines.append, interval_s=1.0, clock=lambda: now[0])
    for step in range(3000):  # 3 s of a condition repeating every millisecond
        now[0] = step / 1000
        log("out of fds")
    assert lines[0] == "out of fds"
    assert len(lines) == 3
    assert lines[1] == "out of fds (999 more like it since the last report)"


def test_budget_closes_at_the_cap_and_opens_below_it() -> None:
    budget = Budget(cap_bytes=100)
    budget.add(60)
    assert not budget.full
    budget.add(40)
    assert budget.full and budget.pauses == 1
    budget.release(1)
    assert not budget.full
    budget.add(50)
    budget.release(149)
    assert budget.used_bytes == 0 and budget.peak_bytes == 149 and budget.pauses == 2


def test_fd_room_for_a_modest_cap_needs_no_warning() -> None:
    assert ensure_fd_room(16) is None


def test_priority_is_left_alone_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRIORITY_ENV, raising=False)
    before = os.getpriority(os.PRIO_PROCESS, 0)
    assert raise_priority() is None
    assert os.getpriority(os.PRIO_PROCESS, 0) == before


CAP_SYS_NICE = 23  # linux/capability.h


def _may_raise_priority(nice: int) -> bool:
    """Whether this process may lower its nice value to ``nice``: CAP_SYS_NICE in its
    effective set, or an RLIMIT_NICE ceiling (20 - limit) at or below ``nice``."""
    status = Path("/proc/self/status")
    caps = [line for line in status.read_text().splitlines() if line.startswith("CapEff:")]
    if caps and int(caps[0].split()[1], 16) >> CAP_SYS_NICE & 1:
        return True
    soft, _hard = resource.getrlimit(resource.RLIMIT_NICE)
    return soft == resource.RLIM_INFINITY or 20 - soft <= nice


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_asking_for_priority_is_granted_exactly_when_this_process_may_have_it() -> None:
    code = (
        "import os; from kit.delayline.priority import raise_priority, PROXY_NICE\n"
        "note = raise_priority()\n"
        "print('granted' if os.getpriority(os.PRIO_PROCESS, 0) == PROXY_NICE else note)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, PRIORITY_ENV: "high"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.strip()
    if _may_raise_priority(PROXY_NICE):
        assert out == "granted"
    else:
        assert "needs root or CAP_SYS_NICE" in out


def test_quiet_log_flush_reports_the_held_back_lines_with_the_newest_message() -> None:
    now = [0.0]
    lines: list[str] = []
    log = QuietLog(lines.append, interval_s=1.0, clock=lambda: now[0])
    for count in range(1, 9):
        log(f"refused ({count} so far)")
    log.flush()
    assert lines == [
        "refused (1 so far)",
        "refused (8 so far) (7 more like it since the last report)",
    ]
    log.flush()  # nothing held: nothing more
    assert len(lines) == 2
