"""The tap off the forwarding path: the shared ring, the decoder's records -> lines, gaps
and finding frames again, and the struct decoder agreeing with hyperframe."""

from __future__ import annotations

import json
import os
from dataclasses import replace

from hyperframe.frame import (
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    SettingsFrame,
    WindowUpdateFrame,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from kit.capture.decoder import TapDecoder
from kit.capture.frametap import CLIENT_PREFACE, FrameTap, setting_name
from kit.capture.ring import (
    KIND_BYTES,
    KIND_CONN_DONE,
    KIND_EOF,
    KIND_GAP,
    KIND_LINE,
    RECORD,
    RingReader,
    RingWriter,
    create_shared,
)
from kit.capture.scanner import DataScanner, encode_scanned, feed_scanned
from kit.capture.tapfile import decode_tap_line
from kit.results.records import TapConnection


def _wire(*frames: Frame) -> bytes:
    return b"".join(f.serialize() for f in frames)


def _ring(capacity: int) -> tuple[RingWriter, RingReader, int, int]:
    fd, buf = create_shared(capacity)
    os.close(fd)
    bell_r, bell_w = os.pipe()
    os.set_blocking(bell_w, False)
    return RingWriter(buf, bell_w), RingReader(buf), bell_r, bell_w


def test_ring_keeps_order_across_wraps_and_refuses_when_full() -> None:
    writer, reader, bell_r, bell_w = _ring(1000)
    try:
        got: list[bytes] = []
        for i in range(200):  # ~20 KiB through a 1000-byte ring: many wraps
            payload = bytes([i % 256]) * (i % 90 + 1)
            assert writer.put(KIND_BYTES, i, 0, i, payload)
            got += [bytes(r.payload) for r in reader.records()]
        assert got == [bytes([i % 256]) * (i % 90 + 1) for i in range(200)]
        # Nobody reading: puts are refused (not blocked) once the ring is full.
        accepted = sum(writer.put(KIND_BYTES, 0, 0, 0, b"x" * 100) for _ in range(20))
        assert 0 < accepted < 20
        assert writer.free_bytes() < 100 + RECORD.size
        assert not writer.put(KIND_BYTES, 0, 0, 0, b"y", keep=500)  # the reserve is kept
    finally:
        os.close(bell_r)
        os.close(bell_w)


def test_ring_put_never_blocks_on_a_full_doorbell() -> None:
    writer, reader, bell_r, bell_w = _ring(1 << 20)
    try:
        reader.set_waiting(True)  # the consumer "sleeps": every put rings
        for _ in range(70_000):  # more bell bytes than a pipe holds
            assert writer.put(KIND_EOF, 0, 0, 0)
            for _ in reader.records():
                pass
    finally:
        os.close(bell_r)
        os.close(bell_w)


def _record(
    writer: RingWriter, reader: RingReader, decoder: TapDecoder, *args: object
) -> list[str]:
    assert writer.put(*args)  # type: ignore[arg-type]
    return [line for r in reader.records() if (line := decoder.handle(r)) is not None]


def test_decoder_turns_records_into_the_same_lines_the_relay_wrote() -> None:
    writer, reader, bell_r, bell_w = _ring(1 << 20)
    decoder = TapDecoder()
    up = CLIENT_PREFACE + _wire(SettingsFrame(0, settings={4: 65535}), PingFrame(0, b"a" * 8))
    down = _wire(SettingsFrame(0), PingFrame(0, b"a" * 8, flags=["ACK"]))
    try:
        assert _record(writer, reader, decoder, KIND_BYTES, 7, 0, 100, up) == []
        assert _record(writer, reader, decoder, KIND_BYTES, 7, 1, 200, down) == []
        assert _record(writer, reader, decoder, KIND_EOF, 7, 0, 300) == []
        lines = _record(
            writer, reader, decoder, KIND_CONN_DONE, 7, 0, 900, (50).to_bytes(8, "little")
        )
        assert _record(writer, reader, decoder, KIND_LINE, 0, 0, 0, b'{"x":1}') == ['{"x":1}']
    finally:
        os.close(bell_r)
        os.close(bell_w)
    conn = decode_tap_line(json.loads(lines[0]))
    assert isinstance(conn, TapConnection)
    assert (conn.conn, conn.opened_ns, conn.closed_ns) == (7, 50, 900)
    expect_up, expect_down = FrameTap("up"), FrameTap("down")
    expect_up.feed(up, 100)
    expect_up.end()
    expect_down.feed(down, 200)
    assert conn.up == expect_up.summary() and conn.down == expect_down.summary()
    assert conn.up.not_decoded_bytes == 0 and conn.up.pings == 1


def test_a_gap_is_counted_and_frames_are_found_again() -> None:
    tap = FrameTap("up")
    tap.feed(CLIENT_PREFACE + _wire(SettingsFrame(0), PingFrame(0, b"1" * 8)), 0)
    tap.lose(1000)
    # The next chunk starts mid-frame (the tail of a DATA payload), then whole frames.
    frames = _wire(*(PingFrame(0, bytes([i]) * 8) for i in range(5)))
    tap.feed(b"\x5a" * 300 + frames, 1)
    s = tap.summary()
    assert s.decodable and s.not_decoded_bytes == 1300
    assert s.pings == 6
    assert s.bytes == len(CLIENT_PREFACE) + 9 + 17 + 1000 + 300 + len(frames)


def test_a_gap_with_nothing_recognisable_after_it_counts_it_all() -> None:
    tap = FrameTap("down")
    tap.feed(_wire(SettingsFrame(0)), 0)
    tap.lose(10)
    tap.feed(b"\xff" * 5000, 1)
    tap.end()  # ending while looking for frames is not a truncated stream
    s = tap.summary()
    assert s.decodable and s.not_decoded_bytes == 5010 and s.frames == 1


def test_decoder_gap_record() -> None:
    writer, reader, bell_r, bell_w = _ring(1 << 16)
    decoder = TapDecoder()
    try:
        _record(writer, reader, decoder, KIND_BYTES, 1, 1, 0, _wire(SettingsFrame(0)))
        _record(writer, reader, decoder, KIND_GAP, 1, 1, 0, (4096).to_bytes(8, "little"))
        lines = _record(writer, reader, decoder, KIND_CONN_DONE, 1, 0, 5, bytes(8))
    finally:
        os.close(bell_r)
        os.close(bell_w)
    conn = decode_tap_line(json.loads(lines[0]))
    assert isinstance(conn, TapConnection) and conn.down.not_decoded_bytes == 4096


# -- the struct decoder reads what hyperframe reads ------------------------------------------

# (hyperframe serializes only the low byte of a setting id, so ids stay below 256)
_frames = st.one_of(
    st.builds(
        lambda s: SettingsFrame(0, settings=s),
        st.dictionaries(st.integers(1, 0xFF), st.integers(0, 2**32 - 1), max_size=6),
    ),
    st.builds(lambda a: SettingsFrame(0, flags=["ACK"]), st.none()),
    st.builds(
        lambda sid, inc: WindowUpdateFrame(sid, window_increment=inc),
        st.integers(0, 2**31 - 1),
        st.integers(1, 2**31 - 1),
    ),
    st.builds(
        lambda data, ack: PingFrame(0, opaque_data=data, flags=["ACK"] if ack else []),
        st.binary(min_size=8, max_size=8),
        st.booleans(),
    ),
    st.builds(
        lambda sid, pad: HeadersFrame(sid, data=b"\x82", pad_length=pad, flags=["PADDED"]),
        st.integers(1, 99),
        st.integers(0, 20),
    ),
    st.builds(lambda sid: DataFrame(sid, data=b"z" * 30), st.integers(1, 99)),
    st.builds(lambda code: GoAwayFrame(0, last_stream_id=3, error_code=code), st.integers(0, 9)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_frames, max_size=12))
def test_struct_decoder_agrees_with_hyperframe(frames: list[Frame]) -> None:
    tap = FrameTap("down")
    tap.feed(_wire(SettingsFrame(0), *frames), 5)
    s = tap.summary()
    assert s.decodable, s.undecodable_reason
    settings_frames = [f for f in frames if isinstance(f, SettingsFrame)]
    assert [dict(x.values) for x in s.settings[1:]] == [
        {setting_name(k): v for k, v in f.settings.items()} for f in settings_frames
    ][: len(s.settings) - 1]
    pings = [f for f in frames if isinstance(f, PingFrame)]
    assert [p.opaque_hex for p in s.ping_events] == [bytes(p.opaque_data).hex() for p in pings]
    updates = [f for f in frames if isinstance(f, WindowUpdateFrame)]
    assert s.conn_window_updates.total == sum(
        u.window_increment for u in updates if not u.stream_id
    )
    assert s.stream_window_updates.total == sum(u.window_increment for u in updates if u.stream_id)
    assert s.headers == sum(isinstance(f, HeadersFrame) for f in frames)
    assert s.goaway == sum(isinstance(f, GoAwayFrame) for f in frames)


def test_rules_hyperframe_enforced_still_give_up() -> None:
    bad = [
        b"\x00\x00\x08\x06\x00\x00\x00\x00\x01" + bytes(8),  # PING on stream 1
        b"\x00\x00\x06\x04\x01\x00\x00\x00\x00" + bytes(6),  # SETTINGS ACK with a payload
        b"\x00\x00\x05\x04\x00\x00\x00\x00\x00" + bytes(5),  # SETTINGS of 5 bytes
        b"\x00\x00\x02\x01\x08\x00\x00\x00\x01" + b"\x05\x82",  # HEADERS padding too long
        b"\x00\x00\x04\x07\x00\x00\x00\x00\x00" + bytes(4),  # GOAWAY shorter than 8
        b"\x00\x00\x01\x01\x04\x00\x00\x00\x00" + b"\x82",  # HEADERS on stream 0
    ]
    for frame_bytes in bad:
        tap = FrameTap("down")
        tap.feed(_wire(SettingsFrame(0)) + frame_bytes, 0)
        s = tap.summary()
        assert not s.decodable and "decoder error" in s.undecodable_reason, frame_bytes


# -- the relay's scanner: DATA payload held back, the same summary --------------------------


def _through_scanner(direction: str, data: bytes, cuts: list[int]) -> FrameTap:
    """What the decoder's tap makes of ``data`` cut at ``cuts`` and scanned by the relay."""
    scanner, tap = DataScanner(client_side=direction == "up"), FrameTap(direction)  # type: ignore[arg-type]
    start = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        chunk = data[start:cut]
        start = cut
        if not chunk:
            continue
        scanned = scanner.split(chunk)
        if scanned is None or (not scanned[0] and scanned[1] == [(0, len(chunk))]):
            tap.feed(chunk, cut)
        else:
            record = encode_scanned(chunk, *scanned, scanner.take_data(), scanner.span)
            feed_scanned(tap, memoryview(record), cut)
    held = scanner.take_held()
    if held:
        tap.feed(held, len(data))
    tap.end(scanner.in_data_payload)
    return tap


def _bulk_bytes(direction: str) -> bytes:
    frames = [DataFrame(1, data=b"d" * (1000 * i + 1)) for i in range(1, 12)]
    frames += [PingFrame(0, b"p" * 8), WindowUpdateFrame(0, window_increment=99)]
    frames += [DataFrame(3, data=b"e" * 70_000), HeadersFrame(3, data=b"\x88")]
    frames += [DataFrame(3, data=b""), WindowUpdateFrame(3, window_increment=5)]
    head = CLIENT_PREFACE if direction == "up" else b""
    return head + _wire(SettingsFrame(0, settings={4: 65535}), *frames)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["up", "down"]),
    st.lists(st.integers(min_value=0, max_value=len(_bulk_bytes("up"))), max_size=30),
)
def test_scanned_chunks_give_the_same_summary(direction: str, cuts: list[int]) -> None:
    data = _bulk_bytes(direction)
    direct = FrameTap(direction)  # type: ignore[arg-type]
    direct.feed(data, 0)
    direct.end()
    scanned = _through_scanner(direction, data, cuts)
    a, b = direct.summary(), scanned.summary()
    assert b.decodable and b.not_decoded_bytes == 0, b.undecodable_reason
    assert (a.bytes, a.frames, a.data, a.pings, a.headers) == (
        b.bytes,
        b.frames,
        b.data,
        b.pings,
        b.headers,
    )
    assert a.conn_window_updates == replace(
        b.conn_window_updates, first_t_ns=a.conn_window_updates.first_t_ns
    )
    assert a.stream_window_updates.total == b.stream_window_updates.total
    assert [s.values for s in a.settings] == [s.values for s in b.settings]


def test_the_relay_counts_bulk_data_itself_and_hands_over_almost_nothing() -> None:
    data = _wire(SettingsFrame(0), *(DataFrame(1, data=b"z" * 16384) for _ in range(64)))
    scanner = DataScanner(client_side=False)
    scanned = scanner.split(data)
    assert scanned is not None
    carried, pieces = scanned
    assert carried == b"" and pieces == [(0, 9)]  # the first frame (SETTINGS) only
    assert scanner.take_data() == (64, 64 * 16384, 16384)


def test_a_stream_that_starts_with_data_is_still_caught() -> None:
    tap = _through_scanner("down", _wire(DataFrame(1, data=b"x" * 100)), [50])
    assert not tap.summary().decodable and "not SETTINGS" in tap.summary().undecodable_reason


def test_a_stream_cut_inside_a_data_payload_is_still_caught() -> None:
    data = _wire(SettingsFrame(0), DataFrame(1, data=b"x" * 1000))[:-10]
    s = _through_scanner("down", data, [100]).summary()
    assert not s.decodable and "inside a DATA frame (10 bytes missing)" in s.undecodable_reason


def test_a_header_cut_by_the_end_of_the_stream_is_still_caught() -> None:
    data = _wire(SettingsFrame(0)) + b"\x00\x00\x04\x08\x00\x00\x00"
    s = _through_scanner("down", data, [9]).summary()
    assert not s.decodable and "inside a frame" in s.undecodable_reason and s.bytes == 16


def test_the_scanner_stops_walking_a_flood_and_hands_it_over_whole() -> None:
    flood = _wire(SettingsFrame(0), *(PingFrame(0, b"f" * 8) for _ in range(500)))
    scanner = DataScanner(client_side=False)
    assert scanner.split(flood) == (b"", [(0, len(flood))])
    assert scanner.whole and scanner.split(flood) is None


def test_garbage_through_the_scanner_never_raises() -> None:
    rng = __import__("random").Random(3)
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        cuts = [rng.randrange(300) for _ in range(3)]
        tap = _through_scanner("down", _wire(SettingsFrame(0)) + data, cuts)
        assert tap.summary().bytes == 9 + len(data)


def test_the_bell_rings_for_records_someone_waits_for_not_for_every_chunk() -> None:
    """A waiting decoder is woken by a control record (urgent) and by a ring filling up,
    not by each chunk of bytes: those wait for its next poll."""
    writer, reader, bell_r, bell_w = _ring(8000)
    os.set_blocking(bell_r, False)

    def rang() -> bool:
        try:
            return bool(os.read(bell_r, 64))
        except BlockingIOError:
            return False

    try:
        assert not reader.set_waiting(True)
        assert writer.put(KIND_BYTES, 1, 0, 0, b"x" * 100, urgent=False)
        assert not rang()  # a chunk: no bell
        assert writer.put(KIND_BYTES, 1, 0, 0, b"x" * 1000, urgent=False)
        assert rang()  # past 1/8 of the ring taken: the bell
        assert writer.put(KIND_CONN_DONE, 1, 0, 0, b"")
        assert rang()  # a control record: the bell
        reader.set_waiting(False)
        assert writer.put(KIND_EOF, 1, 0, 0)
        assert not rang()  # nobody waits: no system call at all
    finally:
        os.close(bell_r)
        os.close(bell_w)
