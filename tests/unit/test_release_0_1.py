"""Records written by release 0.1 still load and render: ``tests/fixtures/release-0.1`` holds
a ``kit tables --quick`` run, five ``kit run`` records and a two-round ``kit compare``, each
with what that release printed from them.

The tables and the comparison render byte for byte as release 0.1 rendered them, but for
three sentences of product text that named the team's issue and files outside the repository
(``PRODUCT_TEXT``: the reference is named by its title now). The ``kit run`` renderings are this release's (kept to catch regressions): they differ from 0.1's in
two ways on purpose - the unary p99 follows the kit's one percentile rule (linear
interpolation, 7.06 ms where 0.1's nearest-rank rule printed 7.43 ms), and ``--json``'s
``frames`` object carries the typed field names (``median_ms``, ``window_growth`` steps).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kit.analysis.compare import CompareMeta, build_report
from kit.plan.builder import parse_candidate
from kit.plan.compare import plan_from_settings
from kit.report.compare import render_markdown, render_text, report_json
from kit.report.run import run_json, run_table
from kit.report.tables import render_tables
from kit.results.store import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1"
# (release 0.1's words, this release's words): the only differences in tables.md.
PRODUCT_TEXT = (
    (
        'SEEDS.md section A: "HTTP/2 flow-control windows: how the initial window and BDP '
        'estimation affect throughput" (grpc-go, macOS arm64',
        '"HTTP/2 flow-control windows: how the initial window and BDP estimation affect '
        'throughput", a grpc-go study (macOS arm64',
    ),
    (
        "compares with grpcio dynamic as the issue asks, which mixes in the difference between "
        "the two stacks' per-call cost. p50 and p99 pool every call of every round. A verdict "
        "(kit.stats.verdict) says",
        "compares with grpcio dynamic, as the reference does, which mixes in the difference "
        "between the two stacks' per-call cost. p50 and p99 pool every call of every round. "
        "A verdict says",
    ),
    ("## Issue 3's bars, evaluated", "## Checks against the reference, evaluated"),
    # tables are named since 0.3 (numbers are still accepted by --only)
    ("seed 1, tables 1,2,3,4.", "seed 1, tables windows,wire,starvation,unary."),
)


FRAME_FIELDS_SINCE_0_1 = {"not_decoded_bytes": 0, "peak_queued_bytes_down": 0}


def _expected(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_tables_render_byte_for_byte_as_release_0_1_did() -> None:
    read = read_records(FIXTURES / "tables.jsonl")
    assert not read.warnings and len(read.measurements) == 47
    expected = _expected("tables.md")
    for old, new in PRODUCT_TEXT:
        assert expected.count(old) == 1
        expected = expected.replace(old, new)
    assert render_tables(read, "tests/fixtures/release-0.1/tables.jsonl") == expected


def test_compare_renders_byte_for_byte_as_release_0_1_did() -> None:
    plan = plan_from_settings(
        {"rtt": "5ms", "rounds": 2, "duration": "0.3s"},
        parse_candidate("grpcio"),
        [parse_candidate("h2:window=1MiB")],
    )
    read = read_records(FIXTURES / "compare.jsonl")
    mine = [m for m in read.measurements if m.tags.campaign == plan.campaign_name]
    assert len(mine) == 6  # the campaign name of 0.1's plan is unchanged: resumable
    report = build_report(CompareMeta.of(plan), mine)
    assert render_text(report) + "\n" == _expected("compare.txt")
    assert render_markdown(report) == _expected("compare.md")
    as_json = json.dumps(report_json(report), indent=2, sort_keys=True) + "\n"
    assert as_json == _expected("compare.json")


def test_run_records_render() -> None:
    runs = read_records(FIXTURES / "runs.jsonl").measurements
    assert [m.status for m in runs] == ["ok", "ok", "ok", "ok", "failed"]
    assert "\n\n".join(run_table(m) for m in runs) + "\n" == _expected("runs.txt")
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
