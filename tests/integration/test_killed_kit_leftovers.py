"""A kit killed with SIGKILL cannot clean up: its working directory stays until the next
kit starts, which removes it (its children die with it: PR_SET_PDEATHSIG)."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cli_support import REPO

from kit.topology import leftovers
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration


def _workdir_of(pid: int, deadline_s: float) -> Path | None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        for path in Path(tempfile.gettempdir()).glob(leftovers.PREFIX + "*"):
            if path.is_dir() and leftovers.owner(path) == pid:
                return path
        time.sleep(0.05)
    return None


def test_the_next_kit_removes_a_killed_kits_working_directory() -> None:
    cmd = [sys.executable, "-m", "kit.cli", "run", "--rtt", "5ms", "--client", "h2",
           "--window", "64KiB", "--duration", "10s", "--no-records"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workdir = _workdir_of(proc.pid, 20.0)
        assert workdir is not None, "the run marked its working directory with its pid"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert workdir.exists()  # nothing ran after SIGKILL
        with Topology():
            assert not workdir.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
