"""Pure model: QUICHE's (Chromium's QUIC) receive-window auto-tuning, applied to HTTP/2 (a
QUIC stream is a stream, the session's MAX_DATA the connection window).

Source: google/quiche ``quiche/quic/core/quic_flow_controller.cc`` and ``.h``,
``quic_constants.h``, ``quic_session.cc`` (commit f44fa9f33b5d).

- Windows start at QUICHE's default 16 KiB (``kDefaultFlowControlSendWindow``); the
  HTTP/2 connection window cannot start below 65535, so it starts there. Caps: 16 MB per
  stream, 24 MB for the session (``kStreamReceiveWindowLimit``, ``kSessionReceiveWindowLimit``).
- Credit on consumption: once less than half the window is left (offset - consumed <
  window / 2), the offset moves to consumed + window. The initial window counts as the
  first update (its clock starts at the first consumption).
- Before each update: if the previous one was less than 2 x SRTT ago, the window doubles
  (to its cap). A stream that grew asks the session for at least 1.5 x its window
  (``EnsureWindowAtLeast``), which, as written, only acts when the session's cap is below
  that (so at these caps the session grows by its own updates only).
- QUICHE tunes its server's receive side (``perspective() == IS_SERVER``) and leaves its
  client's fixed (Chromium sets 6 MB / 15 MB); this model is the tuner on our client.
- SRTT: QUIC takes it from ACKs; here a PING on DATA when none is in flight measures it.
"""

from __future__ import annotations

from kit.clients.h2.policies.base import Answer
from kit.clients.h2.policies.model import ModelPolicy, SmoothedRtt, Window
from kit.plan.units import KIB

DEFAULT_WINDOW_BYTES = 16 * KIB  # kDefaultFlowControlSendWindow
HTTP2_MIN_CONN_WINDOW = 65_535
STREAM_LIMIT_BYTES = 16 * 1024 * 1024  # kStreamReceiveWindowLimit
SESSION_LIMIT_BYTES = 24 * 1024 * 1024  # kSessionReceiveWindowLimit
SESSION_MULTIPLIER = 1.5  # kSessionFlowControlMultiplier
RTT_PING = b"quiche\x00\x01"


class Tuner:
    """One ``QuicFlowController``'s receive side over a ``Window``."""

    __slots__ = ("limit_bytes", "prev_update_ns", "window")

    def __init__(self, window: Window, limit_bytes: int) -> None:
        self.window = window
        self.limit_bytes = limit_bytes
        self.prev_update_ns: int | None = None

    def maybe_update(self, srtt_ns: int, now_ns: int) -> int:
        """``MaybeSendWindowUpdate``: the increment now (0: none)."""
        if self.prev_update_ns is None:
            self.prev_update_ns = now_ns  # the initial window counts as an update
        available = self.window.limit - self.window.consumed
        if available >= self.window.size // 2:
            return 0
        self.maybe_increase(srtt_ns, now_ns)
        return self.window.extend_to(self.window.consumed + self.window.size)

    def maybe_increase(self, srtt_ns: int, now_ns: int) -> None:
        prev, self.prev_update_ns = self.prev_update_ns, now_ns
        if prev is None or srtt_ns == 0:
            return
        if now_ns - prev >= 2 * srtt_ns:
            return
        self.window.size = min(2 * self.window.size, self.limit_bytes)


class QuichePolicy(ModelPolicy):
    """QUICHE's auto-tuned stream and session receive windows, on HTTP/2."""

    name = "quiche"
    ping_data = RTT_PING

    def __init__(
        self,
        stream_window_bytes: int = DEFAULT_WINDOW_BYTES,
        conn_window_bytes: int = HTTP2_MIN_CONN_WINDOW,
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.rtt = SmoothedRtt()
        self.session = Tuner(self.conn, SESSION_LIMIT_BYTES)
        self.tuners: dict[int, Tuner] = {}

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        answer = super().opened(stream_id, expected_bytes, now_ns)
        self.tuners[stream_id] = Tuner(self.streams[stream_id], STREAM_LIMIT_BYTES)
        return answer

    def forget(self, stream_id: int) -> None:
        super().forget(stream_id)
        self.tuners.pop(stream_id, None)

    def stream_update(self, stream_id: int, stream: Window, now_ns: int) -> int:
        tuner = self.tuners.get(stream_id)
        if tuner is None:
            return 0
        old = stream.size
        increment = tuner.maybe_update(self.rtt.smoothed_ns, now_ns)
        if stream.size > old:
            self.ensure_session_at_least(int(SESSION_MULTIPLIER * stream.size), now_ns)
        return increment

    def ensure_session_at_least(self, window_bytes: int, now_ns: int) -> None:
        """``EnsureWindowAtLeast`` as written: it compares the session's *cap* with the
        wanted size, so it acts only when the cap is below it."""
        if self.session.limit_bytes >= window_bytes:
            return
        self.conn.size = min(2 * self.conn.size, self.session.limit_bytes)
        self.conn.extend_to(self.conn.consumed + self.conn.size)

    def conn_update(self, now_ns: int) -> int:
        return self.session.maybe_update(self.rtt.smoothed_ns, now_ns)

    def on_data(self, size: int, now_ns: int) -> bool:
        return self.start_ping(now_ns)

    def ping_acked(self, now_ns: int) -> Answer:
        super().ping_acked(now_ns)
        self.rtt.update(now_ns - self.ping_sent_ns)
        return Answer()
