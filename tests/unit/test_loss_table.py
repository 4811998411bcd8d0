"""Table 10, loss: its bounds, its check and its rendering over a real quick run of it
(``tests/fixtures/tables-quick/loss.jsonl``: the packet link, Reno, 100 Mbit/s x 50 ms)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kit.analysis.cells import group_campaigns, median_of
from kit.analysis.tables.loss import (
    bounds,
    first_byte_ms,
    goodput_bits_s,
    longest_pause_ms,
    loss_bars,
    loss_view,
    over_limit,
    to_rate_ms,
)
from kit.campaign.tables import PACKET_LINK, unbuilt_stacks
from kit.errors import KitError
from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.tables.loss import IDLE_KEY, LOSS_CONTROL, cell_key, loss_cells
from kit.plan.trial import ClientConfig, Trial, Workload
from kit.plan.units import MIB
from kit.report.tables import render_tables
from kit.results.records import DeliveryTrace, Measurement
from kit.results.store import RecordsRead, read_records

STORED = Path(__file__).resolve().parents[1] / "fixtures" / "tables-quick" / "loss.jsonl"


@pytest.fixture(scope="module")
def read() -> RecordsRead:
    return read_records(STORED)


def test_the_plan_runs_the_packet_link_with_reno_rounds_and_a_control() -> None:
    (full,) = [c.spec for c in plan_tables(TablesSettings(only=("loss",)))]
    (quick,) = [c.spec for c in plan_tables(TablesSettings(quick=True, rounds=1, only=("loss",)))]
    assert len(full.cells) == 21 and len(quick.cells) == 8
    assert full.rounds == 2 and full.control_key == quick.control_key == LOSS_CONTROL
    for cell in full.cells:
        assert cell.trial.link.kind == "packet" and cell.trial.link.congestion == "reno"
        assert cell.trial.link.rtt_ms == 50 and cell.trial.link.rate_down_bits_s == 100e6
    assert len({c.key for c in full.cells}) == len(full.cells)


def test_each_bound_and_which_binds() -> None:
    cells = {c.key: c.trial for c in loss_cells()}
    window_only = bounds(cells[cell_key(256 * 1024, 0.0)])
    assert window_only.loss is None and window_only.limit()[0] == "window"
    assert window_only.window == pytest.approx(256 * 1024 * 8 / 0.05)
    lossy = bounds(cells[cell_key(4 * MIB, 0.01)])
    # Mathis: 1448 B / 50 ms x 1.22 / sqrt(0.01) = 2.83 Mbit/s, below 4 MiB / 50 ms and the rate.
    assert lossy.limit() == ("loss", pytest.approx(2.826e6, rel=1e-3))
    one = bounds(cells[cell_key(4 * MIB, 0.001, 4, 1)])
    four = bounds(cells[cell_key(4 * MIB, 0.001, 4, 4)])
    assert four.loss == pytest.approx(4 * (one.loss or 0))  # one congestion window per connection
    assert four.window == pytest.approx(one.window)  # the connection window is 4 streams' worth


def test_a_dynamic_window_has_no_window_bound_and_a_burst_is_one_loss_event() -> None:
    cells = {c.key: c.trial for c in loss_cells()}
    for key in ("h2-dynamic-loss0%", "grpcio-loss0%"):
        assert bounds(cells[key]).window is None and bounds(cells[key]).limit()[0] == "rate"
    # 1% in bursts of mean 4 packets: loss events at 0.25%, so the bound is 2x that of 1%.
    burst, independent = bounds(cells["4MiB-burst1%:4"]), bounds(cells[cell_key(4 * MIB, 0.01)])
    assert burst.loss == pytest.approx(2 * (independent.loss or 0))
    assert bounds(cells[cell_key(4 * MIB, 0.0001)]).loss == pytest.approx(28.26e6, rel=1e-3)


def _with_trace(m: Measurement, buckets: list[int], lead: int = 0) -> Measurement:
    """``m`` whose delivery trace starts ``lead`` 2 ms buckets after its timed phase."""
    assert m.result is not None and m.frames is not None
    start = m.result.t_start_ns
    trace = DeliveryTrace(start + lead * 2_000_000, 2_000_000, tuple(buckets))
    end = start + (lead + len(buckets)) * 2_000_000
    result = dataclasses.replace(m.result, t_end_ns=end)
    frames = dataclasses.replace(m.frames, delivered_down=trace)
    return dataclasses.replace(m, result=result, frames=frames)


def test_first_byte_ramp_and_longest_pause_read_the_delivery_trace(read: RecordsRead) -> None:
    (control,) = [m for m in read.measurements if m.tags.key == LOSS_CONTROL][:1]
    # 256 KiB / 50 ms = 41.9 Mbit/s: 90% is 236 KB per 50 ms (25 buckets), which 12 KB
    # buckets (48 Mbit/s) reach after 20 of them.
    per_bucket = 12_000
    m = _with_trace(control, [0] * 9 + [17_000] + [0] * 20 + [per_bucket] * 60, lead=0)
    assert first_byte_ms(m) == pytest.approx(20.0)
    assert longest_pause_ms(m) == pytest.approx(40.0)  # 20 empty buckets after the first byte
    acks = _with_trace(control, [0] * 4 + [90] + [0] * 5 + [per_bucket] * 10)
    assert first_byte_ms(acks) == pytest.approx(22.0)  # a control frame is not the data
    ramp = to_rate_ms(m)
    assert ramp == pytest.approx(60 + 20 * 2)
    slow = _with_trace(control, [per_bucket // 4] * 100)
    assert to_rate_ms(slow) is None  # a quarter of the ceiling: never


def test_the_stored_run_renders_bounds_limits_and_retransmits(read: RecordsRead) -> None:
    text = render_tables(read, "loss.jsonl")
    table = text.split("## Table 10")[1].split("## Checks")[0]
    assert "| client " in table and "Noise floor (control `256KiB-loss0%`)" in table
    assert "grpcio dynamic" in table and "1% in bursts of 4" in table and "grows" in table
    assert "4 on 1 conn" in table and "4 on 4 conn" in table and "loss (TCP)" in table
    assert "of segments" in table and "within 0.5-2x" in table
    view = loss_view(group_campaigns(read.measurements))
    assert view is not None
    # The same loss on four connections carries more than on one (four congestion windows).
    one, four = (view.cell(cell_key(4 * MIB, 0.001, 4, n)) for n in (1, 4))
    assert one is not None and four is not None
    assert (median_of(four, goodput_bits_s) or 0) > (median_of(one, goodput_bits_s) or 0)
    assert over_limit(four) is not None


def test_the_mathis_check_holds_on_the_stored_run(read: RecordsRead) -> None:
    (bar,) = loss_bars(group_campaigns(read.measurements))
    assert bar.holds is True and "4MiB-loss1%" in bar.detail


def test_the_mathis_check_fails_outside_its_factor(read: RecordsRead) -> None:
    slow = [
        dataclasses.replace(m, result=dataclasses.replace(m.result, bytes=m.result.bytes // 10))
        if m.result is not None and m.tags.key == cell_key(4 * MIB, 0.01)
        else m
        for m in read.measurements
    ]
    (bar,) = loss_bars(group_campaigns(slow))
    assert bar.holds is False


def test_without_root_or_tun_the_packet_cells_are_skipped_with_a_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kit.campaign.tables as campaign_tables

    monkeypatch.setattr(campaign_tables, "packet_link_missing", lambda: "needs root")
    specs = [c.spec for c in plan_tables(TablesSettings(quick=True, rounds=1, only=("loss",)))]
    assert unbuilt_stacks(specs).get(PACKET_LINK) == "needs root"


def test_the_idle_cell_primes_then_idles_its_h2_connection_beside_the_cold_cell() -> None:
    cells = {c.key: c.trial for c in loss_cells(quick=True)}
    idle, cold = cells[IDLE_KEY], cells[cell_key(4 * MIB, 0.0)]
    assert idle.workload.prime_bytes == 4 * MIB and idle.workload.idle_s == 1.0
    assert cold.workload.prime_bytes is None and cold.workload.idle_s == 0
    # Everything else is the cold cell's: the same link, window and timed phase.
    assert idle.link == cold.link and idle.client == cold.client
    assert dataclasses.replace(idle.workload, prime_bytes=None, idle_s=0.0) == cold.workload


def test_the_stored_run_renders_the_idle_rows(read: RecordsRead) -> None:
    text = render_tables(read, "loss.jsonl")
    section = text.split("Slow start after idle")[1].split("Noise floor")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
    assert [r.split("|")[1].strip() for r in rows] == ["new (cold)", "after 1 s idle"]
    view = loss_view(group_campaigns(read.measurements))
    assert view is not None
    idle = view.cell(IDLE_KEY)
    assert idle is not None and idle.ok
    # The timed phase starts after the idle second: the request's way and the first data's
    # take an RTT at least (50 ms; the fixture's first 4 KiB came at 54 ms), never less.
    first = median_of(idle, first_byte_ms)
    assert first is not None and first >= 50.0
    assert f"| {first:.3g} " in rows[1]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"prime_bytes": 0}, "outside 1 B..1 GiB"),
        ({"prime_bytes": MIB, "idle_s": 61.0}, "outside 0..60 s"),
        ({"prime_bytes": MIB, "kind": "unary"}, "for downloads"),
    ],
)
def test_a_bad_priming_or_idle_gap_is_refused(changes: dict[str, object], message: str) -> None:
    with pytest.raises(KitError, match=message):
        Workload(**changes)  # type: ignore[arg-type]


def test_only_the_h2_client_primes_but_every_client_idles() -> None:
    with pytest.raises(KitError, match="the h2 client's"):
        Trial(client=ClientConfig(kind="grpcio"), workload=Workload(prime_bytes=MIB, idle_s=1.0))
    assert Trial(client=ClientConfig(kind="grpcio"), workload=Workload(idle_s=1.0))
