"""Pure: a per-connection receive pool shared between the streams that receive (HAProxy-style).

Modelled on HAProxy's automatic receive window (``h2c_update_strm_rx_win`` in its
src/mux_h2.c, sized by ``tune.h2.fe.rxbuf`` / ``tune.h2.be.rxbuf``): the pool is a number of
buffers of one frame each (``UNIT_BYTES``, 16 KiB); every open stream that is not receiving
keeps one buffer, one buffer is kept back per 8 streams that could still open, and what
is left is divided evenly between the streams that are receiving, rounded down to whole
buffers (HAProxy rounds down on a connection to a server, as this client's is, so a slow
reader ties up as little as possible). A stream never gets less than one buffer.

No bandwidth estimate: a stream's window is its share, whatever the RTT; the connection
window is opened to 2^31-1 so it never binds. The stream's advertised limit is
``read offset + min(share, remaining expected bytes)``; a WINDOW_UPDATE goes out only when
it raises that limit by at least ``floor_bytes`` (see ``update_floor``) or reaches the end.
"""

from __future__ import annotations

from dataclasses import dataclass

UNIT_BYTES = 16_384  # one default-size DATA frame: HAProxy's buffer (tune.bufsize)
DEFAULT_POOL_BYTES = 1_600_000  # HAProxy's default, 100 buffers of 16 kB
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


def update_floor(share: int, unit: int = UNIT_BYTES) -> int:
    """The smallest WINDOW_UPDATE worth sending: one frame's worth, ``unit``.

    A smaller increment cannot carry a full default-size frame, and some senders wait for
    room for a whole frame (HAProxy's own comment), so it would only add a frame each way;
    one unit bounds the updates to share / 16 KiB per window's worth of data (12 for a
    196 KiB share), while delaying credit by at most one frame (under 10 % of any share
    of 10 units or more). A share below one unit still gets its updates.
    """
    return min(unit, share)


def window_increment(
    read_offset: int, advertised_offset: int, share: int, expected_total: int | None, floor: int
) -> int:
    """The WINDOW_UPDATE for one stream now (0 = none), given what it has read and advertised."""
    target = read_offset + share
    if expected_total is not None:
        target = min(target, expected_total)
    increment = target - advertised_offset
    if increment <= 0:
        return 0
    reaches_end = expected_total is not None and target == expected_total
    return increment if increment >= floor or reaches_end else 0
