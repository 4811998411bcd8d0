"""Pure model: hyper's HTTP/2 client with its adaptive window (tonic's ``http2_adaptive_window``).

Sources: hyperium/hyper ``src/proto/h2/ping.rs``, ``src/proto/h2/client.rs`` and
``src/client/conn/http2.rs`` (v1.12.0, the version tonic 0.14.9's lock file pins), and the
h2 crate it drives, hyperium/h2 ``src/proto/streams/flow_control.rs`` and ``recv.rs``
(v0.4.20).

- The adaptive window starts both windows at 65535 (``SPEC_WINDOW_SIZE``).
- Credit (h2): released capacity goes back once it reaches half of what the sender still
  has (``unclaimed_capacity``: unclaimed >= window / 2), per stream and for the connection.
- BDP (ping.rs): bytes the application takes are counted while a PING is in flight (the
  frame that starts it counts); none are counted before ``next_bdp_at``. The first BDP
  PING goes with the first DATA read (``channel`` sets ``next_bdp_at`` to now). The ack is
  seen when hyper's ``Ponger`` is next polled (``Conn::poll`` polls it before h2's
  connection), so the DATA read in the same socket read as the PONG counts too (on the
  wire: a 65535 burst, then the PONG with 49152 more, and the next window 2 x 114687). On
  the ack: RTT = first sample, then an EWMA of 1/8; bandwidth = bytes / (1.5 x RTT); below
  the largest seen: no growth; else, when bytes >= 2/3 of the current BDP, BDP = min(2 x
  bytes, 16 MiB), the connection window's target and SETTINGS_INITIAL_WINDOW_SIZE become
  it, and the PING delay halves.
- The next PING waits ``ping_delay`` after each PONG (``next_bdp_at = now + ping_delay``):
  100 ms at first (``ping.rs:51``), halved on each growth, multiplied by 4 after two
  stable samples (no growth) while it is under 10 s (``stabilize_delay``, ``ping.rs:414``),
  so it can reach 25.6 s (100 ms x 4^4); at the 16 MiB cap every sample is stable.
"""

from __future__ import annotations

from kit.clients.h2.policies.base import NOTHING, Answer
from kit.clients.h2.policies.model import ModelPolicy, Window
from kit.plan.units import MIB

SPEC_WINDOW_BYTES = 65_535
BDP_LIMIT_BYTES = 16 * MIB
RTT_GAIN = 0.125
SAMPLE_TO_BDP = 1.5
INITIAL_PING_DELAY_NS = 100_000_000
# stabilize_delay multiplies the delay by 4 only while it is under 10 s: 25.6 s at most.
PING_DELAY_GROWTH_BELOW_NS = 10_000_000_000
# h2's ``Ping::opaque()`` payload: hyper's BDP PINGs carry it.
OPAQUE_PING = bytes([0x3B, 0x7C, 0xDB, 0x7A, 0x0B, 0x87, 0x16, 0xB4])


def h2_release(window: Window) -> int:
    """h2's ``unclaimed_capacity``: what was consumed and not yet granted goes back once it
    reaches half of the window the sender still has."""
    window_size = window.limit - window.received  # h2's window_size
    available = window.consumed + window.size - window.received  # h2's available
    if window_size >= available:
        return 0
    unclaimed = available - window_size
    if unclaimed < window_size // 2:
        return 0
    return window.extend_to(window.limit + unclaimed)


class Bdp:
    """hyper's ``Bdp``: the estimate, its RTT and the PING delay's back-off."""

    def __init__(self, initial_bytes: int) -> None:
        self.bdp = initial_bytes
        self.max_bandwidth = 0.0
        self.rtt_s = 0.0
        self.ping_delay_ns = INITIAL_PING_DELAY_NS
        self.stable_count = 0

    def calculate(self, sample_bytes: int, rtt_s: float) -> int | None:
        """The new BDP, or None when it does not grow (hyper's ``calculate``)."""
        if self.bdp == BDP_LIMIT_BYTES:
            self.stabilize_delay()
            return None
        self.rtt_s = rtt_s if self.rtt_s == 0.0 else self.rtt_s + (rtt_s - self.rtt_s) * RTT_GAIN
        bandwidth = sample_bytes / (self.rtt_s * SAMPLE_TO_BDP) if self.rtt_s > 0 else 0.0
        if bandwidth < self.max_bandwidth:
            self.stabilize_delay()
            return None
        self.max_bandwidth = bandwidth
        if sample_bytes >= self.bdp * 2 // 3:
            self.bdp = min(sample_bytes * 2, BDP_LIMIT_BYTES)
            self.stable_count = 0
            self.ping_delay_ns //= 2
            return self.bdp
        self.stabilize_delay()
        return None

    def stabilize_delay(self) -> None:
        if self.ping_delay_ns < PING_DELAY_GROWTH_BELOW_NS:
            self.stable_count += 1
            if self.stable_count >= 2:
                self.ping_delay_ns *= 4
                self.stable_count = 0


class HyperPolicy(ModelPolicy):
    """hyper's client receive windows, adaptive window on."""

    name = "hyper"
    ping_data = OPAQUE_PING

    def __init__(
        self,
        stream_window_bytes: int = SPEC_WINDOW_BYTES,
        conn_window_bytes: int = SPEC_WINDOW_BYTES,
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.bdp = Bdp(stream_window_bytes)
        self.sample_bytes = 0
        self.next_bdp_ns: int | None = 0  # hyper: the first DATA may PING at once
        self.pong_pending = False  # the PONG arrived; the read it came in is not done

    def stream_update(self, stream_id: int, stream: Window, now_ns: int) -> int:
        return h2_release(stream)

    def conn_update(self, now_ns: int) -> int:
        return h2_release(self.conn)

    def on_read(self, n: int, now_ns: int) -> bool:
        """hyper's ``record_data``: called as the body hands bytes to the application."""
        if self.next_bdp_ns is not None:
            if now_ns < self.next_bdp_ns:
                return False
            self.next_bdp_ns = None
        self.sample_bytes += n
        return self.start_ping(now_ns)

    def ping_written(self, now_ns: int) -> None:
        """hyper stamps ``ping_sent_at`` as it queues the PING (the read that asked)."""

    def ping_acked(self, now_ns: int) -> Answer:
        """hyper's ``Ponger`` sees the PONG only at its next poll, after h2 has read every
        frame that came in the same read: the sample stays open until ``read_done``."""
        self.pong_pending = True
        return NOTHING

    def read_done(self, now_ns: int) -> Answer:
        if not self.pong_pending:
            return NOTHING
        self.pong_pending = False
        super().ping_acked(now_ns)
        sample, self.sample_bytes = self.sample_bytes, 0
        grown = self.bdp.calculate(sample, max(0, now_ns - self.ping_sent_ns) / 1e9)
        self.next_bdp_ns = now_ns + self.bdp.ping_delay_ns
        if grown is None:
            return NOTHING
        return self._grow(grown)

    def _grow(self, window: int) -> Answer:
        """``set_target_window_size`` (connection) then ``set_initial_window_size``."""
        self.conn.size = max(self.conn.size, window)
        conn = h2_release(self.conn)
        delta = window - self.stream_window_bytes
        self.stream_window_bytes = window
        for stream in self.streams.values():
            stream.size += delta
            stream.limit += delta  # SETTINGS: the peer grows every open stream by the delta
        grants = ((0, conn),) if conn > 0 else ()
        self.shown_stream_window, self.shown_conn_window = window, self.conn.size
        return Answer(grants, stream_window=window, conn_window=self.conn.size, settings=True)
