"""Table 3, several streams share one connection window, as cells.

4 streams x 4 MiB on one h2 connection at 5 ms, stream windows 1 MiB, the connection window
64 KiB (it binds: the streams starve each other) or 4 MiB (it does not).
"""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.tables.sizing import CellTiming, fixed_trial
from kit.plan.trial import ClientConfig, Link, Workload
from kit.plan.units import KIB, MIB, size_spec

STARVATION_CAMPAIGN = "table3-starvation"
STARVATION_RTT_MS = 5.0
STARVATION_STREAMS = 4
STARVATION_BYTES_PER_STREAM = 4 * MIB
STARVATION_STREAM_WINDOW = MIB
STARVATION_CONN_WINDOWS: tuple[int, ...] = (64 * KIB, 4 * MIB)
STARVATION_CONTROL = "h2-conn-64KiB"  # the window-bound cell: a 40 ms cell's spread says little


def starvation_cells(timing: CellTiming) -> list[Cell]:
    """4 streams x 4 MiB on one connection, stream windows 1 MiB, conn window 64 KiB vs 4 MiB."""
    link = Link.from_rtt(STARVATION_RTT_MS)
    workload = Workload(streams=STARVATION_STREAMS, bytes_per_stream=STARVATION_BYTES_PER_STREAM)
    cells = []
    for conn_window in STARVATION_CONN_WINDOWS:
        client = ClientConfig(
            kind="h2",
            window_mode="static",
            window_bytes=STARVATION_STREAM_WINDOW,
            conn_window_bytes=conn_window,
        )
        label = f"h2 conn window {size_spec(conn_window)}"
        cells.append(
            Cell(
                f"h2-conn-{size_spec(conn_window)}",
                fixed_trial(link, client, workload, timing, label),
            )
        )
    return cells
