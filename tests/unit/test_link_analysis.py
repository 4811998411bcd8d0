"""The link's figures: ramp to 90% of the rate, steady state, final window, peak queue."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kit.analysis.link import mbit_s, ramp
from kit.capture.summary import merge_traces, summarize
from kit.results.records import (
    DeliveryTrace,
    DirectionSummary,
    LinkConnection,
    LinkSide,
    SettingsSeen,
    TapConnection,
)

MS = 1_000_000
BUCKET = 2 * MS
RATE = 100e6  # 25 kB per 2 ms bucket


def _trace(buckets: list[int], origin_ns: int = 0) -> DeliveryTrace:
    return DeliveryTrace(origin_ns, BUCKET, tuple(buckets))


def test_ramp_finds_the_first_rtt_at_90_percent_and_the_steady_rate() -> None:
    # 20 ms of nothing, 20 ms at half the rate, then the full rate for 160 ms.
    buckets = [0] * 10 + [12_500] * 10 + [25_000] * 80
    r = ramp(_trace(buckets), RATE, rtt_ms=20, start_ns=0, end_ns=200 * MS)
    assert r.window_ms == 20
    # The 20 ms window first holds 90% (225 kB) with 8 full buckets and 2 half ones: 56 ms.
    assert r.to_fraction_ms == 56
    assert r.to_fraction_bytes == 10 * 12_500 + 8 * 25_000
    assert r.steady_bits_s == pytest.approx(RATE)


def test_ramp_counts_from_the_request_even_before_the_first_byte() -> None:
    buckets = [25_000] * 50
    r = ramp(_trace(buckets, origin_ns=30 * MS), RATE, 20, start_ns=0, end_ns=130 * MS)
    assert r.to_fraction_ms == 30 + 18  # 30 ms before the first byte, then 9 of 10 buckets


def test_ramp_that_never_gets_there() -> None:
    r = ramp(_trace([1000] * 100), RATE, 20, 0, 200 * MS)
    assert r.to_fraction_ms is None and r.to_fraction_bytes is None
    assert r.steady_bits_s == pytest.approx(1000 * 8 / 0.002)


def test_merge_traces_aligns_connections_on_one_time_axis() -> None:
    a, b = _trace([1, 2, 3], origin_ns=0), _trace([10, 10], origin_ns=4 * MS)
    assert merge_traces([a, b]) == _trace([1, 2, 13, 10])
    assert merge_traces([]) == DeliveryTrace()


def test_mbit_s_is_decimal() -> None:
    assert mbit_s(1.0) == pytest.approx(8.388608)
    assert mbit_s(None) is None


def test_summary_takes_the_final_window_and_the_links_figures_from_the_tap() -> None:
    sent = SettingsSeen(t_ns=1, ack=False, values={"MAX_FRAME_SIZE": 16384})
    conn = TapConnection(conn=1, opened_ns=0, closed_ns=10, up=DirectionSummary(settings=(sent,)))
    down = LinkSide(peak_queued_bytes=5000, delivered=_trace([1, 2]))
    links = {1: LinkConnection(conn=1, opened_ns=0, down=down)}
    summary = summarize([conn], delay_down_ms=10, links=links)
    assert summary.window_final_bytes == 65_535  # SETTINGS without a window: the default
    assert summary.peak_queued_bytes_down == 5000
    assert summary.delivered_down == _trace([1, 2])
    grown = replace(conn, up=replace(conn.up, initial_window_last=4 << 20))
    assert summarize([grown], 10).window_final_bytes == 4 << 20
    assert summarize([replace(conn, up=DirectionSummary())], 10).window_final_bytes is None
    assert summarize([conn], 10).peak_queued_bytes_down == 0  # no link line: nothing queued
