"""Table 9, the receive-window policies: plan, analysis, checks and rendering over a real
quick run of it (``tests/fixtures/tables-quick/policies.jsonl``), plus the pure pieces a
quick run cannot pin down (the committed-credit figure, a model check that fails)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tables_support import synthetic

from kit.analysis.cells import CampaignView, group_campaigns
from kit.analysis.tables import evaluate_bars
from kit.analysis.tables.policies import committed_bytes, model_bar, model_ratios
from kit.plan.tables import TablesSettings, parse_only, plan_tables
from kit.plan.tables.policies import (
    POLICIES_LINKS_CAMPAIGN,
    POLICY_LINK_CASES,
    POLICY_NAMES,
    link_key,
    links_cells,
    real_key,
    sharing_cells,
)
from kit.report.tables import render_tables
from kit.results.records import (
    DeliveryTrace,
    FrameSummary,
    Measurement,
    RunTags,
    StreamWindowPoint,
)
from kit.results.store import RecordsRead, read_records

STORED = Path(__file__).resolve().parents[1] / "fixtures" / "tables-quick" / "policies.jsonl"


@pytest.fixture(scope="module")
def read() -> RecordsRead:
    return read_records(STORED)


def test_the_plan_covers_every_policy_link_and_stream_count() -> None:
    full = links_cells(quick=False)
    assert len(full) == len(POLICY_LINK_CASES) * 2 * (len(POLICY_NAMES) + 4)
    assert {c.trial.workload.warmup for c in full} == {False}  # cold connections
    assert {c.trial.workload.streams for c in full} == {1, 4}
    assert len(links_cells(quick=True)) == 2 * (len(POLICY_NAMES) + 4)  # one link
    assert len(sharing_cells(quick=True)) == 2 * len(POLICY_NAMES)
    tonic = next(c for c in full if c.key.endswith("real-tonic"))
    assert tonic.trial.client.channel_options == (("http2_adaptive_window", 1),)
    assert "policies" in parse_only(None)  # in the default run and make tables
    names = [c.name for c in plan_tables(TablesSettings(quick=True, only=("policies",)))]
    assert names == ["table9-links", "table9-sharing"]


def test_checks_over_the_quick_run(read: RecordsRead) -> None:
    bars = [b for b in evaluate_bars(group_campaigns(read.measurements)) if "policies:" in b.name]
    assert len(bars) == 4
    assert bars[0].holds is True, bars[0]  # physics: no policy above the link's rate
    go = next(b for b in bars if "grpc-go model" in b.name)
    assert go.holds is not None or go.undecided, go  # both sides measured


def test_the_model_beside_the_real_stack(read: RecordsRead) -> None:
    ratios = model_ratios(group_campaigns(read.measurements)[POLICIES_LINKS_CAMPAIGN])
    go = [r for r in ratios if r.stack == "grpc-go"]
    assert [(r.link, r.streams) for r in go] == [("100Mbit-20ms", 1), ("100Mbit-20ms", 4)]
    assert all(r.throughput is not None and 0.5 < r.throughput < 2.0 for r in go)
    for stack in ("grpc-java", "tonic"):  # their models beside them, from the same rounds
        pair = [r for r in ratios if r.stack == stack]
        assert pair and all(r.throughput is not None for r in pair), pair


def test_the_report_renders_both_parts(read: RecordsRead) -> None:
    text = render_tables(read, "policies.jsonl")
    assert "## Table 9: receive-window policies side by side" in text
    for part in ("### A. ", "#### 100 Mbit/s x 20 ms", "### B. ", "models beside the real"):
        assert part in text
    assert "grpc-go (model)" in text and "grpc-go 1.85.0 (real)" in text
    assert "quic-go (model, QUIC's rules on HTTP/2)" in text
    assert "tonic 0.14.9 (real)" in text and "peak committed" in text
    assert text.count("Noise floor (control ") == 2


def _frames(points: list[tuple[int, int, int]]) -> FrameSummary:
    return FrameSummary(stream_windows=tuple(StreamWindowPoint(t, s, w) for t, s, w in points))


def test_committed_credit_is_the_peak_sum_of_open_stream_windows() -> None:
    cell = links_cells(quick=True)[0]
    m = synthetic(cell.trial, RunTags(), mib_s=10.0)
    # stream 1 opens 100, stream 3 opens 50 (sum 150), stream 1 drains to 20 (sum 70)
    m = replace(m, frames=_frames([(1, 1, 100), (2, 3, 50), (3, 1, 20), (4, 3, 60)]))
    assert committed_bytes(m) == 150.0
    assert committed_bytes(replace(m, frames=_frames([]))) is None


def _model_records(model_mib_s: float, real_mib_s: float) -> dict[str, CampaignView]:
    cells = {c.key: c for c in links_cells(quick=True)}
    case = POLICY_LINK_CASES[0]
    records = []
    for i in range(3):
        for key, mib_s in (
            (link_key(case, 1, "grpc-java"), model_mib_s),
            (real_key(case, 1, "grpc-java"), real_mib_s),
        ):
            tags = RunTags(campaign=POLICIES_LINKS_CAMPAIGN, round=i, key=key, run_id=f"{key}{i}")
            records.append(synthetic(cells[key].trial, tags, mib_s=mib_s + 0.01 * i))
    return group_campaigns(records)


def test_a_model_check_holds_or_fails_on_throughput() -> None:
    assert model_bar(_model_records(10.0, 10.2), "grpc-java").holds is True
    fails = model_bar(_model_records(6.0, 10.0), "grpc-java")
    assert fails.holds is False and "100Mbit-20ms x1 0.60" in fails.detail
    assert model_bar(_model_records(10.0, 10.0), "tonic").holds is None  # not measured


def _with_delivery(m: Measurement, late_ms: int) -> Measurement:
    """``m`` as if its link delivered 1.2 MiB per 100 ms from ``late_ms`` after the client's
    start to its end (10 ms buckets), the client's clock counting the wait."""
    assert m.result is not None
    bucket = 10 * 1_000_000
    n = round(m.result.elapsed_s * 1000 / 10)
    trace = DeliveryTrace(0, bucket, (0,) * (late_ms // 10) + (120 * 1024,) * (n - late_ms // 10))
    down = round(m.trial.link.delay_down_ms * 1e6)
    result = replace(m.result, t_start_ns=0, t_end_ns=n * bucket + down)
    return replace(m, result=result, frames=FrameSummary(delivered_down=trace))


def test_the_model_check_judges_the_delivered_rate_not_a_late_first_request() -> None:
    """Real grpc-java's client sends its first request 40-120 ms late (a fresh JVM): its own
    throughput is lower, the link's delivery from the first byte the same as the model's."""
    views = _model_records(11.5, 10.3)  # the clients' own figures: 1.12
    records = [
        _with_delivery(m, 100 if m.tags.key.endswith("real-grpc-java") else 0)
        for view in views.values()
        for cell in view.cells
        for m in cell.runs
    ]
    bar = model_bar(group_campaigns(records), "grpc-java")
    assert bar.holds is True, bar.detail
    (ratio,) = [r for r in model_ratios(group_campaigns(records)[POLICIES_LINKS_CAMPAIGN])]
    assert ratio.throughput is not None and ratio.throughput > 1.1
    assert ratio.delivered == pytest.approx(1.0) and ratio.judged == ratio.delivered
