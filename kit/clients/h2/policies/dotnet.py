"""Pure model: .NET's SocketsHttpHandler HTTP/2 receive windows (dynamic window sizing on).

Sources (dotnet/runtime, ``src/libraries/System.Net.Http/src/System/Net/Http/
SocketsHttpHandler/``): ``Http2StreamWindowManager.cs`` at 32eab2c9590e (the stream window
manager and ``RttEstimator``) and ``Http2Connection.cs`` at d005261bb8a9
(``ProcessDataFrame``, ``ExtendWindow``, ``ForceSendConnectionWindowUpdate``,
``ProcessHeadersFrame``), the current rule. The model followed commit 03d70ca7fa04 before
2026-12-03, whose ``RttEstimator`` sent an initial burst of 2 PINGs and then at most one a
second; the current one is a burst of 4 and at most one every 2 s, each after a forced
connection WINDOW_UPDATE.

- Stream windows start at 65535 (``DefaultInitialHttp2StreamWindowSize``), cap 16 MiB
  (``MaxHttp2StreamWindowSize``), scale threshold multiplier 1.0. A stream's credit goes
  back once what the application consumed since the last update reaches window / 8. Then,
  if an RTT is known and delivered x min RTT > window x elapsed since the last update (the
  window would fill within an RTT), the window doubles (to the cap, where scaling stops)
  and the update carries the growth too.
- The connection window is 64 MiB (``ConnectionWindowSize``) and goes back **on receipt**:
  ``ProcessDataFrame`` calls ``ExtendWindow(frameData.Length)`` for every DATA frame, which
  sends the pending credit once it reaches 1/8 of the window (8 MiB). ``frameData``
  excludes padding, so .NET never returns padding to the connection window (the model
  keeps that).
- Min RTT from PINGs (``RttEstimator.OnDataOrHeadersReceived``), on a DATA frame of a live
  stream (.NET also skips the frame carrying END_STREAM; the model is not told it), when no
  PING is in flight: the first 4 go at once (the
  initial burst); after them, one only when more than 2 s passed since the last, and only
  if a connection WINDOW_UPDATE goes just before it: the one this frame's ``ExtendWindow``
  sent, or else every pending byte of connection credit sent now
  (``ForceSendConnectionWindowUpdate``; nothing pending: no PING, the next frame tries
  again). Burst PINGs force out pending credit too but go without it. The PING is stamped
  when decided.
- Not modelled: .NET also samples the SETTINGS round trip (``OnInitialSettingsAckReceived``)
  and may PING on a response's HEADERS; the model's first sample is the first DATA's PING.
"""

from __future__ import annotations

from kit.clients.h2.policies.base import Answer, Grant
from kit.clients.h2.policies.model import ModelPolicy, Window
from kit.plan.units import MIB

INITIAL_STREAM_WINDOW_BYTES = 65_535
MAX_STREAM_WINDOW_BYTES = 16 * MIB
CONNECTION_WINDOW_BYTES = 64 * MIB
WINDOW_UPDATE_RATIO = 8  # StreamWindowUpdateRatio, ConnectionWindowUpdateRatio
CONNECTION_WINDOW_THRESHOLD = CONNECTION_WINDOW_BYTES // WINDOW_UPDATE_RATIO  # 8 MiB
SCALE_THRESHOLD = 1.0
PING_INTERVAL_NS = 2_000_000_000  # RttEstimator.PingIntervalInSeconds = 2
INITIAL_BURST = 4  # RttEstimator.InitialBurstCount
PING_PAYLOAD = (-1 & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "big")  # its first, -1


class _Stream:
    __slots__ = ("delivered", "last_update_ns", "scaling")

    def __init__(self, now_ns: int) -> None:
        self.delivered = 0
        self.last_update_ns = now_ns
        self.scaling = True


class DotnetPolicy(ModelPolicy):
    """.NET's per-stream window manager, its connection credit and its min-RTT estimator."""

    name = "dotnet"
    ping_data = PING_PAYLOAD

    def __init__(
        self,
        stream_window_bytes: int = INITIAL_STREAM_WINDOW_BYTES,
        conn_window_bytes: int = CONNECTION_WINDOW_BYTES,
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.managers: dict[int, _Stream] = {}
        self.min_rtt_ns = 0
        self.initial_burst = INITIAL_BURST
        self.conn_pending = 0  # Http2Connection._pendingWindowUpdate

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        self.managers[stream_id] = _Stream(now_ns)
        return super().opened(stream_id, expected_bytes, now_ns)

    def forget(self, stream_id: int) -> None:
        super().forget(stream_id)
        self.managers.pop(stream_id, None)

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        """``ProcessDataFrame``: connection credit for the frame's data (not its padding),
        then, on a live stream, the RTT estimator."""
        self.conn.received += size
        stream = self.streams.get(stream_id) if stream_id is not None else None
        if stream is not None:
            stream.received += size
        data_bytes = size - padding
        if data_bytes <= 0:
            return self.answer((), False)
        sent = self._extend_conn(data_bytes)
        grants = ((0, sent),) if sent else ()
        if stream is None:
            return self.answer(grants, False)
        forced, ping = self._rtt_ping(window_update_sent=bool(sent), now_ns=now_ns)
        return self.answer(grants + forced, ping)

    def _extend_conn(self, n: int) -> int:
        """``ExtendWindow``: the increment sent now (0: still below 8 MiB pending)."""
        self.conn.consumed += n
        self.conn_pending += n
        if self.conn_pending < CONNECTION_WINDOW_THRESHOLD:
            return 0
        return self._send_conn_pending()

    def _send_conn_pending(self) -> int:
        due, self.conn_pending = self.conn_pending, 0
        return self.conn.extend_to(self.conn.limit + due)

    def _rtt_ping(self, window_update_sent: bool, now_ns: int) -> tuple[tuple[Grant, ...], bool]:
        """``OnDataOrHeadersReceived`` in the Waiting state: (forced grants, PING now)."""
        if self.ping_outstanding:
            return (), False
        initial = self.initial_burst > 0
        if not initial and now_ns - self.ping_sent_ns <= PING_INTERVAL_NS:
            return (), False
        if initial:
            self.initial_burst -= 1
        forced: tuple[Grant, ...] = ()
        if not window_update_sent:
            increment = self._send_conn_pending() if self.conn_pending > 0 else 0
            forced = ((0, increment),) if increment > 0 else ()
            if not forced and not initial:
                return (), False
        self.ping_sent_ns = now_ns
        return forced, True

    def consumed(self, stream_id: int | None, n: int, now_ns: int) -> tuple[Grant, ...]:
        """The application consumed ``n`` bytes: stream credit only (the connection's goes
        back on receipt)."""
        stream = self.streams.get(stream_id) if stream_id is not None else None
        manager = self.managers.get(stream_id) if stream_id is not None else None
        if stream is None or manager is None or stream_id is None:
            return ()
        stream.consumed += n
        manager.delivered += n
        increment = self._adjust(manager, stream, now_ns)
        return ((stream_id, increment),) if increment > 0 else ()

    def _adjust(self, manager: _Stream, stream: Window, now_ns: int) -> int:
        """``AdjustWindowDynamic``: the stream's increment now (0: none)."""
        if manager.delivered < stream.size // WINDOW_UPDATE_RATIO:
            return 0
        increment = manager.delivered
        if manager.scaling and self.min_rtt_ns > 0:
            elapsed = now_ns - manager.last_update_ns
            if manager.delivered * self.min_rtt_ns > stream.size * elapsed * SCALE_THRESHOLD:
                extended = min(MAX_STREAM_WINDOW_BYTES, stream.size * 2)
                increment += extended - stream.size
                stream.size = extended
                manager.scaling = extended < MAX_STREAM_WINDOW_BYTES
        manager.delivered = 0
        manager.last_update_ns = now_ns
        return stream.extend_to(stream.limit + increment)

    def ping_written(self, now_ns: int) -> None:
        """.NET stamps the PING when it decides to send it."""

    def ping_acked(self, now_ns: int) -> Answer:
        super().ping_acked(now_ns)
        sample = now_ns - self.ping_sent_ns
        if sample > 0:
            self.min_rtt_ns = sample if self.min_rtt_ns == 0 else min(self.min_rtt_ns, sample)
        return Answer()
