"""Pure passive HTTP/2 decoder: the bytes of one connection direction in, a typed summary out.

A ``FrameTap`` watches a copy of what the relay forwards; it never changes, delays or drops
anything, and it never raises. On bytes that cannot be HTTP/2 (no client preface on "up",
a first frame that is not SETTINGS, a frame whose length is impossible for its type,
anything hyperframe rejects, a stream that ``end()``s inside the preface or a frame) it
marks itself undecodable with a one-line reason and only counts bytes from then on.

Speed matters: the tap runs on the relay's hot path at more than 1 GiB/s. DATA payloads are
counted and skipped, never copied, and a DATA frame only bumps integer counters (no object
is built per DATA frame); only non-DATA frames (small) are buffered across chunk boundaries
and parsed with hyperframe. ``summary()`` builds the frozen ``DirectionSummary``
(``kit.results.records``) from those counters when it is asked for, once per connection.

Bounded: ``settings`` keeps 32 entries, first window updates (each layer) 64, ping events
2000; the counts and totals are exact. Setting names are h2's ``SettingCodes`` names;
unknown ids appear as "0x..".
"""

from __future__ import annotations

import struct

from h2.settings import SettingCodes
from hyperframe.frame import (
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

from kit.plan.units import MIB
from kit.results.records import (
    DataTotals,
    Direction,
    DirectionSummary,
    PingSeen,
    SettingsSeen,
    StreamSample,
    StreamWindowUpdate,
    WindowUpdates,
)

CLIENT_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADER_BYTES = 9
# A 24-bit length can never exceed 2^24-1 (SETTINGS_MAX_FRAME_SIZE's ceiling). Non-DATA
# frames are buffered, so they get a much lower cap: gRPC headers are a few KiB at most.
MAX_NON_DATA_FRAME_BYTES = MIB
MAX_SETTINGS_ENTRIES = 32
MAX_FIRST_UPDATES = 64
MAX_PING_EVENTS = 2000
# Per-stream running totals (WINDOW_UPDATEs up, DATA down), kept at most every 5 ms per
# stream and 2000 in all: enough to draw each stream's window, bounded whatever the run.
STREAM_SAMPLE_NS = 5_000_000
MAX_STREAM_SAMPLES = 2000
MAX_REASON_CHARS = 200

TYPE_DATA, TYPE_HEADERS, TYPE_SETTINGS = 0x0, 0x1, 0x4
# RFC 9113 fixes these frame sizes; checking at the header avoids buffering garbage.
_FIXED_LENGTH = {0x2: 5, 0x3: 4, 0x6: 8, 0x8: 4}
_HEADER = struct.Struct(">HBBBL")
_SETTING_NAMES = {int(code): code.name for code in SettingCodes}


def setting_name(ident: int) -> str:
    return _SETTING_NAMES.get(ident, f"0x{ident:x}")


class _Updates:
    """Running WINDOW_UPDATE counters of one layer (connection or stream)."""

    __slots__ = ("count", "first", "first_sid", "first_t_ns", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0
        self.first: list[int] = []
        self.first_t_ns: list[int] = []
        self.first_sid: list[int] = []

    def add(self, stream_id: int, increment: int, now_ns: int) -> None:
        self.count += 1
        self.total += increment
        if len(self.first) < MAX_FIRST_UPDATES:
            self.first.append(increment)
            self.first_t_ns.append(now_ns)
            self.first_sid.append(stream_id)

    def frozen(self) -> WindowUpdates:
        return WindowUpdates(self.count, self.total, tuple(self.first), tuple(self.first_t_ns))

    def per_stream(self) -> tuple[StreamWindowUpdate, ...]:
        return tuple(
            StreamWindowUpdate(t_ns, sid, inc)
            for t_ns, sid, inc in zip(self.first_t_ns, self.first_sid, self.first, strict=True)
        )


class FrameTap:
    """Passive decoder for one direction ("up" = client->server, which starts with a preface)."""

    __slots__ = (
        "_bytes",
        "_conn_updates",
        "_data_bytes",
        "_data_frames",
        "_data_max",
        "_frames",
        "_goaway",
        "_headers",
        "_pending",
        "_ping_acks",
        "_ping_events",
        "_pings",
        "_preface_left",
        "_reason",
        "_rst_stream",
        "_seen_first_frame",
        "_settings",
        "_skip",
        "_stream_sampled_ns",
        "_stream_samples",
        "_stream_totals",
        "_stream_updates",
        "decodable",
        "direction",
    )

    def __init__(self, direction: Direction) -> None:
        if direction not in ("up", "down"):
            raise ValueError(f"direction: {direction!r} is not 'up' or 'down'")
        self.direction: Direction = direction
        self._bytes = 0
        self._frames = 0
        self.decodable = True
        self._reason = ""
        self._preface_left = len(CLIENT_PREFACE) if direction == "up" else 0
        self._skip = 0  # DATA payload bytes still to skip
        self._pending = bytearray()  # a partial header or partial non-DATA frame
        self._seen_first_frame = False
        self._settings: list[tuple[int, bool, dict[str, int]]] = []
        self._conn_updates = _Updates()
        self._stream_updates = _Updates()
        self._pings = 0
        self._ping_acks = 0
        self._ping_events: list[PingSeen] = []
        self._data_frames = 0
        self._data_bytes = 0
        self._data_max = 0
        self._headers = 0
        self._rst_stream = 0
        self._goaway = 0
        self._stream_totals: dict[int, int] = {}
        self._stream_sampled_ns: dict[int, int] = {}
        self._stream_samples: list[StreamSample] = []

    def feed(self, data: bytes | bytearray | memoryview, now_ns: int) -> None:
        """Account for ``data`` seen at ``now_ns``. Never raises."""
        n = len(data)
        self._bytes += n
        if not self.decodable or n == 0:
            return
        skip = self._skip
        if skip >= n:  # the common bulk case: a whole chunk inside one DATA payload
            self._skip = skip - n
            return
        try:
            self._consume(memoryview(data), now_ns)
        except Exception as exc:  # a passive tap must never disturb forwarding
            self._give_up(f"decoder error: {type(exc).__name__}: {exc}")

    def _stream_total(self, sid: int, add: int, now_ns: int) -> None:
        """A stream's running total grew (at a frame's header): the client's WINDOW_UPDATEs
        ("up") are all kept, the server's DATA ("down") at most every 5 ms per stream."""
        total = self._stream_totals.get(sid, 0) + add
        self._stream_totals[sid] = total
        last_ns = self._stream_sampled_ns.get(sid)
        due = self.direction == "up" or last_ns is None or now_ns - last_ns >= STREAM_SAMPLE_NS
        if due and len(self._stream_samples) < MAX_STREAM_SAMPLES:
            self._stream_samples.append(StreamSample(now_ns, sid, total))
            self._stream_sampled_ns[sid] = now_ns

    def end(self) -> None:
        """The direction ended (EOF). Bytes cut off inside the preface or a frame are a
        truncated stream: mark it undecodable (an empty direction stays decodable)."""
        if not self.decodable or self._bytes == 0:
            return
        if self._preface_left:
            self._give_up("stream ended inside the client preface (truncated)")
        elif self._pending:
            self._give_up(f"stream ended inside a frame ({len(self._pending)} bytes of it)")
        elif self._skip:
            self._give_up(f"stream ended inside a DATA frame ({self._skip} bytes missing)")

    def summary(self) -> DirectionSummary:
        """Everything seen so far, as a frozen record (built now; the tap keeps counting)."""
        return DirectionSummary(
            bytes=self._bytes,
            frames=self._frames,
            decodable=self.decodable,
            undecodable_reason=self._reason,
            settings=tuple(SettingsSeen(t, ack, dict(v)) for t, ack, v in self._settings),
            conn_window_updates=self._conn_updates.frozen(),
            stream_window_updates=self._stream_updates.frozen(),
            stream_window_first=self._stream_updates.per_stream(),
            pings=self._pings,
            ping_acks=self._ping_acks,
            ping_events=tuple(self._ping_events),
            data=DataTotals(self._data_frames, self._data_bytes, self._data_max),
            headers=self._headers,
            rst_stream=self._rst_stream,
            goaway=self._goaway,
            stream_samples=tuple(self._stream_samples),
        )

    # -- decoding ---------------------------------------------------------------------------

    def _consume(self, mv: memoryview, now_ns: int) -> None:
        n = len(mv)
        off = min(self._skip, n)
        self._skip -= off
        if self._preface_left and off < n:
            off = self._eat_preface(mv, off)
        if self._pending and off < n:
            off = self._fill_pending(mv, off, now_ns)
        while off < n and self.decodable:
            if n - off < HEADER_BYTES:
                self._pending = bytearray(mv[off:])
                return
            length = self._check_header(mv, off)
            if length < 0:
                return
            if mv[off + 3] == TYPE_DATA:
                self._data(length)
                if self.direction == "down":
                    sid = int.from_bytes(mv[off + 5 : off + 9], "big") & 0x7FFF_FFFF
                    self._stream_total(sid, length, now_ns)
                body_end = off + HEADER_BYTES + length
                if body_end > n:
                    self._skip = body_end - n
                    return
                off = body_end
                continue
            end = off + HEADER_BYTES + length
            if end > n:
                self._pending = bytearray(mv[off:])
                return
            self._frame(mv[off:end], now_ns)
            off = end

    def _eat_preface(self, mv: memoryview, off: int) -> int:
        start = len(CLIENT_PREFACE) - self._preface_left
        take = min(self._preface_left, len(mv) - off)
        if mv[off : off + take] != CLIENT_PREFACE[start : start + take]:
            self._give_up("no HTTP/2 client preface")
            return len(mv)
        self._preface_left -= take
        return off + take

    def _fill_pending(self, mv: memoryview, off: int, now_ns: int) -> int:
        """Complete the frame whose start was buffered by an earlier chunk."""
        pending, n = self._pending, len(mv)
        if len(pending) < HEADER_BYTES:
            take = min(HEADER_BYTES - len(pending), n - off)
            pending += mv[off : off + take]
            off += take
            if len(pending) < HEADER_BYTES:
                return off
            length = self._check_header(memoryview(pending), 0)
            if length < 0:
                return n
            if pending[3] == TYPE_DATA:
                if self.direction == "down":
                    sid = int.from_bytes(pending[5:9], "big") & 0x7FFF_FFFF
                    self._stream_total(sid, length, now_ns)
                self._pending = bytearray()
                self._data(length)
                take = min(length, n - off)
                self._skip = length - take
                return off + take
        total = HEADER_BYTES + (pending[0] << 16 | pending[1] << 8 | pending[2])
        take = min(total - len(pending), n - off)
        pending += mv[off : off + take]
        if len(pending) == total:
            self._pending = bytearray()
            self._frame(memoryview(pending), now_ns)
        return off + take

    def _check_header(self, mv: memoryview, off: int) -> int:
        """Frame length, or -1 after giving up on a header no HTTP/2 peer would send."""
        hi, lo, ftype, flags, _sid = _HEADER.unpack_from(mv, off)
        length: int = hi << 8 | lo
        reason = ""
        if not self._seen_first_frame and (ftype != TYPE_SETTINGS or flags & 0x1):
            reason = f"first frame is type 0x{ftype:x}, not SETTINGS (not HTTP/2?)"
        elif ftype in _FIXED_LENGTH and length != _FIXED_LENGTH[ftype]:
            reason = f"frame type 0x{ftype:x} with impossible length {length}"
        elif ftype != TYPE_DATA and length > MAX_NON_DATA_FRAME_BYTES:
            reason = f"non-DATA frame type 0x{ftype:x} of {length} bytes (absurd length)"
        if reason:
            self._give_up(reason)
            return -1
        self._seen_first_frame = True
        return length

    def _data(self, length: int) -> None:
        # The bulk path: plain integer counters only (no allocation per DATA frame).
        self._frames += 1
        self._data_frames += 1
        self._data_bytes += length
        if length > self._data_max:
            self._data_max = length

    def _frame(self, raw: memoryview, now_ns: int) -> None:
        frame, _length = Frame.parse_frame_header(raw[:HEADER_BYTES])
        frame.parse_body(raw[HEADER_BYTES:])
        self._frames += 1
        if isinstance(frame, SettingsFrame):
            self._on_settings(frame, now_ns)
        elif isinstance(frame, WindowUpdateFrame):
            layer = self._conn_updates if frame.stream_id == 0 else self._stream_updates
            layer.add(frame.stream_id, frame.window_increment, now_ns)
            if frame.stream_id and self.direction == "up":
                self._stream_total(frame.stream_id, frame.window_increment, now_ns)
        elif isinstance(frame, PingFrame):
            self._on_ping(frame, now_ns)
        elif isinstance(frame, HeadersFrame):
            self._headers += 1
        elif isinstance(frame, RstStreamFrame):
            self._rst_stream += 1
        elif isinstance(frame, GoAwayFrame):
            self._goaway += 1

    def _on_settings(self, frame: SettingsFrame, now_ns: int) -> None:
        if len(self._settings) < MAX_SETTINGS_ENTRIES:
            values = {setting_name(k): v for k, v in frame.settings.items()}
            self._settings.append((now_ns, "ACK" in frame.flags, values))

    def _on_ping(self, frame: PingFrame, now_ns: int) -> None:
        ack = "ACK" in frame.flags
        if ack:
            self._ping_acks += 1
        else:
            self._pings += 1
        if len(self._ping_events) < MAX_PING_EVENTS:
            self._ping_events.append(PingSeen(now_ns, ack, bytes(frame.opaque_data).hex()))

    def _give_up(self, reason: str) -> None:
        self.decodable = False
        self._pending = bytearray()
        self._skip = 0
        self._reason = reason[:MAX_REASON_CHARS]
