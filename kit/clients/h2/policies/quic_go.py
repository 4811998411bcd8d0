"""Pure model: quic-go's receive flow control, applied to HTTP/2 (a QUIC stream is a stream,
MAX_DATA the connection window).

Source: quic-go/quic-go ``flow_controller_base.go``, ``flow_controller_stream.go``,
``flow_controller_connection.go`` and ``internal/protocol/params.go`` (v0.61.0-8-g2cfe6ee0b;
older releases keep them in ``internal/flowcontrol/``).

- Windows: stream 512 KiB (max 6 MiB), connection 1.5 x that, 768 KiB (max 15 MiB).
- Credit on the application's read: once a quarter of the window is consumed (what is
  left <= 3/4 of the window), the limit moves to read offset + window.
- Auto-tuning, before each update: if more than half the window was read in this epoch
  and the epoch is younger than 4 x (read / window) x SRTT, the window doubles (to its
  max); a new epoch starts. An epoch starts at the first byte received. A stream that
  grows raises the connection window to at least 1.5 x its own (and starts its epoch).
- SRTT: QUIC takes it from ACKs; here a PING on DATA when none is in flight measures it
  (RFC 9002's smoothing).
"""

from __future__ import annotations

from kit.clients.h2.policies.base import Answer
from kit.clients.h2.policies.model import ModelPolicy, SmoothedRtt, Window
from kit.plan.units import KIB, MIB

INITIAL_STREAM_WINDOW_BYTES = 512 * KIB  # DefaultInitialMaxStreamData
CONNECTION_MULTIPLIER = 1.5  # ConnectionFlowControlMultiplier
INITIAL_CONN_WINDOW_BYTES = int(CONNECTION_MULTIPLIER * INITIAL_STREAM_WINDOW_BYTES)
MAX_STREAM_WINDOW_BYTES = 6 * MIB  # DefaultMaxReceiveStreamFlowControlWindow
MAX_CONN_WINDOW_BYTES = 15 * MIB  # DefaultMaxReceiveConnectionFlowControlWindow
UPDATE_THRESHOLD = 0.25  # WindowUpdateThreshold
RTT_PING = b"quicgo\x00\x01"


class Controller:
    """quic-go's ``receiveFlowController`` over a ``Window``: the epoch and the tuner."""

    __slots__ = ("epoch_offset", "epoch_start_ns", "max_size", "started", "window")

    def __init__(self, window: Window, max_size: int) -> None:
        self.window = window
        self.max_size = max_size
        self.epoch_start_ns = 0
        self.epoch_offset = 0
        self.started = False

    def received(self, now_ns: int) -> None:
        if not self.started:  # the first frame starts auto-tuning
            self.started = True
            self.new_epoch(now_ns)

    def new_epoch(self, now_ns: int) -> None:
        self.epoch_start_ns = now_ns
        self.epoch_offset = self.window.consumed

    def has_update(self) -> bool:
        remaining = self.window.limit - self.window.consumed
        return remaining <= int(self.window.size * (1 - UPDATE_THRESHOLD))

    def update(self, srtt_ns: int, now_ns: int) -> int:
        """``getWindowUpdate``: the increment now (0: none); may double the window first."""
        if not self.has_update():
            return 0
        self.maybe_grow(srtt_ns, now_ns)
        return self.window.extend_to(self.window.consumed + self.window.size)

    def maybe_grow(self, srtt_ns: int, now_ns: int) -> None:
        size = self.window.size
        in_epoch = self.window.consumed - self.epoch_offset
        if in_epoch <= size // 2 or srtt_ns == 0:
            return
        fraction = in_epoch / size
        if now_ns - self.epoch_start_ns < 4 * fraction * srtt_ns:
            self.window.size = min(2 * size, self.max_size)
        self.new_epoch(now_ns)

    def ensure_minimum(self, size: int, now_ns: int) -> None:
        """``EnsureMinimumWindowSize`` (the connection, after a stream grew)."""
        if size <= self.window.size:
            return
        self.window.size = min(size, self.max_size)
        self.new_epoch(now_ns)


class QuicGoPolicy(ModelPolicy):
    """quic-go's stream and connection receive windows, on HTTP/2."""

    name = "quic-go"
    ping_data = RTT_PING

    def __init__(
        self,
        stream_window_bytes: int = INITIAL_STREAM_WINDOW_BYTES,
        conn_window_bytes: int = INITIAL_CONN_WINDOW_BYTES,
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.rtt = SmoothedRtt()
        self.conn_ctl = Controller(self.conn, MAX_CONN_WINDOW_BYTES)
        self.ctls: dict[int, Controller] = {}

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        answer = super().opened(stream_id, expected_bytes, now_ns)
        self.ctls[stream_id] = Controller(self.streams[stream_id], MAX_STREAM_WINDOW_BYTES)
        return answer

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        if stream_id is not None and stream_id in self.ctls:
            self.ctls[stream_id].received(now_ns)
        self.conn_ctl.received(now_ns)
        return super().data(stream_id, size, padding, now_ns)

    def stream_update(self, stream_id: int, stream: Window, now_ns: int) -> int:
        ctl = self.ctls.get(stream_id)
        if ctl is None:
            return 0
        old = stream.size
        increment = ctl.update(self.rtt.smoothed_ns, now_ns)
        if stream.size > old:
            self.conn_ctl.ensure_minimum(int(stream.size * CONNECTION_MULTIPLIER), now_ns)
        return increment

    def consumed(self, stream_id: int | None, n: int, now_ns: int) -> tuple[tuple[int, int], ...]:
        """quic-go queues the stream's update, then the connection's (which a stream that
        grew may have enlarged): stream first here, unlike the base order."""
        stream = self.streams.get(stream_id) if stream_id is not None else None
        self.conn.consumed += n
        out: list[tuple[int, int]] = []
        if stream is not None and stream_id is not None:
            stream.consumed += n
            out.append((stream_id, self.stream_update(stream_id, stream, now_ns)))
        out.append((0, self.conn_ctl.update(self.rtt.smoothed_ns, now_ns)))
        return tuple(g for g in out if g[1] > 0)

    def forget(self, stream_id: int) -> None:
        super().forget(stream_id)
        self.ctls.pop(stream_id, None)

    def on_data(self, size: int, now_ns: int) -> bool:
        return self.start_ping(now_ns)

    def ping_acked(self, now_ns: int) -> Answer:
        super().ping_acked(now_ns)
        self.rtt.update(now_ns - self.ping_sent_ns)
        return Answer()
