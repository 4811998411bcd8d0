"""The flat row is compact and spreadsheet-safe unless ``--full``; records stay complete.

Real records: an h2 download with 8 streams (5 s at 20 ms: ~2,000 tap window samples),
written by the previous records schema and by this one, and a ``--interval 100ms`` run."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

from kit.analysis import flat
from kit.analysis.intervals import intervals_of, rebin
from kit.report.export import render_csv, render_json
from kit.results.records import DeliveryTrace, Measurement
from kit.results.store import read_records

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def _run(name: str) -> Measurement:
    (m,) = read_records(RUNS / name).measurements
    return m


def test_an_old_and_a_new_record_of_one_run_read_the_same_and_the_new_is_half_the_size() -> None:
    assert _run("h2-8-streams.schema3.jsonl") == _run("h2-8-streams.jsonl")
    old, new = (
        len((RUNS / n).read_bytes()) for n in ("h2-8-streams.schema3.jsonl", "h2-8-streams.jsonl")
    )
    assert new < 0.5 * old


def test_an_h2_row_is_under_5_kb_with_its_headline_first_and_series_only_with_full() -> None:
    m = _run("h2-interval-100ms.jsonl")
    row = flat.flat_row(m)
    assert len(json.dumps(row, separators=(",", ":"))) < 5 * 1024
    assert len(render_json(m).encode()) < 5.5 * 1024  # a column a line
    assert {k: row[k] for k in ("client", "server", "window_policy", "workload")} == {
        "client": "h2", "server": "grpcio", "window_policy": "dynamic", "workload": "download",
    }  # fmt: skip
    assert "frames_stream_windows" not in row and "result_ping_rtt_ms" not in row
    full = flat.flat_row(m, full=True)
    assert full["frames_stream_windows"] and full["result_ping_rtt_ms"]
    assert json.loads(render_json(m, full=True)) == full


def test_floats_are_rounded_to_what_was_measured() -> None:
    m = _run("h2-8-streams.jsonl")
    row, full = flat.flat_row(m), flat.flat_row(m, full=True)
    assert row["throughput_mib_s"] == float(f"{full['throughput_mib_s']:.4g}")
    assert row["result_elapsed_s"] == round(full["result_elapsed_s"], 6)
    assert row["ping_rtt_ms"] == round(full["ping_rtt_ms"], 3)
    assert all(len(repr(v)) <= 12 for v in row.values() if isinstance(v, float))
    assert row["stream_window_tap_median_bytes"] and len(row["stream_window_tap_max_bytes"]) == 8


def test_no_csv_cell_exceeds_a_spreadsheet_cell() -> None:
    m = _run("h2-8-streams.jsonl")
    assert m.result is not None
    many = replace(m.result, stream_bytes=tuple(range(10**7, 10**7 + 5_000)))
    row = flat.flat_row(replace(m, result=many))
    assert row["result_stream_bytes"] is None
    assert "result_stream_bytes (" in row["cells_left_out"]
    (line,) = csv.DictReader(io.StringIO(render_csv([replace(m, result=many)])))
    assert max(len(cell) for cell in line.values()) <= flat.MAX_CELL_CHARS


def test_intervals_are_the_delivery_trace_rebinned_over_the_timed_phase() -> None:
    trace = DeliveryTrace(origin_ns=1_000_000_000, bucket_ns=2_000_000, bytes=(100,) * 100)
    got = rebin(trace, 1_000_000_000, 1_150_000_000, 50.0)
    assert [i.bytes for i in got] == [2_500, 2_500, 2_500]
    assert [round(i.end_s, 3) for i in got] == [0.05, 0.1, 0.15]
    m = _run("h2-interval-100ms.jsonl")
    assert m.meta.interval_ms == 100.0 and m.result is not None
    intervals = intervals_of(m)
    assert len(intervals) == -(-m.result.elapsed_s // 0.1)  # the last one partial
    compact = [flat.round_to(i.mib_s, ("figures", 4)) for i in intervals]
    assert flat.flat_row(m)["interval_mib_s"] == compact
