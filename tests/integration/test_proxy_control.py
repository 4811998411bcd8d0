"""`kit proxy --control`: the HTTP JSON API changes the running delay line's delay, each
change is announced and recorded in the tap file, bad changes are refused, and the API
listens on loopback only. A real `kit proxy` process, a real echo upstream."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit_here

from kit.capture.tapfile import read_tap
from kit.results.records import LinkChange

pytestmark = pytest.mark.integration


def _echo_server() -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with server:
            conn, _ = server.accept()
            with conn:
                while data := conn.recv(65536):
                    conn.sendall(data)

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


_LINES: dict[int, queue.Queue[str]] = {}


def _line(proc: subprocess.Popen[str], pattern: str, timeout_s: float = 20) -> re.Match[str]:
    """The next stdout line matching ``pattern`` (bounded wait). Lines are read by a thread:
    two lines printed at once land in one buffered read, where select would see neither."""
    assert proc.stdout is not None
    lines = _LINES.get(proc.pid)
    if lines is None:
        lines = _LINES[proc.pid] = queue.Queue()
        stdout = proc.stdout
        threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            match = re.search(pattern, lines.get(timeout=0.2))
        except queue.Empty:
            continue
        if match:
            return match
    raise AssertionError(f"no line matching {pattern!r} within {timeout_s:g} s")


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _rtt_ms(conn: socket.socket) -> float:
    start = time.monotonic()
    conn.sendall(b"x")
    conn.recv(16)
    return (time.monotonic() - start) * 1000


def test_control_api_changes_the_delay_while_traffic_flows(tmp_path: Path) -> None:
    _server, upstream_port = _echo_server()
    tap = tmp_path / "tap.jsonl"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "kit.cli", "proxy", "--listen", "127.0.0.1:0"),
            *("--upstream", f"127.0.0.1:{upstream_port}", "--rtt", "10ms"),
            *("--control", "127.0.0.1:0", "--tap-file", str(tap)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = _line(proc, r"control API on (http://\S+/link)").group(1)
        port = int(_line(proc, r"listening on 127\.0\.0\.1:(\d+)").group(1))
        with socket.create_connection(("127.0.0.1", port)) as conn:
            before = min(_rtt_ms(conn) for _ in range(3))
            status, state = _post(url, {"rtt_ms": 60})
            assert status == 200 and state["delay_up_ms"] == 30 and state["changes"] == 1
            after = min(_rtt_ms(conn) for _ in range(3))  # the same connection, changed
        # Delays never shrink below the set one; a busy machine adds, so only bound above loosely.
        assert 10 <= before < 10 + 40, before
        assert 60 <= after < 60 + 40, after
        status, error = _post(url, {"loss": 0.01})
        assert status == 400 and "loses nothing" in error["error"]
        status, error = _post(url, {"rate_bits_s": 1e6})
        assert status == 400 and "without a rate" in error["error"]
        announced = _line(proc, r"link changed: delay up 30 ms, down 30 ms")
        assert announced is not None
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    lines, skipped = read_tap(tap)
    (change,) = [line for line in lines if isinstance(line, LinkChange)]
    assert skipped == 0 and change.link.delay_down_ms == 30


def test_control_api_listens_on_loopback_only() -> None:
    proc = kit_here("proxy", "--control", "0.0.0.0:8474")
    assert proc.returncode == 2 and "not a loopback address" in proc.stderr
