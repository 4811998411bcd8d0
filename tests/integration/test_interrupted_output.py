"""Ctrl-C says what was measured: a real SIGINT to ``kit run`` and ``kit compare`` in a
subprocess, sent once they are measuring, and what they print read as a user reads it.

``kit run`` prints what the delay line delivered in the timed phase so far (bytes, seconds
and their rate, within the window's bound) and where its record went; ``kit compare``
prints the table of the rounds run so far, marked partial, and the exact ``--resume``
command, which then finishes the campaign. Every wait is bounded.
"""

from __future__ import annotations

import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from kit.results.store import read_records

pytestmark = pytest.mark.integration

KIT = [sys.executable, "-m", "kit.cli"]
INTERVAL_LINE = re.compile(r"\d+\.\d\d-\s*(\d+\.\d\d) s")  # kit run --interval's lines


def _timed_for(seconds: float) -> Callable[[str], bool]:
    """A live interval line ending ``seconds`` or more into the timed phase."""

    def ready(line: str) -> bool:
        found = INTERVAL_LINE.search(line)
        return found is not None and float(found.group(1)) >= seconds

    return ready


def _lines(stream: IO[str]) -> queue.Queue[str]:
    """The lines of ``stream`` as they come (a reader thread; it ends with the stream)."""
    found: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            found.put(line)

    threading.Thread(target=read, daemon=True).start()
    return found


def _wait_for(lines: queue.Queue[str], seen: list[str], match: Callable[[str], bool]) -> None:
    deadline = time.monotonic() + 90.0
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        if match(line):
            return
    pytest.fail(f"not seen within 90 s; stderr so far: {''.join(seen)[-2000:]}")


def _interrupt(args: list[str], ready: Callable[[str], bool]) -> tuple[int, str, str]:
    """Run the kit with ``args``, SIGINT it once a stderr line is ``ready``; (code, out, err)."""
    proc = subprocess.Popen(
        [*KIT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None and proc.stdout is not None
    seen: list[str] = []
    lines = _lines(proc.stderr)
    try:
        _wait_for(lines, seen, ready)
    finally:
        proc.send_signal(signal.SIGINT)
    try:
        out = proc.stdout.read()
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    time.sleep(0.2)  # the reader thread drains the last lines
    while not lines.empty():
        seen.append(lines.get())
    return proc.returncode, out, "".join(seen)


def test_an_interrupted_run_prints_what_it_delivered_and_where_the_record_is(
    tmp_path: Path,
) -> None:
    records = tmp_path / "runs.jsonl"
    args = ["run", "--rtt", "20ms", "--client", "h2", "--window", "1MiB", "--duration", "30s"]
    args += ["--interval", "250ms", "--records", str(records)]
    code, _out, err = _interrupt(args, _timed_for(1.0))
    assert code == 130, err
    assert "Traceback" not in err
    found = re.search(
        r"kit run: interrupted (\d+\.\d\d) s into the timed phase; so far the delay line "
        r"delivered (\d+\.\d\d) MiB:\n  (\S+) MiB/s \(not a result: a run is timed to its end\)",
        err,
    )
    assert found is not None, err
    seconds, mib, rate = (float(g) for g in found.groups())
    assert seconds > 0.5 and mib > 0
    # the printed figures agree, to their rounding (two decimals each, three digits of rate)
    rounding = 0.005 / seconds + 0.005 / mib + 0.005
    assert rate == pytest.approx(mib / seconds, rel=rounding)
    assert rate <= 1.05 * 1 / 0.020  # never above window / RTT (1 MiB / 20 ms)
    assert f"record appended to {records}" in err
    (m,) = read_records(records).measurements
    assert m.status == "interrupted" and "during the timed phase" in m.error
    assert all(len(line) <= 100 for line in err.splitlines() if "kit run:" in line)


def test_an_interrupted_compare_prints_the_partial_table_and_the_resume_command(
    tmp_path: Path,
) -> None:
    records = tmp_path / "compare.jsonl"
    args = ["compare", "--rtt", "5ms", "-c", "h2:window=1MiB", "--duration", "0.5s"]
    args += ["--rounds", "3", "--records", str(records)]
    code, out, err = _interrupt(args, lambda line: line.startswith("[3/"))
    assert code == 130, err
    assert "Traceback" not in err
    done = len(read_records(records).measurements)
    assert 0 < done < 9
    assert out.startswith(
        f"PARTIAL: interrupted by SIGINT after {done} of 9 runs; "
        "each cell with the rounds it has so far:"
    ), out
    assert "baseline: grpcio" in out and "rounds: " in out and "of 3 planned" in out
    assert [line for line in out.splitlines() if len(line) > 100] == []
    command = out.split("finish the campaign with:\n", 1)[1]
    typed = shlex.split(command.replace("\\\n", " "))
    assert typed == [
        *("kit", "compare", "--rtt", "5ms", "--candidate", "h2:window=1MiB"),
        *("--duration", "0.5s", "--rounds", "3", "--resume", "--records", str(records)),
    ]
    # the command printed finishes the campaign
    finished = subprocess.run([*KIT, *typed[1:]], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert "rounds: 3 done of 3 planned" in finished.stdout
    assert len(read_records(records).measurements) == 9
