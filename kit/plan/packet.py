"""The packet link's process config and rules: a ``Link`` of kind "packet" (the stream
link's delays, rate and jitter, plus loss, a bounded drop-tail queue and the MTU) run by one
forwarder between two network namespaces the kit creates."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kit.plan.trial import Link, require
from kit.plan.units import KIB

MIN_QUEUE_BYTES = 64 * KIB
# The namespaces are the kit's own: these addresses exist only inside them.
CLIENT_ADDR = "10.203.0.1"
SERVER_ADDR = "10.203.0.2"


def queue_bytes_for(link: Link, rate_bits_s: float | None) -> int:
    """The drop-tail queue of a direction with ``rate_bits_s``: the link's, or one
    bandwidth-delay product (at least 64 KiB), the common rule for a router's buffer."""
    if link.queue_bytes is not None:
        return link.queue_bytes
    bdp = 0 if rate_bits_s is None else round(rate_bits_s / 8 * link.rtt_ms / 1000)
    return max(MIN_QUEUE_BYTES, bdp)


def direction_rate(link: Link, direction: str) -> float | None:
    """One direction's bottleneck rate (None: unlimited); the down direction with rate steps
    has their mean, computed as the schedule's ``RateSteps`` computes it."""
    if direction == "down" and link.rate_steps:
        steps = [(s.rate_bits_s / 8e9, round(s.duration_ms * 1e6)) for s in link.rate_steps]
        period_ns = sum(d for _, d in steps)
        period_bytes = sum(b * d for b, d in steps)
        return float(period_bytes * 8e9 / period_ns)
    return link.rate_up_bits_s if direction == "up" else link.rate_down_bits_s


def direction_queues(link: Link) -> tuple[int, int]:
    """The (up, down) drop-tail queues of a packet link, in bytes."""
    up, down = (queue_bytes_for(link, direction_rate(link, d)) for d in ("up", "down"))
    return up, down


# IPv4 (20) + TCP (20) + the timestamp option Linux sends on every segment (12).
TCP_IP_HEADER_BYTES = 52
MATHIS_C = 1.22  # sqrt(3/2): Mathis et al. 1997, periodic loss, one loss per window


def mss_bytes(link: Link) -> int:
    return link.mtu - TCP_IP_HEADER_BYTES


def mathis_bits_s(link: Link) -> float | None:
    """Reno/CUBIC-like TCP's loss bound MSS / RTT x 1.22 / sqrt(p); None without loss or
    RTT. A model of loss-based congestion control: BBR does not slow down on loss this way."""
    if link.loss <= 0 or link.rtt_ms <= 0:
        return None
    return float(mss_bytes(link) * 8 / (link.rtt_ms / 1000) * MATHIS_C / math.sqrt(link.loss))


@dataclass(frozen=True, kw_only=True)
class ForwarderConfig:
    """The forwarder process: the packet link, and where the frame tap writes (None: off)."""

    link: Link = field(default_factory=lambda: Link(kind="packet"))
    tap_path: str | None = None

    def __post_init__(self) -> None:
        require(self.link.kind == "packet", "link: the forwarder runs the packet link only")
        require(self.tap_path is None or bool(self.tap_path), "tap_path: must not be empty")
