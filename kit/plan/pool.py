"""Pure: how a per-connection receive pool is divided between streams (HAProxy's rule).

The arithmetic both the h2 client (``kit.clients.h2.pool``, which advertises the shares)
and the analysis (which judges the advertised windows against them) need: the pool is a
number of 16 KiB buffers; every open stream not receiving keeps one, one is kept back per
8 streams that could still open, the rest is divided evenly between the receiving
streams in whole buffers (rounded down), never less than one buffer each.
"""

from __future__ import annotations

from dataclasses import dataclass

UNIT_BYTES = 16_384  # one default-size DATA frame: HAProxy's buffer (tune.bufsize)
STREAMS_PER_RESERVED_BUFFER = 8


@dataclass(frozen=True)
class PoolCounts:
    """The streams of one connection, as the pool sees them."""

    receiving: int
    not_receiving: int = 0
    could_open: int = 0


def share_bytes(pool_bytes: int, counts: PoolCounts, unit: int = UNIT_BYTES) -> int:
    """Each receiving stream's window: the pool's buffers left after the reserves, evenly."""
    if counts.receiving <= 0:
        return unit
    buffers = pool_bytes // unit
    allocatable = max(buffers - counts.not_receiving, 0)
    reserved = -(-counts.could_open // STREAMS_PER_RESERVED_BUFFER)
    to_share = max(allocatable - reserved, 0)
    return max(1, to_share // counts.receiving) * unit


def granted_bytes(pool_bytes: int, receiving: int, unit: int = UNIT_BYTES) -> int:
    """What one connection's receiving streams may have in flight together: their shares.

    At most the pool (rounded down to whole buffers), but never less than a buffer per
    stream: a pool smaller than that commits more memory than its size."""
    return max(1, receiving) * share_bytes(pool_bytes, PoolCounts(receiving=receiving), unit)
