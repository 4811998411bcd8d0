"""Pure: how streams sharing one connection fared (slow readers, the receive pool).

Per stream: throughput over its own finish time, the peak of bytes received but not yet
read, the largest window its sender had; over the streams read at full speed, Jain's
fairness index (sum x)^2 / (n sum x^2): 1 when they got the same, 1/n when one got all.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, Metric
from kit.plan import pool
from kit.plan.tables import SHARING_POLICIES, SHARING_POOL_STREAMS
from kit.plan.units import HTTP2_MAX_WINDOW_BYTES, MIB
from kit.results.client import ClientResult
from kit.results.records import Measurement

INITIAL_WINDOW_BYTES = 65_535


def jain_index(values: Sequence[float]) -> float | None:
    """Jain's fairness index of ``values`` (None without any, 1.0 when all are 0)."""
    if not values:
        return None
    total = sum(values)
    squares = sum(v * v for v in values)
    return 1.0 if squares == 0 else total * total / (len(values) * squares)


@dataclass(frozen=True)
class StreamSharing:
    """The per-stream view of one download (slow streams first, as they were opened)."""

    slow_streams: int
    throughput_mib_s: tuple[float, ...]
    finish_s: tuple[float, ...]
    peak_unread_bytes: tuple[int, ...]
    window_bytes: tuple[int, ...]
    peak_unread_total_bytes: int | None

    @property
    def fast_throughput_mib_s(self) -> tuple[float, ...]:
        return self.throughput_mib_s[self.slow_streams :]

    @property
    def fast_finish_s(self) -> tuple[float, ...]:
        return self.finish_s[self.slow_streams :]

    @property
    def jain(self) -> float | None:
        """Fairness between the full-speed streams (the slow ones read at their own rate)."""
        return jain_index(self.fast_throughput_mib_s)


def stream_sharing(result: ClientResult) -> StreamSharing:
    return StreamSharing(
        slow_streams=result.slow_streams,
        throughput_mib_s=result.stream_throughput_mib_s,
        finish_s=result.stream_finish_s,
        peak_unread_bytes=result.stream_peak_unread_bytes,
        window_bytes=result.stream_window_bytes,
        peak_unread_total_bytes=result.peak_unread_bytes,
    )


# --- the sharing table's figures (from a campaign's cells) -----------------------------------


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
