"""Pure: the figures and the check of table 10 (what limits TCP on a lossy path).

Each cell has three bounds (``kit.analysis.limits.bounds``, the one rule every verdict
reads): the window's (the windows the client grants over the RTT, per
connection, summed over connections; none for a dynamic window, which grows), the loss's
(the Mathis bound MSS / RTT x 1.22 / sqrt(p) per connection, summed; p is the rate of loss
*events*, so a burst of mean length L counts once: p = loss / L) and the link's rate. The
smallest binds; the measured figure is "within" it when it lies in 0.5-2x. Check: at 1%
loss Reno carries 0.5-2x the Mathis bound (the model holds on this link).

From the link's delivery trace (bytes per 2 ms as TCP delivered them in order): the time
from the start of the timed phase to the first byte and until one RTT carried 90% of the
cell's ceiling without loss (window / RTT or the rate: a new connection's slow start), and for the four-stream cells the longest pause in
delivery (a stall of every stream on a connection while TCP recovers a loss).
"""

from __future__ import annotations

import itertools

from kit.analysis.cells import CampaignView, CellView, median_of, throughput
from kit.analysis.limits import Bounds as Bounds  # re-exported: the verdict's bounds
from kit.analysis.limits import bounds as bounds
from kit.analysis.limits import loss_events as loss_events
from kit.analysis.link import mbit_s, ramp
from kit.analysis.tables.checks import Bar
from kit.plan.tables.loss import LOSS_CAMPAIGN, WINDOWS, cell_key
from kit.plan.trial import Trial
from kit.results.records import Measurement

WITHIN = (0.5, 2.0)  # the factor of its bound a measured figure is "within"
MATHIS_LOSS = 0.01  # the check's loss: many losses per cell, so the model's regime


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


def _phase(m: Measurement) -> tuple[list[int], float] | None:
    """The delivery trace's buckets over the timed phase, and the bucket's length in ms."""
    if not m.ok or m.result is None or m.frames is None:
        return None
    trace, result = m.frames.delivered_down, m.result
    if not trace.bytes or trace.bucket_ns <= 0:
        return None
    first = (result.t_start_ns - trace.origin_ns) // trace.bucket_ns
    last = (result.t_end_ns - trace.origin_ns) // trace.bucket_ns
    lead = [0] * -first if first < 0 else []  # the link delivered nothing yet
    return lead + list(trace.bytes[max(0, first) : max(0, last + 1)]), trace.bucket_ns / 1e6


# The first data: control frames (PING and SETTINGS acks, WINDOW_UPDATEs, a packet of the
# warm-up resent late) are a few dozen bytes; TCP's first flight (ten segments) is 14 KB.
FIRST_DATA_BYTES = 4 * 1024


def first_byte_ms(m: Measurement) -> float | None:
    """From the start of the timed phase until the link delivered its first 4 KiB (one RTT
    and the request's way, at 2 ms resolution: the bucket it fell in, counted whole)."""
    phase = _phase(m)
    if phase is None:
        return None
    buckets, bucket_ms = phase
    total = 0
    for i, n in enumerate(buckets):
        total += n
        if total >= FIRST_DATA_BYTES:
            return (i + 1) * bucket_ms
    return None


def ceiling_bits_s(trial: Trial) -> float | None:
    """What the cell could carry without loss: the smaller of window / RTT and the rate."""
    b = bounds(trial)
    found = [v for v in (b.window, b.rate) if v is not None]
    return min(found) if found else None


def to_rate_ms(m: Measurement) -> float | None:
    """From the start of the timed phase until one RTT carried 90% of the cell's ceiling
    (``ceiling_bits_s``; None: never within the cell)."""
    ceiling = ceiling_bits_s(m.trial)
    if not m.ok or m.result is None or m.frames is None or ceiling is None:
        return None
    result = m.result
    found = ramp(m.frames.delivered_down, ceiling, m.trial.link.rtt_ms, result.t_start_ns,
                 result.t_end_ns)  # fmt: skip
    return found.to_fraction_ms


def longest_pause_ms(m: Measurement) -> float | None:
    """The longest run of 2 ms buckets without a delivered byte, between the phase's first
    and last delivered byte (every connection of the cell together)."""
    phase = _phase(m)
    if phase is None:
        return None
    buckets, bucket_ms = phase
    busy = [i for i, n in enumerate(buckets) if n]
    if not busy:
        return None
    longest = max((b - a - 1 for a, b in itertools.pairwise(busy)), default=0)
    return longest * bucket_ms


def finish_spread_s(m: Measurement) -> float | None:
    """The last stream's finish time less the first's (fixed-size streams)."""
    finish = m.result.stream_finish_s if m.ok and m.result is not None else ()
    return max(finish) - min(finish) if len(finish) > 1 else None


def first_finish_s(m: Measurement) -> float | None:
    finish = m.result.stream_finish_s if m.ok and m.result is not None else ()
    return min(finish) if finish else None


def last_finish_s(m: Measurement) -> float | None:
    finish = m.result.stream_finish_s if m.ok and m.result is not None else ()
    return max(finish) if finish else None
