"""Table 7, one slow reader on a shared connection, as cells; and the receive pool's shares.

Two streams on one connection at 20 ms, the first read at 20 Mbit/s or at full speed, under
each receive policy; then 1, 2 and 8 streams under the pool.
"""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import MIB

SHARING_CAMPAIGN = "table7-sharing"
SHARING_RTT_MS = 20.0
SHARING_READ_RATE_BITS_S = 20e6
SHARING_WINDOW = 4 * MIB
SHARING_POOL_STREAMS: tuple[int, ...] = (1, 2, 8)
SHARING_CONTROL = "receipt-4MiB-beside-fast"
# Receive policies of the first part: key -> (label, client).
SHARING_POLICIES: tuple[tuple[str, str, ClientConfig], ...] = (
    (
        "read-4MiB",
        "h2 static 4 MiB, conn credit on read",
        ClientConfig(
            kind="h2",
            window_mode="static",
            window_bytes=SHARING_WINDOW,
            conn_window_bytes=SHARING_WINDOW,
            conn_credit="read",
        ),
    ),
    (
        "receipt-4MiB",
        "h2 static 4 MiB, conn credit on receipt",
        ClientConfig(
            kind="h2",
            window_mode="static",
            window_bytes=SHARING_WINDOW,
            conn_window_bytes=SHARING_WINDOW,
        ),
    ),
    ("h2-dynamic", "h2 dynamic (grpc-go's receiver)", ClientConfig(kind="h2")),
    ("pool", "h2 pool 1.6 MB", ClientConfig(kind="h2", window_mode="pool")),
    ("grpcio", "grpcio (C-core)", ClientConfig(kind="grpcio")),
)


def sharing_cells(quick: bool = False) -> list[Cell]:
    """Two streams on one connection at 20 ms, the first read at 20 Mbit/s or at full speed,
    under each policy (fixed transfers: the fast stream's finish time is the measure); then
    1, 2 and 8 streams under the pool, timed (each stream's window is its share)."""
    link = Link.from_rtt(SHARING_RTT_MS)
    size = 8 * MIB  # long enough for a slow reader to fill a 4 MiB connection window
    cells = []
    for key, label, client in SHARING_POLICIES:
        for slow in (1, 0):
            workload = Workload(
                streams=2,
                bytes_per_stream=size,
                slow_streams=slow,
                read_rate_bits_s=SHARING_READ_RATE_BITS_S if slow else None,
                timeout_s=60.0,
            )
            beside = "slow" if slow else "fast"
            trial = Trial(link=link, client=client, workload=workload, label=f"{label}, {beside}")
            cells.append(Cell(f"{key}-beside-{beside}", trial))
    pool = ClientConfig(kind="h2", window_mode="pool")
    for streams in SHARING_POOL_STREAMS:
        workload = Workload(streams=streams, duration_s=0.3 if quick else 0.6, timeout_s=30.0)
        label = f"h2 pool, {streams} receiving"
        trial = Trial(link=link, client=pool, workload=workload, label=label)
        cells.append(Cell(f"pool-{streams}-streams", trial))
    return cells
