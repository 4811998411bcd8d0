"""The orchestrator: every process it starts is stopped (checked by PID), failures are one
line and a non-zero exit, a hung cell is recorded as failed and the campaign goes on, and
bad input exits 2 without a traceback. Real processes over loopback only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from cli_support import kit_here
from conftest import descendants, wait_gone
from relay_support import kill_and_reap

from kit.campaign.runner import run_campaigns
from kit.errors import TopologyError
from kit.plan.campaign import CampaignSpec, Cell
from kit.plan.processes import ServerProcess
from kit.plan.programs import Program, proxy_program
from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload
from kit.results.store import read_records
from kit.topology.processes import spawn
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration

KIT = str(Path(sys.executable).with_name("kit"))
MARK = "KIT_TEST_MARK"


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
    return out


def marked(mark: str) -> list[int]:
    """Live processes whose environment carries ``mark`` (children inherit it)."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get(MARK) == mark and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
    return found


@contextlib.contextmanager
def kit_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run the installed ``kit`` script; yields (process, mark). Killed if still alive."""
    mark = uuid.uuid4().hex
    proc = subprocess.Popen(
        [KIT, *args],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {}), MARK: mark},
    )
    try:
        yield proc, mark
    finally:
        kill_and_reap(proc)
        for pid in marked(mark):  # never leave a leak to the next test
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).kill()


def h2_trial(
    server: ServerConfig | None = None, timeout_s: float = 10.0, size: int = 2 * 1024 * 1024
) -> Trial:
    return Trial(
        link=Link(0.5, 0.5),
        client=ClientConfig(kind="h2", window_mode="static", window_bytes=1 << 20),
        server=server or ServerConfig(),
        workload=Workload(
            bytes_per_stream=size, message_bytes=64 * 1024, timeout_s=timeout_s, warmup=False
        ),
    )


# -- Topology stops what it started, and nothing else ----------------------------------------


@pytest.mark.parametrize("outcome", ["success", "error"])
def test_topology_stops_every_child_by_pid_and_nothing_else(outcome: str) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    pids: list[int] = []
    try:
        with contextlib.suppress(RuntimeError), Topology() as topo:
            topo.proxy(ServerConfig(), Link(1.0, 1.0))
            pids = topo.pids
            assert len(alive(pids)) == 2  # server and proxy
            if outcome == "error":
                raise RuntimeError("a bug in the caller")
        assert wait_gone(set(pids), 5.0) == set()
        assert bystander.poll() is None, "the topology killed a process it did not start"
    finally:
        bystander.kill()
        bystander.wait(5)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_kit_run_on_signal_stops_server_proxy_and_client(
    sig: signal.Signals, tmp_path: Path
) -> None:
    records = tmp_path / "runs.jsonl"
    with kit_cli(
        "run",
        "--rtt",
        "2ms",
        "--client",
        "h2",
        "--window",
        "1MiB",
        "--duration",
        "30s",
        "--records",
        str(records),
    ) as (proc, mark):
        # Each child by the program it runs (the delay line: the compiled one, or the Python one).
        programs = {
            "servers.grpcio_server": ("-m", "servers.grpcio_server"),
            "delay line": ("-m", "kit.delayline"),
            "kit.clients.h2": ("-m", "kit.clients.h2"),
        }
        roles = dict.fromkeys(programs, 0)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(roles.values()):
            for proc_info in psutil.Process(proc.pid).children():
                with contextlib.suppress(psutil.Error):
                    argv = proc_info.cmdline()
                    for role, start in programs.items():
                        compiled = role == "delay line" and argv[0].endswith("/kit-linkd")
                        if tuple(argv[1:3]) == start or compiled:
                            roles[role] = proc_info.pid
            time.sleep(0.05)
        assert all(roles.values()), f"children not all seen: {roles}"
        time.sleep(0.3)  # the client is measuring now
        started = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait(15)
        stop_s = time.monotonic() - started
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert wait_gone(set(roles.values()), 5.0) == set()
        assert marked(mark) == []
    print(f"\n{sig.name}: kit exited {code} in {stop_s:.2f} s; stderr {err.strip()!r}")
    assert code == (130 if sig == signal.SIGINT else 128 + signal.SIGTERM)
    assert stop_s < 10 and "Traceback" not in err
    # Nothing half-written: one whole record that says the run was cut short, and where.
    (m,) = read_records(records).measurements
    assert m.status == "interrupted" and m.result is None
    assert m.error.startswith(f"interrupted by {sig.name} during")


# -- start-up failures: one line, non-zero exit, nothing left behind -------------------------


def test_server_crashing_at_startup_one_line_exit_3_nothing_left(tmp_path: Path) -> None:
    # The child runs `python -m servers.grpcio_server` with the working directory first on
    # sys.path, so a `servers` package here is the one it starts: a real crash at start-up.
    shadow = tmp_path / "servers"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("")
    (shadow / "grpcio_server.py").write_text(
        textwrap.dedent("""\
            import sys
            print("server: cannot allocate the listening socket", file=sys.stderr)
            sys.exit(7)
        """)
    )
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    with kit_cli(
        "run",
        "--rtt",
        "2ms",
        "--client",
        "h2",
        "--window",
        "1MiB",
        "--records",
        str(tmp_path / "runs.jsonl"),
        cwd=tmp_path,
        env={"TMPDIR": str(tmpdir)},
    ) as (proc, mark):
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 3
        assert marked(mark) == []
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kit: error: server failed to start")
    assert "cannot allocate the listening socket" in lines[0]
    assert list(tmpdir.iterdir()) == []  # the topology's work directory was removed too


@pytest.mark.parametrize("command", ["proxy", "serve"])
def test_port_in_use_one_line_exit_3(command: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        args = ["--listen", f"127.0.0.1:{port}"]
        if command == "proxy":
            args += ["--upstream", "127.0.0.1:1"]
        with kit_cli(command, *args) as (proc, mark):
            _, err = proc.communicate(timeout=30)
            assert marked(mark) == []
    lines = err.strip().splitlines()
    assert proc.returncode == 3, err
    assert len(lines) == 1 and lines[0].startswith("kit: error:") and str(port) in lines[0]


def test_spawn_stops_a_child_that_never_says_ready() -> None:
    before = set(descendants())
    started = time.monotonic()
    # A program that ignores its --config and sleeps: never ready.
    sleeper = Program((sys.executable, "-c", "import time; time.sleep(60)"))
    with pytest.raises(TopologyError, match="no ready line within 1 s"):
        spawn("server", sleeper, ServerProcess(), timeout_s=1.0)
    assert time.monotonic() - started < 6
    assert set(descendants()) - before == set()


def test_spawn_reports_a_child_that_exits_before_ready() -> None:
    with pytest.raises(TopologyError) as info:
        spawn("proxy", proxy_program(), {"upstream_port": 1, "upstream_prt": 0})
    assert "proxy failed to start" in str(info.value) and "\n" not in str(info.value)
    assert "upstream_prt" in str(info.value)  # the error line's reason, naming the field


# -- hung cells become failed records; the campaign goes on ----------------------------------


class _ThawOnClose(Topology):
    """A topology with one frozen (SIGSTOPped) server: a server that never answers."""

    frozen: list[int]

    def close(self) -> None:
        for pid in getattr(self, "frozen", []):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)  # so stop() can end it with SIGTERM, quickly
        super().close()


def test_a_server_that_never_answers_fails_its_cell_and_the_campaign_goes_on(
    tmp_path: Path,
) -> None:
    frozen_cfg, live_cfg = ServerConfig(), ServerConfig(window_mode="bdp-off")
    topo = _ThawOnClose()
    frozen = topo.server(frozen_cfg)
    os.kill(frozen.pid, signal.SIGSTOP)
    topo.frozen = [frozen.pid]
    spec = CampaignSpec(
        name="hang",
        rounds=1,
        seed=3,
        control_key="live",
        cells=(
            Cell("frozen", h2_trial(frozen_cfg, timeout_s=1.0)),
            Cell("live", h2_trial(live_cfg)),
        ),
    )
    records = tmp_path / "runs.jsonl"
    started = time.monotonic()
    results = run_campaigns(
        [spec], records, progress=None, topology_factory=lambda: topo
    ).measurements
    elapsed = time.monotonic() - started
    by_key: dict[str, list[bool]] = {}
    for m in results:
        by_key.setdefault(m.tags.key, []).append(m.ok)
    print(f"\ncampaign with a frozen server: {by_key} in {elapsed:.1f} s")
    assert by_key["frozen"] == [False]
    assert by_key["live"] and all(by_key["live"])
    failed = next(m for m in results if not m.ok)
    assert "timeout" in failed.error
    assert len(read_records(records).measurements) == len(results)  # all on disk
    assert wait_gone({frozen.pid}, 5.0) == set()


def test_a_frozen_client_is_killed_at_the_timeout_and_recorded_as_failed() -> None:
    stop = threading.Event()
    frozen: list[int] = []

    def freeze_client() -> None:
        deadline = time.monotonic() + 15
        while not stop.is_set() and time.monotonic() < deadline:
            for pid, cmd in descendants().items():
                if "-m kit.clients" in cmd:
                    os.kill(pid, signal.SIGSTOP)  # a client that hangs for real
                    frozen.append(pid)
                    return
            time.sleep(0.01)

    watcher = threading.Thread(target=freeze_client, daemon=True)
    # The first client seen must be the measured one; 0.5 s: the hard limit past the timeout.
    with Topology(warm_up=False, client_grace_s=0.5) as topo:
        topo.proxy(ServerConfig(), Link(0.5, 0.5))
        watcher.start()
        started = time.monotonic()
        measurement = topo.measure(h2_trial(timeout_s=1.0, size=1 << 30))
        elapsed = time.monotonic() - started
        stop.set()
        watcher.join(5)
    print(f"\nfrozen client: {measurement.status} after {elapsed:.1f} s: {measurement.error}")
    assert frozen, "the client process was never seen"
    assert measurement.status == "failed" and "timed out" in measurement.error
    assert elapsed < 1.0 + 0.5 + 3 * 3.0 + 3.0  # timeout + grace + stop(), bounded
    assert wait_gone(set(frozen), 5.0) == set()


# -- bad input: exit 2, one line, no traceback -----------------------------------------------

BAD_INPUT = [
    ["run", "--rtt", "20"],
    ["run", "--rtt", "fast"],
    ["run", "--rtt", "1e400s"],
    ["run", "--window", "0"],
    ["run", "--window", "3GiB"],
    ["run", "--window", "64KiB", "--mode", "dynamic"],
    ["run", "--message-size", "1.5"],
    ["run", "--streams", "0"],
    ["run", "--timeout", "0s"],
    ["run", "--client", "curl"],
    ["run", "-o", "grpc.http2.bdp_probe"],
    ["run", "--direct"],
    ["proxy", "--listen", "nonsense"],
    ["proxy", "--rtt", "-5ms"],
    ["serve", "--listen", "nowhere"],
]


def test_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    problems = []
    for args in BAD_INPUT:  # in this process: each ends before anything is started
        args = [*args, "--records", str(tmp_path / "r.jsonl")] if args[0] == "run" else args
        proc = kit_here(*args)
        lines = proc.stderr.strip().splitlines()
        ok = (
            proc.returncode == 2
            and "Traceback" not in proc.stderr + proc.stdout
            and len(lines) == 1
            and lines[0].startswith("kit: error:")
        )
        if not ok:
            problems.append(
                f"{args}: exit {proc.returncode}, stderr {proc.stderr.strip()[-300:]!r}"
            )
    assert problems == [], "\n".join(problems)
    assert not (tmp_path / "r.jsonl").exists()


def test_unknown_option_is_a_usage_error_exit_2() -> None:
    with kit_cli("run", "--no-such-option") as (proc, _):
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "Traceback" not in err and "No such option" in err
