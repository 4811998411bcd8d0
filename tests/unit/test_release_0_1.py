"""Records written by release 0.1 still load and render: ``tests/fixtures/release-0.1`` holds
a ``kit tables --quick`` run, five ``kit run`` records and a two-round ``kit compare``, each
with what that release printed from them (``tables.md``, ``compare.*``, ``runs.*``).

This release renders them differently on purpose, so its renderings are kept beside 0.1's as
``*.expected.*`` and compared byte for byte (regenerate them deliberately with
``KIT_REGENERATE=1 pytest tests/unit/test_release_0_1.py`` and review the diff):

- numbers in three significant figures (0.1 printed one decimal: ``471.7`` is now ``472``);
- the reference named by its title, grpc's extension setting 0xfe03 by its name;
- terminal renderings (``kit run``, ``kit compare``, ``kit report`` of a tables run) fit 100
  columns; the ``kit run`` table abbreviates SETTINGS (``--verbose`` for all of them);
- ``kit run --json`` is the flat row of ``kit.analysis.flat`` (the ``--csv`` schema).

The numbers themselves are the records': the comparison's JSON (full precision) is still
byte for byte 0.1's, and the unary p99 follows the kit's one percentile rule (linear
interpolation, 7.06 ms where 0.1's nearest-rank rule printed 7.43 ms).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.flat import flat_row, flat_rows, parse_csv_row
from kit.plan.builder import parse_candidate
from kit.plan.compare import plan_from_settings
from kit.plan.options import PlanOptions
from kit.report.compare import render_markdown, render_text, report_json
from kit.report.export import render_csv
from kit.report.run import run_table
from kit.report.tables import render_tables
from kit.report.terminal import markdown_for_terminal
from kit.results.records import Measurement
from kit.results.store import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1"
REGENERATE = os.environ.get("KIT_REGENERATE") == "1"
WIDTH = 100


FRAME_FIELDS_SINCE_0_1 = {"not_decoded_bytes": 0, "peak_queued_bytes_down": 0}
# 0.1's ``kit run --json`` keys whose fact is a flat-row column of another name today (the
# other keys are columns of the same name; ``frames`` and ``meta`` hold ``frames_*`` and
# ``meta_*`` columns, named by their paths).
COLUMN_OF_0_1 = {
    "bytes": "result_bytes",
    "client": "client_kind",
    "connections": "client_connections",
    "cpu_bound": "cpu_bound_roles",
    "delay_down_ms": "link_delay_down_ms",
    "delay_up_ms": "link_delay_up_ms",
    "elapsed_s": "result_elapsed_s",
    "messages": "result_messages",
    "mode": "client_window_mode",
    "read_rate_bits_s": "workload_read_rate_bits_s",
    "slow_streams": "workload_slow_streams",
    "stream_finish_s": "result_stream_finish_s",
    "streams": "workload_streams",
    "window_policy": "client_window_mode",
    "workload": "workload_kind",
}
Row = dict[str, Any]
# The facts 0.1 printed in a shape of its own: null for "none" or "does not apply", CPU
# shares rounded to 0.1%, the latency percentiles as one object.
SHAPED_IN_0_1: dict[str, Callable[[Measurement, Row], Any]] = {
    "error": lambda m, row: m.error or None,
    "notes": lambda m, row: row["result_notes"] or [],
    "cpu": lambda m, row: {c.role: round(c.cpu_fraction, 3) for c in m.cpu},
    "conn_credit": lambda m, row: row["client_conn_credit"] if _h2(m) else None,
    "credit_policy": lambda m, row: row["client_threshold_policy"] if _h2(m) else None,
    "pool_bytes": lambda m, row: (
        row["client_pool_size_bytes"] if row["client_window_mode"] == "pool" else None
    ),
    "stream_peak_unread_bytes": lambda m, row: row["result_stream_peak_unread_bytes"] or None,
    "stream_window_bytes": lambda m, row: row["result_stream_window_bytes"] or None,
    "latency_ms": lambda m, row: (
        None
        if row["latency_mean_ms"] is None
        else {k: row[f"latency_{k}_ms"] for k in ("mean", "p50", "p99")}
    ),
}


def _h2(m: Measurement) -> bool:
    return m.trial.client.kind == "h2"


def _expected(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _matches(name: str, text: str) -> None:
    """``text`` is the kept rendering ``name`` (or becomes it, when regenerating)."""
    path = FIXTURES / name
    if REGENERATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _fits(text: str) -> None:
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert wide == [], f"{len(wide)} line(s) wider than {WIDTH} columns"


def test_tables_render_stably_and_fit_a_terminal() -> None:
    read = read_records(FIXTURES / "tables.jsonl")
    assert not read.warnings and len(read.measurements) == 47
    markdown = render_tables(read, "tests/fixtures/release-0.1/tables.jsonl")
    _matches("tables.expected.md", markdown)
    laid_out = markdown_for_terminal(markdown, WIDTH)
    _matches("tables.expected.txt", laid_out)
    _fits(laid_out)
    for word in ("SEEDS", "Issue", "issue's", "0xfe03="):
        assert word not in markdown


def test_compare_renders_stably_and_its_numbers_are_0_1s() -> None:
    plan = plan_from_settings(
        PlanOptions(rtt="5ms", rounds=2, duration="0.3s"),
        parse_candidate("grpcio"),
        [parse_candidate("h2:window=1MiB")],
    )
    read = read_records(FIXTURES / "compare.jsonl")
    mine = [m for m in read.measurements if m.tags.campaign == plan.campaign_name]
    assert len(mine) == 6  # the campaign name of 0.1's plan is unchanged: resumable
    report = build_report(CompareMeta.of(plan), mine)
    text = render_text(report) + "\n"
    _matches("compare.expected.txt", text)
    _fits(text)
    _matches("compare.expected.md", render_markdown(report))
    # Every key 0.1's JSON has keeps 0.1's value (later releases add keys beside them: the
    # ratio and its interval), but for the warnings: the interval rule (0.2) replaced the
    # "this verdict is fragile" rounds warning and says why 2 rounds give no interval.
    now = json.loads(json.dumps(report_json(report)))
    old = json.loads((FIXTURES / "compare.json").read_text(encoding="utf-8"))  # 0.1's own
    kept = [k for k in old if k not in ("warnings", "rows")]
    assert {k: now[k] for k in kept} == {k: old[k] for k in kept}
    for row, old_row in zip(now["rows"], old["rows"], strict=True):
        assert {k: v for k, v in row.items() if k in old_row and k != "warnings"} == {
            k: v for k, v in old_row.items() if k != "warnings"
        }
    assert now["warnings"][1:] == old["warnings"][1:]
    assert now["warnings"][0].startswith(old["warnings"][0])  # "only 2 round(s)...", and why
    rebuilt = build_report(CompareMeta.of_records(mine), mine)  # what `kit report` shows
    assert render_text(rebuilt) == render_text(report)


def test_run_records_render_stably() -> None:
    runs = read_records(FIXTURES / "runs.jsonl").measurements
    assert [m.status for m in runs] == ["ok", "ok", "ok", "ok", "failed"]
    text = "\n\n".join(run_table(m) for m in runs) + "\n"
    _matches("runs.expected.txt", text)
    _fits(text)
    verbose = "\n\n".join(run_table(m, verbose=True) for m in runs)
    _fits(verbose)
    assert "GRPC_ALLOW_TRUE_BINARY_METADATA=1" in verbose and "0xfe03" not in verbose
    flat = json.dumps(flat_rows(runs), indent=2, sort_keys=True) + "\n"
    _matches("runs.expected.json", flat)
    # Every fact release 0.1's `kit run --json` printed has the same value today, in the
    # full flat row (or the typed record); later releases add columns (the link's rate,
    # uploads, per-stream sharing, the tap's completeness) beside them. The compact row
    # (without --full) rounds them and leaves the time series out.
    expected = json.loads(_expected("runs.json"))
    for m, row, old in zip(runs, flat_rows(runs, full=True), expected, strict=True):
        for key, value in old.items():
            if key in SHAPED_IN_0_1:
                assert SHAPED_IN_0_1[key](m, row) == value, f"run.{key}"
            else:
                _same_in_row(row, COLUMN_OF_0_1.get(key, key), value)
    # The link columns added with the bottleneck read as today's unlimited link.
    assert {k: flat_row(runs[0])[k] for k in ("rate_up_bits_s", "bdp_bytes", "jitter_ms")} == {
        "rate_up_bits_s": None,
        "bdp_bytes": None,
        "jitter_ms": 0.0,
    }
    frames = runs[0].frames
    assert frames is not None
    assert {k: getattr(frames, k) for k in FRAME_FIELDS_SINCE_0_1} == FRAME_FIELDS_SINCE_0_1


def _same_in_row(row: Row, column: str, old: Any) -> None:
    """0.1's value ``old`` is column ``column`` of the row, or (an object) the columns named
    by its paths below ``column``: ``frames.conn_window_updates.count`` is
    ``frames_conn_window_updates_count``. An object 0.1 printed as null (no machine load)
    is every one of those columns null."""
    if column in row:
        assert row[column] == old, f"{column}: {row[column]!r} != {old!r}"
        return
    below = [name for name in row if name.startswith(column + "_")]
    assert below, f"{column} is gone"
    if old is None:
        assert all(row[name] is None for name in below), column
        return
    assert isinstance(old, dict), column
    for key, value in old.items():
        _same_in_row(row, f"{column}_{key}", value)


def test_run_records_as_csv_round_trip_the_json_fields() -> None:
    runs = read_records(FIXTURES / "runs.jsonl").measurements
    for full in (False, True):
        rows = list(csv.DictReader(io.StringIO(render_csv(runs, full))))
        assert len(rows) == len(runs)
        assert [parse_csv_row(row) for row in rows] == flat_rows(runs, full)
