"""--keep-awake: one nice-19 busy loop per CPU while measuring, gone afterwards, never counted
as load, and never outliving a kit that was killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from cli_support import REPO, kit_here

pytestmark = [pytest.mark.integration, pytest.mark.alone]

RTT_MS = 5.0


def loops_of(pid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.Process(pid).children(recursive=True):
        try:
            if "os.nice(19)" in " ".join(proc.cmdline()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def nice(proc: psutil.Process) -> int | None:
    try:
        return int(proc.nice())
    except psutil.Error:
        return None


def test_run_keep_awake_end_to_end() -> None:
    # The row's "other cores" is the load of processes that are not the kit's: other work on
    # the machine shows there, as it should; this check needs a machine that is not busy.
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        pytest.skip(f"the machine is busy (load {os.getloadavg()[0]:.1f}): other cores not 0")
    cmd = [sys.executable, "-m", "kit.cli", "run", "--rtt", f"{RTT_MS:g}ms", "--workload",
           "unary", "--calls", "300", "--keep-awake", "--no-records", "--json"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline, loops, niced = time.monotonic() + 30, [], False
        while time.monotonic() < deadline and proc.poll() is None:
            loops = loops_of(proc.pid)
            niced = len(loops) == (os.cpu_count() or 1) and all(nice(p) == 19 for p in loops)
            if niced:
                break
            time.sleep(0.05)
        assert len(loops) == (os.cpu_count() or 1), "one loop per CPU while measuring"
        assert niced, "the loops run at nice 19"
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in loops)
    row = json.loads(out)
    assert row["meta_keep_awake"] is True
    # A unary call crosses the delay line once each way: never faster than the RTT.
    assert row["latency_p50_ms"] >= RTT_MS
    # The loops fill every idle CPU; their CPU is not the machine's load (without that, the
    # machine would read ~2 cores busy and every result would be flagged CPU-saturated).
    assert row["meta_machine_other_cores"] < 1.0, row
    assert row["meta_machine_busy_cores"] < 0.9 * row["meta_machine_cpus"], row


def test_compare_keep_awake_records_it(tmp_path: Path) -> None:
    records = f"{tmp_path}/c.jsonl"
    out = kit_here(
        "compare", "--rtt", "2ms", "--workload", "unary", "--calls", "20", "--rounds", "1",
        "--candidate", "grpcio:grpc.http2.bdp_probe=0", "--keep-awake", "--records", records,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    with open(records, encoding="utf-8") as lines:
        cells = [json.loads(line) for line in lines]
    assert len(cells) == 3 and all(c["meta"]["keep_awake"] is True for c in cells)
    assert all(c["status"] == "ok" for c in cells)


def test_the_loops_end_when_the_kit_is_killed() -> None:
    """SIGKILL leaves no chance to stop them: each loop notices its parent is gone."""
    code = (
        "import time\nfrom kit.topology.awake import KeepAwake\n"
        "k = KeepAwake()\nk.start()\nprint(' '.join(map(str, k.pids)), flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == (os.cpu_count() or 1)
        loops = [psutil.Process(pid) for pid in pids]
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
    _gone, alive = psutil.wait_procs(loops, timeout=5)
    for proc in alive:
        proc.kill()
    assert not alive, f"{len(alive)} loops outlived the killed kit"
