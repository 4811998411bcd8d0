"""Streams sharing one connection, end to end through `kit run`: slow readers, when credit goes
back, the receive pool. Real server, real delay line, real clients, each its own process.

Physics asserted with room for a loaded machine: the memory a receiver holds never exceeds
what its policy lets the sender send; a slow reader behind read-credit starves its
neighbour, behind receipt-credit or the pool it does not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit_here

pytestmark = pytest.mark.integration

MIB = 1 << 20
SLOW = ["--streams", "2", "--slow-streams", "1", "--read-rate", "20Mbit"]


def kit_run(tmp_path: Path, *args: str) -> dict[str, Any]:
    proc = kit_here("run", "--json", "--records", str(tmp_path / "r"), *args)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_read_credit_lets_a_slow_reader_hold_the_connection_window(tmp_path: Path) -> None:
    # Fast stream 8 MiB: once the slow one holds the 4 MiB connection window, read credit
    # lets it move only as fast as the slow one reads (20 Mbit/s, 2.4 MiB/s); alone ~0.1 s.
    static = ["--client", "h2", "--rtt", "20ms", "--window", "4MiB", "--conn-window", "4MiB"]
    data = kit_run(tmp_path, *static, *SLOW, "--bytes", "8MiB", "--conn-credit", "read")
    assert data["client_conn_credit"] == "read" and data["workload_slow_streams"] == 1
    slow, fast = data["stream_throughput_mib_s"]
    assert slow < 20e6 / 8 / MIB * 1.5  # the pacing holds (one chunk of catch-up at most)
    assert fast < 20  # head-of-line blocked: far below window / RTT (200 MiB/s)
    # Memory: never more than the connection window (read credit binds it).
    assert data["peak_unread_bytes"] <= 4 * MIB
    assert data["result_stream_peak_unread_bytes"][1] <= 16_384 * 16  # the fast one reads at once


def test_receipt_credit_keeps_the_fast_stream_fast(tmp_path: Path) -> None:
    static = ["--client", "h2", "--rtt", "20ms", "--window", "1MiB", "--conn-window", "1MiB"]
    data = kit_run(tmp_path, *static, *SLOW, "--bytes", "4MiB", "--conn-credit", "receipt")
    slow, fast = data["stream_throughput_mib_s"]
    assert fast > 3 * slow  # 1 MiB / 20 ms = 50 MiB/s bound vs 2.4 MiB/s read
    assert data["peak_unread_bytes"] <= 2 * MIB  # the sum of the stream windows
    assert data["jain_index"] == 1.0  # one full-speed stream


def test_pool_divides_its_bytes_between_receiving_streams(tmp_path: Path) -> None:
    data = kit_run(
        tmp_path, "--client", "h2", "--rtt", "20ms", "--streams", "4",
        "--window-policy", "pool", "--pool", "1MiB", "--duration", "0.6s", "--full",
    )  # fmt: skip
    assert data["client_window_mode"] == "pool" and data["client_pool_size_bytes"] == MIB
    share = MIB // 16_384 // 4 * 16_384  # whole 16 KiB buffers: 256 KiB each
    assert all(w == share for w in data["result_stream_window_bytes"]), data[
        "result_stream_window_bytes"
    ]
    assert data["frames_conn_window_updates_first"][0] == 2**31 - 1 - 65_535
    assert data["frames_client_settings"]["INITIAL_WINDOW_SIZE"] == 16_384
    # Each stream is bounded by its share / RTT (12.5 MiB/s): never faster than physics.
    assert all(r <= share / 0.020 / MIB * 1.1 for r in data["stream_throughput_mib_s"])
    assert 0.8 <= data["jain_index"] <= 1.0
    # The tap sees each stream's window over time: up to its share, never much past it.
    by_stream: dict[int, list[int]] = {}
    for point in data["frames_stream_windows"]:
        by_stream.setdefault(point["stream_id"], []).append(point["window_bytes"])
    timed = sorted(by_stream)[-4:]  # the warm-up's two streams come first
    assert all(len(by_stream[s]) >= 3 for s in timed)
    # The tap samples DATA every 5 ms per stream (a whole read's frames at its time) and
    # interpolates between samples, so single points can overshoot when a read lands between
    # samples: each stream's window reaches its share (max >= 0.75 of it) and 90% of its points
    # stay within 25% above it.
    for s in timed:
        points = sorted(by_stream[s])
        p90 = points[int(0.9 * (len(points) - 1))]
        assert points[-1] >= 0.75 * share and p90 <= 1.25 * share, (s, points)


def test_pool_memory_never_exceeds_the_pool_with_a_slow_reader(tmp_path: Path) -> None:
    data = kit_run(
        tmp_path, "--client", "h2", "--rtt", "20ms", *SLOW, "--bytes", "4MiB",
        "--window-policy", "pool", "--conn-credit", "read",
    )  # fmt: skip
    assert data["peak_unread_bytes"] <= 1_600_000
    slow, fast = data["stream_throughput_mib_s"]
    assert fast > 3 * slow


def test_dynamic_memory_is_bounded_by_the_stream_windows(tmp_path: Path) -> None:
    data = kit_run(tmp_path, "--client", "h2", "--rtt", "20ms", *SLOW, "--bytes", "4MiB")
    assert data["client_threshold_policy"] == "quarter"
    final = max(data["frames_window_growth"])  # the sizes in order (the compact row)
    # grpc-go's bound: each stream's window plus a whole-message grant (256 KiB + framing).
    assert data["peak_unread_bytes"] <= final + 256 * 1024 + 9


@pytest.mark.parametrize("credit", ["quarter", "half"])
def test_credit_thresholds_on_a_static_window(tmp_path: Path, credit: str) -> None:
    data = kit_run(
        tmp_path, "--client", "h2", "--rtt", "10ms", "--window", "256KiB", "--credit", credit,
        "--max-frame-size", "16KiB", "--bytes", "2MiB",
    )  # fmt: skip
    assert data["client_threshold_policy"] == credit and data["result_bytes"] == 2 * MIB
    stream_wu = {"count": data["frames_stream_window_updates_count"]}
    # A threshold policy sends an update per quarter (or half) window at most, not per read.
    assert stream_wu["count"] <= 2 * MIB // (256 * 1024 // (4 if credit == "quarter" else 2)) + 8


def test_grpcio_slow_reader_is_paced_and_its_neighbour_measured(tmp_path: Path) -> None:
    data = kit_run(tmp_path, "--client", "grpcio", "--rtt", "20ms", *SLOW, "--bytes", "4MiB")
    assert data["workload_slow_streams"] == 1 and data["workload_read_rate_bits_s"] == 20e6
    slow, fast = data["stream_throughput_mib_s"]
    assert slow < fast
    assert data["peak_unread_bytes"] is None  # C-core's buffer is not visible to us
    assert any("read one message per" in n for n in data["result_notes"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--slow-streams", "1"], "--read-rate"),
        (["--read-rate", "20Mbit"], "--read-rate"),
        (["--slow-streams", "3", "--streams", "2", "--read-rate", "1Mbit"], "--slow-streams"),
        (["--slow-streams", "1", "--read-rate", "20"], "--read-rate"),
        (["--slow-streams", "1", "--read-rate", "-1Mbit"], "--read-rate"),
        (["--client", "h2", "--conn-credit", "never"], "--conn-credit"),
        (["--conn-credit", "read"], "--conn-credit"),  # grpcio has no such choice
        (["--client", "h2", "--window-policy", "elastic"], "window mode"),
        (["--client", "h2", "--window-policy", "pool", "--window", "1MiB"], "--window"),
        (["--client", "h2", "--pool", "1MB"], "--pool"),
        (["--client", "h2", "--window-policy", "pool", "--pool", "1KB"], "--pool"),
        (["--client", "h2", "--window-policy", "pool", "--mode", "pool"], "not both"),
        (["--window-policy", "pool"], "--window-policy"),  # grpcio has no pool
        (["--client", "h2", "--credit", "eighth"], "credit"),
    ],
)
def test_bad_sharing_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    proc = kit_here("run", *args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], proc.stderr
