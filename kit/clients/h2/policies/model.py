"""Pure: the bookkeeping the models of other stacks share (offsets per window, their PING).

Every model here counts one window the way QUIC does, by offsets: ``limit`` is the offset
the sender may send up to (what we granted), ``received`` what arrived, ``consumed`` what
the application read. A grant raises ``limit``; the window the sender has is
``limit - received``, never negative (the peer would be in violation) and never above the
model's cap. ``ModelPolicy`` keeps one such ``Window`` per stream and one for the
connection, tells the streams apart from the connection, and owns the one PING a model
has in flight (its RTT clock starts when the PING is written, as the shell reports).
"""

from __future__ import annotations

from kit.clients.h2.policies.base import NOTHING, Answer, Grant, WindowPolicy
from kit.plan.units import HTTP2_MAX_WINDOW_BYTES


class Window:
    """One receive window as offsets (see the module docstring)."""

    __slots__ = ("consumed", "limit", "received", "size")

    def __init__(self, size: int) -> None:
        self.size = size  # the window the policy keeps ahead of what was consumed
        self.limit = size
        self.received = 0
        self.consumed = 0

    @property
    def available(self) -> int:
        """What the sender may still send."""
        return self.limit - self.received

    def extend_to(self, target: int) -> int:
        """Raise ``limit`` to ``target`` (never lower it, never past 2^31-1 ahead of what
        arrived); the WINDOW_UPDATE increment, 0 for none."""
        target = min(target, self.received + HTTP2_MAX_WINDOW_BYTES)
        increment = max(0, target - self.limit)
        self.limit += increment
        return increment


class ModelPolicy(WindowPolicy):
    """A model: a ``Window`` per stream and one for the connection; hooks to override."""

    name = "model"

    def __init__(self, stream_window_bytes: int, conn_window_bytes: int) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.streams: dict[int, Window] = {}
        self.conn = Window(conn_window_bytes)
        self.pings_sent = 0
        self.shown_stream_window = stream_window_bytes  # the last window reported grown
        self.shown_conn_window = conn_window_bytes

    @property
    def pings(self) -> bool:
        return True

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        self.streams[stream_id] = Window(self.stream_window_bytes)
        return NOTHING

    def finished(self, stream_id: int) -> None:
        self.forget(stream_id)

    def cancelled(self, stream_id: int) -> None:
        self.forget(stream_id)

    def forget(self, stream_id: int) -> None:
        """The stream is gone (finished or cancelled): drop its state (a model with per-stream
        state of its own extends this)."""
        self.streams.pop(stream_id, None)

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        self.conn.received += size
        stream = self.streams.get(stream_id) if stream_id is not None else None
        if stream is not None:
            stream.received += size
        # Padding, and what a stream nobody reads carries, are consumed on arrival.
        at_once = size if stream is None else padding
        grants = self.consumed(stream_id if stream else None, at_once, now_ns) if at_once else ()
        return self.answer(grants, self.on_data(size, now_ns))

    def read(self, stream_id: int, n: int, now_ns: int) -> Answer:
        return self.answer(self.consumed(stream_id, n, now_ns), self.on_read(n, now_ns))

    def consumed(self, stream_id: int | None, n: int, now_ns: int) -> tuple[Grant, ...]:
        """The application consumed ``n`` bytes (of no live stream when None): the
        WINDOW_UPDATEs due, connection first."""
        self.conn.consumed += n
        stream = self.streams.get(stream_id) if stream_id is not None else None
        out = [(0, self.conn_update(now_ns))]
        if stream is not None and stream_id is not None:
            stream.consumed += n
            out.append((stream_id, self.stream_update(stream_id, stream, now_ns)))
        return tuple(g for g in out if g[1] > 0)

    def answer(self, grants: tuple[Grant, ...], ping: bool) -> Answer:
        """The answer to a DATA frame or a read; a window that grew on the way is
        reported (the largest stream window, for a model that sizes streams one by one)."""
        if ping:
            self.ping_outstanding = True
            self.pings_sent += 1
        grew = self._grew() if grants else None
        if not grants and not ping:
            return NOTHING
        conn = self.conn.size if grew is not None else None
        return Answer(grants, ping=ping, stream_window=grew, conn_window=conn)

    def _grew(self) -> int | None:
        largest = self.largest_stream_window()
        if largest <= self.shown_stream_window and self.conn.size <= self.shown_conn_window:
            return None
        self.shown_stream_window = max(largest, self.shown_stream_window)
        self.shown_conn_window = max(self.conn.size, self.shown_conn_window)
        return self.shown_stream_window

    # -- what each model decides ---------------------------------------------------------

    def stream_update(self, stream_id: int, stream: Window, now_ns: int) -> int:
        """The stream's WINDOW_UPDATE increment now (0: none)."""
        return 0

    def conn_update(self, now_ns: int) -> int:
        """The connection's WINDOW_UPDATE increment now (0: none)."""
        return 0

    def on_data(self, size: int, now_ns: int) -> bool:
        """A DATA frame arrived; True: send the model's PING now."""
        return False

    def on_read(self, n: int, now_ns: int) -> bool:
        """The application read ``n`` bytes; True: send the model's PING now."""
        return False

    def start_ping(self, now_ns: int) -> bool:
        """Send a PING now unless one is in flight (True when it goes)."""
        if self.ping_outstanding:
            return False
        self.ping_sent_ns = now_ns
        return True

    def largest_stream_window(self) -> int:
        return max((s.size for s in self.streams.values()), default=self.stream_window_bytes)


class SmoothedRtt:
    """RFC 9002's smoothed RTT (first sample, then 7/8 old + 1/8 new), as QUIC stacks keep
    it from ACKs; the models feed it their PINGs' round trips."""

    __slots__ = ("min_ns", "smoothed_ns")

    def __init__(self) -> None:
        self.smoothed_ns = 0
        self.min_ns = 0

    def update(self, sample_ns: int) -> None:
        if sample_ns <= 0:
            return
        self.min_ns = sample_ns if self.min_ns == 0 else min(self.min_ns, sample_ns)
        if self.smoothed_ns == 0:
            self.smoothed_ns = sample_ns
        else:
            self.smoothed_ns = (7 * self.smoothed_ns + sample_ns) // 8
