"""Pure: a slow application reader, paced to a rate with seeded jitter, time passed in.

A paced reader takes ``chunk_bytes`` at a time; the gaps between reads are
``chunk_bytes / rate`` each stretched by a seeded uniform factor in [1 - J, 1 + J], so the
long-run rate is exact and two runs with one seed read at the same instants. It never
saves up: a read that finds less than a chunk waiting takes what is there and the rest of
its allowance is lost; a reader woken late catches up by at most one extra chunk. So the
bytes a slow stream holds unread are bounded by what the sender may send it (its
flow-control window), never by the pacing.
"""

from __future__ import annotations

import random

NS_PER_S = 1_000_000_000
DEFAULT_CHUNK_BYTES = 16_384  # one default HTTP/2 frame
DEFAULT_JITTER = 0.5


class ReadPacer:
    """When a slow reader reads next and how much; one per slow stream."""

    __slots__ = ("_gap_ns", "_random", "chunk_bytes", "due_ns", "jitter")

    def __init__(
        self,
        rate_bytes_s: float,
        start_ns: int,
        seed: int,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        jitter: float = DEFAULT_JITTER,
    ) -> None:
        if rate_bytes_s <= 0 or chunk_bytes <= 0 or not 0 <= jitter < 1:
            raise ValueError("a read pacer needs a positive rate and chunk, jitter in [0, 1)")
        self.chunk_bytes = chunk_bytes
        self.jitter = jitter
        self._gap_ns = chunk_bytes / rate_bytes_s * NS_PER_S
        self._random = random.Random(seed)
        self.due_ns = start_ns + self._gap()

    def _gap(self) -> int:
        factor = 1.0 + self.jitter * (2.0 * self._random.random() - 1.0)
        return max(1, round(self._gap_ns * factor))

    def take(self, now_ns: int, waiting_bytes: int) -> int:
        """Bytes to read at ``now_ns`` out of ``waiting_bytes`` (0 if no read is due)."""
        if now_ns < self.due_ns:
            return 0
        # A reader woken late by several gaps catches up by one chunk at most, not all.
        self.due_ns = max(self.due_ns + self._gap(), now_ns - round(self._gap_ns))
        return min(self.chunk_bytes, waiting_bytes)


def slow_streams_text(n: int) -> str:
    """ "stream 1" or "streams 1..3": the paced streams are the first ones a client opens."""
    return "stream 1" if n == 1 else f"streams 1..{n}"
