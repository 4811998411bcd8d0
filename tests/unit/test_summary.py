"""summary: tap records -> the report's frame summary; tolerant tap-file reading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hyperframe.frame import DataFrame, PingFrame, SettingsFrame, WindowUpdateFrame

from kit.capture.frametap import CLIENT_PREFACE, FrameTap
from kit.capture.summary import (
    RTT_PROBE_PING_TAG,
    conn_record,
    parse_tap_lines,
    percentile,
    ping_rtts_ms,
    proxy_record,
    read_tap,
    summarize,
)
from kit.errors import RecordsError

MS = 1_000_000


def _ping(opaque: int, ack: bool = False) -> bytes:
    return PingFrame(0, opaque_data=opaque.to_bytes(8, "big"),
                     flags=["ACK"] if ack else []).serialize()


def make_conn(conn: int, t0_ns: int, window: int, increments: list[int],
              ping_rtts_ms_: list[float]) -> dict[str, Any]:
    """A connection as the relay records it, built by feeding real frames to two taps."""
    up, down = FrameTap("up"), FrameTap("down")
    up.feed(CLIENT_PREFACE + SettingsFrame(0, settings={4: window}).serialize(), t0_ns)
    down.feed(SettingsFrame(0, settings={3: 100}).serialize(), t0_ns)
    up.feed(SettingsFrame(0, settings={4: window * 4}).serialize(), t0_ns + 1)
    for i, inc in enumerate(increments):
        up.feed(WindowUpdateFrame(0, window_increment=inc).serialize(), t0_ns + 10 + i)
    up.feed(WindowUpdateFrame(1, window_increment=7).serialize(), t0_ns + 50)
    for i, rtt in enumerate(ping_rtts_ms_):
        t_ping = t0_ns + (i + 1) * 100 * MS
        up.feed(_ping(conn * 1000 + i), t_ping)
        down.feed(_ping(conn * 1000 + i, ack=True), t_ping + round(rtt * MS))
    down.feed(DataFrame(1, data=b"z" * (1000 * conn)).serialize(), t0_ns + 5)
    return conn_record(conn, t0_ns, t0_ns + 10**9, up.summary(), down.summary())


def test_single_connection_summary() -> None:
    rec = make_conn(1, 0, 65536, [100, 200, 300], [10.0, 12.0, 14.0])
    s = summarize([rec], delay_down_ms=10.0)
    assert s["connections"] == 1 and s["decodable"] and s["undecodable"] == []
    assert s["client_settings"] == {"INITIAL_WINDOW_SIZE": 65536}
    assert s["client_settings_changes"] == 1
    assert s["conn_window_updates"] == {"count": 3, "total": 600, "first": [100, 200, 300]}
    assert s["stream_window_updates"] == {"count": 1, "total": 7}
    assert s["pings_sent"] == 3
    assert s["ping_rtt_ms"]["proxy"] == {"count": 3, "median": 12.0, "p90": 13.6}
    assert s["ping_rtt_ms"]["client"] == {"count": 3, "median": 22.0, "p90": 23.6}
    assert s["data_down"] == {"frames": 1, "bytes": 1000, "max_frame": 1000}


def test_several_connections_are_summed_and_merged_in_time_order() -> None:
    a = make_conn(2, 5_000, 1024, list(range(1, 9)), [4.0])
    b = make_conn(1, 1_000, 2048, list(range(101, 109)), [6.0])
    s = summarize([a, b, {"kind": "proxy"}], delay_down_ms=0.0)
    assert s["connections"] == 2
    assert s["client_settings"] == {"INITIAL_WINDOW_SIZE": 2048}  # earliest connection
    assert s["conn_window_updates"]["count"] == 16
    assert s["conn_window_updates"]["first"] == [*range(101, 109), 1, 2]
    assert s["pings_sent"] == 2
    assert s["ping_rtt_ms"]["proxy"]["count"] == 2
    assert s["data_down"] == {"frames": 2, "bytes": 3000, "max_frame": 2000}


def test_no_connections_gives_empty_but_complete_summary() -> None:
    s = summarize([], delay_down_ms=5.0)
    assert s["connections"] == 0 and s["client_settings"] == {}
    assert s["ping_rtt_ms"]["client"] == {"count": 0, "median": None, "p90": None}


def test_undecodable_directions_are_listed() -> None:
    up, down = FrameTap("up"), FrameTap("down")
    up.feed(b"hello", 0)
    rec = conn_record(3, 0, 1, up.summary(), down.summary())
    s = summarize([rec], 0.0)
    assert not s["decodable"]
    assert s["undecodable"] == [{"conn": 3, "direction": "up",
                                 "reason": "no HTTP/2 client preface"}]


def test_ping_matching_uses_opaque_and_order() -> None:
    up = {"pings": {"events": [[100, False, "aa"], [200, False, "bb"], [300, False, "aa"]]}}
    down = {"pings": {"events": [[90, True, "aa"], [250, True, "bb"], [350, True, "aa"],
                                 [400, True, "aa"], [500, False, "cc"]]}}
    # the ack at 90 precedes every ping and cannot match; 350 matches the ping at 100
    assert ping_rtts_ms(up, down) == [50 / 1e6, 250 / 1e6, 100 / 1e6]


def test_percentile_interpolates() -> None:
    assert percentile([1.0], 90) == 1.0
    assert percentile([0.0, 10.0], 90) == 9.0


def test_tap_file_round_trip_with_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "tap.jsonl"
    rec = make_conn(1, 0, 1024, [1], [])
    lines = [json.dumps(rec), json.dumps(proxy_record(1, 10, 20, 30, ["x"]))]
    path.write_text("\n".join(lines) + '\n{"kind": "co', encoding="utf-8")
    records = read_tap(path)
    assert [r["kind"] for r in records] == ["conn", "proxy"]
    assert records[1] == {"kind": "proxy", "connections": 1, "bytes_up": 10, "bytes_down": 20,
                          "peak_buffered_bytes": 30, "errors": ["x"]}


def test_corrupt_middle_line_is_an_error() -> None:
    with pytest.raises(RecordsError, match="line 1"):
        parse_tap_lines('{"kind": \n{"kind": "proxy"}\n')


def test_missing_tap_file_is_a_records_error(tmp_path: Path) -> None:
    with pytest.raises(RecordsError):
        read_tap(tmp_path / "missing.jsonl")


def test_kit_rtt_probe_pings_are_counted_apart() -> None:
    up, down = FrameTap("up"), FrameTap("down")
    up.feed(CLIENT_PREFACE + SettingsFrame(0, settings={4: 65536}).serialize(), 0)
    down.feed(SettingsFrame(0, settings={}).serialize(), 0)
    probe = RTT_PROBE_PING_TAG + (1).to_bytes(6, "big")
    up.feed(PingFrame(0, opaque_data=probe).serialize(), 1)
    up.feed(_ping(42), 2)  # a stack's own (e.g. BDP) PING
    down.feed(PingFrame(0, opaque_data=probe, flags=["ACK"]).serialize(), 3)
    s = summarize([conn_record(1, 0, 10, up.summary(), down.summary())], delay_down_ms=0.0)
    assert s["pings_sent"] == 2 and s["rtt_probe_pings"] == 1
