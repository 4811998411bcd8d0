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
from pathlib import Path
from typing import Any

from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.flat import flat_rows, parse_csv_row
from kit.plan.builder import parse_candidate
from kit.plan.compare import plan_from_settings
from kit.plan.options import PlanOptions
from kit.report.compare import render_markdown, render_text, report_json
from kit.report.export import render_csv
from kit.report.run import run_json, run_table
from kit.report.tables import render_tables
from kit.report.terminal import markdown_for_terminal
from kit.results.store import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1"
REGENERATE = os.environ.get("KIT_REGENERATE") == "1"
WIDTH = 100


FRAME_FIELDS_SINCE_0_1 = {"not_decoded_bytes": 0, "peak_queued_bytes_down": 0}


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
    as_json = json.dumps(report_json(report), indent=2, sort_keys=True) + "\n"
    assert as_json == (FIXTURES / "compare.json").read_text(encoding="utf-8")  # 0.1's own
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
    # Every key release 0.1 printed has the same value today; later releases add keys
    # (the link's rate, uploads, per-stream sharing, the tap's completeness) beside them.
    expected = json.loads(_expected("runs.json"))
    for new, old in zip([run_json(m) for m in runs], expected, strict=True):
        _same_where_known(new, old, "run")
    # The link keys added with the bottleneck read as today's unlimited link.
    assert {k: run_json(runs[0])[k] for k in ("rate_up_bits_s", "bdp_bytes", "jitter_ms")} == {
        "rate_up_bits_s": None,
        "bdp_bytes": None,
        "jitter_ms": 0.0,
    }
    frames = run_json(runs[0])["frames"]
    assert {k: frames[k] for k in FRAME_FIELDS_SINCE_0_1} == FRAME_FIELDS_SINCE_0_1


def _same_where_known(new: Any, old: Any, where: str) -> None:
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for key, value in old.items():
            assert key in new, f"{where}.{key} is gone"
            _same_where_known(new[key], value, f"{where}.{key}")
    else:
        assert new == old, f"{where}: {new!r} != {old!r}"


def test_run_records_as_csv_round_trip_the_json_fields() -> None:
    runs = read_records(FIXTURES / "runs.jsonl").measurements
    rows = list(csv.DictReader(io.StringIO(render_csv(runs))))
    assert len(rows) == len(runs)
    assert [parse_csv_row(row) for row in rows] == flat_rows(runs)
