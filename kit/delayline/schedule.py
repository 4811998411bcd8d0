"""Pure delay scheduling: chunks stamped on arrival, released at arrival + delay.

One ``DelayQueue`` per direction of a relayed connection. It never sleeps and never reads a
clock: callers pass monotonic nanoseconds in. Like toxiproxy's latency toxic, every chunk is
stamped when it arrives and released ``delay_ns`` later, so delays never accumulate: a writer
that falls behind releases everything already due at once instead of adding its own lag.

The queue is a FIFO. Due times are forced to be non-decreasing, so chunks are never
reordered even if a caller passes a slightly older arrival time. End-of-stream is a marker
queued like data, delivered in order after every chunk before it.

Backpressure uses hysteresis: ``should_pause_reading`` turns on when ``buffered_bytes``
reaches ``cap_bytes`` and off again only below ``cap_bytes // 2``, so a reader does not
flap between pausing and resuming on every chunk.
"""

from __future__ import annotations

from collections import deque

from kit.errors import UsageError
from kit.plan.processes import DEFAULT_BUFFER_CAP_BYTES

# An entry is (due_ns, chunk); chunk None is the end-of-stream marker.
_Entry = tuple[int, bytes | None]


class DelayQueue:
    """FIFO of (due time, chunk) for one direction of one connection."""

    def __init__(self, delay_ns: int, cap_bytes: int = DEFAULT_BUFFER_CAP_BYTES) -> None:
        if delay_ns < 0:
            raise UsageError(f"delay_ns: {delay_ns} is negative; delays are 0 or more")
        if cap_bytes < 1:
            raise UsageError(f"cap_bytes: {cap_bytes} must be at least 1")
        self.delay_ns = delay_ns
        self.cap_bytes = cap_bytes
        self._entries: deque[_Entry] = deque()
        self._last_due_ns = -(2**63)
        self._eof_queued = False
        self.eof_released = False
        self.buffered_bytes = 0
        self.peak_buffered_bytes = 0
        self.released_bytes = 0
        self._paused = False

    def push(self, chunk: bytes, arrival_ns: int) -> None:
        """Queue ``chunk`` (arrived at ``arrival_ns``) for release at arrival + delay."""
        if self._eof_queued:
            raise ValueError("push after end-of-stream")
        if not chunk:
            return
        self._entries.append((self._stamp(arrival_ns), chunk))
        self.buffered_bytes += len(chunk)
        if self.buffered_bytes > self.peak_buffered_bytes:
            self.peak_buffered_bytes = self.buffered_bytes
        if self.buffered_bytes >= self.cap_bytes:
            self._paused = True

    def push_eof(self, arrival_ns: int) -> None:
        """Queue end-of-stream; released after all data, ``delay_ns`` after it arrived."""
        if self._eof_queued:
            return
        self._eof_queued = True
        self._entries.append((self._stamp(arrival_ns), None))

    def pop_due(self, now_ns: int) -> list[bytes]:
        """Every chunk due at ``now_ns``, oldest first; sets ``eof_released`` on the marker."""
        out: list[bytes] = []
        entries = self._entries
        while entries and entries[0][0] <= now_ns:
            chunk = entries.popleft()[1]
            if chunk is None:
                self.eof_released = True
                break
            out.append(chunk)
            self.buffered_bytes -= len(chunk)
            self.released_bytes += len(chunk)
        if self._paused and self.buffered_bytes < self.cap_bytes // 2:
            self._paused = False
        return out

    def next_due_ns(self) -> int | None:
        """Due time of the oldest entry (data or end-of-stream), or None when empty."""
        return self._entries[0][0] if self._entries else None

    @property
    def should_pause_reading(self) -> bool:
        return self._paused

    @property
    def eof_queued(self) -> bool:
        return self._eof_queued

    def __len__(self) -> int:
        return len(self._entries)

    def _stamp(self, arrival_ns: int) -> int:
        due = arrival_ns + self.delay_ns
        if due < self._last_due_ns:
            due = self._last_due_ns  # never reorder: FIFO order wins over a stale clock
        self._last_due_ns = due
        return due
