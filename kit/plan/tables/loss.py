"""Table 10, loss, as cells: what limits TCP on a lossy path (the window, the loss, the rate).

On the packet link (the kernels' TCP between namespaces the kit creates, Reno so that the
Mathis bound applies) at 100 Mbit/s x 50 ms: loss 0, 0.1% and 1% x an h2 static window of
256 KiB and 4 MiB, one stream; then at 0.1% and 4 MiB, four streams on one connection
against four connections (one lost packet stalls every stream of its connection, and one
congestion window carries all four). Timed cells: Reno at 1% loss carries ~3 Mbit/s, a
fixed transfer would take minutes. Pure planning; ``kit.plan.tables`` wraps the cells.
"""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import KIB, MIB, format_bytes

LOSS_CAMPAIGN = "table10-loss"
LOSS_RATE_BITS_S = 100e6
LOSS_RTT_MS = 50.0
LOSS_CONGESTION = "reno"  # the Mathis bound models loss-based control (not BBR)
LOSSES: tuple[float, ...] = (0.0, 0.001, 0.01)
WINDOWS: tuple[int, ...] = (256 * KIB, 4 * MIB)
SHARED_LOSS = 0.001
SHARED_WINDOW = 4 * MIB
SHARED_STREAMS = 4
DURATION_S = 3.0  # 60 RTTs: at 1% loss, ~30 losses per cell
QUICK_S = 1.5


def loss_text(loss: float) -> str:
    return f"{loss * 100:g}%"


def cell_key(window: int, loss: float, streams: int = 1, connections: int = 1) -> str:
    key = f"{format_bytes(window).replace(' ', '')}-loss{loss_text(loss)}"
    if streams > 1:
        key += f"-{streams}streams-{connections}conn"
    return key


# The window-bound cell without loss: its rounds vary least (no random loss to ride).
LOSS_CONTROL = cell_key(256 * KIB, 0.0)


def loss_link(loss: float) -> Link:
    half = LOSS_RTT_MS / 2
    return Link(
        delay_up_ms=half,
        delay_down_ms=half,
        rate_up_bits_s=LOSS_RATE_BITS_S,
        rate_down_bits_s=LOSS_RATE_BITS_S,
        kind="packet",
        loss=loss,
        congestion=LOSS_CONGESTION,
    )


def _cell(window: int, loss: float, streams: int, connections: int, seconds: float) -> Cell:
    client = ClientConfig(
        kind="h2", window_mode="static", window_bytes=window, connections=connections
    )
    workload = Workload(streams=streams, duration_s=seconds, timeout_s=max(30.0, 10 * seconds))
    label = f"h2 static {format_bytes(window)}, loss {loss_text(loss)}"
    if streams > 1:
        label += f", {streams} streams on {connections} connection(s)"
    trial = Trial(link=loss_link(loss), client=client, workload=workload, label=label)
    return Cell(cell_key(window, loss, streams, connections), trial)


def loss_cells(quick: bool = False) -> list[Cell]:
    """Every loss x window (one stream), then four streams on one connection and on four, at
    0.1% loss; --quick: the control, 4 MiB at 1%, and the two four-stream cells, shorter."""
    seconds = QUICK_S if quick else DURATION_S
    grid = [(w, p) for w in WINDOWS for p in LOSSES]
    if quick:
        grid = [(256 * KIB, 0.0), (4 * MIB, 0.01)]
    cells = [_cell(w, p, 1, 1, seconds) for w, p in grid]
    for connections in (1, SHARED_STREAMS):
        cells.append(_cell(SHARED_WINDOW, SHARED_LOSS, SHARED_STREAMS, connections, seconds))
    return cells
