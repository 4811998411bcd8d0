"""Pure rendering: table 7, sharing (slow readers beside fast ones; the pool's shares)."""

from __future__ import annotations

from typing import Any

from kit.analysis.cells import CampaignView, CellView, Metric
from kit.analysis.tables.sharing import (
    PoolRow,
    SharingRow,
    aggregate_mib_s,
    fast_stream_mib_s,
    finish_stats,
    jain,
    median_stream_window_bytes,
    peak_unread_bytes,
    pool_rows,
    sharing_rows,
)
from kit.plan.tables.sharing import SHARING_READ_RATE_BITS_S
from kit.report.format import fmt_mib_s, fmt_range, fmt_size, markdown_table


def _of(cell: CellView | None, metric: Metric, fmt: Any) -> str:
    if cell is None:
        return "-"
    if not cell.ok:
        return "FAILED"
    return fmt_range(cell.summary(metric), fmt)


def _finish_text(row: SharingRow) -> str:
    stats = finish_stats(row.beside_slow)
    if stats is None:
        return "-"
    return (
        f"{stats.mean_s:.2f} ± {stats.sd_s:.2f} ({stats.min_s:.2f}-{stats.max_s:.2f}, n={stats.n})"
    )


def row_label(row: SharingRow) -> str:
    """The policy's name; the pool's with its size in the reports' units (the plan names it
    by HAProxy's decimal figure, 1.6 MB)."""
    cell = row.beside_slow or row.beside_fast
    client = cell.trial.client if cell is not None else None
    if client is None or client.window_mode != "pool":
        return row.label
    return f"{client.kind} pool {fmt_size(client.pool_size_bytes)}"


def sharing_row(row: SharingRow) -> list[str]:
    ratio = row.ratio
    return [
        row_label(row),
        _of(row.beside_slow, fast_stream_mib_s, fmt_mib_s),
        _of(row.beside_fast, fast_stream_mib_s, fmt_mib_s),
        "-" if ratio is None else f"**{ratio:.2f}**",
        _finish_text(row),
        _of(row.beside_slow, peak_unread_bytes, lambda v: fmt_size(v)),
        _of(row.beside_fast, jain, lambda v: f"{v:.3f}"),
    ]


SHARING_HEADERS = (
    "receive policy",
    "fast stream MiB/s beside a slow reader",
    "beside a fast one",
    "ratio",
    "fast stream finish s beside slow: mean ± sd (min-max)",
    "peak unread (beside slow)",
    "Jain (two fast)",
)


def _pool_row(row: PoolRow) -> list[str]:
    errors = row.window_errors()
    worst = f"{max(abs(e) for e in errors) * 100:.0f}%" if errors else "-"
    return [
        str(row.streams),
        _of(row.cell, median_stream_window_bytes, lambda v: fmt_size(v)),
        f"{fmt_size(row.expected_share_bytes)} (pool/N {fmt_size(row.pool_bytes / row.streams)})",
        worst,
        _of(row.cell, aggregate_mib_s, fmt_mib_s),
        f"{fmt_mib_s(row.bound_mib_s)}",
    ]


POOL_HEADERS = (
    "receiving streams",
    "stream window (median)",
    "expected share",
    "worst stream off share",
    "aggregate MiB/s",
    "pool / RTT MiB/s",
)


def render_sharing(view: CampaignView) -> str:
    rows = sharing_rows(view)
    pools = pool_rows(view)
    first = rows[0].beside_slow or rows[0].beside_fast if rows else None
    shape = first.trial if first is not None else None
    intro = (
        f"Two streams x {fmt_size(shape.workload.bytes_per_stream or 0)} on one connection "
        f"at RTT {shape.link.rtt_ms:g} ms; beside a slow reader, the first stream is read at "
        f"{SHARING_READ_RATE_BITS_S / 1e6:g} Mbit/s. The fast stream's throughput is over its own "
        "finish time; a fixed-size run ends when the full-speed stream is done."
        if shape
        else ""
    )
    parts = ["## Table 7: one slow reader on a shared connection", intro]
    if rows:
        parts.append(markdown_table([sharing_row(r) for r in rows], SHARING_HEADERS))
    parts.append(
        "*ratio* = fast stream beside a slow reader / beside a fast one (medians). *peak unread*"
        " = the most bytes received and not yet read on the connection (what the receiver "
        "buffers); grpcio's is inside C-core and not visible. Static 4 MiB rows set the "
        "connection window to 4 MiB too."
    )
    if pools:
        parts.append("### The pool: windows shared between receiving streams")
        parts.append(markdown_table([_pool_row(r) for r in pools], POOL_HEADERS))
        parts.append(
            "The expected share is the pool in whole 16 KiB buffers divided by the receiving "
            "streams; the aggregate cannot beat pool / RTT (the connection window is 2^31-1)."
        )
    return "\n\n".join(parts)
