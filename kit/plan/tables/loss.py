"""Table 10, loss, as cells: what limits TCP on a lossy path (the window, the loss, the rate).

On the packet link (the kernels' TCP between namespaces the kit creates, Reno so that the
Mathis bound applies) at 100 Mbit/s x 50 ms, one stream per cell: our h2 client with a
static 4 MiB window, with its dynamic window (grpc-go's receiver) and grpcio (C-core's BDP
probe), each at loss 0, 0.01%, 0.1%, 1% and 1% in bursts of mean 4 packets
(Gilbert-Elliott); the window-bound h2 static 256 KiB at 0, 0.1% and 1% (the control).
Then at 0.1% and 4 MiB, four streams of a fixed size on one connection against four
connections (one lost packet stalls every stream of its connection, and one congestion
window carries all four): their finish spread and the longest pause in delivery. The
single-stream cells are timed (Reno at 1% loss carries ~3 Mbit/s; a fixed transfer would
take minutes). Last, slow start after idle: the 4 MiB cell without loss on a connection
that first carried 4 MiB and then sat idle for a second, beside the cold one. Pure planning;
``kit.plan.tables`` wraps the cells.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kit.plan.campaign import Cell
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import KIB, MIB, format_bytes

LOSS_CAMPAIGN = "table10-loss"
LOSS_RATE_BITS_S = 100e6
LOSS_RTT_MS = 50.0
LOSS_CONGESTION = "reno"  # the Mathis bound models loss-based control (not BBR)
LOSSES: tuple[float, ...] = (0.0, 0.0001, 0.001, 0.01)
BURST = (0.01, 4.0)  # (mean loss, mean burst length in packets)
WINDOWS: tuple[int, ...] = (256 * KIB, 4 * MIB)  # h2 static
SHARED_LOSS = 0.001
SHARED_WINDOW = 4 * MIB
SHARED_STREAMS = 4
# Per stream: 8 MiB in all, ~6 losses at 0.1% (1 MiB each showed none on one connection):
# ~4 s on one connection, ~2 s on four.
SHARED_BYTES = 2 * MIB
QUICK_SHARED_BYTES = 512 * KIB
IDLE_S = 1.0  # > the RTO (200 ms minimum): the kernel restarts slow start after it
IDLE_WINDOW = 4 * MIB  # also what the connection carries before it idles
IDLE_KEY = f"{format_bytes(IDLE_WINDOW).replace(' ', '')}-idle{IDLE_S:g}s"
DURATION_S = 3.0  # 60 RTTs: at 1% loss, ~30 losses per cell
QUICK_S = 1.5


@dataclass(frozen=True)
class Loss:
    """A cell's loss: independent per packet, or in bursts of mean ``burst_len`` packets."""

    loss: float
    burst_len: float = 0.0

    def text(self) -> str:
        """ "0.1%", or "1% in bursts of 4"."""
        base = loss_text(self.loss)
        return f"{base} in bursts of {self.burst_len:g}" if self.burst_len else base

    def key(self) -> str:
        base = loss_text(self.loss)
        return f"burst{base}:{self.burst_len:g}" if self.burst_len else f"loss{base}"


STATIC_LOSSES = (Loss(0.0), Loss(0.001), Loss(0.01))  # the 256 KiB window's
GRID_LOSSES = (*(Loss(p) for p in LOSSES), Loss(*BURST))
# One stream per cell: the client's name in keys, and its config.
DYNAMIC_CLIENTS = {
    "h2-dynamic": ClientConfig(kind="h2", window_mode="dynamic"),
    "grpcio": ClientConfig(kind="grpcio", window_mode="dynamic"),
}


def loss_text(loss: float) -> str:
    return f"{loss * 100:g}%"


def _static(window: int, connections: int = 1) -> ClientConfig:
    return ClientConfig(
        kind="h2", window_mode="static", window_bytes=window, connections=connections
    )


def client_name(client: ClientConfig) -> str:
    """The client's part of a cell key: its static window ("4MiB") or its name."""
    if client.window_mode == "static" and client.window_bytes is not None:
        return format_bytes(client.window_bytes).replace(" ", "")
    return "h2-dynamic" if client.kind == "h2" else client.kind


def cell_key(window: int, loss: float, streams: int = 1, connections: int = 1) -> str:
    """The key of an h2 static cell (independent loss)."""
    return loss_key(_static(window), Loss(loss), streams, connections)


def loss_key(client: ClientConfig, loss: Loss, streams: int = 1, connections: int = 1) -> str:
    key = f"{client_name(client)}-{loss.key()}"
    if streams > 1:
        key += f"-{streams}streams-{connections}conn"
    return key


# The window-bound cell without loss: its rounds vary least (no random loss to ride).
LOSS_CONTROL = cell_key(256 * KIB, 0.0)


def loss_link(loss: float, burst_len: float = 0.0) -> Link:
    half = LOSS_RTT_MS / 2
    return Link(
        delay_up_ms=half,
        delay_down_ms=half,
        rate_up_bits_s=LOSS_RATE_BITS_S,
        rate_down_bits_s=LOSS_RATE_BITS_S,
        kind="packet",
        loss=loss,
        loss_burst_len=burst_len,
        congestion=LOSS_CONGESTION,
    )


def _label(client: ClientConfig, loss: Loss, streams: int, connections: int) -> str:
    who = (
        f"h2 static {format_bytes(client.window_bytes or 0)}"
        if client.window_mode == "static"
        else f"{client.kind} dynamic"
    )
    label = f"{who}, loss {loss.text()}"
    if streams > 1:
        label += f", {streams} streams on {connections} connection(s)"
    return label


def _cell(client: ClientConfig, loss: Loss, workload: Workload) -> Cell:
    streams, connections = workload.streams, client.connections
    trial = Trial(
        link=loss_link(loss.loss, loss.burst_len),
        client=client,
        workload=workload,
        label=_label(client, loss, streams, connections),
    )
    return Cell(loss_key(client, loss, streams, connections), trial)


def _timed(seconds: float) -> Workload:
    return Workload(duration_s=seconds, timeout_s=max(30.0, 10 * seconds))


def shared_cells(quick: bool = False) -> list[Cell]:
    """Four fixed-size streams at 0.1% loss on one connection, then on four."""
    each = QUICK_SHARED_BYTES if quick else SHARED_BYTES
    workload = Workload(streams=SHARED_STREAMS, bytes_per_stream=each, timeout_s=60.0)
    loss = Loss(SHARED_LOSS)
    return [
        _cell(_static(SHARED_WINDOW, connections), loss, workload)
        for connections in (1, SHARED_STREAMS)
    ]


def idle_cell(quick: bool = False) -> Cell:
    """The 4 MiB window without loss, timed, on connections that first downloaded 4 MiB and
    then carried nothing for a second (the cold counterpart is the grid's 0% cell)."""
    seconds = QUICK_S if quick else DURATION_S
    workload = dataclasses.replace(_timed(seconds), prime_bytes=IDLE_WINDOW, idle_s=IDLE_S)
    trial = Trial(
        link=loss_link(0.0),
        client=_static(IDLE_WINDOW),
        workload=workload,
        label=f"h2 static {format_bytes(IDLE_WINDOW)}, after {format_bytes(IDLE_WINDOW)} "
        f"and {IDLE_S:g} s idle",
    )
    return Cell(IDLE_KEY, trial)


def loss_cells(quick: bool = False) -> list[Cell]:
    """Every single-stream cell (see the module docstring), then the four-stream pair;
    --quick: the control, 4 MiB at 0, 1% and in bursts, grpcio at 0.1%, the pair and the
    idle cell, shorter."""
    seconds = QUICK_S if quick else DURATION_S
    clients = {"4MiB": _static(4 * MIB), **DYNAMIC_CLIENTS}
    grid = [(_static(256 * KIB), loss) for loss in STATIC_LOSSES]
    grid += [(client, loss) for client in clients.values() for loss in GRID_LOSSES]
    if quick:
        wanted = {LOSS_CONTROL, "4MiB-loss0%", "4MiB-loss1%", "4MiB-burst1%:4", "grpcio-loss0.1%"}
        grid = [(c, p) for c, p in grid if loss_key(c, p) in wanted]
    cells = [_cell(client, loss, _timed(seconds)) for client, loss in grid]
    return [*cells, *shared_cells(quick), idle_cell(quick)]
