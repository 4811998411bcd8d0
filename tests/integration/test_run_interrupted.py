"""An interrupted `kit run` (SIGINT or SIGTERM, in warm-up or the timed phase) still appends
a record: status "interrupted", with the phase it was in; every child is stopped.

The signal is sent a set time after the run's first child process appeared: a signal that
arrives while Python is still importing the kit (before the run has read its arguments)
stops it with exit 130 and no record, as there is nothing to record yet."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from kit.results.store import read_records

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("signum", "after_s", "phases"),
    [
        (signal.SIGINT, 0.1, ("start-up", "warm-up", "timed")),
        (signal.SIGTERM, 2.5, ("start-up", "warm-up", "timed")),
    ],
)
def test_an_interrupted_run_appends_an_interrupted_record(
    tmp_path: Path, signum: signal.Signals, after_s: float, phases: tuple[str, ...]
) -> None:
    records = tmp_path / "runs.jsonl"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "kit.cli", "run", "--rtt", "2ms", "--duration", "20s"),
            "--records",
            str(records),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first_child(proc.pid, timeout_s=30.0)
        time.sleep(after_s)
    finally:
        proc.send_signal(signum)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err
    (m,) = read_records(records).measurements
    assert m.status == "interrupted" and m.result is None
    assert f"interrupted by {signum.name} during" in m.error
    assert any(phase in m.error for phase in phases), m.error
    assert m.trial.link.rtt_ms == 2.0


def first_child(pid: int, timeout_s: float) -> None:
    """Wait (bounded) until process ``pid`` has started a child."""
    deadline = time.monotonic() + timeout_s
    parent = psutil.Process(pid)
    while not parent.children() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert parent.children(), f"no child process within {timeout_s:g} s"
