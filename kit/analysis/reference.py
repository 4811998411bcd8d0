"""The reference study's published figures, kept as data in this one place with their source.

Source: "HTTP/2 flow-control windows: how the initial window and BDP estimation affect
throughput" (a grpc-go study): macOS arm64, grpc-go, local processes behind a delay-line
proxy; each configuration measured once, reruns varied ~±10%.
They are the target *shape* (who wins, by how much), never numbers our results are tuned to.
``docs/reference.md`` describes the study for users.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.plan.units import KIB, MIB

SOURCE = (
    '"HTTP/2 flow-control windows: how the initial window and BDP estimation affect '
    'throughput", a grpc-go study (macOS arm64, one run per setting, reruns ±10%)'
)

# (RTT ms, window bytes or None for the dynamic BDP estimator) -> MiB/s. Tables 1-3 there.
THROUGHPUT_MIB_S: dict[tuple[float, int | None], float] = {
    (0.0, None): 642.6,
    (0.0, 64 * KIB): 336.5,
    (0.0, 256 * KIB): 797.4,
    (0.0, MIB): 957.7,
    (0.0, 4 * MIB): 1339.0,
    (5.0, None): 144.6,
    (5.0, 64 * KIB): 9.2,
    (5.0, 256 * KIB): 33.4,
    (5.0, MIB): 124.4,
    (5.0, 4 * MIB): 435.8,
    (20.0, None): 23.4,
    (20.0, 64 * KIB): 2.5,
    (20.0, 256 * KIB): 9.0,
    (20.0, MIB): 31.9,
    (20.0, 4 * MIB): 119.5,
}


@dataclass(frozen=True)
class WireFigures:
    """Table 4 there: the dynamic client at RTT 20 ms, seen on the wire."""

    throughput_mib_s: float
    conn_window_updates: int
    first_increments: tuple[int, ...]
    pings_sent: int


WIRE_DYNAMIC_20MS = WireFigures(
    throughput_mib_s=22.7,
    conn_window_updates=56,
    first_increments=(16384, 16384, 16384, 16383, 65535, 16384, 32768, 32767, 32768, 98304),
    pings_sent=16,
)

# Client SETTINGS as sent there (window bytes or None for dynamic) -> INITIAL_WINDOW_SIZE.
CLIENT_SETTINGS: dict[int | None, str] = {
    None: "(empty)",
    64 * KIB: "INITIAL_WINDOW_SIZE=65536",
    MIB: "INITIAL_WINDOW_SIZE=1048576",
}

# Table 5 there: 4 streams x 4 MiB, stream windows 1 MiB, RTT 5 ms.
# connection window bytes -> (total time ms, aggregate MiB/s)
STARVATION: dict[int, tuple[float, float]] = {
    64 * KIB: (1765.9, 9.1),
    4 * MIB: (39.7, 402.7),
}

# Table 6 there: 200 unary calls at RTT 5 ms, mean per call (ms).
UNARY_MEAN_MS: dict[int | None, float] = {None: 5.87, 64 * KIB: 5.83}


def window_ratio(rtt_ms: float, large: int = 4 * MIB, small: int = 64 * KIB) -> float:
    """The reference's static large/small throughput ratio at an RTT (~4x loopback, ~48x 20 ms)."""
    return THROUGHPUT_MIB_S[(rtt_ms, large)] / THROUGHPUT_MIB_S[(rtt_ms, small)]
