"""Pure rendering: table 10, what limits TCP on a lossy path: the window, the loss, the rate."""

from __future__ import annotations

from kit.analysis.cells import CampaignView, CellView
from kit.analysis.tables.loss import (
    WITHIN,
    bounds,
    goodput_bits_s,
    over_limit,
    retransmit_share,
    retransmits,
    within,
)
from kit.plan.tables.loss import (
    LOSS_CONGESTION,
    LOSS_RATE_BITS_S,
    LOSS_RTT_MS,
    loss_cells,
    loss_text,
)
from kit.plan.units import format_rate
from kit.report.format import fmt_range, fmt_size, markdown_table
from kit.report.tables.cells import failed_or, floor_line

LOSS_HEADERS = (
    "window",
    "streams",
    "loss",
    "Mbit/s",
    "window / RTT",
    "Mathis bound",
    "what limits",
    "measured / limit",
    "retransmits",
)
LIMIT_TEXT = {"window": "window", "loss": "loss (TCP)", "rate": "rate"}


def _mbit(bits_s: float | None) -> str:
    return "-" if bits_s is None else f"{bits_s / 1e6:.3g}"


def _streams_text(cell: CellView) -> str:
    streams, connections = cell.trial.workload.streams, cell.trial.client.connections
    if streams == 1:
        return "1"
    return f"{streams} on {min(streams, connections)} conn"


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


def _row(cell: CellView) -> list[str]:
    b = bounds(cell.trial)
    limit, ratio = _limit_text(cell)
    measured = failed_or(cell, fmt_range(cell.summary(goodput_bits_s), lambda v: _mbit(v)))
    return [
        fmt_size(cell.trial.client.window_bytes or 0),
        _streams_text(cell),
        loss_text(cell.trial.link.loss),
        measured,
        _mbit(b.window),
        _mbit(b.loss),
        limit,
        ratio,
        _retransmit_text(cell),
    ]


INTRO = (
    "The packet link: the kernels' own TCP ({cc}) between network namespaces the kit "
    "creates, at {rate} x {rtt:g} ms (both directions, a drop-tail queue of one BDP), each IP "
    "packet lost independently with the set probability in each direction; the h2 client "
    "with a static window against the grpcio server, timed cells. A cell's goodput has three "
    "bounds: *window / RTT* (the windows the client grants, per connection, summed), the "
    "*Mathis bound* MSS / RTT x 1.22 / sqrt(p) (loss-based TCP's steady state under random "
    "loss, per connection, summed) and the rate. *What limits* is the smallest; *measured / "
    "limit* says whether the median lies within {lo:g}-{hi:g}x of it. *retransmits*: "
    "segments the server's sockets resent (TCP_INFO), their share over the connection's "
    "life, warm-up included. Four streams on one connection share one congestion window "
    "and stall together on each loss; four connections have four windows, each halved alone."
)


def render_loss(view: CampaignView) -> str:
    order = {cell.key: i for i, cell in enumerate(loss_cells(quick=False))}
    cells = sorted(view.cells, key=lambda c: (order.get(c.key, len(order)), c.key))
    intro = INTRO.format(
        cc=LOSS_CONGESTION,
        rate=format_rate(LOSS_RATE_BITS_S),
        rtt=LOSS_RTT_MS,
        lo=WITHIN[0],
        hi=WITHIN[1],
    )
    return "\n\n".join(
        [
            "## Table 10: what limits a lossy path: the window, TCP under loss, or the rate",
            intro,
            markdown_table([_row(c) for c in cells], LOSS_HEADERS),
            floor_line(view, goodput_bits_s),
        ]
    )
