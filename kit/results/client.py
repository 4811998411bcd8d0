"""What one client process measured, as it sends it to the orchestrator (a typed record).

One clock: ``time.monotonic_ns()`` (CLOCK_MONOTONIC is shared by every process on the
machine, so a client's timed window can be matched with the proxy's frame timestamps).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kit.errors import UsageError
from kit.plan.units import MIB

# Opaque-data prefix of the PINGs our h2 client sends only to measure RTT (not for BDP):
# a wire convention the client writes and the frame tap reads, to count them apart.
RTT_PROBE_PING_TAG = b"kr"
_NON_NEGATIVE = (
    "bytes",
    "messages",
    "elapsed_s",
    "stream_bytes",
    "stream_finish_s",
    "cpu_s",
    "ping_rtt_ms",
    "latencies_ms",
    "sent_bytes",
    "credit_wait_s",
    "slow_streams",
    "stream_peak_unread_bytes",
    "peak_unread_bytes",
)


def now_ns() -> int:
    return time.monotonic_ns()


# --- what one client measured ----------------------------------------------------------


@dataclass(frozen=True)
class ClientResult:
    """What one client process measured during its timed phase (after warm-up).

    ``window_trace`` is (ms since the timed start, window bytes) for each window the client
    advertised (h2 dynamic); ``ping_rtt_ms`` the RTTs its own PINGs saw.
    """

    client: str
    bytes: int = 0
    messages: int = 0
    elapsed_s: float = 0.0
    t_start_ns: int = 0
    t_end_ns: int = 0
    stream_bytes: tuple[int, ...] = ()
    stream_finish_s: tuple[float, ...] = ()
    cpu_s: float = 0.0
    ping_rtt_ms: tuple[float, ...] = ()
    latencies_ms: tuple[float, ...] = ()
    window_trace: tuple[tuple[float, int], ...] = ()
    notes: tuple[str, ...] = ()
    # Uploads: ``bytes`` is what the server confirmed; these say what the client did.
    sent_bytes: int = 0  # payload bytes of the messages the client sent
    credit_wait_s: float | None = None  # h2: time it had bytes to send but no window
    # Slow readers: the first ``slow_streams`` streams were read at a paced rate.
    slow_streams: int = 0
    # Per stream: the most bytes received and not yet read by the application (h2 only)...
    stream_peak_unread_bytes: tuple[int, ...] = ()
    # ...and the largest window the sender had after one of the client's updates (h2 only).
    stream_window_bytes: tuple[int, ...] = ()
    # The most bytes received and not yet read on one connection at once (None: unknown).
    peak_unread_bytes: int | None = None

    def __post_init__(self) -> None:
        # Counts and durations are never negative: a record saying so was tampered with
        # (or damaged), and a report would print "in -1.00 s".
        for name in _NON_NEGATIVE:
            value = getattr(self, name)
            values = value if isinstance(value, tuple) else (value,)
            if any(v is not None and v < 0 for v in values):
                raise UsageError(f"{name}: {value!r} is negative")

    @property
    def throughput_mib_s(self) -> float:
        return self.bytes / self.elapsed_s / MIB if self.elapsed_s > 0 else 0.0

    @property
    def stream_throughput_mib_s(self) -> tuple[float, ...]:
        """Each stream's bytes over its own finish time (its share of the timed phase)."""
        return tuple(
            b / t / MIB if t > 0 else 0.0
            for b, t in zip(self.stream_bytes, self.stream_finish_s, strict=False)
        )

    @property
    def cpu_fraction(self) -> float:
        return self.cpu_s / self.elapsed_s if self.elapsed_s > 0 else 0.0
