"""Pure: which bytes of a chunk the frame decoder needs, found by walking frame headers.

DATA frames are almost all of a bulk transfer's bytes, and the frame summary only counts
them. So the relay walks the 9-byte frame headers of each tapped chunk (plain integer
reads; a few per chunk for bulk traffic), counts DATA frames itself (``data_frames``,
``data_bytes``, ``data_max``) and hands the decoder only the rest: the client preface,
the first frame, and every non-DATA frame, which together are still a well-formed HTTP/2
frame sequence. A bulk transfer then costs the ring a few bytes per MiB and the decoder
almost nothing, so it cannot fall behind however late it is scheduled.

Walking is capped per chunk (``MIN_HEADERS`` plus one per ``BYTES_PER_HEADER`` of chunk:
16 KiB DATA frames pass, tiny ones do not): for a flood of tiny frames the walk itself
would be the cost, so past the cap the scanner stops for good and the rest of the direction
is handed over whole (the decoder, which saw the same frame boundaries, carries on).

The scanner validates nothing: ``FrameTap`` does, on what it is given. The first frame is
always handed over whole, so a stream that does not start with SETTINGS is still caught.
``encode_scanned``/``feed_scanned`` carry one scanned chunk through the ring.
"""

from __future__ import annotations

import struct

from kit.capture.frametap import FrameTap

CLIENT_PREFACE_BYTES = 24
HEADER_BYTES = 9
TYPE_DATA = 0x0
MIN_HEADERS = 16
BYTES_PER_HEADER = 8192

Piece = tuple[int, int]  # (offset, length) in the chunk


class DataScanner:
    """One direction's walk: ``split(chunk)`` -> what to hand over, or None (all of it)."""

    __slots__ = (
        "_copy_left",
        "_first_seen",
        "_header",
        "_hole_left",
        "_preface_left",
        "_streams",
        "data_bytes",
        "data_frames",
        "data_max",
        "span",
        "whole",
    )

    def __init__(self, client_side: bool) -> None:
        self._preface_left = CLIENT_PREFACE_BYTES if client_side else 0
        self._hole_left = 0  # DATA payload bytes still to come (counted, not handed over)
        self._copy_left = 0  # bytes of a handed-over frame still to come
        self._header = b""  # the start of a header cut by a chunk boundary
        self._first_seen = False
        self.whole = False  # stopped walking: everything is handed over from here on
        self.data_frames = self.data_bytes = self.data_max = 0  # since the last take_data
        self._streams: dict[int, int] = {}  # DATA payload bytes per stream, since take_streams
        # Stream bytes the last split accounts for: its chunk, plus a header carried into it,
        # minus one cut at its end (that one is accounted for where it is resolved).
        self.span = 0

    def take_held(self) -> bytes:
        """At end of stream: a header start still held back (the decoder must see it)."""
        held, self._header = self._header, b""
        return held

    @property
    def in_data_payload(self) -> int:
        """DATA payload bytes announced but not seen yet (a stream ending here is cut)."""
        return self._hole_left

    def take_data(self) -> tuple[int, int, int]:
        """(frames, payload bytes, largest payload) counted since the last call."""
        taken = (self.data_frames, self.data_bytes, self.data_max)
        self.data_frames = self.data_bytes = self.data_max = 0
        return taken

    def take_streams(self) -> dict[int, int]:
        """DATA payload bytes per stream id counted since the last call."""
        taken, self._streams = self._streams, {}
        return taken

    def split(self, chunk: bytes) -> tuple[bytes, list[Piece]] | None:
        """(carried header bytes, pieces of ``chunk``) to hand over, in order; None: the
        chunk whole. DATA frames left out are counted in ``data_*``."""
        if self.whole:
            return None
        n, pos, headers = len(chunk), 0, 0
        had_at_start = len(self._header)
        max_headers = MIN_HEADERS + n // BYTES_PER_HEADER
        pieces: list[Piece] = []
        carried = b""
        preface, copy_left, hole_left = self._preface_left, self._copy_left, self._hole_left
        while pos < n:
            if preface or copy_left:
                if preface:
                    take = min(preface, n - pos)
                    preface -= take
                else:
                    take = min(copy_left, n - pos)
                    copy_left -= take
                _append(pieces, pos, take)
                pos += take
            elif hole_left:
                take = min(hole_left, n - pos)
                hole_left -= take
                pos += take
            elif not self._header and pos + HEADER_BYTES <= n:  # a whole header: bulk path
                headers += 1
                if headers > max_headers:
                    self.whole = True
                    _append(pieces, pos, n - pos)
                    break
                length = chunk[pos] << 16 | chunk[pos + 1] << 8 | chunk[pos + 2]
                if chunk[pos + 3] == TYPE_DATA and self._first_seen:
                    sid = (chunk[pos + 5] & 0x7F) << 24 | chunk[pos + 6] << 16
                    self._count(length, sid | chunk[pos + 7] << 8 | chunk[pos + 8])
                    hole_left = length
                else:
                    self._first_seen = True
                    _append(pieces, pos, HEADER_BYTES)
                    copy_left = length
                pos += HEADER_BYTES
            else:  # a header cut by a chunk boundary: this chunk's end, or the last one's
                had = self._header
                take = min(HEADER_BYTES - len(had), n - pos)
                header = had + chunk[pos : pos + take]
                if len(header) < HEADER_BYTES:
                    self._header = header
                    pos += take
                    break
                self._header = b""
                length = header[0] << 16 | header[1] << 8 | header[2]
                if header[3] == TYPE_DATA and self._first_seen:
                    self._count(length, int.from_bytes(header[5:9], "big") & 0x7FFF_FFFF)
                    hole_left = length
                else:
                    self._first_seen = True
                    carried = had  # handed over before this chunk's part of the header
                    _append(pieces, pos, take)
                    copy_left = length
                pos += take
        self._preface_left, self._copy_left, self._hole_left = preface, copy_left, hole_left
        self.span = n + had_at_start - len(self._header)
        return carried, pieces

    def _count(self, length: int, stream_id: int) -> None:
        self._streams[stream_id] = self._streams.get(stream_id, 0) + length
        self.data_frames += 1
        self.data_bytes += length
        if length > self.data_max:
            self.data_max = length


def _append(pieces: list[Piece], offset: int, length: int) -> None:
    if length <= 0:
        return
    if pieces:
        last_offset, last_length = pieces[-1]
        if last_offset + last_length == offset:  # contiguous: one piece
            pieces[-1] = (last_offset, last_length + length)
            return
    pieces.append((offset, length))


# A scanned chunk in the ring: chunk length, DATA frames, DATA payload bytes, largest DATA
# payload, number of streams (u64 each), then (stream id, DATA payload bytes) per stream,
# then the handed-over bytes.
_SCANNED = struct.Struct("@QQQQQ")
_STREAM = struct.Struct("@QQ")


def encode_scanned(
    chunk: bytes,
    carried: bytes,
    pieces: list[Piece],
    data: tuple[int, int, int],
    span: int,
    streams: dict[int, int] | None = None,
) -> bytes:
    view = memoryview(chunk)
    per_stream = streams or {}
    parts: list[bytes | memoryview] = [_SCANNED.pack(span, *data, len(per_stream))]
    parts += [_STREAM.pack(sid, n) for sid, n in per_stream.items()]
    parts.append(carried)
    parts += [view[offset : offset + length] for offset, length in pieces]
    return b"".join(parts)


def scanned_length(payload: memoryview) -> int:
    """How many chunk bytes a scanned record stands for."""
    chunk_len: int = _SCANNED.unpack_from(payload, 0)[0]
    return chunk_len


def feed_scanned(tap: FrameTap, payload: memoryview, now_ns: int) -> None:
    """Replay a scanned chunk into ``tap``: the handed-over bytes, then the DATA counts."""
    chunk_len, frames, data_bytes, data_max, n_streams = _SCANNED.unpack_from(payload, 0)
    start = _SCANNED.size + n_streams * _STREAM.size
    streams = [
        _STREAM.unpack_from(payload, _SCANNED.size + i * _STREAM.size) for i in range(n_streams)
    ]
    kept = payload[start:]
    tap.feed(kept, now_ns)
    tap.add_data(frames, data_bytes, data_max, chunk_len - len(kept), now_ns)
    for sid, n in streams:
        tap.add_stream_data(sid, n, now_ns)
