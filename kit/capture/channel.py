"""The relay's side of the tap: hand each chunk to the decoder process, never wait for it.

``TapChannel.open(tap_fd, read_bytes)`` starts ``kit.capture.decoder`` with a shared ring
(``kit.capture.ring``) and the tap file; ``feed(conn, direction)`` gives a per-direction
``TapFeed`` whose ``feed(data, now_ns)`` costs one copy into the ring. When the ring is
full (the decoder fell behind) the chunk is not copied: that direction stops being handed
over and its bytes are counted as not decoded ("tap incomplete"), so a flood of tiny frames
slows the decoder, never the link. Control records (end of a direction, a closed
connection, the final totals line) are never dropped: a reserve of the ring is kept for
them and, past that, a backlog that ``flush`` retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections import deque

from kit.capture.decoder import PARENT_ENV, die_with_parent
from kit.capture.ring import (
    DIRECTIONS,
    KIND_BYTES,
    KIND_CONN_DONE,
    KIND_EOF,
    KIND_GAP,
    KIND_LINE,
    KIND_SCANNED,
    RingWriter,
    create_shared,
)
from kit.capture.scanner import DataScanner, encode_scanned
from kit.plan.units import MIB
from kit.results.records import Direction

MIN_RING_BYTES = 16 * MIB
CONTROL_RESERVE_BYTES = 256 * 1024  # kept free for records that must not be dropped
CLOSE_TIMEOUT_S = 10.0
STALL_S = 1.0  # at shutdown, a decoder that took nothing for this long is killed
DRAIN_GRACE_S = 2.0  # at shutdown, time to decode what is queued before only counting it

_Control = tuple[int, int, int, int, bytes]


class TapFeed:
    """One connection direction's tap: ``feed`` every chunk, ``end`` at end-of-stream."""

    __slots__ = ("channel", "conn", "direction", "lost_bytes", "scanner")

    def __init__(self, channel: TapChannel, conn: int, direction: int) -> None:
        self.channel, self.conn, self.direction = channel, conn, direction
        self.lost_bytes = 0  # > 0: this direction is no longer handed to the decoder
        self.scanner = DataScanner(client_side=direction == 0)

    def feed(self, data: bytes, now_ns: int) -> None:
        channel = self.channel
        scanned = self.scanner.split(data)  # always: the walk must see every byte
        if self.lost_bytes:  # a gap first (it may be dropped too: then it only grows)
            gap = self.lost_bytes.to_bytes(8, "little")
            if channel.put_bytes(self.conn, self.direction, gap, now_ns, KIND_GAP):
                self.lost_bytes = 0
        if scanned is None:
            kind, record = KIND_BYTES, data
        elif not scanned[0] and scanned[1] == [(0, len(data))]:
            kind, record = KIND_BYTES, data  # nothing left out (data_* is then zero)
        else:  # DATA frames counted here: only the other frames travel
            data_counts = self.scanner.take_data()
            span = self.scanner.span
            streams = self.scanner.take_streams()
            record = encode_scanned(data, *scanned, data_counts, span, streams)
            kind = KIND_SCANNED
        if self.lost_bytes or not channel.put_bytes(
            self.conn, self.direction, record, now_ns, kind
        ):
            self.lost_bytes += len(data)
            channel.not_decoded_bytes += len(data)

    def end(self, now_ns: int) -> None:
        held = self.scanner.take_held()  # a header cut off by the end of the stream
        if held:
            self.channel.put_control(KIND_BYTES, self.conn, self.direction, now_ns, held)
        self.close(now_ns)
        missing = self.scanner.in_data_payload  # the stream ended inside a DATA payload
        payload = missing.to_bytes(8, "little") if missing else b""
        self.channel.put_control(KIND_EOF, self.conn, self.direction, now_ns, payload)

    def close(self, now_ns: int) -> None:
        """No more bytes in this direction: hand over the last gap (never dropped)."""
        if self.lost_bytes:
            gap = self.lost_bytes.to_bytes(8, "little")
            self.channel.put_control(KIND_GAP, self.conn, self.direction, now_ns, gap)
            self.lost_bytes = 0


class _Stall:
    """Whether the decoder stopped taking records: the ring's free space unchanged for
    ``STALL_S`` while records wait (a decoder told to hurry only counts, so it keeps up)."""

    def __init__(self, free_bytes: int) -> None:
        self.free_bytes, self.since = free_bytes, time.monotonic()

    def stuck(self, free_bytes: int) -> bool:
        now = time.monotonic()
        if free_bytes != self.free_bytes:
            self.free_bytes, self.since = free_bytes, now
        return now - self.since >= STALL_S


class TapChannel:
    """The decoder process and the ring that feeds it (one per delay line)."""

    def __init__(self, writer: RingWriter, process: subprocess.Popen[bytes], bell_fd: int) -> None:
        self.writer, self.process, self.bell_fd = writer, process, bell_fd
        self.not_decoded_bytes = 0
        self._backlog: deque[_Control] = deque()

    @classmethod
    def open(cls, tap_fd: int, read_bytes: int) -> TapChannel:
        """Start the decoder appending to ``tap_fd`` (the caller may close its copy)."""
        ring_fd, buf = create_shared(max(MIN_RING_BYTES, 8 * read_bytes))
        bell_r, bell_w = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "kit.capture.decoder", *map(str, (ring_fd, bell_r, tap_fd))],
                pass_fds=(ring_fd, bell_r, tap_fd),
                stdin=subprocess.DEVNULL,
                env={**os.environ, PARENT_ENV: str(os.getpid())},
                preexec_fn=die_with_parent,
            )
        finally:
            os.close(ring_fd)
            os.close(bell_r)
        os.set_blocking(bell_w, False)
        return cls(RingWriter(buf, bell_w), process, bell_w)

    def feed(self, conn: int, direction: Direction) -> TapFeed:
        return TapFeed(self, conn, DIRECTIONS.index(direction))

    def put_bytes(
        self, conn: int, direction: int, data: bytes, now_ns: int, kind: int = KIND_BYTES
    ) -> bool:
        """A record that may be dropped (the ring's reserve is kept for control records)."""
        if self._backlog and not self.flush():
            return False
        return self.writer.put(
            kind, conn, direction, now_ns, data, CONTROL_RESERVE_BYTES, urgent=False
        )

    def put_control(
        self, kind: int, conn: int, direction: int, t_ns: int, payload: bytes = b""
    ) -> None:
        self._backlog.append((kind, conn, direction, t_ns, payload))
        self.flush()

    def line(self, text: str) -> None:
        """A whole tap-file line the relay made (a ``LinkConnection``), written in order."""
        self.put_control(KIND_LINE, 0, 0, time.monotonic_ns(), text.encode("utf-8"))

    def conn_done(self, conn: int, opened_ns: int, closed_ns: int) -> None:
        self.put_control(KIND_CONN_DONE, conn, 0, closed_ns, opened_ns.to_bytes(8, "little"))

    def flush(self) -> bool:
        """Hand over backlogged control records in order; True once none is left."""
        backlog = self._backlog
        while backlog:
            if not self.writer.put(*backlog[0]):
                return False
            backlog.popleft()
        return True

    async def aclose(self, final_line: str, timeout_s: float = CLOSE_TIMEOUT_S) -> str | None:
        """Hand over ``final_line``, let the decoder drain and exit; a problem as text, or None.

        The decoder gets ``DRAIN_GRACE_S`` to decode what is queued; then it is told to hurry
        (what is left is counted, not decoded), so a full ring of tiny frames cannot hold
        shutdown up."""
        self.put_control(KIND_LINE, 0, 0, time.monotonic_ns(), final_line.encode("utf-8"))
        grace = time.monotonic() + DRAIN_GRACE_S
        while not self._drained() and time.monotonic() < grace and self._decoding():
            await asyncio.sleep(0.005)
        self.writer.hurry()
        deadline = time.monotonic() + timeout_s
        stall = _Stall(self.writer.free_bytes())
        while not self.flush() and time.monotonic() < deadline:
            if not self._decoding() or stall.stuck(self.writer.free_bytes()):  # dead, stopped
                deadline = time.monotonic()
                break
            await asyncio.sleep(0.005)
        problem = None if not self._backlog else "the tap decoder did not take every record"
        os.close(self.bell_fd)  # end of input: the decoder drains the ring and exits
        while self.process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
            problem = "the tap decoder did not finish in time (killed)"
        elif self.process.returncode != 0:
            problem = f"the tap decoder exited with status {self.process.returncode}"
        with contextlib.suppress(BufferError, ValueError):
            self.writer.buf.close()
        return problem

    def _decoding(self) -> bool:
        return self.process.poll() is None

    def _drained(self) -> bool:
        return self.flush() and self.writer.free_bytes() == self.writer.capacity
