"""The packet link's plan: the stream link's delays, rate and jitter, plus loss, a bounded
drop-tail queue and the MTU, for one forwarder between two network namespaces."""

from __future__ import annotations

from dataclasses import dataclass, field

from kit.plan.trial import Link, is_int, require
from kit.plan.units import KIB

MIN_MTU = 576
MAX_MTU = 65_000  # TUN devices take up to 64 KiB packets
DEFAULT_MTU = 1500
MIN_QUEUE_BYTES = 64 * KIB
MAX_LOSS = 0.5
# The namespaces are the kit's own: these addresses exist only inside them.
CLIENT_ADDR = "10.203.0.1"
SERVER_ADDR = "10.203.0.2"


@dataclass(frozen=True, kw_only=True)
class PacketLink:
    """Loss applies to both directions, each with its own seeded draw; ``burst_len`` > 0
    makes it Gilbert-Elliott (mean burst length), 0 independent. ``queue_bytes`` None is
    one bandwidth-delay product (at least 64 KiB), the common rule for a router's buffer."""

    link: Link = field(default_factory=Link)
    loss: float = 0.0
    burst_len: float = 0.0
    queue_bytes: int | None = None
    mtu: int = DEFAULT_MTU

    def __post_init__(self) -> None:
        require(
            isinstance(self.loss, (int, float)) and 0 <= self.loss <= MAX_LOSS,
            f"loss: {self.loss!r} is outside 0..{MAX_LOSS:.0%}",
        )
        require(
            self.burst_len == 0 or (1 <= self.burst_len <= 1000 and self.loss > 0),
            f"loss burst length: {self.burst_len!r} must be 1..1000 with a loss above 0",
        )
        require(
            self.queue_bytes is None or (is_int(self.queue_bytes) and self.queue_bytes >= self.mtu),
            f"queue: {self.queue_bytes!r} bytes must hold at least one packet ({self.mtu} bytes)",
        )
        require(
            is_int(self.mtu) and MIN_MTU <= self.mtu <= MAX_MTU,
            f"mtu: {self.mtu!r} is outside {MIN_MTU}..{MAX_MTU}",
        )

    def queue_bytes_for(self, rate_bits_s: float | None) -> int:
        """The drop-tail queue of a direction with ``rate_bits_s``."""
        if self.queue_bytes is not None:
            return self.queue_bytes
        bdp = 0 if rate_bits_s is None else round(rate_bits_s / 8 * self.link.rtt_ms / 1000)
        return max(MIN_QUEUE_BYTES, bdp)


@dataclass(frozen=True, kw_only=True)
class ForwarderConfig:
    """The forwarder process: the packet link, and where the frame tap writes (None: off)."""

    packet: PacketLink = field(default_factory=PacketLink)
    tap_path: str | None = None

    def __post_init__(self) -> None:
        require(self.tap_path is None or bool(self.tap_path), "tap_path: must not be empty")
