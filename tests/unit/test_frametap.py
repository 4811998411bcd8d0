"""FrameTap: serialized frames in, events and the summary out; it never raises."""

from __future__ import annotations

from typing import Any

from hyperframe.frame import (
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from kit.capture.frametap import (
    CLIENT_PREFACE,
    DataSeen,
    FrameTap,
    PingSeen,
    SettingsReceived,
    TapGaveUp,
    WindowUpdateSeen,
    empty_summary,
)


def _wire(*frames: Frame) -> bytes:
    return b"".join(f.serialize() for f in frames)


def client_bytes() -> bytes:
    """What a grpcio client sends first, plus a request and some traffic."""
    return CLIENT_PREFACE + _wire(
        SettingsFrame(0, settings={4: 4194304, 5: 4194304, 0x10: 1}),
        WindowUpdateFrame(0, window_increment=4128769),
        HeadersFrame(1, data=b"\x82\x86", flags=["END_HEADERS"]),
        DataFrame(1, data=b"q" * 40_000, flags=["END_STREAM"]),
        SettingsFrame(0, flags=["ACK"]),
        PingFrame(0, opaque_data=b"\x00\x01\x02\x03\x04\x05\x06\x07"),
        WindowUpdateFrame(1, window_increment=1000),
        WindowUpdateFrame(0, window_increment=2000),
        RstStreamFrame(1, error_code=8),
        GoAwayFrame(0, last_stream_id=1, error_code=0),
    )


def server_bytes() -> bytes:
    return _wire(
        SettingsFrame(0, settings={3: 100}),
        SettingsFrame(0, flags=["ACK"]),
        PingFrame(0, opaque_data=b"\x00\x01\x02\x03\x04\x05\x06\x07", flags=["ACK"]),
        HeadersFrame(1, data=b"\x88", flags=["END_HEADERS"]),
        DataFrame(1, data=b"d" * 70_000),
        DataFrame(1, data=b"", flags=["END_STREAM"]),
    )


def feed_in_chunks(tap: FrameTap, data: bytes, cuts: list[int]) -> None:
    start = 0
    for cut in sorted(set(cuts)):
        tap.feed(data[start:cut], now_ns=cut)
        start = cut
    tap.feed(data[start:], now_ns=len(data))


def _without_times(summary: dict[str, Any]) -> dict[str, Any]:
    s = dict(summary)
    s["settings"] = [dict(e, t_ns=0) for e in s["settings"]]
    s["conn_window_updates"] = dict(s["conn_window_updates"], first_t_ns=[])
    s["pings"] = dict(s["pings"], events=[[0, a, o] for _t, a, o in s["pings"]["events"]])
    return s


def test_client_direction_summary() -> None:
    tap = FrameTap("up")
    tap.feed(client_bytes(), now_ns=123)
    s = tap.summary()
    assert s["decodable"] and s["undecodable_reason"] == ""
    assert s["bytes"] == len(client_bytes())
    assert s["frames"] == 10
    first = s["settings"][0]
    assert first == {"t_ns": 123, "ack": False, "values": {
        "INITIAL_WINDOW_SIZE": 4194304, "MAX_FRAME_SIZE": 4194304, "0x10": 1}}
    assert s["settings"][1]["ack"] is True
    assert s["conn_window_updates"] == {
        "count": 2, "total": 4130769, "first": [4128769, 2000], "first_t_ns": [123, 123]}
    assert s["stream_window_updates"] == {"count": 1, "total": 1000, "first": [[1, 1000]]}
    assert s["pings"] == {"count": 1, "acks": 0, "events": [[123, False, "0001020304050607"]]}
    assert s["data"] == {"frames": 1, "bytes": 40_000, "max_frame": 40_000}
    assert (s["headers"], s["rst_stream"], s["goaway"]) == (1, 1, 1)


def test_summary_has_exactly_the_documented_keys() -> None:
    tap = FrameTap("down")
    tap.feed(server_bytes(), 0)
    assert set(tap.summary()) == set(empty_summary())
    assert set(tap.summary()) == {
        "bytes", "frames", "decodable", "undecodable_reason", "settings",
        "conn_window_updates", "stream_window_updates", "pings", "data",
        "headers", "rst_stream", "goaway"}


def test_server_direction_events() -> None:
    tap = FrameTap("down", record_events=True)
    tap.feed(server_bytes(), now_ns=7)
    events = tap.drain_events()
    assert events[0] == SettingsReceived(7, False, {"MAX_CONCURRENT_STREAMS": 100})
    assert events[1] == SettingsReceived(7, True, {})
    assert events[2] == PingSeen(7, True, "0001020304050607")
    assert DataSeen(7, 1, 70_000, False) in events
    assert DataSeen(7, 1, 0, True) in events
    assert tap.drain_events() == []
    s = tap.summary()
    assert s["pings"]["acks"] == 1 and s["pings"]["count"] == 0
    assert s["data"] == {"frames": 2, "bytes": 70_000, "max_frame": 70_000}


def test_window_update_event() -> None:
    tap = FrameTap("down", record_events=True)
    tap.feed(_wire(SettingsFrame(0), WindowUpdateFrame(3, window_increment=5)), 1)
    assert tap.drain_events()[-1] == WindowUpdateSeen(1, 3, 5)


def test_byte_at_a_time_matches_one_chunk() -> None:
    whole, bytewise = FrameTap("up"), FrameTap("up")
    data = client_bytes()
    whole.feed(data, 0)
    for i in range(len(data)):
        bytewise.feed(data[i:i + 1], 0)
    assert _without_times(bytewise.summary()) == _without_times(whole.summary())


def test_memoryview_input_is_accepted() -> None:
    tap = FrameTap("down")
    tap.feed(memoryview(server_bytes()), 0)
    assert tap.summary()["decodable"]


def test_missing_preface_marks_undecodable_and_keeps_counting_bytes() -> None:
    tap = FrameTap("up", record_events=True)
    tap.feed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)
    tap.feed(b"more", 6)
    s = tap.summary()
    assert not s["decodable"]
    assert "preface" in s["undecodable_reason"]
    assert s["bytes"] == 31
    assert isinstance(tap.drain_events()[-1], TapGaveUp)


def test_truncated_preface_is_not_a_failure_until_it_differs() -> None:
    tap = FrameTap("up")
    tap.feed(CLIENT_PREFACE[:10], 0)
    assert tap.summary()["decodable"]
    tap.feed(CLIENT_PREFACE[10:20], 0)
    assert tap.summary()["decodable"]
    tap.feed(b"XXXX", 0)
    assert not tap.summary()["decodable"]


def test_non_http2_server_bytes_are_undecodable() -> None:
    tap = FrameTap("down")
    tap.feed(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", 0)
    s = tap.summary()
    assert not s["decodable"] and "SETTINGS" in s["undecodable_reason"]


def test_absurd_non_data_length_gives_up_without_buffering() -> None:
    tap = FrameTap("down")
    tap.feed(SettingsFrame(0).serialize(), 0)
    header = (0xFFFFFF).to_bytes(3, "big") + b"\x01\x04\x00\x00\x00\x01"  # 16 MiB HEADERS
    tap.feed(header, 0)
    s = tap.summary()
    assert not s["decodable"] and "absurd" in s["undecodable_reason"]


def test_fixed_size_frame_with_wrong_length_gives_up() -> None:
    tap = FrameTap("down")
    tap.feed(SettingsFrame(0).serialize() + b"\x00\x00\x09\x06\x00\x00\x00\x00\x00", 0)
    assert "impossible length" in tap.summary()["undecodable_reason"]


def test_bad_body_rejected_by_hyperframe_gives_up() -> None:
    tap = FrameTap("down")
    zero_increment = b"\x00\x00\x04\x08\x00\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
    tap.feed(SettingsFrame(0).serialize() + zero_increment, 0)
    s = tap.summary()
    assert not s["decodable"] and "decoder error" in s["undecodable_reason"]


def test_capped_lists() -> None:
    tap = FrameTap("down")
    pings = [PingFrame(0, opaque_data=i.to_bytes(8, "big")) for i in range(2100)]
    updates = [WindowUpdateFrame(0, window_increment=1) for _ in range(100)]
    many_settings = [SettingsFrame(0, flags=["ACK"]) for _ in range(40)]
    tap.feed(_wire(SettingsFrame(0), *pings, *updates, *many_settings), 0)
    s = tap.summary()
    assert s["pings"]["count"] == 2100 and len(s["pings"]["events"]) == 2000
    assert s["conn_window_updates"]["count"] == 100
    assert len(s["conn_window_updates"]["first"]) == 64
    assert len(s["settings"]) == 32


def test_summary_is_a_copy() -> None:
    tap = FrameTap("down")
    tap.feed(SettingsFrame(0).serialize(), 0)
    tap.summary()["settings"].clear()
    assert len(tap.summary()["settings"]) == 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(client_bytes())), max_size=40))
def test_any_split_of_client_bytes_gives_the_same_summary(cuts: list[int]) -> None:
    data = client_bytes()
    whole, split = FrameTap("up"), FrameTap("up")
    whole.feed(data, 0)
    feed_in_chunks(split, data, cuts)
    assert _without_times(split.summary()) == _without_times(whole.summary())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(server_bytes())), max_size=40))
def test_any_split_of_server_bytes_gives_the_same_summary(cuts: list[int]) -> None:
    data = server_bytes()
    whole, split = FrameTap("down"), FrameTap("down")
    whole.feed(data, 0)
    feed_in_chunks(split, data, cuts)
    assert _without_times(split.summary()) == _without_times(whole.summary())


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["up", "down"]), st.lists(st.binary(max_size=64), max_size=20),
       st.booleans())
def test_random_bytes_never_raise(direction: str, chunks: list[bytes], valid_start: bool) -> None:
    tap = FrameTap("up" if direction == "up" else "down")
    if valid_start:  # get past the preface and first SETTINGS so garbage reaches frame parsing
        tap.feed((CLIENT_PREFACE if direction == "up" else b"") + SettingsFrame(0).serialize(), 0)
    for i, chunk in enumerate(chunks):
        tap.feed(chunk, i)
    s = tap.summary()
    assert s["bytes"] >= sum(len(c) for c in chunks)
    assert isinstance(s["decodable"], bool)
