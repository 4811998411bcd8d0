"""The process protocol's conformance test: every client, server and delay line the kit can
start, in whatever language, passes the same checks (docs/process-protocol.md), and every
client and server program decodes the worker contract (protos/worker.proto) the same way.

Parametrised over the topology's program tables (``kit.topology.programs``): a new stack is
checked by adding its programs there. Each process is run as the kit runs it (argv
``--config '<JSON>'``) and its stdout, stderr and exit code are read raw, so these checks
hold for the protocol itself, not for the kit's reading of it. Real processes over loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import grpc
import psutil
import pytest
from hostile_support import hold
from relay_support import kill_and_reap
from stacks_support import need_built

from kit._proto import throughput_pb2 as pb
from kit.plan.processes import ClientProcess, ProxyConfig, ServerProcess
from kit.plan.programs import (
    CLIENT_PROGRAMS,
    PROXY_PROGRAMS,
    SERVER_PROGRAMS,
    Program,
    proxy_program,
)
from kit.plan.stack_options import STACK_OPTIONS
from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload
from kit.plan.units import KIB, MIB
from kit.protocol import Result, config_argv, config_text, decode_result
from kit.results.client import ClientResult
from kit.results.codec import from_json
from kit.results.records import ProxyTotals
from kit.results.server import ServerResult
from kit.topology.processes import Child, spawn
from kit.topology.workers import Worker

pytestmark = pytest.mark.integration

STOP_WITHIN_S = 1.0
SIGTERM_EXIT = 128 + signal.SIGTERM
CLIENT_KINDS = sorted(CLIENT_PROGRAMS)
SERVER_KINDS = sorted(SERVER_PROGRAMS)


# -- running a program the way the kit does, and reading what it says ------------------------


@contextlib.contextmanager
def started(
    program: Program, config_args: list[str] | list[bytes], stdin: int = subprocess.DEVNULL
) -> Iterator[subprocess.Popen[str]]:
    """The program with these arguments; a worker's stdin is a pipe (``subprocess.PIPE``)."""
    proc = subprocess.Popen(
        [*program.argv, *config_args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        kill_and_reap(proc)


def sigterm(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """SIGTERM, then everything it wrote; it must have ended within ``STOP_WITHIN_S``."""
    proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    out, err = proc.communicate(timeout=10)
    took = time.monotonic() - signalled
    no_children_left(proc.pid)
    assert took < STOP_WITHIN_S, f"{took:.2f} s after SIGTERM"
    return out, err


def run_to_end(
    program: Program, config_args: list[str] | list[bytes], timeout_s: float = 60
) -> tuple[int, list[dict[str, Any]], str]:
    """Exit code, every stdout line as JSON (each must be JSON), stderr."""
    with started(program, config_args) as proc:
        out, err = proc.communicate(timeout=timeout_s)
        return proc.returncode, protocol_lines(out), err


def protocol_lines(out: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert all(isinstance(line, dict) for line in lines), out
    return lines


def read_ready(proc: subprocess.Popen[str], timeout_s: float = 20) -> dict[str, Any]:
    """The first stdout line, which must be the ready line (bounded wait)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=max(0.0, deadline - time.monotonic())), "no ready line"
    ready = json.loads(proc.stdout.readline())
    assert ready["ready"] is True and ready["pid"] == proc.pid, ready
    assert isinstance(ready["stack"], str) and ready["stack"], ready
    assert isinstance(ready["version"], str) and ready["version"], ready
    return dict(ready)


def assert_ready(line: dict[str, Any], pid: int) -> None:
    assert line["ready"] is True and line["pid"] == pid, line
    assert line["stack"] and line["version"], line


def assert_one_error(lines: list[dict[str, Any]], code: int, err: str) -> dict[str, Any]:
    """Exactly one error line, the last, with the process's exit code; no traceback."""
    errors = [line for line in lines if "error" in line]
    assert len(errors) == 1 and lines[-1] is errors[0], lines
    assert set(errors[0]) == {"error", "exit_code"} and errors[0]["exit_code"] == code, lines
    assert "\n" not in errors[0]["error"] and errors[0]["error"], lines
    assert "Traceback" not in err, err
    return errors[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ping(port: int) -> bytes:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(
            "/kit.throughput.Throughput/Ping",
            request_serializer=pb.PingRequest.SerializeToString,
            response_deserializer=pb.PingReply.FromString,
        )
        reply = call(pb.PingRequest(payload=b"conformance"), timeout=10)
    return bytes(reply.payload)


def no_children_left(pid: int) -> None:
    with contextlib.suppress(psutil.NoSuchProcess):
        assert psutil.Process(pid).children(recursive=True) == []


@pytest.fixture(scope="module")
def server_port() -> Iterator[int]:
    server = spawn("server", SERVER_PROGRAMS["grpcio"], ServerProcess())
    try:
        yield server.port
    finally:
        server.close()


def client_job(kind: str, port: int, workload: Workload, host: str = "127.0.0.1") -> str:
    trial = Trial(client=ClientConfig(kind=kind), workload=workload)  # type: ignore[arg-type]
    return config_text(ClientProcess(target_host=host, target_port=port, trial=trial))


def client_config(kind: str, port: int, workload: Workload, host: str = "127.0.0.1") -> list[str]:
    return ["--config", client_job(kind, port, workload, host)]


def edited(job_text: str, **fields: Any) -> str:
    """A job as JSON with some top-level fields replaced (None: removed)."""
    data = json.loads(job_text)
    for name, value in fields.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    return json.dumps(data)


# -- clients -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_a_client_says_ready_then_one_result_that_decodes(kind: str, server_port: int) -> None:
    need_built(kind)
    workload = Workload(message_bytes=64 * KIB, bytes_per_stream=MIB, timeout_s=30)
    with started(CLIENT_PROGRAMS[kind], client_config(kind, server_port, workload)) as proc:
        out, err = proc.communicate(timeout=60)
    lines = protocol_lines(out)
    assert proc.returncode == 0 and len(lines) == 2, (lines, err)
    assert_ready(lines[0], proc.pid)
    assert lines[0].get("port", 0) == 0
    assert set(lines[1]) == {"result"}
    result = decode_result(ClientResult, lines[1]["result"], "result")
    assert result.client == kind
    assert result.bytes == MIB and result.messages == 16  # exactly what the trial asked for
    assert 0 < result.elapsed_s < 60
    assert result.throughput_mib_s == pytest.approx(1 / result.elapsed_s, rel=0.01)


GOOD_JOB = client_job("h2", 1, Workload(bytes_per_stream=MIB))
# Bad jobs every program refuses the same way: one error line, exit 2, saying so. What each
# must contain: "bad job" (the library's own words follow), and a field the job named.
BAD_JOBS: list[tuple[str, str]] = [
    ("{not json", "bad job"),
    (edited(GOOD_JOB, nonsense=1), "nonsense"),
    (edited(GOOD_JOB, target_port="eighty"), "bad job"),
    (edited(GOOD_JOB, connections=-1), "bad job"),
    (edited(GOOD_JOB, download=None), "bad job"),  # no work to do
    ('{"target_port": 1, "download": {"streams": 1}, "windows": {"static": "yes"}}', "bad job"),
]


@pytest.mark.parametrize("kind", CLIENT_KINDS)
@pytest.mark.parametrize(("config", "says"), [*BAD_JOBS, ("", "usage")])
def test_a_client_refuses_a_bad_job_with_one_line_and_exit_2(
    kind: str, config: str, says: str
) -> None:
    need_built(kind)
    args = ["--config", config] if config else []
    code, lines, err = run_to_end(CLIENT_PROGRAMS[kind], args)
    assert code == 2 and len(lines) == 1, (lines, err)
    assert says in assert_one_error(lines, 2, err)["error"]


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_a_client_refuses_bytes_that_are_not_utf8_with_one_line_and_exit_2(kind: str) -> None:
    need_built(kind)
    job = GOOD_JOB.replace('"127.0.0.1"', '"127.0.0.\udcff"').encode("utf-8", "surrogateescape")
    code, lines, err = run_to_end(CLIENT_PROGRAMS[kind], [b"--config", job])
    assert code == 2 and len(lines) == 1, (lines, err)
    assert "not UTF-8" in assert_one_error(lines, 2, err)["error"]


@pytest.mark.parametrize("kind", CLIENT_KINDS)
@pytest.mark.parametrize("host", ["127.0.0.1", "no-such-host.invalid"])
def test_a_client_that_cannot_reach_its_target_exits_4_with_one_line(kind: str, host: str) -> None:
    need_built(kind)
    workload = Workload(bytes_per_stream=MIB, timeout_s=2)
    port = free_port()
    started_at = time.monotonic()
    code, lines, err = run_to_end(CLIENT_PROGRAMS[kind], client_config(kind, port, workload, host))
    assert code == 4, (lines, err)
    error = assert_one_error(lines, 4, err)["error"]
    assert host in error, error  # it names what it could not reach
    assert time.monotonic() - started_at < 15  # the trial's 2 s timeout bounds the wait


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_a_client_idles_with_its_connections_open_before_the_work(
    kind: str, server_port: int
) -> None:
    """The job's ``idle_s``: after the warm-up every connection stays open with no call on
    it (keepalive and ping rules act there), then the work; the idle gap is not timed."""
    need_built(kind)
    workload = Workload(kind="unary", calls=5, timeout_s=30, idle_s=1.5)
    started_at = time.monotonic()
    with started(CLIENT_PROGRAMS[kind], client_config(kind, server_port, workload)) as proc:
        read_ready(proc)
        out, err = proc.communicate(timeout=60)
    took = time.monotonic() - started_at
    lines = protocol_lines(out)
    assert proc.returncode == 0 and set(lines[-1]) == {"result"}, (lines, err)
    result = decode_result(ClientResult, lines[-1]["result"], "result")
    assert result.messages == 5 and result.elapsed_s < 1.5  # the gap is outside the timing
    assert took >= 1.5, took


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_sigterm_ends_a_client_within_a_second_with_one_error_line(
    kind: str, server_port: int
) -> None:
    need_built(kind)
    workload = Workload(duration_s=30, timeout_s=60)
    with started(CLIENT_PROGRAMS[kind], client_config(kind, server_port, workload)) as proc:
        read_ready(proc)
        time.sleep(1.0)  # connected, warmed and moving data
        assert proc.poll() is None
        out, err = sigterm(proc)
    assert proc.returncode == SIGTERM_EXIT, err
    error = assert_one_error(protocol_lines(out), SIGTERM_EXIT, err)
    assert "SIGTERM" in error["error"]


# -- servers and the delay line: they listen, serve, and stop cleanly -------------------------


# The delay lines by the stack their ready line names: the Python one and the compiled one.
DELAY_LINES = {"kit.delayline": "python", "kit-linkd": "compiled"}


def _listening(role: str, kind: str, upstream: int) -> tuple[Program, Any]:
    if role == "proxy":
        config = ProxyConfig(upstream_port=upstream, link=Link.from_rtt(2))
        return PROXY_PROGRAMS[DELAY_LINES[kind]], config
    return SERVER_PROGRAMS[kind], ServerProcess(config=ServerConfig(kind=kind))  # type: ignore[arg-type]


def need_listener(role: str, kind: str) -> None:
    """A stack's server, or a delay line, must be built (skipped outside CI when not)."""
    if role != "proxy":
        need_built(kind)
        return
    why = PROXY_PROGRAMS[DELAY_LINES[kind]].missing()
    if why is not None:
        if os.environ.get("KIT_REQUIRE_STACKS") == "1":
            pytest.fail(f"{kind}: {why}")
        pytest.skip(f"{kind}: {why}")


LISTENERS = [("server", k) for k in SERVER_KINDS] + [("proxy", k) for k in DELAY_LINES]


@pytest.mark.parametrize(("role", "kind"), LISTENERS)
def test_a_listener_serves_then_stops_on_sigterm_with_its_result(
    role: str, kind: str, server_port: int
) -> None:
    need_listener(role, kind)
    program, config = _listening(role, kind, server_port)
    with started(program, config_argv(config)) as proc:
        ready = read_ready(proc)
        assert ready["port"] > 0
        assert ping(ready["port"]) == b"conformance"  # a real call, through it
        out, err = sigterm(proc)
    lines = protocol_lines(out)
    assert proc.returncode == 0 and len(lines) == 1 and set(lines[0]) == {"result"}, (lines, err)
    if role == "proxy":
        totals = from_json(ProxyTotals, lines[0]["result"], "result")
        assert totals.connections >= 1 and totals.bytes_down > 0
    else:
        assert decode_result(ServerResult, lines[0]["result"], "result").rpcs >= 1


@pytest.mark.parametrize(("role", "kind"), LISTENERS)
@pytest.mark.parametrize(
    "config", ['{"listen_port": -1}', '{"listen_port": 1, "nonsense": 1}', "{not json"]
)
def test_a_listener_refuses_a_bad_config_with_one_line_and_exit_2(
    role: str, kind: str, config: str
) -> None:
    need_listener(role, kind)
    program, _ = _listening(role, kind, 1)
    code, lines, err = run_to_end(program, ["--config", config])
    assert code == 2 and len(lines) == 1, (lines, err)
    assert_one_error(lines, 2, err)


@pytest.mark.parametrize(("role", "kind"), LISTENERS)
def test_a_listener_refuses_bytes_that_are_not_utf8_with_one_line_and_exit_2(
    role: str, kind: str
) -> None:
    need_listener(role, kind)
    program, config = _listening(role, kind, 1)
    job = config_text(config).replace('"127.0.0.1"', '"127.0.0.\udcff"')
    code, lines, err = run_to_end(program, [b"--config", job.encode("utf-8", "surrogateescape")])
    assert code == 2 and len(lines) == 1, (lines, err)
    assert "not UTF-8" in assert_one_error(lines, 2, err)["error"]


@pytest.mark.parametrize(("role", "kind"), LISTENERS)
def test_a_listener_that_cannot_listen_exits_3_with_one_line(role: str, kind: str) -> None:
    need_listener(role, kind)
    program, config = _listening(role, kind, free_port())
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        data = {**json.loads(config_text(config)), "listen_port": port}
        code, lines, err = run_to_end(program, ["--config", json.dumps(data)])
    assert code == 3 and len(lines) == 1, (lines, err)
    assert str(port) in assert_one_error(lines, 3, err)["error"]


# -- the kit's own driver reads every one of them the same way -------------------------------


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_the_driver_reads_a_clients_result_and_its_failures(kind: str, server_port: int) -> None:
    need_built(kind)
    workload = Workload(message_bytes=64 * KIB, bytes_per_stream=MIB, timeout_s=30)
    trial = Trial(client=ClientConfig(kind=kind), workload=workload)  # type: ignore[arg-type]
    child = Child.start(
        "client", CLIENT_PROGRAMS[kind], ClientProcess(target_port=server_port, trial=trial)
    )
    try:
        assert child.result(ClientResult, 60).bytes == MIB
        assert child.lines[0].pid == child.pid  # type: ignore[union-attr]
    finally:
        child.close()


# -- the stacks' named options -------------------------------------------------------------


@pytest.mark.parametrize("side", ["client", "server"])
@pytest.mark.parametrize("kind", sorted(STACK_OPTIONS))
def test_a_stacks_own_option_list_is_the_kits(kind: str, side: str, server_port: int) -> None:
    """The kit refuses a stack's unknown option before it starts anything
    (``kit.plan.stack_options``); the stack's program refuses it too, naming the options it
    has. The two lists must be the same, or the kit would refuse what the stack takes, or
    pass on what it refuses."""
    need_built(kind)
    bogus = [{"name": "NoSuchOption", "int": "1"}]
    if side == "client":
        job = client_job(kind, server_port, Workload(bytes_per_stream=MIB))
        program = CLIENT_PROGRAMS[kind]  # type: ignore[index]
    else:
        job = config_text(ServerProcess(config=ServerConfig(kind=kind)))  # type: ignore[arg-type]
        program = SERVER_PROGRAMS[kind]  # type: ignore[index]
    code, lines, err = run_to_end(program, ["--config", edited(job, options=bogus)])
    assert code == 2, (lines, err)
    error = assert_one_error(lines, 2, err)["error"]
    assert kind in error, error
    listed = error.split("is not one of ", 1)[1]
    theirs = {name.strip() for name in listed.split(",")}
    assert theirs == set(STACK_OPTIONS[kind][side]), error  # type: ignore[index]


# -- client workers: one trial per line of stdin ----------------------------------------------

WORKER_KINDS = [kind for kind in CLIENT_KINDS if CLIENT_PROGRAMS[kind].worker]


def worker_started(kind: str) -> contextlib.AbstractContextManager[subprocess.Popen[str]]:
    return started(CLIENT_PROGRAMS[kind], ["--worker"], stdin=subprocess.PIPE)


def worker_line(proc: subprocess.Popen[str], line: str, timeout_s: float = 60) -> dict[str, Any]:
    """Send one line; the one protocol line it answers with (bounded wait)."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=timeout_s), f"no answer within {timeout_s} s to {line[:80]}"
    answer = json.loads(proc.stdout.readline())
    assert isinstance(answer, dict), answer
    return dict(answer)


def trial_line(kind: str, port: int, workload: Workload, connections: int = 1) -> str:
    client = ClientConfig(kind=kind, connections=connections)  # type: ignore[arg-type]
    trial = Trial(client=client, workload=workload)
    return config_argv(ClientProcess(target_port=port, trial=trial))[1]


def worker_bytes(proc: subprocess.Popen[str], line: bytes, timeout_s: float = 60) -> dict[str, Any]:
    """``worker_line`` for raw bytes (a line that is not UTF-8)."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.flush()
    proc.stdin.buffer.write(line + b"\n")
    proc.stdin.buffer.flush()
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=timeout_s), f"no answer within {timeout_s} s to {line[:80]!r}"
    answer = json.loads(proc.stdout.readline())
    assert isinstance(answer, dict), answer
    return dict(answer)


def end_input(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Close its stdin: it must exit by itself within ``STOP_WITHIN_S``; what it wrote last."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.close()
    closed = time.monotonic()
    proc.wait(timeout=10)
    assert time.monotonic() - closed < STOP_WITHIN_S, "slow to end at EOF"
    out, err = proc.stdout.read(), proc.stderr.read()
    no_children_left(proc.pid)
    return out, err


@pytest.mark.parametrize("kind", WORKER_KINDS)
def test_a_worker_runs_one_trial_per_line_each_on_new_connections_and_ends_at_eof(
    kind: str, server_port: int
) -> None:
    need_built(kind)
    proxy = spawn("proxy", proxy_program(), ProxyConfig(upstream_port=server_port, link=Link()))
    try:
        trials = [
            (Workload(message_bytes=64 * KIB, bytes_per_stream=MIB, timeout_s=30), 1),
            (Workload(message_bytes=64 * KIB, streams=2, bytes_per_stream=MIB, timeout_s=30), 2),
            (Workload(kind="unary", calls=20, timeout_s=30), 1),
        ]
        with worker_started(kind) as proc:
            ready = read_ready(proc)
            assert ready["worker"] is True and ready.get("port", 0) == 0, ready
            answers = [worker_line(proc, trial_line(kind, proxy.port, w, c)) for w, c in trials]
            out, err = end_input(proc)
        assert proc.returncode == 0 and out == "", (out, err)
    finally:
        proxy.close()  # the delay line (no delay) counted the connections it accepted
    final = proxy.final
    assert isinstance(final, Result), final
    totals = from_json(ProxyTotals, final.data, "result")
    assert [a.get("client_trial") for a in answers] == [1, 2, 3], answers
    assert all(set(a) == {"result", "client_trial"} for a in answers), answers
    results = [decode_result(ClientResult, a["result"], "result") for a in answers]
    assert [r.bytes for r in results[:2]] == [MIB, 2 * MIB]  # exactly what each trial asked for
    assert results[2].messages == 20 and len(results[2].latencies_ms) == 20
    assert all(r.client == kind and 0 < r.elapsed_s < 60 for r in results)
    # Each trial dialled connections of its own: 1 + 2 + 1, none kept from an earlier trial.
    assert totals.connections == 4, totals


@pytest.mark.parametrize("kind", WORKER_KINDS)
@pytest.mark.parametrize(
    ("line", "says"),
    [
        *((line.encode(), says) for line, says in BAD_JOBS[:3]),
        (GOOD_JOB.replace("127.0.0.1", "127.0.0.\xff").encode("latin-1"), "not UTF-8"),
    ],
)
def test_a_worker_ends_at_a_bad_line_with_one_error_line_and_exit_2(
    kind: str, line: bytes, says: str, server_port: int
) -> None:
    need_built(kind)
    good = trial_line(kind, server_port, Workload(bytes_per_stream=MIB, timeout_s=30))
    with worker_started(kind) as proc:
        read_ready(proc)
        assert worker_line(proc, good)["client_trial"] == 1
        error = worker_bytes(proc, line)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 2 and out == "", (error, out, err)
    assert says in assert_one_error([error], 2, err)["error"]


@pytest.mark.parametrize("kind", WORKER_KINDS)
def test_a_worker_whose_trial_fails_exits_4_with_one_error_line(kind: str) -> None:
    need_built(kind)
    with worker_started(kind) as proc:
        read_ready(proc)
        error = worker_line(
            proc, trial_line(kind, free_port(), Workload(bytes_per_stream=MIB, timeout_s=2))
        )
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 4 and out == "", (error, out, err)
    assert_one_error([error], 4, err)


@pytest.mark.parametrize("kind", WORKER_KINDS)
def test_sigterm_ends_a_worker_mid_trial_within_a_second_with_one_error_line(
    kind: str, server_port: int
) -> None:
    need_built(kind)
    first = trial_line(kind, server_port, Workload(bytes_per_stream=MIB, timeout_s=30))
    long = trial_line(kind, server_port, Workload(duration_s=30, timeout_s=60))
    with worker_started(kind) as proc:
        read_ready(proc)
        assert worker_line(proc, first)["client_trial"] == 1
        assert proc.stdin is not None
        proc.stdin.write(long + "\n")
        proc.stdin.flush()
        time.sleep(1.0)  # connected, warmed and moving data
        assert proc.poll() is None
        out, err = sigterm(proc)
    assert proc.returncode == SIGTERM_EXIT, err
    error = assert_one_error(protocol_lines(out), SIGTERM_EXIT, err)
    assert "SIGTERM" in error["error"]


@pytest.mark.parametrize("kind", WORKER_KINDS)
def test_the_driver_numbers_a_workers_trials_and_ends_it(kind: str, server_port: int) -> None:
    need_built(kind)
    workload = Workload(message_bytes=64 * KIB, bytes_per_stream=MIB, timeout_s=30)
    trial = Trial(client=ClientConfig(kind=kind), workload=workload)  # type: ignore[arg-type]
    worker = Worker.start(CLIENT_PROGRAMS[kind])
    try:
        answers = [
            worker.run(ClientProcess(target_port=server_port, trial=trial), 60, None)
            for _ in range(2)
        ]
    finally:
        worker.close()
    assert [(a.client_trial, a.worker, a.result.bytes) for a in answers] == [
        (1, True, MIB),
        (2, True, MIB),
    ]
    assert worker.child.popen.returncode == 0


# -- every server keeps its memory budget ----------------------------------------------------

HOSTILE_CALLS = 40
HOSTILE_MESSAGE_BYTES = 64 * MIB
HOSTILE_HOLD_S = 4.0  # long enough for a server to build what it was asked for, at 64 MiB a call
HOSTILE_RSS_BOUND_BYTES = 600 * MIB


@pytest.mark.alone  # each server under 40 hostile calls takes a core or two
@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_a_server_keeps_its_download_budget_against_calls_never_read(kind: str) -> None:
    """40 Download calls of 64 MiB messages on one connection, never read (no WINDOW_UPDATE):
    a server that built or buffered a message per call would hold gigabytes. Each server
    refuses the calls beyond its budget at once (RESOURCE_EXHAUSTED) and its process tree
    stays under 600 MiB while they are held."""
    need_built(kind)
    program, config = _listening("server", kind, 1)
    with started(program, config_argv(config)) as proc:
        ready = read_ready(proc)
        held = hold(ready["port"], HOSTILE_CALLS, HOSTILE_MESSAGE_BYTES, HOSTILE_HOLD_S, proc.pid)
        out, err = sigterm(proc)
    budget = json.loads(config_text(config))["download_budget_bytes"]
    allowed = int(budget) // HOSTILE_MESSAGE_BYTES  # at most this many run at once
    assert held.refused >= HOSTILE_CALLS - allowed, held.statuses
    assert all(s in (None, 8) for s in held.statuses.values()), held.statuses
    assert 0 < held.peak_rss_bytes < HOSTILE_RSS_BOUND_BYTES, held.peak_rss_bytes / MIB
    result = decode_result(ServerResult, protocol_lines(out)[-1]["result"], "result")
    assert result.refused == held.refused, (result, err)
