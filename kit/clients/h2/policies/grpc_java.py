"""Pure model: grpc-java's Netty transport with auto flow control (its default since 1.33).

Source: grpc/grpc-java ``netty/src/main/java/io/grpc/netty/AbstractNettyHandler.java``
(``FlowControlPinger``) and ``NettyClientHandler.java`` (``PingCountingFrameWriter``; line 252
builds ``new DefaultHttp2LocalFlowController(connection, DEFAULT_WINDOW_UPDATE_RATIO, true)``)
at commit 5fda0c7c35a9 (v1.83 line; unchanged in the 1.85.1 the kit builds); Netty's
``codec-http2/.../DefaultHttp2LocalFlowController.java`` (``AutoRefillState``,
``DefaultState.writeWindowUpdateIfNeeded``; read at netty/netty 00d1dfb686f8, the 4.2 line of
the 4.2.17.Final the kit builds). Both rules below were confirmed in the jars the kit builds
against (grpc-netty 1.85.1, netty-codec-http2 4.2.17.Final) with ``javap -c``.

- Windows start at 1 MiB, stream and connection (``DEFAULT_FLOW_CONTROL_WINDOW``).
- Connection credit goes back **on receipt**: the ``true`` above is
  ``autoRefillConnectionWindow``, whose ``AutoRefillState.receiveFlowControlledFrame``
  consumes every DATA byte as it arrives; once the processed window is down to half the
  window (ratio 0.5), a WINDOW_UPDATE restores it. A slow reader therefore holds only its
  own stream window and never blocks the other streams of its connection.
- Stream credit goes back as the application consumes (``NettyClientStream``'s
  ``bytesRead`` -> ``consumeBytes``), at the same ratio 0.5; padding is consumed on arrival
  (``onDataRead`` returns it). Netty writes the connection's WINDOW_UPDATE before the
  DATA reaches grpc-java's pinger, so that update resets the PING limiter first.
- BDP PING: on a DATA frame when none is in flight, when the ping limiter allows (fewer
  than 2 PINGs since our last HEADERS, DATA or WINDOW_UPDATE) and 2 x (bytes since the last
  PING + this frame) >= last target x back-off multiplier (0 at first). The frame counts.
- On its ack: bandwidth = bytes / elapsed since the PING (stamped when sent); target =
  min(2 x bytes, 8 MiB). If the bandwidth did not go up or the target is not above the
  connection window, the multiplier grows by one (at most 10); else it resets to 0, the
  connection window grows to the target and SETTINGS_INITIAL_WINDOW_SIZE says it for every
  stream (Netty grows each open stream's window and its update threshold by the delta).
"""

from __future__ import annotations

from kit.clients.h2.policies.base import Answer
from kit.clients.h2.policies.model import ModelPolicy, Window
from kit.plan.units import MIB

INITIAL_WINDOW_BYTES = MIB  # NettyChannelBuilder.DEFAULT_FLOW_CONTROL_WINDOW
MAX_WINDOW_BYTES = 8 * MIB  # FlowControlPinger.MAX_WINDOW_SIZE
MAX_BACKOFF = 10
WINDOW_UPDATE_RATIO = 0.5  # DefaultHttp2LocalFlowController.DEFAULT_WINDOW_UPDATE_RATIO
PINGS_WITHOUT_WRITES = 2  # PingCountingFrameWriter: "3 strikes" may upset a server
BDP_MEASUREMENT_PING = (1234).to_bytes(8, "big")
NS_PER_S = 1_000_000_000


def netty_update(window: Window) -> int:
    """Netty's ``writeWindowUpdateIfNeeded``: the processed window (granted - consumed)
    at or below ratio x window size restores the full size."""
    processed = window.limit - window.consumed
    if processed > int(window.size * WINDOW_UPDATE_RATIO):
        return 0
    return window.extend_to(window.consumed + window.size)


class GrpcJavaPolicy(ModelPolicy):
    """grpc-java's client (Netty) receive windows."""

    name = "grpc-java"
    ping_data = BDP_MEASUREMENT_PING

    def __init__(
        self,
        stream_window_bytes: int = INITIAL_WINDOW_BYTES,
        conn_window_bytes: int = INITIAL_WINDOW_BYTES,
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.data_since_ping = 0
        self.last_bandwidth = 0  # bytes per second, integer as in Java
        self.last_target = 0
        self.multiplier = 0
        self.limited_pings = 0  # PINGs since our last WINDOW_UPDATE (the limiter's count)

    @property
    def pings(self) -> bool:
        return True

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        """``AutoRefillState``: the connection window refills as the frame arrives; the
        stream's padding (or a dead stream's frame) is consumed at once."""
        self.conn.received += size
        self.conn.consumed += size
        out = [(0, netty_update(self.conn))]
        stream = self.streams.get(stream_id) if stream_id is not None else None
        if stream is not None and stream_id is not None:
            stream.received += size
            stream.consumed += padding
            out.append((stream_id, netty_update(stream) if padding else 0))
        grants = tuple(g for g in out if g[1] > 0)
        if grants:
            self.limited_pings = 0  # written before the pinger sees the frame
        return self.answer(grants, self.on_data(size, now_ns))

    def consumed(self, stream_id: int | None, n: int, now_ns: int) -> tuple[tuple[int, int], ...]:
        """The application consumed ``n`` bytes: stream credit only (the connection's went
        back on receipt)."""
        stream = self.streams.get(stream_id) if stream_id is not None else None
        if stream is None or stream_id is None:
            return ()
        stream.consumed += n
        increment = netty_update(stream)
        return ((stream_id, increment),) if increment > 0 else ()

    def answer(self, grants: tuple[tuple[int, int], ...], ping: bool) -> Answer:
        if grants:
            self.limited_pings = 0  # a WINDOW_UPDATE written: the limiter starts again
        return super().answer(grants, ping)

    def on_data(self, size: int, now_ns: int) -> bool:
        check = self.data_since_ping + size
        ping = (
            not self.ping_outstanding
            and self.limited_pings < PINGS_WITHOUT_WRITES
            and check * 2 >= self.last_target * self.multiplier
        )
        if ping:
            self.data_since_ping = 0
            self.ping_sent_ns = now_ns
            self.limited_pings += 1
        if self.last_target == 0:
            self.last_target = self.conn.size
        self.data_since_ping += size
        return ping

    def ping_written(self, now_ns: int) -> None:
        """grpc-java stamps ``lastPingTime`` when it writes the PING, on the DATA's read."""

    def ping_acked(self, now_ns: int) -> Answer:
        super().ping_acked(now_ns)
        elapsed = max(1, now_ns - self.ping_sent_ns)
        bandwidth = self.data_since_ping * NS_PER_S // elapsed
        target = min(self.data_since_ping * 2, MAX_WINDOW_BYTES)
        current = self.conn.size
        if bandwidth <= self.last_bandwidth or target <= current:
            self.multiplier = min(self.multiplier + 1, MAX_BACKOFF)
            return Answer()
        self.multiplier = 0
        self.last_bandwidth = bandwidth
        self.last_target = target
        return self._grow(target)

    def _grow(self, target: int) -> Answer:
        delta = target - self.conn.size
        self.conn.size = target
        conn = netty_update(self.conn)
        self.stream_window_bytes = target
        for stream in self.streams.values():
            stream.size += delta
            stream.limit += delta  # the peer applies SETTINGS' delta to every open stream
        grants = ((0, conn),) if conn > 0 else ()
        if grants:
            self.limited_pings = 0
        self.shown_stream_window = self.shown_conn_window = target
        return Answer(grants, stream_window=target, conn_window=target, settings=True)
