"""summary: typed tap lines -> the typed per-trial FrameSummary; tolerant tap-file reading."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hyperframe.frame import DataFrame, PingFrame, SettingsFrame, WindowUpdateFrame

from kit.capture.frametap import CLIENT_PREFACE, FrameTap
from kit.capture.summary import ping_rtts_ms, summarize
from kit.capture.tapfile import (
    TAP_SCHEMA,
    encode_tap_line,
    parse_tap_lines,
    read_tap,
    tap_connections,
)
from kit.errors import RecordsError
from kit.results.client import RTT_PROBE_PING_TAG
from kit.results.records import (
    DataTotals,
    DirectionSummary,
    FrameSummary,
    PingRtt,
    PingRtts,
    PingSeen,
    ProxyTotals,
    TapConnection,
    Undecodable,
    WindowStep,
    WindowUpdates,
)

MS = 1_000_000


def _ping(opaque: int, ack: bool = False) -> bytes:
    return PingFrame(
        0, opaque_data=opaque.to_bytes(8, "big"), flags=["ACK"] if ack else []
    ).serialize()


def make_conn(
    conn: int, t0_ns: int, window: int, increments: list[int], ping_rtts: list[float]
) -> TapConnection:
    """A connection as the relay records it, built by feeding real frames to two taps."""
    up, down = FrameTap("up"), FrameTap("down")
    up.feed(CLIENT_PREFACE + SettingsFrame(0, settings={4: window}).serialize(), t0_ns)
    down.feed(SettingsFrame(0, settings={3: 100}).serialize(), t0_ns)
    up.feed(SettingsFrame(0, settings={4: window * 4}).serialize(), t0_ns + 1)
    for i, inc in enumerate(increments):
        up.feed(WindowUpdateFrame(0, window_increment=inc).serialize(), t0_ns + 10 + i)
    up.feed(WindowUpdateFrame(1, window_increment=7).serialize(), t0_ns + 50)
    for i, rtt in enumerate(ping_rtts):
        t_ping = t0_ns + (i + 1) * 100 * MS
        up.feed(_ping(conn * 1000 + i), t_ping)
        down.feed(_ping(conn * 1000 + i, ack=True), t_ping + round(rtt * MS))
    down.feed(DataFrame(1, data=b"z" * (1000 * conn)).serialize(), t0_ns + 5)
    return TapConnection(conn, t0_ns, t0_ns + 10**9, up.summary(), down.summary())


def _line(line: TapConnection | ProxyTotals) -> str:
    return json.dumps(encode_tap_line(line), separators=(",", ":"))


# -- summarize -----------------------------------------------------------------------------


def test_single_connection_summary() -> None:
    rec = make_conn(1, 0, 65536, [100, 200, 300], [10.0, 12.0, 14.0])
    s = summarize([rec], delay_down_ms=10.0)
    assert s.connections == 1 and s.decodable and s.undecodable == ()
    assert s.client.settings == {"INITIAL_WINDOW_SIZE": 65536}
    assert s.client.settings_changes == 1
    assert s.client.conn_window_updates == WindowUpdates(3, 600, (100, 200, 300), (10, 11, 12))
    assert s.client.stream_window_updates == WindowUpdates(count=1, total=7)
    assert s.client.pings_sent == 3 and s.rtt_probe_pings == 0
    assert s.ping_rtt_ms == PingRtts(
        proxy=PingRtt(count=3, median_ms=12.0, p90_ms=13.6),
        client=PingRtt(count=3, median_ms=22.0, p90_ms=23.6),
    )
    assert s.data_down == DataTotals(frames=1, bytes=1000, max_frame=1000)
    assert s.data_up == DataTotals()
    assert s.bytes_up == rec.up.bytes and s.bytes_down == rec.down.bytes
    assert s.tap_lines_skipped == 0


def test_several_connections_are_summed_and_merged_in_time_order() -> None:
    a = make_conn(2, 5_000, 1024, list(range(1, 9)), [4.0])
    b = make_conn(1, 1_000, 2048, list(range(101, 109)), [6.0])
    s = summarize([a, b], delay_down_ms=0.0, skipped_lines=2)
    assert s.connections == 2
    assert s.client.settings == {"INITIAL_WINDOW_SIZE": 2048}  # earliest connection
    assert s.client.settings_changes == 2
    assert s.client.conn_window_updates.count == 16
    assert s.client.conn_window_updates.first == (*range(101, 109), 1, 2)
    assert s.client.conn_window_updates.first_t_ns == (*range(1_010, 1_018), 5_010, 5_011)
    assert s.client.pings_sent == 2
    assert s.ping_rtt_ms.proxy.count == 2 and s.ping_rtt_ms.proxy.median_ms == 5.0
    assert s.data_down == DataTotals(frames=2, bytes=3000, max_frame=2000)
    assert s.bytes_up == a.up.bytes + b.up.bytes
    assert s.tap_lines_skipped == 2


def test_updates_stamped_in_one_chunk_keep_their_wire_order() -> None:
    up = FrameTap("up")
    updates = b"".join(
        WindowUpdateFrame(0, window_increment=inc).serialize() for inc in (900, 5, 70)
    )
    up.feed(CLIENT_PREFACE + SettingsFrame(0).serialize() + updates, 42)
    s = summarize([TapConnection(1, 0, 1, up.summary(), DirectionSummary())], 0.0)
    assert s.client.conn_window_updates.first == (900, 5, 70)
    assert s.client.conn_window_updates.first_t_ns == (42, 42, 42)


def test_window_growth_is_the_first_connections_announced_windows_with_times() -> None:
    up = FrameTap("up")
    up.feed(CLIENT_PREFACE + SettingsFrame(0, settings={4: 65535, 3: 100}).serialize(), 100)
    up.feed(SettingsFrame(0, flags=["ACK"]).serialize(), 150)  # an ack announces nothing
    up.feed(SettingsFrame(0, settings={3: 200}).serialize(), 180)  # no window in it
    up.feed(SettingsFrame(0, settings={4: 1 << 20}).serialize(), 200)
    up.feed(SettingsFrame(0, settings={4: 4 << 20}).serialize(), 300)
    first = TapConnection(7, 10, 999, up.summary(), DirectionSummary())
    later = make_conn(3, 50, 8192, [], [])  # opened later: not the first connection
    s = summarize([later, first], delay_down_ms=0.0)
    assert s.client.window_growth == (
        WindowStep(t_ns=100, window_bytes=65535),
        WindowStep(t_ns=200, window_bytes=1 << 20),
        WindowStep(t_ns=300, window_bytes=4 << 20),
    )
    assert s.client.settings == {"INITIAL_WINDOW_SIZE": 65535, "MAX_CONCURRENT_STREAMS": 100}
    assert s.client.settings_changes == 3 + 1  # 3 later SETTINGS here, 1 on the other


def test_connections_opened_at_the_same_time_are_ordered_by_id() -> None:
    a, b = make_conn(2, 0, 1111, [], []), make_conn(1, 0, 2222, [], [])
    assert [c.conn for c in tap_connections([a, ProxyTotals(), b])] == [1, 2]
    assert summarize([a, b], 0.0).client.window_growth[0].window_bytes == 2222


def test_no_connections_gives_the_empty_summary() -> None:
    s = summarize([], delay_down_ms=5.0)
    assert s == FrameSummary()
    assert s.connections == 0 and s.client.settings == {} and s.client.window_growth == ()
    assert s.ping_rtt_ms.client == PingRtt(count=0, median_ms=None, p90_ms=None)


def test_undecodable_directions_are_listed() -> None:
    up, down = FrameTap("up"), FrameTap("down")
    up.feed(b"hello", 0)
    down.feed(b"HTTP/1.1 400", 0)
    s = summarize([TapConnection(3, 0, 1, up.summary(), down.summary())], 0.0)
    assert not s.decodable
    assert s.undecodable == (
        Undecodable(conn=3, direction="up", reason="no HTTP/2 client preface"),
        Undecodable(conn=3, direction="down", reason=down.summary().undecodable_reason),
    )


def test_ping_matching_uses_opaque_and_order() -> None:
    up = DirectionSummary(
        ping_events=(
            PingSeen(100, False, "aa"),
            PingSeen(200, False, "bb"),
            PingSeen(300, False, "aa"),
        )
    )
    down = DirectionSummary(
        ping_events=(
            PingSeen(90, True, "aa"),
            PingSeen(250, True, "bb"),
            PingSeen(350, True, "aa"),
            PingSeen(400, True, "aa"),
            PingSeen(500, False, "cc"),
        )
    )
    # the ack at 90 precedes every ping and cannot match; 350 matches the ping at 100
    assert ping_rtts_ms(up, down) == [50 / 1e6, 250 / 1e6, 100 / 1e6]


def test_kit_rtt_probe_pings_are_counted_apart() -> None:
    up, down = FrameTap("up"), FrameTap("down")
    up.feed(CLIENT_PREFACE + SettingsFrame(0, settings={4: 65536}).serialize(), 0)
    down.feed(SettingsFrame(0, settings={}).serialize(), 0)
    probe = RTT_PROBE_PING_TAG + (1).to_bytes(6, "big")
    up.feed(PingFrame(0, opaque_data=probe).serialize(), 1 * MS)
    up.feed(_ping(42), 2 * MS)  # a stack's own (e.g. BDP) PING
    down.feed(PingFrame(0, opaque_data=probe, flags=["ACK"]).serialize(), 3_500_123)
    s = summarize([TapConnection(1, 0, 10, up.summary(), down.summary())], delay_down_ms=0.0)
    assert s.client.pings_sent == 2 and s.rtt_probe_pings == 1
    assert s.ping_rtt_ms.proxy == PingRtt(count=1, median_ms=2.5, p90_ms=2.5)  # 3 decimals


# -- reading tap lines ---------------------------------------------------------------------


def test_tap_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "tap.jsonl"
    conn = make_conn(1, 0, 1024, [1], [3.0])
    totals = ProxyTotals(
        connections=1, bytes_up=10, bytes_down=20, peak_buffered_bytes=30, errors=("x",)
    )
    path.write_text(_line(conn) + "\n" + _line(totals) + "\n", encoding="utf-8")
    assert read_tap(path) == ([conn, totals], 0)


def test_a_corrupt_line_in_the_middle_is_skipped_and_counted_and_later_lines_kept() -> None:
    a, b, c = (make_conn(i, i * 100, 1024, [i], []) for i in (1, 2, 3))
    lines = [
        _line(a),
        '{"schema": 2, "kind": "co',  # torn by a crash, then the proxy restarted
        _line(b),
        '{"schema": 2, "kind": "conn", "conn": "two"}',  # JSON, but not a tap line
        '{"schema": 1, "kind": "proxy"}',  # another release's line
        "[1, 2]",
        "",
        _line(c),
        _line(ProxyTotals(connections=3)),
    ]
    parsed, skipped = parse_tap_lines("\n".join(lines) + "\n")
    assert parsed == [a, b, c, ProxyTotals(connections=3)]
    assert skipped == 4
    s = summarize(tap_connections(parsed), 0.0, skipped_lines=skipped)
    assert s.connections == 3 and s.tap_lines_skipped == 4


def test_tap_lines_keep_their_own_schema_and_a_kept_tap_file_still_reads() -> None:
    """The tap file's lines are versioned apart from records files (``kit proxy --tap-file``
    keeps one): they did not change when the records' frame summary did."""
    assert encode_tap_line(ProxyTotals(connections=2))["schema"] == TAP_SCHEMA == 2
    kept = (  # written by the release before records schema 3
        '{"schema":2,"kind":"proxy","connections":2,"bytes_up":10,"bytes_down":20,'
        '"peak_buffered_bytes":30,"errors":[],"peak_queued_bytes":0,"tap_not_decoded_bytes":0,'
        '"refused_connections":0,"accept_errors":0,"buffer_full_pauses":0}'
    )
    totals = ProxyTotals(connections=2, bytes_up=10, bytes_down=20, peak_buffered_bytes=30)
    assert parse_tap_lines(kept + "\n") == ([totals], 0)


def test_blank_and_crlf_lines_are_not_corrupt() -> None:
    text = "\r\n\n  \n" + _line(ProxyTotals(connections=2)) + "\r\n"
    assert parse_tap_lines(text) == ([ProxyTotals(connections=2)], 0)


def test_missing_tap_file_is_a_records_error(tmp_path: Path) -> None:
    with pytest.raises(RecordsError, match=r"missing\.jsonl"):
        read_tap(tmp_path / "missing.jsonl")


def test_stream_windows_are_initial_plus_updates_minus_data_interpolated() -> None:
    from kit.results.records import SettingsSeen, StreamSample, TapConnection

    up = DirectionSummary(
        settings=(SettingsSeen(0, False, {"INITIAL_WINDOW_SIZE": 16_384}),),
        stream_samples=(StreamSample(10, 1, 100_000), StreamSample(30, 1, 200_000)),
    )
    down = DirectionSummary(
        stream_samples=(
            StreamSample(0, 1, 0),
            StreamSample(20, 1, 80_000),
            StreamSample(40, 1, 160_000),
        )
    )
    summary = summarize([TapConnection(conn=1, opened_ns=0, closed_ns=50, up=up, down=down)], 0.0)
    # t=10: 16384 + 100000 - 40000 (halfway 0..80000); t=30: 16384 + 200000 - 120000
    assert [(p.t_ns, p.window_bytes) for p in summary.stream_windows] == [
        (10, 76_384),
        (30, 96_384),
    ]


def test_conn_window_at_start_counts_the_updates_before_the_first_data() -> None:
    from kit.results.records import TapConnection, WindowUpdates

    # +983041 at once (a 1 MiB connection window), then credit returned after DATA began.
    updates = WindowUpdates(count=3, total=983041 + 2 * 16384, first=(983041, 16384, 16384))
    up = DirectionSummary(conn_window_updates=replace(updates, first_t_ns=(5, 40, 60)))
    down = DirectionSummary(data_marks=((30, 16384), (50, 32768)))
    conn = TapConnection(conn=1, opened_ns=0, closed_ns=90, up=up, down=down)
    assert summarize([conn], 0.0).conn_window_start_bytes == 65535 + 983041
    no_data = TapConnection(conn=1, opened_ns=0, closed_ns=90, up=up, down=DirectionSummary())
    assert summarize([no_data], 0.0).conn_window_start_bytes is None
