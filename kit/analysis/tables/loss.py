"""Pure: the figures and the check of table 10 (what limits TCP on a lossy path).

Each cell has three bounds: the window's (the windows the client grants over the RTT, per
connection, summed over connections), the loss's (the Mathis bound MSS / RTT x 1.22 /
sqrt(p) per connection, summed) and the link's rate. The smallest binds; the measured
figure is "within" it when it lies in 0.5-2x. Check: at 1% loss Reno carries 0.5-2x the
Mathis bound (the model holds on this link).
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, median_of, throughput
from kit.analysis.link import mbit_s
from kit.analysis.tables.checks import Bar
from kit.plan.packet import mathis_bits_s
from kit.plan.tables.loss import LOSS_CAMPAIGN, WINDOWS, cell_key
from kit.plan.trial import Trial
from kit.results.records import Measurement

WITHIN = (0.5, 2.0)  # the factor of its bound a measured figure is "within"
MATHIS_LOSS = 0.01  # the check's loss: many losses per cell, so the model's regime


@dataclass(frozen=True)
class Bounds:
    """A cell's three bounds on goodput, bits/s (``loss`` None without loss)."""

    window: float
    loss: float | None
    rate: float | None

    def limit(self) -> tuple[str, float]:
        """The bound that binds: ("window" | "loss" | "rate", bits/s)."""
        named = [("window", self.window), ("loss", self.loss), ("rate", self.rate)]
        return min(((n, v) for n, v in named if v is not None), key=lambda nv: nv[1])


def bounds(trial: Trial) -> Bounds:
    link, client = trial.link, trial.client
    rtt_s = link.rtt_ms / 1000
    per_conn = (client.window_bytes or 0) * trial.streams_per_connection
    if trial.conn_window_bytes is not None:
        per_conn = min(per_conn, trial.conn_window_bytes)
    connections = min(client.connections, trial.workload.streams)
    mathis = mathis_bits_s(link)
    return Bounds(
        window=per_conn * 8 / rtt_s * connections,
        loss=None if mathis is None else mathis * connections,
        rate=link.rate_down_bits_s,
    )


def goodput_bits_s(m: Measurement) -> float | None:
    mbit = mbit_s(throughput(m))
    return None if mbit is None else mbit * 1e6


def retransmits(m: Measurement) -> float | None:
    """Segments the senders (the server's sockets) retransmitted; None without a TCP view."""
    senders = [v for v in m.tcp if v.side == "server"]
    return float(sum(v.retransmits for v in senders)) if m.ok and senders else None


def over_limit(cell: CellView) -> float | None:
    """The median goodput over the bound that binds."""
    median = median_of(cell, goodput_bits_s)
    return None if median is None else median / bounds(cell.trial).limit()[1]


def within(ratio: float) -> bool:
    return WITHIN[0] <= ratio <= WITHIN[1]


def loss_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(LOSS_CAMPAIGN)


def loss_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """The table's check; none when the run did not measure it."""
    view = loss_view(views)
    if view is None:
        return []
    name = (
        f"loss: at {MATHIS_LOSS:.0%} loss Reno carries {WITHIN[0]:g}-{WITHIN[1]:g}x the "
        "Mathis bound"
    )
    found = {}
    for window in WINDOWS:
        cell = view.cell(cell_key(window, MATHIS_LOSS))
        median = median_of(cell, goodput_bits_s)
        mathis = bounds(cell.trial).loss if cell is not None else None
        if median is not None and mathis:
            found[cell_key(window, MATHIS_LOSS)] = median / mathis
    if not found:
        return [Bar(name, None, "not measured")]
    detail = ", ".join(f"{k} {v:.2f}x" for k, v in found.items())
    return [Bar(name, all(within(v) for v in found.values()), detail)]


def retransmit_share(m: Measurement) -> float | None:
    """The senders' retransmitted segments over the segments they sent (their whole life,
    the connection's warm-up transfer included)."""
    senders = [v for v in m.tcp if v.side == "server"]
    segments = sum(v.bytes_sent // max(1, v.mss_bytes) for v in senders)
    if not m.ok or not senders or segments == 0:
        return None
    return sum(v.retransmits for v in senders) / segments
