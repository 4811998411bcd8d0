"""Pure rendering: table 10, what limits TCP on a lossy path: the window, the loss, the rate;
then four streams on one connection against four connections."""

from __future__ import annotations

from kit.analysis.cells import CampaignView, CellView, Metric
from kit.analysis.tables.loss import (
    WITHIN,
    bounds,
    finish_spread_s,
    first_byte_ms,
    first_finish_s,
    goodput_bits_s,
    last_finish_s,
    longest_pause_ms,
    over_limit,
    retransmit_share,
    retransmits,
    to_rate_ms,
    within,
)
from kit.plan.tables.loss import (
    BURST,
    IDLE_KEY,
    IDLE_S,
    IDLE_WINDOW,
    LOSS_CONGESTION,
    LOSS_RATE_BITS_S,
    LOSS_RTT_MS,
    SHARED_LOSS,
    SHARED_STREAMS,
    Loss,
    cell_key,
    loss_cells,
    loss_text,
)
from kit.plan.units import format_rate
from kit.report.format import fmt_range, fmt_size, markdown_table
from kit.report.tables.cells import failed_or, floor_line

LOSS_HEADERS = (
    "client",
    "loss",
    "Mbit/s",
    "window / RTT",
    "Mathis bound",
    "what limits",
    "measured / limit",
    "retransmits",
    "first 4 KiB / 90% of ceiling, ms",
)
SHARED_HEADERS = (
    "streams",
    "Mbit/s",
    "Mathis bound",
    "streams finished, s",
    "finish spread, s",
    "longest pause, ms",
    "retransmits",
)
IDLE_HEADERS = ("connection", "Mbit/s", "first 4 KiB, ms", "90% of ceiling, ms", "retransmits")
LIMIT_TEXT = {"window": "window", "loss": "loss (TCP)", "rate": "rate"}


def _mbit(bits_s: float | None) -> str:
    return "-" if bits_s is None else f"{bits_s / 1e6:.3g}"


def _client_text(cell: CellView) -> str:
    client = cell.trial.client
    if client.window_mode == "static":
        return f"h2 static {fmt_size(client.window_bytes or 0)}"
    return f"{client.kind} dynamic"


def _loss_text(cell: CellView) -> str:
    link = cell.trial.link
    return Loss(link.loss, link.loss_burst_len).text()


def _limit_text(cell: CellView) -> tuple[str, str]:
    """What limits, and the measured median over that bound ("1.08x, within")."""
    name, _ = bounds(cell.trial).limit()
    ratio = over_limit(cell)
    if ratio is None:
        return LIMIT_TEXT[name], failed_or(cell, "-")
    verdict = "within" if within(ratio) else "outside"
    return LIMIT_TEXT[name], f"{ratio:.2f}x, {verdict} {WITHIN[0]:g}-{WITHIN[1]:g}x"


def _retransmit_text(cell: CellView) -> str:
    count = cell.summary(retransmits)
    share = cell.summary(retransmit_share)
    if count is None:
        return failed_or(cell, "-")
    text = fmt_range(count, lambda v: f"{v:.0f}")
    return text if share is None else f"{text} ({share.median:.2%} of segments)"


def _median_text(cell: CellView, metric: Metric, never: str = "-") -> str:
    summary = cell.summary(metric)
    if not cell.ok:
        return failed_or(cell, "-")
    return never if summary is None else f"{summary.median:.3g}"


def _ramp_text(cell: CellView) -> str:
    first = _median_text(cell, first_byte_ms)
    return f"{first} / {_median_text(cell, to_rate_ms, 'never')}"


def _measured(cell: CellView) -> str:
    return failed_or(cell, fmt_range(cell.summary(goodput_bits_s), lambda v: _mbit(v)))


def _row(cell: CellView) -> list[str]:
    b = bounds(cell.trial)
    limit, ratio = _limit_text(cell)
    return [
        _client_text(cell),
        _loss_text(cell),
        _measured(cell),
        "grows" if b.window is None else _mbit(b.window),
        _mbit(b.loss),
        limit,
        ratio,
        _retransmit_text(cell),
        _ramp_text(cell),
    ]


def _shared_row(cell: CellView) -> list[str]:
    streams, connections = cell.trial.workload.streams, cell.trial.client.connections
    finished = failed_or(
        cell,
        f"{_median_text(cell, first_finish_s)}-{_median_text(cell, last_finish_s)}",
    )
    return [
        f"{streams} on {min(streams, connections)} conn",
        _measured(cell),
        _mbit(bounds(cell.trial).loss),
        finished,
        _median_text(cell, finish_spread_s),
        _median_text(cell, longest_pause_ms),
        _retransmit_text(cell),
    ]


def _idle_row(name: str, cell: CellView) -> list[str]:
    return [
        name,
        _measured(cell),
        _median_text(cell, first_byte_ms),
        _median_text(cell, to_rate_ms, "never"),
        _retransmit_text(cell),
    ]


INTRO = (
    "The packet link: the kernels' own TCP ({cc}) between network namespaces the kit "
    "creates, at {rate} x {rtt:g} ms (both directions, a drop-tail queue of one BDP), each IP "
    "packet lost with the set probability in each direction (independently, or in bursts of "
    "mean length {burst:g}: Gilbert-Elliott); our h2 client with a static window or its "
    "dynamic one (grpc-go's receiver), and grpcio, against the grpcio server, one stream, "
    "timed cells. A cell's goodput has three bounds: *window / RTT* (the windows the client "
    "grants; a dynamic window grows), the *Mathis bound* MSS / RTT x 1.22 / sqrt(p) (loss-based "
    "TCP's steady state, p the rate of loss events: a burst counts once) and the rate. *What "
    "limits* is the smallest; *measured / limit* says whether the median lies within "
    "{lo:g}-{hi:g}x of it. *retransmits*: segments the server's sockets resent (TCP_INFO), "
    "their share over the connection's life, warm-up included. *first 4 KiB / 90% of ceiling*: "
    "from the start of the timed phase until the link delivered the first 4 KiB and until one "
    "RTT carried 90% of what the cell could carry without loss (window / RTT or the rate, "
    "the smaller): each cell is a new TCP connection, so this is its slow start (from ten "
    "segments); never: not within the cell."
)
SHARED_INTRO = (
    "Four streams of a fixed size at {loss} loss, 4 MiB windows: on one connection they share "
    "one congestion window and stall together on each loss (TCP delivers in order: a hole "
    "holds back every stream's bytes behind it); on four connections each has its own window, "
    "halved alone. *streams finished*: the first and the last stream's finish time; *longest "
    "pause*: the longest time the link delivered nothing (every connection together) between "
    "the first and last byte."
)

IDLE_INTRO = (
    "Slow start after idle, {window} windows, no loss: a new connection beside one that first "
    "downloaded {window} (its congestion window grew) and then carried nothing for {idle:g} s. "
    "After an idle longer than the retransmission timeout Linux halves the congestion window "
    "once per timeout of idle, down to ten segments (net.ipv4.tcp_slow_start_after_idle, on by "
    "default, in these namespaces too), but keeps the slow-start threshold and the buffer the "
    "receiver grew: the rows show how much of a cold start the warm connection still pays. "
    "Without loss set, a 4 MiB window overfills the one-BDP queue in slow start: its drops "
    "are the retransmits."
)


def render_loss(view: CampaignView) -> str:
    order = {cell.key: i for i, cell in enumerate(loss_cells(quick=False))}
    cells = sorted(view.cells, key=lambda c: (order.get(c.key, len(order)), c.key))
    single = [c for c in cells if c.trial.workload.streams == 1 and c.key != IDLE_KEY]
    shared = [c for c in cells if c.trial.workload.streams == SHARED_STREAMS]
    idle, cold = view.cell(IDLE_KEY), view.cell(cell_key(IDLE_WINDOW, 0.0))
    intro = INTRO.format(
        cc=LOSS_CONGESTION,
        rate=format_rate(LOSS_RATE_BITS_S),
        rtt=LOSS_RTT_MS,
        burst=BURST[1],
        lo=WITHIN[0],
        hi=WITHIN[1],
    )
    parts = [
        "## Table 10: what limits a lossy path: the window, TCP under loss, or the rate",
        intro,
        markdown_table([_row(c) for c in single], LOSS_HEADERS),
    ]
    if shared:
        parts += [
            SHARED_INTRO.format(loss=loss_text(SHARED_LOSS)),
            markdown_table([_shared_row(c) for c in shared], SHARED_HEADERS),
        ]
    if idle is not None:
        rows = [] if cold is None else [_idle_row("new (cold)", cold)]
        rows.append(_idle_row(f"after {IDLE_S:g} s idle", idle))
        parts += [
            IDLE_INTRO.format(window=fmt_size(IDLE_WINDOW), idle=IDLE_S),
            markdown_table(rows, IDLE_HEADERS),
        ]
    return "\n\n".join([*parts, floor_line(view, goodput_bits_s)])
