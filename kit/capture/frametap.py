"""Pure passive HTTP/2 decoder: the bytes of one connection direction in, a typed summary out.

A ``FrameTap`` watches a copy of what the relay forwards; it never changes, delays or drops
anything, and it never raises. On bytes that cannot be HTTP/2 (no client preface on "up",
a first frame that is not SETTINGS, a frame whose length is impossible for its type,
anything hyperframe rejects, a stream that ``end()``s inside the preface or a frame) it
marks itself undecodable with a one-line reason and only counts bytes from then on.

Speed matters: the tap runs in the delay line's decoder process (``kit.capture.decoder``),
off the forwarding path, and must keep up with more than 1 GiB/s. DATA payloads are counted
and skipped, never copied, and a DATA frame only bumps integer counters; only non-DATA
frames (small) are buffered across chunk boundaries, and only the fields the summary needs
are unpacked with ``struct`` (SETTINGS, WINDOW_UPDATE, PING; HEADERS, RST_STREAM and GOAWAY
are counted). The frame rules hyperframe enforces on those types are checked the same way.
When the decoder falls behind, the relay hands it a gap instead of the bytes (``lose``):
frame boundaries are lost, so the tap looks for them again in the next bytes (a run of
four well-formed headers, each where the previous frame's length puts it, or two that reach
the end of the chunk) and counts everything in between as not decoded ("tap incomplete").
``summary()`` builds the frozen ``DirectionSummary`` (``kit.results.records``) from those
counters when it is asked for, once per connection.

Bounded: ``settings`` keeps 32 entries, first window updates (each layer) 64, ping events
2000, DATA marks (time, DATA bytes so far, per chunk that began DATA frames) 512; the counts and totals are exact. Setting names are h2's ``SettingCodes`` names;
unknown ids appear as "0x..".
"""

from __future__ import annotations

import re
import struct

from h2.settings import SettingCodes

from kit.plan.units import MIB
from kit.results.records import (
    DataTotals,
    Direction,
    DirectionSummary,
    GoawaySeen,
    PingSeen,
    ResetSeen,
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
MAX_CLOSE_EVENTS = 16  # GOAWAY and RST_STREAM frames kept whole
MAX_DEBUG_BYTES = 64  # of a GOAWAY's debug data
# (time, DATA bytes so far) per chunk that began DATA frames: enough to check a sender
# against the peer's credit over the first hundreds of round trips.
MAX_DATA_MARKS = 512
# Per-stream running totals (WINDOW_UPDATEs up, DATA down), kept at most every 5 ms per
# stream and 2000 in all: enough to draw each stream's window, bounded whatever the run.
STREAM_SAMPLE_NS = 5_000_000
MAX_STREAM_SAMPLES = 2000
MAX_REASON_CHARS = 200

TYPE_DATA, TYPE_HEADERS, TYPE_RST_STREAM, TYPE_SETTINGS = 0x0, 0x1, 0x3, 0x4
TYPE_PING, TYPE_GOAWAY, TYPE_WINDOW_UPDATE = 0x6, 0x7, 0x8
FLAG_ACK, FLAG_PADDED, FLAG_PRIORITY = 0x1, 0x8, 0x20
# RFC 9113 (and hyperframe) tie these types to stream 0 / to a stream.
_NO_STREAM = frozenset({TYPE_SETTINGS, TYPE_PING, TYPE_GOAWAY})
_HAS_STREAM = frozenset({TYPE_HEADERS, 0x2, TYPE_RST_STREAM, 0x5, 0x9})
# RFC 9113 fixes these frame sizes; checking at the header avoids buffering garbage.
_FIXED_LENGTH = {0x2: 5, 0x3: 4, 0x6: 8, 0x8: 4}
_HEADER = struct.Struct(">HBBBL")
_SETTING = struct.Struct(">HL")
_U32 = struct.Struct(">L")
_SETTING_NAMES = {int(code): code.name for code in SettingCodes}
# Resynchronizing after a gap: where a header could start (a known type, a 31-bit stream id).
_MAYBE_HEADER = re.compile(rb"(?=[\x00-\xff]{3}[\x00-\x09][\x00-\xff][\x00-\x7f])", re.DOTALL)
SYNC_HEADERS = 4
MAX_SYNC_CANDIDATES = 4096  # per chunk: past that the chunk is counted as not decoded


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
        "_data_marks",
        "_data_max",
        "_frames",
        "_goaway",
        "_goaway_events",
        "_headers",
        "_initial_window_last",
        "_lost",
        "_pending",
        "_ping_acks",
        "_ping_events",
        "_pings",
        "_preface_left",
        "_reason",
        "_reset_events",
        "_resync",
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
        self._data_marks: list[tuple[int, int]] = []
        self._headers = 0
        self._rst_stream = 0
        self._goaway = 0
        self._goaway_events: list[GoawaySeen] = []
        self._reset_events: list[ResetSeen] = []
        self._initial_window_last: int | None = None
        self._lost = 0  # bytes handed over as a gap or skipped finding frames again
        self._resync = False
        self._stream_totals: dict[int, int] = {}
        self._stream_sampled_ns: dict[int, int] = {}
        self._stream_samples: list[StreamSample] = []

    def feed(self, data: bytes | bytearray | memoryview, now_ns: int) -> None:
        """Account for ``data`` seen at ``now_ns``. Never raises."""
        n = len(data)
        self._bytes += n
        if not self.decodable or n == 0:
            return
        if self._resync:
            data = self._find_frames(memoryview(data))
            n = len(data)
            if not n:
                return
        skip = self._skip
        if skip >= n:  # the common bulk case: a whole chunk inside one DATA payload
            self._skip = skip - n
            return
        before = self._data_bytes
        try:
            self._consume(memoryview(data), now_ns)
        except Exception as exc:  # a passive tap must never disturb forwarding
            self._give_up(f"decoder error: {type(exc).__name__}: {exc}")
        if self._data_bytes != before and len(self._data_marks) < MAX_DATA_MARKS:
            self._data_marks.append((now_ns, self._data_bytes))

    def add_data(
        self,
        frames: int,
        payload_bytes: int,
        largest: int,
        n_bytes: int,
        now_ns: int | None = None,
    ) -> None:
        """DATA frames the relay counted itself (``kit.capture.scanner``) and ``n_bytes``
        of the stream (their headers and payloads) that were not handed over."""
        self._bytes += n_bytes
        if self._resync or not self.decodable:
            self._lost += n_bytes if self._resync else 0
            return
        self._frames += frames
        self._data_frames += frames
        self._data_bytes += payload_bytes
        if largest > self._data_max:
            self._data_max = largest
        if payload_bytes and now_ns is not None and len(self._data_marks) < MAX_DATA_MARKS:
            self._data_marks.append((now_ns, self._data_bytes))

    def add_stream_data(self, stream_id: int, payload_bytes: int, now_ns: int) -> None:
        """DATA payload of one stream the relay counted itself: the server's ("down") feed
        each stream's running total, as the decoded DATA frames do."""
        if self.direction == "down" and self.decodable and not self._resync:
            self._stream_total(stream_id, payload_bytes, now_ns)

    def lose(self, n_bytes: int) -> None:
        """``n_bytes`` went by undecoded (the decoder fell behind): frame boundaries are lost
        until ``feed`` finds them again; until then bytes are counted as not decoded."""
        if n_bytes <= 0:
            return
        self._bytes += n_bytes
        self._lost += n_bytes
        self._pending = bytearray()
        self._skip = 0
        self._preface_left = 0
        self._seen_first_frame = True
        self._resync = self.decodable

    def _find_frames(self, mv: memoryview) -> memoryview:
        """After a gap: ``mv`` from the first frame header found again (empty if none)."""
        for tried, match in enumerate(_MAYBE_HEADER.finditer(mv)):
            if tried >= MAX_SYNC_CANDIDATES:
                break
            start = match.start()
            if _chains(mv, start):
                self._lost += start
                self._resync = False
                return mv[start:]
        self._lost += len(mv)
        return mv[:0]

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

    def end(self, data_missing: int = 0) -> None:
        """The direction ended (EOF). Bytes cut off inside the preface or a frame are a
        truncated stream: mark it undecodable (an empty direction stays decodable).
        ``data_missing``: the relay's scanner saw the stream end inside a DATA payload."""
        if not self.decodable or self._bytes == 0 or self._resync:
            return
        if data_missing:
            self._give_up(f"stream ended inside a DATA frame ({data_missing} bytes missing)")
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
            data_marks=tuple(self._data_marks),
            headers=self._headers,
            rst_stream=self._rst_stream,
            goaway=self._goaway,
            goaway_events=tuple(self._goaway_events),
            reset_events=tuple(self._reset_events),
            initial_window_last=self._initial_window_last,
            not_decoded_bytes=self._lost,
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
        _hi, _lo, ftype, flags, sid = _HEADER.unpack_from(raw, 0)
        sid &= 0x7FFFFFFF
        body = raw[HEADER_BYTES:]
        if ftype in _NO_STREAM and sid:
            raise ValueError(f"frame type 0x{ftype:x} on stream {sid} (must be stream 0)")
        if ftype in _HAS_STREAM and not sid:
            raise ValueError(f"frame type 0x{ftype:x} on stream 0")
        self._frames += 1
        if ftype == TYPE_WINDOW_UPDATE:
            increment = _U32.unpack_from(body, 0)[0] & 0x7FFFFFFF
            if not increment:
                raise ValueError("WINDOW_UPDATE increment must be between 1 to 2^31-1")
            layer = self._conn_updates if sid == 0 else self._stream_updates
            layer.add(sid, increment, now_ns)
            if sid and self.direction == "up":
                self._stream_total(sid, increment, now_ns)
        elif ftype == TYPE_PING:
            self._on_ping(bool(flags & FLAG_ACK), bytes(body), now_ns)
        elif ftype == TYPE_SETTINGS:
            self._on_settings(bool(flags & FLAG_ACK), body, now_ns)
        elif ftype == TYPE_HEADERS:
            _check_headers(flags, body)
            self._headers += 1
        elif ftype == TYPE_RST_STREAM:
            if len(body) != 4:
                raise ValueError("Invalid RST_STREAM body.")
            self._rst_stream += 1
            if len(self._reset_events) < MAX_CLOSE_EVENTS:
                code = _U32.unpack_from(body, 0)[0]
                self._reset_events.append(ResetSeen(now_ns, sid, code))
        elif ftype == TYPE_GOAWAY:
            if len(body) < 8:
                raise ValueError("Invalid GOAWAY body.")
            self._goaway += 1
            if len(self._goaway_events) < MAX_CLOSE_EVENTS:
                last, code = _U32.unpack_from(body, 0)[0] & 0x7FFFFFFF, _U32.unpack_from(body, 4)[0]
                debug = bytes(body[8 : 8 + MAX_DEBUG_BYTES]).decode("utf-8", "replace")
                self._goaway_events.append(GoawaySeen(now_ns, last, code, debug))

    def _on_settings(self, ack: bool, body: memoryview, now_ns: int) -> None:
        if ack and len(body):
            raise ValueError("SETTINGS ack frame must not have payload")
        if len(body) % _SETTING.size:
            raise ValueError("Invalid SETTINGS body")
        if not ack:
            for off in range(0, len(body), _SETTING.size):
                ident, value = _SETTING.unpack_from(body, off)
                if ident == SettingCodes.INITIAL_WINDOW_SIZE:
                    self._initial_window_last = value
        if len(self._settings) < MAX_SETTINGS_ENTRIES:
            values: dict[str, int] = {}
            for off in range(0, len(body), _SETTING.size):
                ident, value = _SETTING.unpack_from(body, off)
                values[setting_name(ident)] = value
            self._settings.append((now_ns, ack, values))

    def _on_ping(self, ack: bool, opaque: bytes, now_ns: int) -> None:
        if ack:
            self._ping_acks += 1
        else:
            self._pings += 1
        if len(self._ping_events) < MAX_PING_EVENTS:
            self._ping_events.append(PingSeen(now_ns, ack, opaque.hex()))

    def _give_up(self, reason: str) -> None:
        self.decodable = False
        self._pending = bytearray()
        self._skip = 0
        self._reason = reason[:MAX_REASON_CHARS]


def _check_headers(flags: int, body: memoryview) -> None:
    """Padding and priority must fit inside a HEADERS frame (as hyperframe checks them)."""
    n, pad = len(body), 0
    if flags & FLAG_PADDED:
        if not n:
            raise ValueError("Invalid Padding data")
        pad, n = body[0], n - 1
    if flags & FLAG_PRIORITY and n < 5:
        raise ValueError("Invalid Priority data")
    if pad and pad >= n:
        raise ValueError("Padding is too long.")


def _chains(mv: memoryview, off: int) -> bool:
    """Do well-formed headers follow each other from ``off`` (``SYNC_HEADERS`` of them, or
    at least two running to the end of ``mv``)?"""
    n, seen = len(mv), 0
    while seen < SYNC_HEADERS and off + HEADER_BYTES <= n:
        hi, lo, ftype, _flags, sid = _HEADER.unpack_from(mv, off)
        length = hi << 8 | lo
        if ftype > 0x9 or sid >> 31 or _FIXED_LENGTH.get(ftype, length) != length:
            return False
        if ftype != TYPE_DATA and length > MAX_NON_DATA_FRAME_BYTES:
            return False
        if (ftype in _NO_STREAM and sid) or ((ftype in _HAS_STREAM or not ftype) and not sid):
            return False
        seen += 1
        off += HEADER_BYTES + length
    return seen >= SYNC_HEADERS or (seen >= 2 and off + HEADER_BYTES > n)
