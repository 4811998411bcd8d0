"""`kit run` end to end: real server, real delay line, real client, each its own process."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit, kit_here

from kit.analysis.intervals import intervals_of
from kit.plan.units import KIB, MIB
from kit.results.store import read_records

pytestmark = pytest.mark.integration

# `kit run --json` is the flat row of kit.analysis.flat (the --csv schema).
RUN_KEYS = {
    "schema",
    "client",
    "client_window_mode",
    "rtt_ms",
    "window_bytes",
    "conn_window_bytes",
    "throughput_mib_s",
    "theory_mib_s",
    "efficiency",
    "ping_rtt_ms",
    "result_bytes",
    "result_elapsed_s",
    "cpu",
    "frames_client_settings",
}


def test_run_json_through_the_delay_line(tmp_path: Path) -> None:
    records = tmp_path / "runs.jsonl"
    proc = kit(
        "run",
        "--rtt",
        "10ms",
        "--window",
        "256KiB",
        "--duration",
        "0.5s",
        "--json",
        "--records",
        str(records),
        "--interval",
        "50ms",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= RUN_KEYS
    assert (data["client"], data["window_policy"], data["workload"]) == (
        *("grpcio", "static", "download"),
    )
    _check_intervals(proc.stderr, data, records)
    assert data["client"] == "grpcio" and data["client_window_mode"] == "static"
    assert data["rtt_ms"] == 10
    assert data["result_bytes"] > 0 and data["throughput_mib_s"] > 0
    # The tap saw the client's SETTINGS as sent: the static window is on the wire.
    assert data["frames_client_settings"]["INITIAL_WINDOW_SIZE"] == 256 * 1024
    assert data["frames_decodable"]
    assert records.read_text().count("\n") == 1


# A live line (stderr, marked "live": the run's progress, not its record).
INTERVAL_LINE = re.compile(r"^live\s+([\d.]+)-\s*([\d.]+) s\s+([\d.]+) MiB\s+([\d.]+)$")


def _check_intervals(stderr: str, data: dict[str, Any], records: Path) -> None:
    """--interval 50ms: lines printed while it ran (stderr: stdout carries the JSON), and a
    recorded series (the delivery trace rebinned) that sums to the bytes the client read,
    within the 256 KiB window in flight at each edge of the timed phase."""
    live = [INTERVAL_LINE.match(line) for line in stderr.splitlines()]
    moved = [float(m.group(3)) * MIB for m in live if m is not None]
    assert len(moved) >= 5, stderr
    (m,) = read_records(records).measurements
    assert m.meta.interval_ms == 50.0 and m.result is not None
    recorded = sum(i.bytes for i in intervals_of(m))
    assert abs(recorded - m.result.bytes) <= 2 * 256 * KIB + 0.01 * m.result.bytes
    assert len(data["interval_mib_s"]) == len(intervals_of(m))
    # The live lines are progress: they miss at most the last partial interval (50 of 500 ms)
    # and count what the delay line delivered, so at most the run's bytes on the wire and a
    # window in flight at each edge of the phase (a late first tick on a loaded machine).
    window_edges = 2 * 256 * KIB
    assert 0.7 * m.result.bytes <= sum(moved) <= 1.02 * data["frames_bytes_down"] + window_edges


def test_run_table_at_loopback_rtt_zero(tmp_path: Path) -> None:
    proc = kit_here(
        "run", "--rtt", "0", "--duration", "0.3s", "--records", str(tmp_path / "r.jsonl")
    )
    assert proc.returncode == 0, proc.stderr
    assert "throughput" in proc.stdout and "C-core BDP" in proc.stdout


def test_unary_workload(tmp_path: Path) -> None:
    proc = kit_here(
        "run",
        "--rtt",
        "2ms",
        "--workload",
        "unary",
        "--calls",
        "20",
        "--json",
        "--records",
        str(tmp_path / "r.jsonl"),
    )
    assert proc.returncode == 0, proc.stderr
    latency_p50_ms = json.loads(proc.stdout)["latency_p50_ms"]
    # Each call crosses the delay line once each way: it cannot beat the RTT.
    assert latency_p50_ms >= 2.0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--window", "4XB"], "--window"),
        (["--window", "3GiB"], "2^31-1"),
        (["--window", "0"], "--window"),
        (["--window", "4"], "kit: error: --window 4 needs a unit, e.g. 4MiB"),
        (["--client", "h2", "--pool", "1600000"], "--pool 1600000 needs a unit"),
        (["--bytes", "8M"], "--bytes 8M: 'M' is ambiguous; write 8MiB (binary) or 8MB"),
        (["--rtt", "20parsecs"], "--rtt"),
        (["--rtt", "-5ms"], "--rtt"),
        (["--conn-window", "1MiB", "--window", "1MiB"], "--conn-window"),
        (["--client", "curl"], "client"),
        (["--option", "novalue"], "--option"),
        (["--option", "window=1MiB"], "--option"),  # a kit key is not a channel argument
        (["--option", "grpc.x=1", "--option", "grpc.x=2"], "given twice"),
        (["--credit", "half"], "--credit"),  # h2-only settings are refused, not ignored
        (["--client", "h2", "--window", "1MiB", "--option", "grpc.x=1"], "--option"),
        (["--streams", "0"], "--streams"),
        (["--bytes", "8MiB", "--duration", "1s"], "not both"),
        (["--option", "grpc.htp2.bdp_probe=0"], "did you mean grpc.http2.bdp_probe?"),
        (["--option", "grpc.max_concurrent_streams=99999999999"], "range of a C int"),
        (["--server-option", "grpc.http2.lookahead_bytes=99999999999"], "range of a C int"),
        (["--duration", "10s", "--timeout", "2s"], "--timeout: 2 s ends the run before"),
        (["--rtt", "500ms", "--duration", "0.4s", "--client", "h2"], "shorter than 2 RTTs"),
        (["--connections", "5", "--streams", "2"], "--connections: 5 connections for 2"),
        (["--workload", "upload", "--streams", "4"], "--streams: an upload runs one"),
        (["--interval", "1ms"], "--interval: '1ms' is outside"),
        (["--interval", "100"], "--interval: '100' needs a unit"),
        (["--interval", "100ms", "--workload", "upload"], "uploads go upstream"),
        (["--interval", "100ms", "--direct", "--rtt", "0"], "--direct has no delay line"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    proc = kit_here("run", *args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], proc.stderr
