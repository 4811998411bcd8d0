"""Pure: the figures and checks of table 7 (one slow reader on a shared connection).

Per receive policy: the fast stream beside a slow reader against beside a fast one, its
finish times over rounds (HAProxy's fairness shape), the peak unread bytes, Jain's index
(``kit.analysis.sharing``); per pool size: each stream's window against its share, the
aggregate against pool / RTT. Checks: head-of-line blocking with read credit, none with
receipt credit nor the pool; the pool's 8 shares as expected, its connection window open.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, Metric, median_of, throughput
from kit.analysis.sharing import stream_sharing
from kit.analysis.tables.checks import Bar, ratio_interval_of, ratio_spread_pct, settled_ratio
from kit.plan import pool
from kit.plan.tables.sharing import SHARING_CAMPAIGN, SHARING_POLICIES, SHARING_POOL_STREAMS
from kit.plan.units import HTTP2_MAX_WINDOW_BYTES, MIB
from kit.results.records import Measurement

INITIAL_WINDOW_BYTES = 65_535
READ_CREDIT_MAX_RATIO = 0.5
SHARING_MIN_RATIO = 0.8
POOL_WINDOW_TOLERANCE = 0.25
POOL_BAR_STREAMS = 8


def sharing_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(SHARING_CAMPAIGN)


def fast_stream_mib_s(m: Measurement) -> float | None:
    """The last stream's throughput: the full-speed one beside a slow reader, or its twin."""
    rates = m.result.stream_throughput_mib_s if m.ok and m.result else ()
    return rates[-1] if rates else None


def fast_finish_s(m: Measurement) -> float | None:
    finish = m.result.stream_finish_s if m.ok and m.result else ()
    return finish[-1] if finish else None


def peak_unread_bytes(m: Measurement) -> float | None:
    result = m.result if m.ok else None
    return None if result is None or result.peak_unread_bytes is None else result.peak_unread_bytes


def jain(m: Measurement) -> float | None:
    return stream_sharing(m.result).jain if m.ok and m.result else None


def aggregate_mib_s(m: Measurement) -> float | None:
    return m.throughput_mib_s if m.ok else None


def median_stream_window_bytes(m: Measurement) -> float | None:
    windows = m.result.stream_window_bytes if m.ok and m.result else ()
    return statistics.median(windows) if windows else None


@dataclass(frozen=True)
class FinishStats:
    """The fast stream's finish time over rounds: HAProxy's fairness shape."""

    n: int
    mean_s: float
    sd_s: float
    min_s: float
    max_s: float


def finish_stats(cell: CellView | None) -> FinishStats | None:
    values = cell.values(fast_finish_s) if cell is not None else []
    if not values:
        return None
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return FinishStats(len(values), statistics.fmean(values), sd, min(values), max(values))


@dataclass(frozen=True)
class SharingRow:
    """One receive policy: its fast stream beside a slow reader and beside a fast one."""

    key: str
    label: str
    beside_slow: CellView | None
    beside_fast: CellView | None

    @property
    def ratio(self) -> float | None:
        """Fast stream beside a slow reader / beside a fast one (median rounds)."""
        return median_ratio_of(self.beside_slow, self.beside_fast, fast_stream_mib_s)


def median_ratio_of(a: CellView | None, b: CellView | None, metric: Metric) -> float | None:
    va = a.values(metric) if a is not None else []
    vb = b.values(metric) if b is not None else []
    if not va or not vb or statistics.median(vb) <= 0:
        return None
    return statistics.median(va) / statistics.median(vb)


def sharing_rows(view: CampaignView) -> list[SharingRow]:
    rows = []
    for key, label, _ in SHARING_POLICIES:
        slow, fast = view.cell(f"{key}-beside-slow"), view.cell(f"{key}-beside-fast")
        if slow is not None or fast is not None:
            rows.append(SharingRow(key, label, slow, fast))
    return rows


@dataclass(frozen=True)
class PoolRow:
    """N receiving streams under the pool: their windows against the share, the aggregate
    against pool / RTT."""

    streams: int
    cell: CellView
    expected_share_bytes: int
    pool_bytes: int
    rtt_ms: float

    @property
    def bound_mib_s(self) -> float:
        return self.pool_bytes / (self.rtt_ms / 1000) / MIB

    def window_errors(self) -> list[float]:
        """Every stream's window of every round, as a fraction off the expected share."""
        share = self.expected_share_bytes
        return [
            w / share - 1.0
            for m in self.cell.ok
            if m.result is not None
            for w in m.result.stream_window_bytes
        ]


def pool_rows(view: CampaignView) -> list[PoolRow]:
    rows = []
    for streams in SHARING_POOL_STREAMS:
        cell = view.cell(f"pool-{streams}-streams")
        if cell is None:
            continue
        pool_bytes = cell.trial.client.pool_size_bytes
        share = pool.share_bytes(pool_bytes, pool.PoolCounts(receiving=streams))
        rows.append(PoolRow(streams, cell, share, pool_bytes, cell.trial.link.rtt_ms))
    return rows


def conn_window_opened(cell: CellView) -> bool | None:
    """The pool's connection window went to 2^31-1 at once (so it never binds), per the tap."""
    firsts = [m.frames.client.conn_window_updates.first for m in cell.ok if m.frames is not None]
    if not firsts:
        return None
    return all(f and f[0] == HTTP2_MAX_WINDOW_BYTES - INITIAL_WINDOW_BYTES for f in firsts)


# --- checks ------------------------------------------------------------------------------------


def sharing_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """Head-of-line blocking shown with read credit; not with receipt credit nor the pool;
    the pool's 8 shares as expected, its connection window never binding."""
    view = sharing_view(views)
    if view is None:
        return []  # the table was not run (older records hold no such campaign)
    rows = {r.key: r for r in sharing_rows(view)}
    bars = []
    for key, bound, above in (
        ("read-4MiB", READ_CREDIT_MAX_RATIO, False),
        ("receipt-4MiB", SHARING_MIN_RATIO, True),
        ("pool", SHARING_MIN_RATIO, True),
    ):
        row = rows.get(key)
        ratio = row.ratio if row else None
        sign = ">=" if above else "<="
        name = (
            f"sharing: {key} fast stream beside a slow reader {sign} {bound:g}x beside a fast one"
        )
        if ratio is None:
            bars.append(Bar(name, None, "not measured"))
            continue
        bar = Bar(name, ratio >= bound if above else ratio <= bound, f"{ratio:.2f}x")
        assert row is not None
        ci = ratio_interval_of(row.beside_slow, row.beside_fast, fast_stream_mib_s, f"t7:{key}")
        bars.append(settled_ratio(bar, ratio, bound, *_ratio_noise(view), ci))
    bars.append(_pool_share_bar(view))
    return bars


def _ratio_noise(view: CampaignView) -> tuple[float | None, int]:
    """(spread %, rounds) of a fast stream's ratio beside a slow and a fast reader: two
    medians at the campaign's noise floor (its fast stream's, else its throughput's)."""
    floor = view.floor(fast_stream_mib_s) or view.floor(throughput)
    if floor is None:
        return None, 1
    return ratio_spread_pct(floor.floor_pct, floor.floor_pct), floor.rounds


def _pool_share_bar(view: CampaignView) -> Bar:
    name = (
        f"sharing: pool with {POOL_BAR_STREAMS} streams, every window within "
        f"{POOL_WINDOW_TOLERANCE:.0%} of its share, connection window never binds"
    )
    row = (
        next((r for r in pool_rows(view) if r.streams == POOL_BAR_STREAMS), None) if view else None
    )
    errors = row.window_errors() if row else []
    opened = conn_window_opened(row.cell) if row else None
    if row is None or not errors or opened is None:
        return Bar(name, None, "not measured")
    worst = max(abs(e) for e in errors)
    aggregate = median_of(row.cell)
    binds = aggregate is not None and aggregate > row.bound_mib_s * 1.05
    holds = worst <= POOL_WINDOW_TOLERANCE and opened and not binds
    detail = (
        f"worst window {worst:.0%} off {row.expected_share_bytes} B over {len(errors)} windows; "
        f"connection window {'opened to 2^31-1' if opened else 'NOT opened'}"
    )
    return Bar(name, holds, detail)
