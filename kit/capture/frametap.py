"""Pure passive HTTP/2 decoder: the bytes of one connection direction in, frame facts out.

A ``FrameTap`` watches a copy of what the relay forwards; it never changes, delays or drops
anything, and it never raises. On bytes that cannot be HTTP/2 (no client preface on "up",
a first frame that is not SETTINGS, a frame whose length is impossible for its type,
anything hyperframe rejects, a stream that ``end()``s inside the preface or a frame) it
marks itself undecodable with a one-line reason and only counts bytes from then on.

Speed matters: the tap runs on the relay's hot path at more than 1 GiB/s. DATA payloads are
counted and skipped, never copied; only non-DATA frames (small) are buffered across chunk
boundaries and parsed with hyperframe. Events (small frozen dataclasses) are built only when
``record_events=True``; the relay keeps just the running ``summary()``.

``summary()`` shape (the orchestrator and reports depend on it; see kit.capture.summary)::

    {"bytes": int, "frames": int, "decodable": bool, "undecodable_reason": str,
     "settings": [{"t_ns": int, "ack": bool, "values": {"INITIAL_WINDOW_SIZE": 65536, ...}}],
     "conn_window_updates": {"count": int, "total": int, "first": [inc, ...],
                             "first_t_ns": [t_ns, ...]},
     "stream_window_updates": {"count": int, "total": int, "first": [[stream_id, inc], ...]},
     "pings": {"count": int, "acks": int, "events": [[t_ns, is_ack, opaque_hex], ...]},
     "data": {"frames": int, "bytes": int, "max_frame": int},
     "headers": int, "rst_stream": int, "goaway": int}

``settings`` keeps 32 entries, ``first``/``first_t_ns`` 64, ping ``events`` 2000.
Setting names are h2's ``SettingCodes`` names; unknown ids appear as "0x..".
"""

from __future__ import annotations

import copy
import struct
from dataclasses import dataclass
from typing import Any, Literal

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

Direction = Literal["up", "down"]

CLIENT_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADER_BYTES = 9
# A 24-bit length can never exceed 2^24-1 (SETTINGS_MAX_FRAME_SIZE's ceiling). Non-DATA
# frames are buffered, so they get a much lower cap: gRPC headers are a few KiB at most.
MAX_NON_DATA_FRAME_BYTES = 1024 * 1024
MAX_SETTINGS_ENTRIES = 32
MAX_FIRST_UPDATES = 64
MAX_PING_EVENTS = 2000

TYPE_DATA, TYPE_HEADERS, TYPE_SETTINGS = 0x0, 0x1, 0x4
# RFC 9113 fixes these frame sizes; checking at the header avoids buffering garbage.
_FIXED_LENGTH = {0x2: 5, 0x3: 4, 0x6: 8, 0x8: 4}
_HEADER = struct.Struct(">HBBBL")
_SETTING_NAMES = {int(code): code.name for code in SettingCodes}


@dataclass(frozen=True)
class SettingsReceived:
    t_ns: int
    ack: bool
    values: dict[str, int]


@dataclass(frozen=True)
class WindowUpdateSeen:
    t_ns: int
    stream_id: int
    increment: int


@dataclass(frozen=True)
class PingSeen:
    t_ns: int
    ack: bool
    opaque_hex: str


@dataclass(frozen=True)
class DataSeen:
    t_ns: int
    stream_id: int
    length: int
    end_stream: bool


@dataclass(frozen=True)
class HeadersSeen:
    t_ns: int
    stream_id: int


@dataclass(frozen=True)
class StreamReset:
    t_ns: int
    stream_id: int
    error_code: int


@dataclass(frozen=True)
class GoAwaySeen:
    t_ns: int
    last_stream_id: int
    error_code: int


@dataclass(frozen=True)
class TapGaveUp:
    t_ns: int
    reason: str


Event = (
    SettingsReceived | WindowUpdateSeen | PingSeen | DataSeen | HeadersSeen | StreamReset
    | GoAwaySeen | TapGaveUp
)


def setting_name(ident: int) -> str:
    return _SETTING_NAMES.get(ident, f"0x{ident:x}")


def empty_summary() -> dict[str, Any]:
    return {
        "bytes": 0, "frames": 0, "decodable": True, "undecodable_reason": "",
        "settings": [],
        "conn_window_updates": {"count": 0, "total": 0, "first": [], "first_t_ns": []},
        "stream_window_updates": {"count": 0, "total": 0, "first": []},
        "pings": {"count": 0, "acks": 0, "events": []},
        "data": {"frames": 0, "bytes": 0, "max_frame": 0},
        "headers": 0, "rst_stream": 0, "goaway": 0,
    }


class FrameTap:
    """Passive decoder for one direction ("up" = client->server, which starts with a preface)."""

    def __init__(self, direction: Direction, *, record_events: bool = False) -> None:
        if direction not in ("up", "down"):
            raise ValueError(f"direction: {direction!r} is not 'up' or 'down'")
        self.direction = direction
        self._summary = empty_summary()
        self._preface_left = len(CLIENT_PREFACE) if direction == "up" else 0
        self._skip = 0  # DATA payload bytes still to skip
        self._pending = bytearray()  # a partial header or partial non-DATA frame
        self._seen_first_frame = False
        self._record = record_events
        self._events: list[Event] = []
        self.decodable = True

    def feed(self, data: bytes | bytearray | memoryview, now_ns: int) -> None:
        """Account for ``data`` seen at ``now_ns``. Never raises."""
        n = len(data)
        self._summary["bytes"] += n
        if not self.decodable or n == 0:
            return
        skip = self._skip
        if skip >= n:  # the common bulk case: a whole chunk inside one DATA payload
            self._skip = skip - n
            return
        try:
            self._consume(memoryview(data), now_ns)
        except Exception as exc:  # a passive tap must never disturb forwarding
            self._give_up(f"decoder error: {type(exc).__name__}: {exc}", now_ns)

    def end(self, now_ns: int) -> None:
        """The direction ended (EOF). Bytes cut off inside the preface or a frame are a
        truncated stream: mark it undecodable (an empty direction stays decodable)."""
        if not self.decodable or self._summary["bytes"] == 0:
            return
        if self._preface_left:
            self._give_up("stream ended inside the client preface (truncated)", now_ns)
        elif self._pending:
            self._give_up(f"stream ended inside a frame ({len(self._pending)} bytes of it)", now_ns)
        elif self._skip:
            self._give_up(f"stream ended inside a DATA frame ({self._skip} bytes missing)", now_ns)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready copy of the running summary (shape in the module docstring)."""
        return copy.deepcopy(self._summary)

    def drain_events(self) -> list[Event]:
        """Events since the last call (only collected with ``record_events=True``)."""
        events, self._events = self._events, []
        return events

    # -- decoding ---------------------------------------------------------------------------

    def _consume(self, mv: memoryview, now_ns: int) -> None:
        n = len(mv)
        off = min(self._skip, n)
        self._skip -= off
        if self._preface_left and off < n:
            off = self._eat_preface(mv, off, now_ns)
        if self._pending and off < n:
            off = self._fill_pending(mv, off, now_ns)
        while off < n and self.decodable:
            if n - off < HEADER_BYTES:
                self._pending = bytearray(mv[off:])
                return
            length = self._check_header(mv, off, now_ns)
            if length < 0:
                return
            if mv[off + 3] == TYPE_DATA:
                self._data(mv, off, length, now_ns)
                off += HEADER_BYTES + min(length, n - off - HEADER_BYTES)
                continue
            end = off + HEADER_BYTES + length
            if end > n:
                self._pending = bytearray(mv[off:])
                return
            self._frame(mv[off:end], now_ns)
            off = end

    def _eat_preface(self, mv: memoryview, off: int, now_ns: int) -> int:
        start = len(CLIENT_PREFACE) - self._preface_left
        take = min(self._preface_left, len(mv) - off)
        if mv[off:off + take] != CLIENT_PREFACE[start:start + take]:
            self._give_up("no HTTP/2 client preface", now_ns)
            return len(mv)
        self._preface_left -= take
        return off + take

    def _fill_pending(self, mv: memoryview, off: int, now_ns: int) -> int:
        """Complete the frame whose start was buffered by an earlier chunk."""
        pending, n = self._pending, len(mv)
        if len(pending) < HEADER_BYTES:
            take = min(HEADER_BYTES - len(pending), n - off)
            pending += mv[off:off + take]
            off += take
            if len(pending) < HEADER_BYTES:
                return off
            length = self._check_header(memoryview(pending), 0, now_ns)
            if length < 0:
                return n
            if pending[3] == TYPE_DATA:
                self._pending = bytearray()
                self._data(memoryview(pending), 0, length, now_ns)
                self._skip = length
                take = min(length, n - off)
                self._skip -= take
                return off + take
        total = HEADER_BYTES + (pending[0] << 16 | pending[1] << 8 | pending[2])
        take = min(total - len(pending), n - off)
        pending += mv[off:off + take]
        if len(pending) == total:
            self._pending = bytearray()
            self._frame(memoryview(pending), now_ns)
        return off + take

    def _check_header(self, mv: memoryview, off: int, now_ns: int) -> int:
        """Frame length, or -1 after giving up on a header no HTTP/2 peer would send."""
        hi, lo, ftype, flags, _sid = _HEADER.unpack_from(mv, off)
        length = hi << 8 | lo
        reason = ""
        if not self._seen_first_frame and (ftype != TYPE_SETTINGS or flags & 0x1):
            reason = f"first frame is type 0x{ftype:x}, not SETTINGS (not HTTP/2?)"
        elif ftype in _FIXED_LENGTH and length != _FIXED_LENGTH[ftype]:
            reason = f"frame type 0x{ftype:x} with impossible length {length}"
        elif ftype != TYPE_DATA and length > MAX_NON_DATA_FRAME_BYTES:
            reason = f"non-DATA frame type 0x{ftype:x} of {length} bytes (absurd length)"
        if reason:
            self._give_up(reason, now_ns)
            return -1
        self._seen_first_frame = True
        return length

    def _data(self, mv: memoryview, off: int, length: int, now_ns: int) -> None:
        self._summary["frames"] += 1
        data = self._summary["data"]
        data["frames"] += 1
        data["bytes"] += length
        if length > data["max_frame"]:
            data["max_frame"] = length
        if self._record:
            sid = int.from_bytes(mv[off + 5:off + 9], "big") & 0x7FFFFFFF
            self._events.append(DataSeen(now_ns, sid, length, bool(mv[off + 4] & 0x1)))
        if off + HEADER_BYTES + length > len(mv):
            self._skip = off + HEADER_BYTES + length - len(mv)

    def _frame(self, raw: memoryview, now_ns: int) -> None:
        frame, _length = Frame.parse_frame_header(raw[:HEADER_BYTES])
        frame.parse_body(raw[HEADER_BYTES:])
        self._summary["frames"] += 1
        event = self._account(frame, now_ns)
        if event is not None and self._record:
            self._events.append(event)

    def _account(self, frame: Frame, now_ns: int) -> Event | None:
        if isinstance(frame, SettingsFrame):
            return self._settings(frame, now_ns)
        if isinstance(frame, WindowUpdateFrame):
            return self._window_update(frame, now_ns)
        if isinstance(frame, PingFrame):
            return self._ping(frame, now_ns)
        s = self._summary
        if isinstance(frame, HeadersFrame):
            s["headers"] += 1
            return HeadersSeen(now_ns, frame.stream_id)
        if isinstance(frame, RstStreamFrame):
            s["rst_stream"] += 1
            return StreamReset(now_ns, frame.stream_id, frame.error_code)
        if isinstance(frame, GoAwayFrame):
            s["goaway"] += 1
            return GoAwaySeen(now_ns, frame.last_stream_id, frame.error_code)
        return None

    def _settings(self, frame: SettingsFrame, now_ns: int) -> SettingsReceived:
        values = {setting_name(k): v for k, v in frame.settings.items()}
        ack = "ACK" in frame.flags
        entries = self._summary["settings"]
        if len(entries) < MAX_SETTINGS_ENTRIES:
            entries.append({"t_ns": now_ns, "ack": ack, "values": values})
        return SettingsReceived(now_ns, ack, values)

    def _window_update(self, frame: WindowUpdateFrame, now_ns: int) -> WindowUpdateSeen:
        inc, sid = frame.window_increment, frame.stream_id
        if sid == 0:
            wu = self._summary["conn_window_updates"]
            if len(wu["first"]) < MAX_FIRST_UPDATES:
                wu["first"].append(inc)
                wu["first_t_ns"].append(now_ns)
        else:
            wu = self._summary["stream_window_updates"]
            if len(wu["first"]) < MAX_FIRST_UPDATES:
                wu["first"].append([sid, inc])
        wu["count"] += 1
        wu["total"] += inc
        return WindowUpdateSeen(now_ns, sid, inc)

    def _ping(self, frame: PingFrame, now_ns: int) -> PingSeen:
        ack = "ACK" in frame.flags
        pings = self._summary["pings"]
        pings["acks" if ack else "count"] += 1
        opaque = bytes(frame.opaque_data).hex()
        if len(pings["events"]) < MAX_PING_EVENTS:
            pings["events"].append([now_ns, ack, opaque])
        return PingSeen(now_ns, ack, opaque)

    def _give_up(self, reason: str, now_ns: int) -> None:
        self.decodable = False
        self._pending = bytearray()
        self._skip = 0
        self._summary["decodable"] = False
        self._summary["undecodable_reason"] = reason[:200]
        if self._record:
            self._events.append(TapGaveUp(now_ns, reason))
