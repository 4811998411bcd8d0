"""What a careless user (or an attacker) can type, end to end: each gets one line on stderr and
an exit code the README lists, before anything is measured where it can be; what is measured
is never thrown away.

Real processes over loopback, small sizes, every wait bounded.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from cli_support import REPO, kit_here

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1"
ENV = {**os.environ, "COLUMNS": "100"}
QUICK_RUN = ("run", "--rtt", "2ms", "--client", "h2", "--window", "128KiB", "--duration", "0.2s")


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# --- stdout carries one format ----------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--records", "-", "--csv", "-"),
        ("run", "--json", "--csv", "-"),
        ("run", "--json", "--records", "-"),
        ("compare", "--candidate", "h2", "--json", "--csv", "-"),
        ("knee", "--json", "--csv", "-"),
    ],
)
def test_two_formats_on_stdout_are_refused_before_measuring(args: tuple[str, ...]) -> None:
    proc = kit_here(*args, env=ENV)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "stdout carries one format" in one_line(proc.stderr)


def test_csv_on_stdout_is_all_that_stdout_holds() -> None:
    proc = kit_here("report", str(FIXTURES / "compare.jsonl"), "--csv", "-", env=ENV)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 6 and all(r["schema"] == "3" for r in rows)


# --- CSV formula injection --------------------------------------------------------------------


def test_a_target_that_is_not_host_port_is_refused() -> None:
    proc = kit_here("run", "--target", "=1+2:80", env=ENV)
    assert proc.returncode == 2
    assert "neither an IP address nor a host name" in one_line(proc.stderr)


# --- a records file that cannot be written ------------------------------------------------------


def test_a_records_path_that_cannot_be_written_is_refused_before_measuring(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for path, needle in ((tmp_path, "is a directory"), (blocker / "runs.jsonl", "not a directory")):
        proc = kit_here(*QUICK_RUN, "--records", str(path), env=ENV)
        assert proc.returncode == 2 and proc.stdout == ""
        assert needle in one_line(proc.stderr)


def test_a_full_disk_still_prints_the_result_and_says_the_record_was_not_saved() -> None:
    proc = kit_here(*QUICK_RUN, "--records", "/dev/full", env=ENV)
    assert proc.returncode == 5, proc.stderr
    assert "throughput" in proc.stdout  # the result table
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        "kit: error: cannot append to records file /dev/full: No space left on device; "
        "the result above is not in it"
    )


# --- tampered records ----------------------------------------------------------------------------


def tampered(tmp_path: Path) -> Path:
    """The release-0.1 runs with line 1's bytes beyond any int and line 2's time negative."""
    lines = (FIXTURES / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["result"]["bytes"] = 10**400
    second["result"]["elapsed_s"] = -1
    path = tmp_path / "tampered.jsonl"
    path.write_text("\n".join([json.dumps(first), json.dumps(second), *lines[2:]]) + "\n")
    return path


@pytest.mark.parametrize("command", ["report", "plot"])
def test_tampered_numbers_are_skipped_lines_not_crashes(command: str, tmp_path: Path) -> None:
    path = tampered(tmp_path)
    proc = kit_here(command, str(path), *(["--out", str(tmp_path)] if command == "plot" else []))
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.strip().splitlines()
    assert len(warnings) == 2, proc.stderr
    assert "line 1:" in warnings[0] and "result.bytes" in warnings[0] and len(warnings[0]) < 300
    assert "line 2:" in warnings[1] and "elapsed_s: -1" in warnings[1]
    assert "-1.00 s" not in proc.stdout


# --- records files are streamed ---------------------------------------------------------------


@pytest.mark.parametrize("command", ["report", "plot"])
def test_what_is_not_a_regular_records_file_is_refused(command: str) -> None:
    proc = kit_here(command, "/dev/zero")  # read whole, this ran the machine out of memory
    assert proc.returncode == 2 and proc.stdout == ""
    assert "/dev/zero is not a regular file" in one_line(proc.stderr)


@pytest.mark.parametrize("command", ["report", "plot"])
def test_a_file_that_is_no_records_file_says_so_in_a_few_lines(command: str) -> None:
    """The README (hundreds of lines, none a record): the first five skipped lines, how many
    more, and the one-line error; not a warning per line."""
    proc = kit_here(command, "README.md")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 7, lines
    assert all(line.startswith(f"kit {command}: README.md: line ") for line in lines[:5])
    assert lines[5].startswith(f"kit {command}: README.md: ") and "more line(s) skipped" in lines[5]
    assert lines[6] == "kit: error: README.md is not a kit records file (no line of it is a record)"


# --- a stopped or killed tap decoder ---------------------------------------------------------


def _decoder_of(kit_pid: int, deadline_s: float) -> psutil.Process:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        with_children = psutil.Process(kit_pid).children(recursive=True)
        for proc in with_children:
            try:
                argv = proc.cmdline()  # by its argv: the compiled line's job names it too
                if argv[1:3] == ["-m", "kit.capture.decoder"]:
                    return proc
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.02)
    raise AssertionError("no tap decoder started")


@pytest.mark.parametrize("signum", [signal.SIGSTOP, signal.SIGKILL])
def test_a_stopped_or_killed_tap_decoder_says_tap_incomplete_and_leaves_no_orphan(
    signum: int,
) -> None:
    started = time.monotonic()
    run = subprocess.Popen(
        [sys.executable, "-m", "kit.cli", *QUICK_RUN, "--no-records"],
        cwd=REPO,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        decoder = _decoder_of(run.pid, 30)
        decoder.send_signal(signum)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    assert "tap incomplete" in out and "no tap (direct connection)" not in out
    assert time.monotonic() - started < 25  # a stopped decoder does not hold the run up
    deadline = time.monotonic() + 5
    while decoder.is_running() and decoder.status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, f"the decoder outlived the run ({decoder.status()})"
        time.sleep(0.05)


# --- a --target that is not the kit's server --------------------------------------------------


@contextlib.contextmanager
def tcp_server(answer: Callable[[socket.socket], None]) -> Iterator[int]:
    """A one-connection-at-a-time TCP server on an OS port that ``answer``s each client."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(timeout=2)
        listener.close()


def echo(conn: socket.socket) -> None:
    while data := conn.recv(65536):
        conn.sendall(data)


def http1(conn: socket.socket) -> None:
    conn.recv(65536)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("server", "said"),
    [(None, "connection refused"), (echo, "echo server"), (http1, "answered HTTP/1")],
)
def test_a_target_that_is_no_grpc_server_fails_fast_naming_it(
    server: Callable[[socket.socket], None] | None, said: str
) -> None:
    with contextlib.ExitStack() as stack:
        port = closed_port() if server is None else stack.enter_context(tcp_server(server))
        started = time.monotonic()
        for command in (("run",), ("compare", "--candidate", "h2")):
            proc = kit_here(*command, "--target", f"127.0.0.1:{port}", "--rtt", "2ms", env=ENV)
            assert proc.returncode == 3 and proc.stdout == ""
            line = one_line(proc.stderr)
            assert f"--target 127.0.0.1:{port}: " in line and said in line, line
        assert time.monotonic() - started < 10  # seconds, not the client's timeouts
