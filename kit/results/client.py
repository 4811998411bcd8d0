"""What one client process measured, as it sends it to the orchestrator (a typed record).

One clock: ``time.monotonic_ns()`` (CLOCK_MONOTONIC is shared by every process on the
machine, so a client's timed window can be matched with the proxy's frame timestamps).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kit.plan.units import MIB

# Opaque-data prefix of the PINGs our h2 client sends only to measure RTT (not for BDP):
# a wire convention the client writes and the frame tap reads, to count them apart.
RTT_PROBE_PING_TAG = b"kr"


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

    @property
    def throughput_mib_s(self) -> float:
        return self.bytes / self.elapsed_s / MIB if self.elapsed_s > 0 else 0.0

    @property
    def cpu_fraction(self) -> float:
        return self.cpu_s / self.elapsed_s if self.elapsed_s > 0 else 0.0
