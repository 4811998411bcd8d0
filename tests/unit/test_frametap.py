"""FrameTap: serialized frames in, a typed DirectionSummary out; it never raises."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace

import pytest
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

from kit.capture.frametap import CLIENT_PREFACE, FrameTap
from kit.results.codec import from_json, to_json
from kit.results.records import (
    DataTotals,
    Direction,
    DirectionSummary,
    GoawaySeen,
    PingSeen,
    ResetSeen,
    SettingsSeen,
    StreamWindowUpdate,
    WindowUpdates,
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


def _without_times(summary: DirectionSummary) -> DirectionSummary:
    """The summary with every timestamp zeroed (chunking changes only the times)."""
    conn, stream = summary.conn_window_updates, summary.stream_window_updates
    return replace(
        summary,
        settings=tuple(replace(s, t_ns=0) for s in summary.settings),
        conn_window_updates=replace(conn, first_t_ns=(0,) * len(conn.first_t_ns)),
        stream_window_updates=replace(stream, first_t_ns=(0,) * len(stream.first_t_ns)),
        stream_window_first=tuple(replace(u, t_ns=0) for u in summary.stream_window_first),
        ping_events=tuple(replace(p, t_ns=0) for p in summary.ping_events),
        goaway_events=tuple(replace(g, t_ns=0) for g in summary.goaway_events),
        reset_events=tuple(replace(r, t_ns=0) for r in summary.reset_events),
        # DATA marks are per chunk by design: only the running total is split-invariant.
        data_marks=((0, summary.data_marks[-1][1]),) if summary.data_marks else (),
        # Sampled every few ms: which totals are kept depends on the times, so each stream
        # keeps only its final total here (the last sample is always <= it).
        stream_samples=(),
    )


def test_client_direction_summary() -> None:
    tap = FrameTap("up")
    tap.feed(client_bytes(), now_ns=123)
    s = tap.summary()
    assert s.decodable and s.undecodable_reason == ""
    assert s.bytes == len(client_bytes())
    assert s.frames == 10
    assert s.settings == (
        SettingsSeen(
            123,
            False,
            {"INITIAL_WINDOW_SIZE": 4194304, "MAX_FRAME_SIZE": 4194304, "0x10": 1},
        ),
        SettingsSeen(123, True, {}),
    )
    assert s.conn_window_updates == WindowUpdates(
        count=2, total=4130769, first=(4128769, 2000), first_t_ns=(123, 123)
    )
    assert s.stream_window_updates == WindowUpdates(1, 1000, (1000,), (123,))
    assert s.stream_window_first == (StreamWindowUpdate(t_ns=123, stream_id=1, increment=1000),)
    assert (s.pings, s.ping_acks) == (1, 0)
    assert s.ping_events == (PingSeen(123, False, "0001020304050607"),)
    assert s.data == DataTotals(frames=1, bytes=40_000, max_frame=40_000)
    assert (s.headers, s.rst_stream, s.goaway) == (1, 1, 1)


def test_server_direction_settings_pings_and_data() -> None:
    tap = FrameTap("down")
    tap.feed(server_bytes(), now_ns=7)
    s = tap.summary()
    assert s.settings == (
        SettingsSeen(7, False, {"MAX_CONCURRENT_STREAMS": 100}),
        SettingsSeen(7, True, {}),
    )
    assert s.ping_events == (PingSeen(7, True, "0001020304050607"),)
    assert (s.pings, s.ping_acks) == (0, 1)
    assert s.data == DataTotals(frames=2, bytes=70_000, max_frame=70_000)  # the empty END_STREAM
    assert s.headers == 1 and s.frames == 6


def test_each_frame_is_stamped_with_the_time_of_its_own_chunk() -> None:
    tap = FrameTap("down")
    tap.feed(SettingsFrame(0, settings={3: 1}).serialize(), 10)
    tap.feed(WindowUpdateFrame(0, window_increment=9).serialize(), 20)
    ping = PingFrame(0, opaque_data=b"kr000001").serialize()
    tap.feed(ping[:5], 30)
    tap.feed(ping[5:] + WindowUpdateFrame(3, window_increment=5).serialize(), 40)
    s = tap.summary()
    assert [e.t_ns for e in s.settings] == [10]
    assert s.conn_window_updates == WindowUpdates(1, 9, (9,), (20,))
    assert s.ping_events == (PingSeen(40, False, b"kr000001".hex()),)  # completed at 40
    assert s.stream_window_updates == WindowUpdates(1, 5, (5,), (40,))
    assert s.stream_window_first == (StreamWindowUpdate(t_ns=40, stream_id=3, increment=5),)


def test_summary_is_a_frozen_record_that_survives_the_codec() -> None:
    tap = FrameTap("up")
    tap.feed(client_bytes(), 5)
    s = tap.summary()
    assert isinstance(s, DirectionSummary)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.bytes = 0  # type: ignore[misc]
    assert from_json(DirectionSummary, json.loads(json.dumps(to_json(s)))) == s


def test_summary_is_a_snapshot() -> None:
    tap = FrameTap("down")
    tap.feed(SettingsFrame(0, settings={3: 1}).serialize(), 0)
    before = tap.summary()
    before.settings[0].values.clear()  # the dict inside is the caller's own copy
    tap.feed(PingFrame(0, opaque_data=bytes(8)).serialize(), 1)
    assert before.pings == 0 and len(before.ping_events) == 0
    after = tap.summary()
    assert after.pings == 1 and after.settings[0].values == {"MAX_CONCURRENT_STREAMS": 1}


def test_a_fresh_tap_summarizes_to_the_empty_record() -> None:
    assert FrameTap("down").summary() == DirectionSummary()
    assert FrameTap("up").summary() == DirectionSummary()


def test_byte_at_a_time_matches_one_chunk() -> None:
    whole, bytewise = FrameTap("up"), FrameTap("up")
    data = client_bytes()
    whole.feed(data, 0)
    for i in range(len(data)):
        bytewise.feed(data[i : i + 1], 0)
    assert _without_times(bytewise.summary()) == _without_times(whole.summary())


def test_memoryview_input_is_accepted() -> None:
    tap = FrameTap("down")
    tap.feed(memoryview(server_bytes()), 0)
    assert tap.summary().decodable


def test_missing_preface_marks_undecodable_and_keeps_counting_bytes() -> None:
    tap = FrameTap("up")
    tap.feed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)
    tap.feed(b"more", 6)
    s = tap.summary()
    assert not s.decodable and not tap.decodable
    assert s.undecodable_reason == "no HTTP/2 client preface"
    assert s.bytes == 31 and s.frames == 0


def test_truncated_preface_is_not_a_failure_until_it_differs() -> None:
    tap = FrameTap("up")
    tap.feed(CLIENT_PREFACE[:10], 0)
    assert tap.summary().decodable
    tap.feed(CLIENT_PREFACE[10:20], 0)
    assert tap.summary().decodable
    tap.feed(b"XXXX", 0)
    assert not tap.summary().decodable


@pytest.mark.parametrize(
    ("direction", "data", "reason"),
    [
        ("up", CLIENT_PREFACE[:7], "inside the client preface"),
        ("down", SettingsFrame(0).serialize() + b"\x00\x00\x04\x08", "inside a frame (4 bytes"),
        (
            "down",
            SettingsFrame(0).serialize() + DataFrame(1, data=b"x" * 100).serialize()[:60],
            "inside a DATA frame (49 bytes missing)",
        ),
    ],
)
def test_end_inside_a_frame_or_the_preface_is_a_truncated_stream(
    direction: Direction, data: bytes, reason: str
) -> None:
    tap = FrameTap(direction)
    tap.feed(data, 0)
    assert tap.summary().decodable  # more bytes could still complete it
    tap.end()
    s = tap.summary()
    assert not s.decodable and reason in s.undecodable_reason


def test_end_after_whole_frames_or_nothing_stays_decodable() -> None:
    empty, whole = FrameTap("up"), FrameTap("down")
    whole.feed(server_bytes(), 0)
    empty.end()
    whole.end()
    assert empty.summary().decodable and whole.summary().decodable


def test_non_http2_server_bytes_are_undecodable() -> None:
    tap = FrameTap("down")
    tap.feed(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", 0)
    s = tap.summary()
    assert not s.decodable and "SETTINGS" in s.undecodable_reason


def test_absurd_non_data_length_gives_up_without_buffering() -> None:
    tap = FrameTap("down")
    tap.feed(SettingsFrame(0).serialize(), 0)
    header = (0xFFFFFF).to_bytes(3, "big") + b"\x01\x04\x00\x00\x00\x01"  # 16 MiB HEADERS
    tap.feed(header, 0)
    s = tap.summary()
    assert not s.decodable and "absurd" in s.undecodable_reason


def test_fixed_size_frame_with_wrong_length_gives_up() -> None:
    tap = FrameTap("down")
    tap.feed(SettingsFrame(0).serialize() + b"\x00\x00\x09\x06\x00\x00\x00\x00\x00", 0)
    assert "impossible length" in tap.summary().undecodable_reason


def test_bad_body_rejected_by_hyperframe_gives_up() -> None:
    tap = FrameTap("down")
    zero_increment = b"\x00\x00\x04\x08\x00\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
    tap.feed(SettingsFrame(0).serialize() + zero_increment, 0)
    s = tap.summary()
    assert not s.decodable and "decoder error" in s.undecodable_reason
    assert len(s.undecodable_reason) <= 200


def test_goaway_and_rst_stream_are_kept_with_their_codes_and_debug_data() -> None:
    tap = FrameTap("down")
    goaway = GoAwayFrame(0, last_stream_id=7, error_code=11, additional_data=b"too_many_pings")
    tap.feed(_wire(SettingsFrame(0), RstStreamFrame(5, error_code=8), goaway), 42)
    s = tap.summary()
    assert s.goaway == 1 and s.goaway_events == (GoawaySeen(42, 7, 11, "too_many_pings"),)
    assert s.rst_stream == 1 and s.reset_events == (ResetSeen(42, 5, 8),)


def test_capped_lists() -> None:
    tap = FrameTap("down")
    pings = [PingFrame(0, opaque_data=i.to_bytes(8, "big")) for i in range(2100)]
    updates = [WindowUpdateFrame(0, window_increment=1) for _ in range(100)]
    stream_updates = [WindowUpdateFrame(1 + 2 * i, window_increment=2) for i in range(70)]
    many_settings = [SettingsFrame(0, flags=["ACK"]) for _ in range(40)]
    tap.feed(_wire(SettingsFrame(0), *pings, *updates, *stream_updates, *many_settings), 0)
    s = tap.summary()
    assert s.pings == 2100 and len(s.ping_events) == 2000
    assert s.conn_window_updates.count == 100 and s.conn_window_updates.total == 100
    assert len(s.conn_window_updates.first) == len(s.conn_window_updates.first_t_ns) == 64
    assert s.stream_window_updates.count == 70 and s.stream_window_updates.total == 140
    assert len(s.stream_window_updates.first) == len(s.stream_window_first) == 64
    assert s.stream_window_first[-1].stream_id == 1 + 2 * 63
    assert len(s.settings) == 32


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
@given(
    st.sampled_from(["up", "down"]), st.lists(st.binary(max_size=64), max_size=20), st.booleans()
)
def test_random_bytes_never_raise(direction: str, chunks: list[bytes], valid_start: bool) -> None:
    tap = FrameTap("up" if direction == "up" else "down")
    if valid_start:  # get past the preface and first SETTINGS so garbage reaches frame parsing
        tap.feed((CLIENT_PREFACE if direction == "up" else b"") + SettingsFrame(0).serialize(), 0)
    for i, chunk in enumerate(chunks):
        tap.feed(chunk, i)
    s = tap.summary()
    assert s.bytes >= sum(len(c) for c in chunks)
    assert s.decodable is tap.decodable


def test_the_last_initial_window_sent_is_kept_beyond_the_settings_bound() -> None:
    """The final stream window a client advertised, even after more SETTINGS than are kept."""
    tap = FrameTap("up")
    frames = [SettingsFrame(0, settings={4: 65536 * (i + 1)}) for i in range(40)]
    frames.append(SettingsFrame(0, flags=["ACK"]))
    frames.append(SettingsFrame(0, settings={3: 100}))  # no window in it: the last one stays
    tap.feed(CLIENT_PREFACE + _wire(*frames), 1)
    summary = tap.summary()
    assert len(summary.settings) == 32
    assert summary.initial_window_last == 65536 * 40
    assert FrameTap("up").summary().initial_window_last is None


def test_stream_totals_are_sampled_per_stream_every_few_ms() -> None:
    tap = FrameTap("down")
    tap.feed(server_bytes(), 0)
    first = tap.summary().stream_samples
    assert first and all(s.t_ns == 0 for s in first)
    assert len({s.stream_id for s in first}) == len(first)  # one per stream within 5 ms
