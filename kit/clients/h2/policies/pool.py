"""Pure: a per-connection receive pool shared by the streams that receive (HAProxy-style).

The rules are ``kit.clients.h2.pool``'s (HAProxy's ``h2c_update_strm_rx_win`` in
haproxy/haproxy ``src/mux_h2.c``, read at 39a0a1e12097): every
receiving stream's window is an even share of the pool, re-divided whenever the set of
receiving streams changes; a stream's advertised limit is its read offset plus its share
(never past the bytes it expects), updated once it moves by a frame's worth. The
connection window is opened to 2^31-1 so it never binds; its credit is immediate.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.clients.h2 import pool
from kit.clients.h2.policies.base import NOTHING, Answer, Grant, grants
from kit.clients.h2.policies.static import StaticPolicy
from kit.plan.trial import ConnCredit, CreditPolicy


@dataclass
class _Stream:
    expected_bytes: int | None
    advertised_bytes: int  # the stream offset the sender may send up to
    read_bytes: int = 0  # read by the application, padding included
    done: bool = False  # trailers arrived
    receiving: bool = True  # not read to the end, not cancelled
    cancelled: bool = False


class PoolPolicy(StaticPolicy):
    """Stream windows are pool shares; the connection's credit is ``StaticPolicy``'s."""

    name = "pool"

    def __init__(
        self,
        pool_bytes: int,
        conn_window_bytes: int,
        credit_policy: CreditPolicy = "immediate",
        conn_credit: ConnCredit = "receipt",
    ) -> None:
        super().__init__(pool.UNIT_BYTES, conn_window_bytes, credit_policy, conn_credit)
        self.grants_messages = False
        self.pool_bytes = pool_bytes
        self.share_bytes = pool.UNIT_BYTES
        self.streams: dict[int, _Stream] = {}
        self._dirty = False

    @property
    def dirty(self) -> bool:
        return self._dirty

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        self.streams[stream_id] = _Stream(expected_bytes, self.stream_window_bytes)
        self._dirty = True
        return NOTHING

    def ended(self, stream_id: int) -> None:
        stream = self.streams.get(stream_id)
        if stream is not None:
            stream.done = True

    def finished(self, stream_id: int) -> None:
        stream = self.streams.get(stream_id)
        if stream is not None:
            stream.receiving = False
        self._dirty = True

    def cancelled(self, stream_id: int) -> None:
        stream = self.streams.get(stream_id)
        if stream is not None:
            stream.receiving = False
            stream.cancelled = True
        self._dirty = True

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        at_once = size if stream_id is None else padding
        conn = self.conn.returnable(size if self.on_receipt else at_once) if size else 0
        stream = self.streams.get(stream_id) if stream_id is not None else None
        if stream is None or not padding:
            return grants((0, conn))
        stream.read_bytes += padding
        return grants((0, conn), self._update(stream_id or 0, stream))

    def read(self, stream_id: int, n: int, now_ns: int) -> Answer:
        conn = 0 if self.on_receipt else self.conn.returnable(n)
        stream = self.streams.get(stream_id)
        if stream is None:
            return grants((0, conn))
        stream.read_bytes += n
        return grants((0, conn), self._update(stream_id, stream))

    def message_started(self, stream_id: int, message_bytes: int) -> Answer:
        return NOTHING

    def refresh(self) -> Answer:
        """Re-divide the pool between the receiving streams and re-advertise each share."""
        self._dirty = False
        self.share_bytes = pool.share_bytes(self.pool_bytes, self._counts())
        updates = [
            self._update(stream_id, s)
            for stream_id, s in self.streams.items()
            if s.receiving and not s.done
        ]
        return grants(*updates)

    def _counts(self) -> pool.PoolCounts:
        open_streams = sum(1 for s in self.streams.values() if not s.cancelled and not s.done)
        receiving = sum(1 for s in self.streams.values() if s.receiving)
        return pool.PoolCounts(receiving=receiving, not_receiving=max(0, open_streams - receiving))

    def _update(self, stream_id: int, stream: _Stream) -> Grant:
        share = self.share_bytes
        increment = pool.window_increment(
            stream.read_bytes,
            stream.advertised_bytes,
            share,
            stream.expected_bytes,
            pool.update_floor(share),
        )
        stream.advertised_bytes += increment
        return (stream_id, increment)
