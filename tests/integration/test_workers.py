"""Client workers in the topology: successive cells of one client program share one worker
process, each trial on connections of its own; a worker that fails a trial (or is gone) is
replaced by a fresh one; a program without workers runs a process per trial; the records
say which. Real server, delay line and clients over loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit
from conftest import descendants, wait_gone
from tables_resume import cell_name, resume_quick_table

from kit.plan.programs import CLIENT_PROGRAMS, ClientKind
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import KIB, MIB
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration


def trial(kind: ClientKind = "h2", timeout_s: float = 10.0, size: int = 2 * MIB) -> Trial:
    return Trial(
        link=Link(0.5, 0.5),
        client=ClientConfig(kind=kind, window_mode="static", window_bytes=MIB),
        workload=Workload(bytes_per_stream=size, message_bytes=64 * KIB, timeout_s=timeout_s),
    )


def clients() -> dict[int, str]:
    return {pid: cmd for pid, cmd in descendants().items() if "kit.clients" in cmd}


@pytest.mark.parametrize("kind", ["h2", "grpcio"])
def test_successive_cells_share_one_worker_and_say_which_trial_each_was(kind: ClientKind) -> None:
    with Topology() as topo:
        first = topo.measure(trial(kind))
        worker = set(clients())
        later = [topo.measure(trial(kind)) for _ in range(2)]
        assert set(clients()) == worker and len(worker) == 1  # the same process throughout
        pids = set(topo.pids)
    records = [first, *later]
    assert all(m.status == "ok" for m in records), [m.error for m in records]
    assert all(m.result is not None and m.result.bytes == 2 * MIB for m in records)
    assert all(m.meta.client_worker for m in records)
    # Trial 1 of the worker was the topology's warm-up run for this server and link.
    assert [m.meta.client_trial for m in records] == [2, 3, 4]
    assert records[0].meta.client_stack.startswith(f"{kind} ")
    assert wait_gone(pids | worker, 5.0) == set()


def test_without_workers_each_trial_is_a_process_of_its_own() -> None:
    with Topology(workers=False) as topo:
        records = [topo.measure(trial()) for _ in range(2)]
        assert clients() == {}  # none waits between trials
    assert all(m.status == "ok" for m in records), [m.error for m in records]
    assert [(m.meta.client_worker, m.meta.client_trial) for m in records] == [(False, 1)] * 2


def test_a_program_without_workers_runs_a_process_per_trial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The h2 client's own program, declared without worker support: it is started with
    # --config for each trial, as every client was before workers.
    plain = replace(CLIENT_PROGRAMS["h2"], worker=False)
    monkeypatch.setitem(CLIENT_PROGRAMS, "h2", plain)
    with Topology(warm_up=False) as topo:
        records = [topo.measure(trial()) for _ in range(2)]
        assert clients() == {}
    assert all(m.status == "ok" for m in records), [m.error for m in records]
    assert [(m.meta.client_worker, m.meta.client_trial) for m in records] == [(False, 1)] * 2


def test_a_worker_gone_while_idle_is_replaced_by_a_fresh_one() -> None:
    with Topology(warm_up=False) as topo:
        assert topo.measure(trial()).meta.client_trial == 1
        (old,) = clients()
        os.kill(old, signal.SIGKILL)
        assert wait_gone({old}, 5.0) == set()
        again = topo.measure(trial())
        (new,) = clients()
    assert again.status == "ok", again.error
    assert again.meta.client_trial == 1 and new != old


def test_a_worker_that_times_out_is_stopped_and_the_next_cell_starts_a_fresh_one() -> None:
    with Topology(warm_up=False, client_grace_s=0.5) as topo:
        assert topo.measure(trial()).status == "ok"
        (frozen,) = clients()
        # A worker that hangs for real, 0.3 s into its next trial.
        freezer = threading.Timer(0.3, os.kill, (frozen, signal.SIGSTOP))
        freezer.start()
        started = time.monotonic()
        hung = topo.measure(trial(timeout_s=1.0, size=1 << 30))
        elapsed = time.monotonic() - started
        freezer.join(5)
        assert wait_gone({frozen}, 5.0) == set()  # stopped by the kit
        after = topo.measure(trial())
        fresh = set(clients())
    assert hung.status == "failed" and "timed out" in hung.error, hung.error
    assert elapsed < 1.0 + 0.5 + 3 * 3.0 + 3.0  # timeout + grace + stop(), bounded
    assert after.status == "ok" and after.meta.client_trial == 1, after.error
    assert fresh and frozen not in fresh


def test_a_new_worker_is_warmed_before_its_first_measured_trial() -> None:
    # The server and delay line were warmed by the h2 client's cell; the grpcio worker,
    # started for the next cell, runs the warm-up of its own first.
    with Topology() as topo:
        records = [topo.measure(trial("h2")), topo.measure(trial("grpcio"))]
    assert all(m.status == "ok" for m in records), [m.error for m in records]
    assert [m.meta.client_trial for m in records] == [2, 2]


@pytest.mark.parametrize(("flags", "worker"), [((), True), (("--fresh-clients",), False)])
def test_kit_run_says_in_its_record_which_client_ran(flags: tuple[str, ...], worker: bool) -> None:
    cmd = [sys.executable, "-m", "kit.cli", "run", "--rtt", "2ms", "--client", "h2",
           "--duration", "0.3s", "--records", "-", *flags]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    meta = json.loads(done.stdout)["meta"]
    # A worker's second trial: its first was the warm-up run; a fresh process runs one.
    assert (meta["client_worker"], meta["client_trial"]) == ((True, 2) if worker else (False, 1))


# -- --fresh-clients on the commands that run many cells --------------------------------------


def _records_of(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r for r in lines if r["kind"] == "measurement"]


def _mib_s(record: dict[str, Any]) -> float:
    result = record["result"]
    return float(result["bytes"]) / result["elapsed_s"] / MIB


@pytest.mark.parametrize("command", ["compare", "knee"])
def test_fresh_clients_give_every_cell_a_process_of_its_own(command: str, tmp_path: Path) -> None:
    """Each measured cell's client is a process of its own (its trial 1), and its throughput
    keeps to the window's bound: W / RTT, +10% for the window's first flight."""
    records = tmp_path / "runs.jsonl"
    common = ("--rtt", "10ms", "--duration", "0.3s", "--records", str(records), "--fresh-clients")
    if command == "compare":
        args = ["compare", *common, "--rounds", "1", "--baseline", "h2:window=64KiB,conn-window=64KiB",
                "--candidate", "h2:window=256KiB,conn-window=256KiB"]  # fmt: skip
    else:
        args = ["knee", *common, "--rounds", "1", "--client", "h2",
                "--min-window", "64KiB", "--max-window", "256KiB"]  # fmt: skip
    done = kit(*args, timeout_s=180)
    assert done.returncode == 0, done.stderr
    measured = [r for r in _records_of(records) if r["status"] == "ok"]
    assert len(measured) >= 3, [r["error"] for r in _records_of(records)]
    for r in measured:
        assert (r["meta"]["client_worker"], r["meta"]["client_trial"]) == (False, 1)
        window = r["trial"]["client"]["window_bytes"]
        assert 0 < _mib_s(r) <= window / 0.010 / MIB * 1.10, (window, _mib_s(r))


def test_fresh_clients_in_a_tables_run(tmp_path: Path) -> None:
    """A stored quick links run finished with --fresh-clients: the cells measured now ran each
    in its own client process, within the link's 100 Mbit/s (+2%)."""
    take_out = {"table6-links/100Mbit-20ms-h2-dynamic", "table6-links/100Mbit-20ms-grpcio-dynamic"}
    resumed = resume_quick_table("links", take_out, tmp_path, flags=("--fresh-clients",))
    new = [r for r in resumed.cells if cell_name(r) in take_out]
    assert len(new) == 2 and all(r["status"] == "ok" for r in new), [r["error"] for r in new]
    for r in new:
        assert (r["meta"]["client_worker"], r["meta"]["client_trial"]) == (False, 1)
        assert 0 < _mib_s(r) * MIB * 8 <= r["trial"]["link"]["rate_down_bits_s"] * 1.02
