"""Table 4, small unary calls do not care about the window, as cells (RTT 5 ms)."""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.tables.sizing import CellTiming, cell_timeout_s
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import KIB

UNARY_CAMPAIGN = "table4-unary"
UNARY_RTT_MS = 5.0
UNARY_BASELINE = "grpcio-dynamic"


def unary_cells(timing: CellTiming) -> list[Cell]:
    """grpcio dynamic (the baseline) vs static 64 KiB, and the same pair on the h2 client.

    Comparing grpcio dynamic with h2 static 64 KiB alone would mix two stacks; the h2 dynamic
    row lets each client's window effect be judged on its own stack.
    """
    link = Link.from_rtt(UNARY_RTT_MS)
    workload = Workload(
        kind="unary",
        calls=timing.unary_calls,
        timeout_s=cell_timeout_s(timing.unary_calls * UNARY_RTT_MS / 1000, timing),
    )
    clients = {
        "grpcio-dynamic": ClientConfig(kind="grpcio", window_mode="dynamic"),
        "grpcio-static-64KiB": ClientConfig(
            kind="grpcio", window_mode="static", window_bytes=64 * KIB
        ),
        "h2-dynamic": ClientConfig(kind="h2", window_mode="dynamic"),
        "h2-static-64KiB": ClientConfig(kind="h2", window_mode="static", window_bytes=64 * KIB),
    }
    return [
        Cell(key, Trial(link=link, client=c, workload=workload, label=key.replace("-", " ")))
        for key, c in clients.items()
    ]
