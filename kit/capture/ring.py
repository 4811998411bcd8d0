"""A bounded byte ring in shared memory: the relay puts tap records, the decoder takes them.

One producer (the delay line's event loop) and one consumer (the decoder process). The
producer never waits: ``put`` either copies the record in (one ``memcpy``) or returns
False when it does not fit, and the relay then counts the bytes as not decoded. A pipe is
the doorbell: the consumer raises a "waiting" flag before it sleeps on it (at most its poll
interval), and the producer writes a byte only while that flag is up, and only for a record
someone waits for (``urgent``: a closed connection, a whole line) or once the ring is
``BELL_FILL`` full. Bytes alone wait for the consumer's next poll: a bell per chunk woke the
decoder ~2,000 times a second beside an h2 download (two context switches each, on the
cores the endpoints measured with need; measured 17% of a core for the decoder and as
many bell writes as chunks in the relay).

Layout of the shared map: ``write_pos`` (u64) at 0, ``read_pos`` (u64) at 8, a "hurry"
flag (u64, set by the producer when it shuts down) at 16, the consumer's "waiting" flag at
24, records from ``DATA_OFFSET``. Positions only grow; the physical offset is ``pos % capacity``. Each
position is written by one side only, as one aligned 8-byte store, and records are
written before ``write_pos`` moves past them (read before ``read_pos`` does). A record
never wraps: when it would not fit before the end, a PAD header (or, with less than a
header left, nothing) fills the end and the record starts at offset 0.

A record is a ``RECORD`` header (payload length, connection id, direction, kind, a
timestamp) and the payload.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

DATA_OFFSET = 64
_POS = struct.Struct("@Q")  # native and aligned: one store, never torn
RECORD = struct.Struct("@IIBBxxQ")  # payload bytes, conn, direction, kind, t_ns
KIND_BYTES, KIND_EOF, KIND_GAP, KIND_CONN_DONE, KIND_LINE, KIND_PAD, KIND_SCANNED = range(7)
BELL_FILL = 8  # ring the bell for plain bytes once 1/8 of the ring is taken
DIRECTIONS = ("up", "down")


@dataclass(frozen=True)
class Record:
    kind: int
    conn: int
    direction: int
    t_ns: int
    payload: memoryview  # valid until the consumer's next ``advance``


def create_shared(capacity: int) -> tuple[int, mmap.mmap]:
    """An anonymous shared file of ``capacity`` record bytes (fd to pass on) and its map."""
    size = DATA_OFFSET + capacity
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("kit-tap-ring")
    else:  # pragma: no cover - not Linux
        fd, path = tempfile.mkstemp(prefix="kit-tap-ring-")
        os.unlink(path)
    os.ftruncate(fd, size)
    return fd, mmap.mmap(fd, size)


class RingWriter:
    """The producer side: never blocks, never raises on a full ring."""

    def __init__(self, buf: mmap.mmap, bell_fd: int) -> None:
        self.buf, self.bell_fd = buf, bell_fd
        self.capacity = len(buf) - DATA_OFFSET
        self._write_pos = _POS.unpack_from(buf, 0)[0]

    def free_bytes(self) -> int:
        read_pos: int = _POS.unpack_from(self.buf, 8)[0]
        free: int = self.capacity - (self._write_pos - read_pos)
        return free

    def put(
        self,
        kind: int,
        conn: int,
        direction: int,
        t_ns: int,
        payload: bytes = b"",
        keep: int = 0,
        urgent: bool = True,
    ) -> bool:
        """Copy one record in if it fits and leaves ``keep`` bytes free; False otherwise.
        ``urgent``: wake a waiting consumer for it (else only once the ring fills up)."""
        size = RECORD.size + len(payload)
        off = self._write_pos % self.capacity
        to_end = self.capacity - off
        waste = to_end if size > to_end else 0
        if waste + size + keep > self.free_bytes():
            return False
        buf = self.buf
        if waste:
            if to_end >= RECORD.size:
                RECORD.pack_into(buf, DATA_OFFSET + off, 0, 0, 0, KIND_PAD, 0)
            off = 0
        start = DATA_OFFSET + off
        RECORD.pack_into(buf, start, len(payload), conn, direction, kind, t_ns)
        if payload:
            buf[start + RECORD.size : start + size] = payload
        self._write_pos += waste + size
        _POS.pack_into(buf, 0, self._write_pos)
        if _POS.unpack_from(buf, 24)[0] and (
            urgent or self.free_bytes() < self.capacity - self.capacity // BELL_FILL
        ):
            self.ring()
        return True

    def hurry(self) -> None:
        """Ask the consumer to stop decoding and only count what is left (shutting down)."""
        _POS.pack_into(self.buf, 16, 1)

    def ring(self) -> None:
        with contextlib.suppress(BlockingIOError, BrokenPipeError, OSError):
            os.write(self.bell_fd, b"\x01")


class RingReader:
    """The consumer side: ``records()`` yields what is there; ``advance()`` frees it."""

    def __init__(self, buf: mmap.mmap) -> None:
        self.buf = buf
        self.capacity = len(buf) - DATA_OFFSET
        self._read_pos = _POS.unpack_from(buf, 8)[0]
        self._view = memoryview(buf)

    def records(self) -> Iterator[Record]:
        """Every whole record written so far (frees each one as the next is asked for)."""
        write_pos: int = _POS.unpack_from(self.buf, 0)[0]
        while self._read_pos < write_pos:
            off = self._read_pos % self.capacity
            to_end = self.capacity - off
            if to_end < RECORD.size:
                self._read_pos += to_end
                continue
            length, conn, direction, kind, t_ns = RECORD.unpack_from(self.buf, DATA_OFFSET + off)
            if kind == KIND_PAD:
                self._read_pos += to_end
                continue
            start = DATA_OFFSET + off + RECORD.size
            yield Record(kind, conn, direction, t_ns, self._view[start : start + length])
            self._read_pos += RECORD.size + length
            self.advance()

    def set_waiting(self, waiting: bool) -> bool:
        """Raise (or lower) the waiting flag; True if records arrived meanwhile (don't sleep)."""
        _POS.pack_into(self.buf, 24, int(waiting))
        pending: bool = _POS.unpack_from(self.buf, 0)[0] > self._read_pos
        return pending

    @property
    def hurried(self) -> bool:
        return bool(_POS.unpack_from(self.buf, 16)[0])

    def advance(self) -> None:
        _POS.pack_into(self.buf, 8, self._read_pos)

    def close(self) -> None:
        self._view.release()
