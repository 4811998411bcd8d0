"""The stacks users run (grpc-go, grpc-java, grpc-js, tonic), end to end through the real delay line:
a static window bounds throughput, the dynamic window behaves as shipped (the tap sees it), an
upload's confirmed bytes are the bytes sent, a refused option is one line and exit 2, a killed
server fails the run within seconds with its record saved. No process is left behind (the
shared fixture checks every test).

Physics, not speed: a static window W at RTT R moves at most W per R plus what one more
window and the stack's credit rules let through; each stack's README says how it returns
credit, which these bounds allow for.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import REPO, child_of, kit, kit_here
from stacks_support import need_built

from kit.plan.programs import CLIENT_PROGRAMS, SERVER_PROGRAMS, STACK_KINDS, Program
from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload
from kit.plan.units import KIB, MIB
from kit.results.store import read_records
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration

RTT_MS = 20.0
STACKS = list(STACK_KINDS)
# Where each stack returns stream credit (its README, from its sources): the share of a
# static window that moves per RTT is below 1 by about that much; the floor below is loose.
LOWEST_EFFICIENCY = {"grpc-go": 0.35, "grpc-java": 0.25, "grpc-js": 0.25, "tonic": 0.35}


@pytest.fixture
def topo() -> Iterator[Topology]:
    with Topology() as topology:
        yield topology


@pytest.mark.parametrize("stack", STACKS)
def test_a_static_window_bounds_the_stacks_throughput(stack: str, topo: Topology) -> None:
    need_built(stack)
    window = 256 * KIB
    client = ClientConfig(kind=stack, window_mode="static", window_bytes=window)  # type: ignore[arg-type]
    trial = Trial(link=Link.from_rtt(RTT_MS), client=client, workload=Workload(duration_s=1.0))
    m = topo.measure(trial)
    assert m.ok, m.error
    assert m.frames is not None and m.result is not None
    assert m.frames.client.settings["INITIAL_WINDOW_SIZE"] == window  # on the wire, as asked
    assert m.frames.window_final_bytes == window  # static: it never moved
    # No BDP PING: a static window has no estimator. grpc-go's programs use the Static
    # options because WithInitialWindowSize turns the estimator off in 1.85.0 only until
    # upstream re-lands the change that leaves it on (grpc-go #9078, reverted by #9392).
    assert m.frames.client.pings_sent == 0, m.frames.client.pings_sent
    assert m.meta.client_stack.startswith(stack + " ")
    # At most one window per RTT, plus the window in flight when the clock started (5%
    # for the delay line's timer lateness): the window binds.
    rtt_s = RTT_MS / 1000
    ceiling = window * (m.result.elapsed_s / rtt_s + 1) * 1.05
    assert m.result.bytes <= ceiling, (m.result.bytes, ceiling)
    theory = window / rtt_s / MIB
    assert m.throughput_mib_s is not None
    assert m.throughput_mib_s >= LOWEST_EFFICIENCY[stack] * theory, (m.throughput_mib_s, theory)
    assert any(stack in note for note in m.result.notes)  # the note says what was applied


# The stacks whose dynamic window is a fixed one (no estimator as shipped): that window.
FIXED_DYNAMIC_WINDOW = {"grpc-js": 65535, "tonic": 2 * MIB}


@pytest.mark.parametrize("stack", STACKS)
def test_the_stacks_dynamic_window_is_as_shipped(stack: str, topo: Topology) -> None:
    """grpc-go's BDP estimator and grpc-java's auto flow control grow the stream window (SETTINGS
    on the wire, ever larger); grpc-js has no estimator: 65535 throughout; tonic ships hyper's
    adaptive window off: its fixed 2 MiB stream window throughout (on: the test below)."""
    need_built(stack)
    client = ClientConfig(kind=stack)  # type: ignore[arg-type]
    # grpc-js moves 64 KiB per RTT: 2 MiB is enough to see its window stay put.
    workload = Workload(bytes_per_stream=(2 if stack == "grpc-js" else 16) * MIB)
    m = topo.measure(Trial(link=Link.from_rtt(RTT_MS), client=client, workload=workload))
    assert m.ok, m.error
    assert m.frames is not None
    steps = [s.window_bytes for s in m.frames.client.window_growth]
    final = m.frames.window_final_bytes
    assert final is not None
    if stack in FIXED_DYNAMIC_WINDOW:
        assert m.frames.client.settings_changes == 0 and final == FIXED_DYNAMIC_WINDOW[stack]
        assert m.frames.client.pings_sent == 0
        return
    assert len(steps) >= 2 and steps == sorted(steps) and steps[-1] > steps[0], steps
    assert m.frames.client.pings_sent > 0  # the estimator's PINGs
    start = 65535 if stack == "grpc-go" else MIB  # grpc-java starts auto flow control at 1 MiB
    assert final > start and final <= 16 * MIB, final  # both cap their window (16 / 8 MiB)


@pytest.mark.alone  # its PING RTTs are timed by tonic itself: a loaded machine skews them
def test_tonics_adaptive_window_grows_from_64k_to_at_most_16_mib(topo: Topology) -> None:
    """hyper's adaptive window (its BDP estimator, off in tonic as shipped) is the named
    option http2_adaptive_window: on, the windows start at 65535 and grow (SETTINGS on the wire,
    the estimator's PINGs), capped at 16 MiB."""
    need_built("tonic")
    client = ClientConfig(kind="tonic", channel_options=(("http2_adaptive_window", 1),))
    workload = Workload(bytes_per_stream=16 * MIB)
    m = topo.measure(Trial(link=Link.from_rtt(RTT_MS), client=client, workload=workload))
    assert m.ok, m.error
    assert m.frames is not None and m.result is not None
    assert m.frames.client.settings["INITIAL_WINDOW_SIZE"] == 65535
    steps = [s.window_bytes for s in m.frames.client.window_growth]
    final = m.frames.window_final_bytes
    assert len(steps) >= 2 and steps == sorted(steps) and steps[-1] > steps[0], steps
    assert m.frames.client.pings_sent > 0  # the estimator's PINGs
    assert final is not None and 65535 < final <= 16 * MIB, final
    assert any("http2_adaptive_window(true)" in note for note in m.result.notes), m.result.notes
    # The client's own socket tap reports what the delay line's tap saw: the same window
    # steps (its trace is ms since the timed start), and a PING RTT no shorter than the link's.
    assert [w for _, w in m.result.window_trace] == steps
    assert m.result.ping_rtt_ms and min(m.result.ping_rtt_ms) >= RTT_MS * 0.95


@pytest.mark.parametrize("stack", STACKS)
def test_an_upload_to_the_stacks_server_confirms_every_byte(stack: str, topo: Topology) -> None:
    need_built(stack)
    server = ServerConfig(kind=stack, window_mode="static", window_bytes=64 * KIB)  # type: ignore[arg-type]
    client = ClientConfig(kind=stack)  # type: ignore[arg-type]
    workload = Workload(kind="upload", duration_s=0.6)
    m = topo.measure(
        Trial(link=Link.from_rtt(RTT_MS), client=client, server=server, workload=workload)
    )
    assert m.ok, m.error
    assert m.result is not None and m.frames is not None
    assert m.result.bytes == m.result.sent_bytes > 0
    assert m.frames.server.settings["INITIAL_WINDOW_SIZE"] == 64 * KIB
    assert m.meta.server_stack.startswith(stack + " ")
    rtt_s = RTT_MS / 1000
    # The server's window bounds it (plus a message the server may credit extra: grpc-go's
    # and C-core's large-message rule, at most one 256 KiB message per RTT).
    ceiling = (64 * KIB + 256 * KIB) * (m.result.elapsed_s / rtt_s + 1) * 1.05
    assert m.result.bytes <= ceiling


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--client", "grpc-go", "--option", "Foo=1"],
            "grpc-go client: option 'Foo' is not one of",
        ),
        (["--client", "grpc-java", "--option", "windowUpdateRatio=2"], "grpc-java client"),
        (["--client", "grpc-js", "--option", "grpc.use_local_subchannel_pool=0"], "grpc-js client"),
        (["--server", "grpc-go", "--server-option", "Bar=1"], "grpc-go server: option 'Bar'"),
        (["--server", "grpc-js", "--server-mode", "bdp-off"], "the grpc-js server is static or"),
        (["--client", "grpc-go", "--window", "16KiB"], "grpc-go's lower bound"),
        (
            ["--client", "grpc-go", "--window", "1MiB", "--option", "InitialWindowSize=1048576"],
            "grpc-go client: option InitialWindowSize with a static window",
        ),
        (
            [
                "--server",
                "grpc-java",
                "--server-window",
                "1MiB",
                "--server-option",
                "flowControlWindow=65536",
            ],
            "grpc-java server: option flowControlWindow with a static",
        ),
        (["--client", "grpc-js", "--window", "1MiB", "--conn-window", "4MiB"], "grpc-js sets one"),
        (["--client", "grpc-java", "--max-frame-size", "1MiB"], "grpc-java client has no knob"),
        (["--client", "grpc-rust"], "--client: 'grpc-rust' is not one of"),
        (["--server", "h2"], "--server: 'h2' is not one of"),
    ],
)
def test_an_option_a_stack_does_not_have_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    out = kit_here("run", "--rtt", "5ms", "--no-records", *args)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert says in out.stderr and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_a_named_option_reaches_the_stack(tmp_path: Path) -> None:
    """``--option`` with a stack's own name is applied and said (grpc-java's update ratio)."""
    need_built("grpc-java")
    out = kit("run", "--client", "grpc-java", "--rtt", "10ms", "--duration", "0.5s",
              "--option", "windowUpdateRatio=0.75", "--json",
              "--records", str(tmp_path / "r.jsonl"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert row["client_channel_options"] == [["windowUpdateRatio", "0.75"]]
    assert any("0.75" in note for note in row["result_notes"]), row["result_notes"]


SERVER_NEEDLE = {"grpc-go": "grpc-go/bin/server", "grpc-java": "kit-grpc-java.jar server",
                 "grpc-js": "grpc-js/server.js", "tonic": "kit-tonic-server"}  # fmt: skip


@pytest.mark.parametrize("stack", STACKS)
def test_a_killed_stack_server_fails_the_run_within_seconds_with_its_record(
    stack: str, tmp_path: Path
) -> None:
    need_built(stack)
    records = tmp_path / "runs.jsonl"
    cmd = [sys.executable, "-m", "kit.cli", "run", "--client", stack, "--server", stack,
           "--rtt", "20ms", "--duration", "30s", "--records", str(records)]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        server = child_of(proc.pid, SERVER_NEEDLE[stack], 30.0)
        time.sleep(3.0)  # the warm-up run (0.3 s) is over; the measured run is under way
        server.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 4, (out, err)
    assert took < 10.0, f"failed {took:.1f} s after the server was killed"
    assert "Traceback" not in out + err
    saved = read_records(records).measurements
    assert len(saved) == 1 and saved[0].status == "failed" and saved[0].error
    assert "\n" not in saved[0].error


def test_compare_the_stacks_from_the_example_plan(tmp_path: Path) -> None:
    """``examples/stacks.toml``: every stack as a candidate (one a grpc-go server), each run
    ok, each record naming the stack that ran; a static window's theory beside it."""
    for stack in STACKS:
        need_built(stack)
    records = tmp_path / "c.jsonl"
    out = kit("compare", "--file", "examples/stacks.toml", "--rounds", "1", "--bytes", "1MiB",
              "--json", "--records", str(records), timeout_s=240)  # fmt: skip
    assert out.returncode == 0, out.stderr
    runs = read_records(records).measurements
    assert runs and all(m.ok for m in runs), [m.error for m in runs if not m.ok]
    ran = {(m.trial.client.kind, m.meta.client_stack.split()[0], m.meta.server_stack.split()[0])
           for m in runs}  # fmt: skip
    assert ("grpc-go", "grpc-go", "grpc-go") in ran and ("grpc-js", "grpc-js", "grpcio") in ran
    assert {k for k, _, _ in ran} == {"grpcio", *STACKS}
    for m in runs:  # a static window bounds it: at most about a window per RTT
        if m.trial.client.window_bytes is not None and m.throughput_mib_s is not None:
            assert m.throughput_mib_s <= 1.1 * m.theory_mib_s  # type: ignore[operator]


def test_knee_sweeps_a_stacks_static_windows(tmp_path: Path) -> None:
    need_built("grpc-go")
    out = kit("knee", "--client", "grpc-go", "--rtt", "20ms", "--streams", "1",
              "--min-window", "64KiB", "--max-window", "256KiB", "--rounds", "1",
              "--duration", "0.5s", "--json", "--records", str(tmp_path / "k.jsonl"),
              timeout_s=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    runs = read_records(tmp_path / "k.jsonl").measurements
    assert {m.trial.client.kind for m in runs} == {"grpc-go"}
    by_window: dict[int, list[float]] = {}
    for m in runs:
        assert m.ok and m.trial.client.window_bytes and m.throughput_mib_s is not None
        by_window.setdefault(m.trial.client.window_bytes, []).append(m.throughput_mib_s)
    assert sorted(by_window) == [64 * KIB, 128 * KIB, 256 * KIB]
    # Window-bound: 4x the window moves clearly more (2x at least), never above window/RTT.
    assert max(by_window[256 * KIB]) > 2 * max(by_window[64 * KIB])
    for window, speeds in by_window.items():
        assert max(speeds) <= 1.1 * window / (RTT_MS / 1000) / MIB
    # the answer names grpc-go's own setting for the window it found
    (sweep,) = json.loads(out.stdout)["knees"]
    knee = sweep["knee_window_bytes"]
    assert knee in by_window  # a window the sweep set, read from grpc-go's own records
    typed = f"grpc.WithStaticStreamWindowSize({knee}), grpc.WithStaticConnWindowSize({knee})"
    assert f"type: {typed}" in sweep["answer"], sweep["answer"]


@pytest.mark.parametrize("role", ["client", "server"])
def test_a_stack_that_is_not_built_is_refused_in_one_line_before_anything_starts(
    role: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a machine without Node: the stack's program is missing. One line saying what to
    install, exit 3, and no server or delay line was started for it (none is left over: the
    shared fixture checks)."""
    table = CLIENT_PROGRAMS if role == "client" else SERVER_PROGRAMS
    absent = Program(("node", "nowhere.js"), needs=("/nonexistent/node_modules",),
                     hint="make stacks installs it; it needs Node 20 and npm")  # fmt: skip
    monkeypatch.setitem(table, "grpc-js", absent)  # type: ignore[arg-type]
    out = kit_here("run", "--rtt", "5ms", "--no-records", f"--{role}", "grpc-js")
    assert out.returncode == 3, (out.stdout, out.stderr)
    assert out.stderr == (
        f"kit: error: {role} cannot start: /nonexistent/node_modules is missing "
        "(make stacks installs it; it needs Node 20 and npm)\n"
    )
