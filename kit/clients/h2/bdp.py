"""Pure: the grpc-go style BDP estimator, time passed in.

Source: google.golang.org/grpc v1.85.0 ``internal/transport/bdp_estimator.go`` (``add``,
``timesnap``, ``calculate``); the loop around it is ``kit.clients.h2.policies.grpc_go``.

The receiver measures how many bytes arrive during one PING round trip. On the first DATA
frame after the previous PING's ack it asks for a PING, counts every flow-controlled byte
received until the ack, then:

- RTT: a running average of the first samples, then an EWMA with alpha = 0.9;
- bandwidth = sample / (RTT x 1.5) (a sample on a saturated link is at most 1.5 BDP);
- when sample >= 0.66 x current BDP and that bandwidth is the largest seen so far,
  BDP = min(2 x sample, 16 MiB) and the caller grows both windows to it;
- once the cap is reached it stops asking for PINGs.

The RTT clock starts when the PING is written (grpc-go's ``timesnap``, called by its
writer): ``on_data`` stamps the request provisionally, ``ping_written`` re-stamps it once
the shell has sent it, so time spent handling the rest of a read is not counted as path RTT.
It runs from the connection's start, as grpc-go's does: the warm-up call's reply is its
first sample (too small to grow anything, but it is the first RTT of the average).

It never shrinks. Window sizes follow grpc-go: the stream window through
SETTINGS_INITIAL_WINDOW_SIZE, the connection window through a stream-0 WINDOW_UPDATE of
the difference (see ``kit.clients.h2.connection``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.plan.units import MIB

INITIAL_BDP_BYTES = 65_535
BDP_LIMIT_BYTES = 16 * MIB
RTT_ALPHA = 0.9
GROWTH_THRESHOLD = 0.66  # grpc-go's beta
GROWTH_FACTOR = 2  # grpc-go's gamma
SAMPLE_TO_BDP = 1.5
BOOTSTRAP_SAMPLES = 10
# grpc-go's bdpPing payload, so a capture shows which PINGs are BDP probes.
BDP_PING_DATA = bytes([2, 4, 16, 16, 9, 14, 7, 7])


@dataclass(frozen=True)
class WindowGrew:
    """The estimate rose: grow the stream and connection windows to ``window_bytes``."""

    window_bytes: int
    sample_bytes: int
    rtt_s: float


class BdpEstimator:
    """One per connection; fed every DATA frame's flow-controlled length and each PING ack."""

    def __init__(self, initial_bytes: int = INITIAL_BDP_BYTES, limit_bytes: int = BDP_LIMIT_BYTES):
        self.bdp_bytes = initial_bytes
        self.limit_bytes = limit_bytes
        self.rtt_s = 0.0
        self.bw_max = 0.0  # bytes per second
        self.sample_bytes = 0
        self.sample_count = 0
        self.ping_outstanding = False
        self._sent_ns = 0

    @property
    def ping_sent_ns(self) -> int:
        return self._sent_ns

    @property
    def capped(self) -> bool:
        return self.bdp_bytes >= self.limit_bytes

    def on_data(self, flow_controlled_bytes: int, now_ns: int) -> bool:
        """Count received bytes; True means "send the BDP PING now" (stamped at ``now_ns``)."""
        if self.capped:
            return False
        if self.ping_outstanding:
            self.sample_bytes += flow_controlled_bytes
            return False
        # The frame that triggers the PING is the first byte of the new sample (as in grpc-go).
        self.ping_outstanding = True
        self.sample_bytes = flow_controlled_bytes
        self.sample_count += 1
        self._sent_ns = now_ns
        return True

    def ping_written(self, now_ns: int) -> None:
        """The outstanding PING left the process now: its RTT is measured from here."""
        if self.ping_outstanding:
            self._sent_ns = now_ns

    def on_ping_ack(self, now_ns: int) -> WindowGrew | None:
        """Close the sample; return the new window when the estimate grows."""
        if not self.ping_outstanding:
            return None
        self.ping_outstanding = False
        self._update_rtt(max(0, now_ns - self._sent_ns) / 1e9)
        if self.rtt_s <= 0:
            return None  # a zero-time round trip carries no bandwidth information
        bw = self.sample_bytes / (self.rtt_s * SAMPLE_TO_BDP)
        self.bw_max = max(self.bw_max, bw)
        grows = self.sample_bytes >= GROWTH_THRESHOLD * self.bdp_bytes and bw == self.bw_max
        if not grows or self.capped:
            return None
        self.bdp_bytes = min(int(GROWTH_FACTOR * self.sample_bytes), self.limit_bytes)
        return WindowGrew(self.bdp_bytes, self.sample_bytes, self.rtt_s)

    def _update_rtt(self, sample_s: float) -> None:
        # grpc-go bootstraps with a running mean while sampleCount < 10, then favours the
        # recent past (rtt += (sample - rtt) * alpha).
        if self.sample_count < BOOTSTRAP_SAMPLES:
            self.rtt_s += (sample_s - self.rtt_s) / self.sample_count
        else:
            self.rtt_s += (sample_s - self.rtt_s) * RTT_ALPHA
