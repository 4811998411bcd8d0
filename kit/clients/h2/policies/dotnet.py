"""Pure model: .NET's SocketsHttpHandler HTTP/2 receive windows (dynamic window sizing on).

Source: dotnet/runtime ``src/libraries/System.Net.Http/src/System/Net/Http/
SocketsHttpHandler/Http2StreamWindowManager.cs`` (commit 03d70ca7fa04) and
``Http2Connection.cs`` (its connection window).

- Stream windows start at 65535 (``DefaultInitialHttp2StreamWindowSize``), cap 16 MiB
  (``MaxHttp2StreamWindowSize``), scale threshold multiplier 1.0. The connection window is
  64 MiB, refilled once 1/8 of it (8 MiB) was consumed.
- A stream's credit goes back once what the application consumed since the last update
  reaches window / 8. Then, if an RTT is known and delivered x min RTT > window x elapsed
  since the last update (the window would fill within an RTT), the window doubles (to the
  cap, where scaling stops) and the update carries the growth too.
- Min RTT from PINGs: one on a DATA frame when none is in flight, a burst of two at the
  start, then at most one a second (``RttEstimator``; its SETTINGS round trip, not seen by
  this model, would be one more sample).
"""

from __future__ import annotations

from kit.clients.h2.policies.base import Answer
from kit.clients.h2.policies.model import ModelPolicy, Window
from kit.plan.units import MIB

INITIAL_STREAM_WINDOW_BYTES = 65_535
MAX_STREAM_WINDOW_BYTES = 16 * MIB
CONNECTION_WINDOW_BYTES = 64 * MIB
WINDOW_UPDATE_RATIO = 8  # StreamWindowUpdateRatio, ConnectionWindowUpdateRatio
SCALE_THRESHOLD = 1.0
PING_INTERVAL_NS = 1_000_000_000
INITIAL_BURST = 4
PING_PAYLOAD = (-1 & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "big")  # its first, -1


class _Stream:
    __slots__ = ("delivered", "last_update_ns", "scaling")

    def __init__(self, now_ns: int) -> None:
        self.delivered = 0
        self.last_update_ns = now_ns
        self.scaling = True


class DotnetPolicy(ModelPolicy):
    """.NET's per-stream window manager and its min-RTT estimator."""

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
        self.conn_pending = 0

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        self.managers[stream_id] = _Stream(now_ns)
        return super().opened(stream_id, expected_bytes, now_ns)

    def forget(self, stream_id: int) -> None:
        super().forget(stream_id)
        self.managers.pop(stream_id, None)

    def consumed(self, stream_id: int | None, n: int, now_ns: int) -> tuple[tuple[int, int], ...]:
        self.conn.consumed += n
        out: list[tuple[int, int]] = []
        stream = self.streams.get(stream_id) if stream_id is not None else None
        manager = self.managers.get(stream_id) if stream_id is not None else None
        if stream is not None and manager is not None and stream_id is not None:
            stream.consumed += n
            manager.delivered += n
            out.append((stream_id, self._adjust(manager, stream, now_ns)))
        self.conn_pending += n
        if self.conn_pending >= CONNECTION_WINDOW_BYTES // WINDOW_UPDATE_RATIO:
            out.insert(0, (0, self.conn.extend_to(self.conn.limit + self.conn_pending)))
            self.conn_pending = 0
        return tuple(g for g in out if g[1] > 0)

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

    def on_data(self, size: int, now_ns: int) -> bool:
        """``OnDataOrHeadersReceived`` in the Waiting state (no PING in flight)."""
        if self.ping_outstanding:
            return False
        self.initial_burst -= 1
        initial = self.initial_burst >= 0
        if not initial and now_ns - self.ping_sent_ns <= PING_INTERVAL_NS:
            return False
        if self.initial_burst > 0:
            self.initial_burst -= 1
        self.ping_sent_ns = now_ns
        return True

    def ping_written(self, now_ns: int) -> None:
        """.NET stamps the PING when it decides to send it."""

    def ping_acked(self, now_ns: int) -> Answer:
        super().ping_acked(now_ns)
        sample = now_ns - self.ping_sent_ns
        if sample > 0:
            self.min_rtt_ns = sample if self.min_rtt_ns == 0 else min(self.min_rtt_ns, sample)
        return Answer()
