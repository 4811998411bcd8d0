"""Pure: a per-connection receive pool shared between the streams that receive (HAProxy-style).

Modelled on HAProxy's automatic receive window (``h2c_update_strm_rx_win`` in its
src/mux_h2.c, read at haproxy/haproxy 39a0a1e12097, sized by ``tune.h2.fe.rxbuf`` / ``tune.h2.be.rxbuf``): the pool is a number of
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

from kit.plan.pool import UNIT_BYTES, PoolCounts, share_bytes

__all__ = ["UNIT_BYTES", "PoolCounts", "share_bytes", "update_floor", "window_increment"]


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
