"""Defects a prober found, each held down by the command a careless user or an attacker types:
a trace that is not a trace, a boolean given as a number to the control API, Ctrl-C to
``kit serve`` under load, and a plan that needs more file descriptors than the process may
open. Bounded, loopback only, small sizes."""

from __future__ import annotations

import ast
import itertools
import json
import resource
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
from cli_support import REPO, kit_here

pytestmark = pytest.mark.integration


def test_a_trace_that_never_ends_a_line_is_refused_at_once_with_bounded_memory() -> None:
    """``--trace /dev/zero`` used to read the whole device into memory (24 GB, then the OOM
    killer); a trace is now read a line at a time with bounded lines."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kit.cli", "run", "--rtt", "10ms", "--trace", "/dev/zero"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            peak = max(peak, psutil.Process(proc.pid).memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.02)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 2, (out, err)
    assert err.strip().count("\n") == 0 and "--trace: line 1 is longer than" in err, err
    assert peak < 300 * 2**20, peak


def test_a_long_trace_is_refused_past_its_line_limit(tmp_path: Path) -> None:
    from kit.plan import trace

    path = tmp_path / "long.trace"
    path.write_text("".join(f"{i}\n" for i in range(1, 12)))
    limit = trace.MAX_TRACE_LINES
    try:
        trace.MAX_TRACE_LINES = 10
        out = kit_here("run", "--rtt", "10ms", "--trace", str(path))
    finally:
        trace.MAX_TRACE_LINES = limit
    assert out.returncode == 2 and "more than 10 lines" in out.stderr, out.stderr


def test_the_control_api_takes_numbers_only_not_booleans() -> None:
    """``POST /link {"rtt_ms": true}`` used to answer 200 and set an RTT of 1 ms."""
    proxy = subprocess.Popen(
        [
            *(sys.executable, "-m", "kit.cli", "proxy", "--upstream", "127.0.0.1:9"),
            *("--listen", "127.0.0.1:0", "--control", "127.0.0.1:0", "--rtt", "20ms"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        control = _control_address(proxy)
        fields = ("rtt_ms", "delay_up_ms", "rate_bits_s", "jitter_ms")
        for field, value in itertools.product(fields, ["true", "false", '"5"', "[5]"]):
            request = urllib.request.Request(
                f"http://{control}/link", data=f'{{"{field}": {value}}}'.encode(), method="POST"
            )
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=5)
            assert refused.value.code == 400, field
            assert "number" in json.loads(refused.value.read())["error"], field
        with urllib.request.urlopen(f"http://{control}/link", timeout=5) as now:
            assert json.loads(now.read())["delay_up_ms"] == 10.0  # unchanged
    finally:
        proxy.send_signal(signal.SIGTERM)
        proxy.communicate(timeout=10)


def _control_address(proxy: subprocess.Popen[str]) -> str:
    assert proxy.stdout is not None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proxy.stdout.readline()
        if "control" in line and "http://" in line:
            return line.split("http://", 1)[1].split("/")[0].strip()
    raise AssertionError("the proxy never said where its control API listens")


def _signal_handlers(path: Path) -> list[str]:
    """The source of every function handed to ``signal.signal`` in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "signal"
            and len(node.args) == 2
        ):
            found.append(ast.unparse(node.args[1]))
    return found


@pytest.mark.parametrize("module", ["kit/topology/foreground.py", "servers/grpcio_server.py"])
def test_a_serving_signal_handler_takes_no_lock(module: str) -> None:
    """A handler that called ``threading.Event.set`` could deadlock against the main loop
    waiting on that Event (seen once in 13 Ctrl-Cs under load: SIGINT and SIGTERM were then
    ignored). The handlers only record the signal."""
    handlers = _signal_handlers(REPO / module)
    assert handlers, module
    assert all(".set(" not in h and "Event" not in h and "Lock" not in h for h in handlers), (
        handlers
    )


def test_kit_serve_ends_on_ctrl_c_under_load_every_time() -> None:
    """Ctrl-C (SIGINT) to ``kit serve`` while a client downloads from it: it ends within a few
    seconds, each of several tries, with the address it served said first."""
    for _ in range(2):
        serve = subprocess.Popen(
            [sys.executable, "-m", "kit.cli", "serve", "--listen", "127.0.0.1:0"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert serve.stdout is not None
            first = serve.stdout.readline()
            assert first.startswith("serving on 127.0.0.1:"), first
            port = first.split(":")[1].split()[0]
            client = subprocess.Popen(
                [
                    *(sys.executable, "-m", "kit.cli", "run", "--target", f"127.0.0.1:{port}"),
                    *("--rtt", "0", "--duration", "5s", "--streams", "4", "--no-records"),
                ],
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(2.0)  # the download is under way
            serve.send_signal(signal.SIGINT)
            serve.wait(timeout=8)
            client.kill()
            client.wait(timeout=10)
        finally:
            if serve.poll() is None:
                serve.kill()
                serve.wait(timeout=10)
                raise AssertionError("kit serve did not end within 8 s of Ctrl-C")


def test_a_plan_needing_more_descriptors_than_allowed_is_refused_up_front() -> None:
    """60 connections with ``ulimit -n 64`` used to be reported as an unreachable server
    ("is the server running?"); now the plan is refused before anything starts, naming the
    limit."""
    script = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
        "from kit.cli import main; sys.argv = ['kit'] + sys.argv[1:]; main()"
    )
    args = ["run", "--rtt", "0", "--streams", "60", "--connections", "60", "--no-records"]
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "file descriptors" in out.stderr and "ulimit -n" in out.stderr, out.stderr
    assert out.stderr.strip().count("\n") == 0, out.stderr
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] > 64  # this test's own limit is intact
