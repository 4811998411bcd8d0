"""Pure rendering: table 6, the estimators: dynamic windows against each link's BDP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kit.analysis.cells import CampaignView, CellView, Metric, throughput
from kit.analysis.link import (
    bdp_pings,
    mbit_s,
    peak_queued,
    ramp_bytes,
    ramp_ms,
    ramp_rtts,
    steady_fraction,
    window_over_bdp,
)
from kit.plan.tables.links import link_cells
from kit.plan.trial import bdp_bytes
from kit.plan.units import format_rate
from kit.report.format import flags_text, fmt_range, fmt_size, markdown_table

LINKS_HEADERS = (
    "link (rate x RTT, BDP)",
    "window",
    "steady / rate",
    "Mbit/s (whole phase)",
    "final window / BDP",
    "to 90% of rate: ms",
    "RTTs",
    "bytes",
    "PINGs",
    "peak queue",
    "notes",
)


def metric_range(cell: CellView, metric: Metric, fmt: Callable[[float], str]) -> str:
    """A cell's median (min-max) of ``metric``; FAILED, or - when it has no run."""
    if not cell.ok:
        return "FAILED" if cell.runs else "-"
    return fmt_range(cell.summary(metric), fmt)


_range = metric_range


def estimator_columns(cell: CellView) -> list[str]:
    """The estimator's columns, shared with the stacks table: steady / rate, Mbit/s, final
    window / BDP, time, RTTs and bytes to 90% of the rate, PINGs, peak backlog, flags."""
    return [
        _range(cell, steady_fraction, lambda v: f"{v:.2f}"),
        _range(cell, _mbit, lambda v: f"{v:.0f}"),
        _range(cell, window_over_bdp, lambda v: f"{v:.1f}x"),
        _range(cell, ramp_ms, lambda v: f"{v:.0f}"),
        _range(cell, ramp_rtts, lambda v: f"{v:.1f}"),
        _range(cell, ramp_bytes, fmt_size),
        _range(cell, bdp_pings, lambda v: f"{v:.0f}"),
        _range(cell, peak_queued, fmt_size),
        flags_text(cell.flags(throughput)),
    ]


def _link_text(cell: CellView) -> str:
    link = cell.trial.link
    rate = link.rate_down_bits_s
    bdp = bdp_bytes(cell.trial)
    rate_text = "unlimited" if rate is None else format_rate(rate)
    return f"{rate_text} x {link.rtt_ms:g} ms ({fmt_size(bdp or 0)})"


def _window_text(cell: CellView) -> str:
    client = cell.trial.client
    if client.window_mode == "static":
        return f"h2 static {fmt_size(client.window_bytes or 0)} (= BDP)"
    return f"{client.kind} dynamic"


def _mbit(m: Any) -> float | None:
    return mbit_s(throughput(m))


def _row(cell: CellView) -> list[str]:
    return [_link_text(cell), _window_text(cell), *estimator_columns(cell)]


def render_links(view: CampaignView) -> str:
    order = {cell.key: i for i, cell in enumerate(link_cells(quick=False))}
    cells = sorted(view.cells, key=lambda c: (order.get(c.key, len(order)), c.key))
    rows = [_row(c) for c in cells]
    floor = view.floor(throughput)
    control = view.control
    floor_text = (
        f"Noise floor (control `{control.key if control else 'none'}`): {floor.describe()}."
        if floor is not None
        else "Noise floor: not available (no round with both copies of the control)."
    )
    return "\n\n".join(
        [
            "## Table 6: how close each BDP estimator gets to the link's bandwidth x RTT",
            "Each link is a bottleneck queue in the delay line (both directions at the rate); "
            "each cell starts cold on a fresh connection. *steady / rate*: what the link "
            "delivered over the second half of the timed phase; *final window / BDP*: the "
            "last stream window the client advertised (from the frame tap) over rate x RTT, "
            "the memory a server must be ready to buffer; *to 90% of rate*: from the request "
            "until the rate over one RTT first reached 90% (the first RTT included); *PINGs*: "
            "sent by the client (BDP probes; the h2 client's RTT probes excluded); *peak "
            "queue*: the largest backlog at the bottleneck, which a window above the BDP "
            "fills (the link drops nothing, so that backlog is delay: bufferbloat). The static "
            "window of exactly the BDP is the control; it falls short of the rate because a "
            "receiver can return credit only for whole DATA frames, and the grpcio server's "
            "frames (up to 192 KiB) take milliseconds to cross a slow link.",
            markdown_table(rows, LINKS_HEADERS),
            floor_text,
        ]
    )
