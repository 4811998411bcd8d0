"""The limits as the commands offer them: bad values are one line and exit 2, `kit serve`
warns off loopback like the proxy, `kit proxy --max-connections` refuses the extra ones."""

from __future__ import annotations

import contextlib
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from cli_support import kit_here

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--option", "grpc.http2.bdp_probe=notanint"], "takes an integer"),
        (["run", "--option", "grpc.keepalive_time_ms=soon"], "takes an integer"),
        (["serve", "--option", "grpc.http2.lookahead_bytes=big"], "takes an integer"),
        (["run", "--rtt", "1e-9ms"], "below one nanosecond"),
        (["serve", "--listen", ":0"], "has no host"),
        (["proxy", "--listen", ":0"], "has no host"),
        (["proxy", "--max-connections", "0"], "--max-connections"),
        (["proxy", "--max-buffered-bytes", "1KiB"], "--max-buffered-bytes"),
        (["proxy", "--max-buffered-bytes", "lots"], "--max-buffered-bytes"),
    ],
)
def test_bad_limits_are_one_line_and_exit_2(args: list[str], needle: str) -> None:
    proc = kit_here(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], proc.stderr


READY = ("serving on ", "delay line listening on ")


@contextlib.contextmanager
def foreground(*args: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """A `kit` command in the foreground: yields it and its stdout lines up to "listening"."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kit.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(line.startswith(READY) for line in lines):
            if select.select([proc.stdout], [], [], 1)[0]:
                lines.append(proc.stdout.readline())
        yield proc, lines
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def test_serve_warns_off_loopback_like_the_proxy() -> None:
    with foreground("serve", "--listen", "0.0.0.0:0") as (_proc, serve_lines):
        pass
    with foreground("proxy", "--listen", "0.0.0.0:0", "--upstream", "127.0.0.1:9") as (
        _proxy,
        proxy_lines,
    ):
        pass
    assert serve_lines[0].startswith("WARNING: the server listens on 0.0.0.0, which is NOT")
    assert proxy_lines[0].startswith("WARNING: the delay line listens on 0.0.0.0, which is NOT")
    assert "serving on 0.0.0.0:" in serve_lines[1]


def test_serve_on_loopback_says_nothing_extra() -> None:
    with foreground("serve", "--listen", "127.0.0.1:0") as (_proc, lines):
        pass
    assert len(lines) == 1 and lines[0].startswith("serving on 127.0.0.1:")


@pytest.mark.alone
def test_proxy_refuses_connections_over_its_cap() -> None:
    upstream = socket.create_server(("127.0.0.1", 0))
    with (
        upstream,
        foreground(
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            f"127.0.0.1:{upstream.getsockname()[1]}",
            "--max-connections",
            "1",
        ) as (proc, lines),
    ):
        port = int(lines[-1].split(" -> ")[0].rsplit(":", 1)[1])
        first = socket.create_connection(("127.0.0.1", port), timeout=5)
        time.sleep(0.3)
        second = socket.create_connection(("127.0.0.1", port), timeout=5)
        with contextlib.suppress(ConnectionError):
            assert second.recv(1) == b""  # refused: closed at once
        first.close()
        second.close()
        time.sleep(0.2)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    assert "refused a connection: 1 open, the limit is --max-connections 1" in stderr
