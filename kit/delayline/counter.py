"""A live count of the bytes the delay line delivered downstream, for ``kit run --interval``.

The relay adds each release's size to an 8-byte counter in a shared memory map (a store,
no system call, on the forwarding path); the ``kit run`` process reads the file once per
interval and prints the difference, as iperf3 ``-i`` does. Nothing is sent to the relay and
it runs no timer, so printing while it runs costs the measurement nothing it can see.
The record's series is the delivery trace's (``kit.analysis.intervals``): exact to its
2 ms buckets, where these live figures are as exact as the reader's wake-ups.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path

_FORMAT = "<Q"  # one unsigned 64-bit count: written in one aligned store
SIZE = struct.calcsize(_FORMAT)


class ByteCounter:
    """The relay's side: ``add`` bytes released; the file holds the running total."""

    def __init__(self, path: str) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.ftruncate(fd, SIZE)
            self._map = mmap.mmap(fd, SIZE)
        finally:
            os.close(fd)
        self.total = 0

    def add(self, n_bytes: int) -> None:
        self.total += n_bytes
        struct.pack_into(_FORMAT, self._map, 0, self.total)

    def close(self) -> None:
        self._map.close()


def read_count(path: Path) -> int | None:
    """The total so far (None before the relay created the file, or once it is gone)."""
    try:
        with path.open("rb") as f:
            data = f.read(SIZE)
    except OSError:
        return None
    return struct.unpack(_FORMAT, data)[0] if len(data) == SIZE else None
