"""Pure rendering: table 1, window vs RTT, one section per RTT (``kit.analysis.tables.windows``).

Cells show the median of rounds with min-max beside window/RTT and the reference study's
figure for the same row; CPU-bound rounds, spreads over 10% and failed rounds are marked in
the notes column, and a cell whose every round failed reads FAILED, never 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.cells import CampaignView, CellView, efficiency, throughput
from kit.analysis.tables.windows import reference_throughput, row_order, window_ratio
from kit.report.format import flags_text, fmt_mib_s, fmt_range, markdown_table, sig3
from kit.report.tables.cells import failed_or, floor_line, setting_text, transfer_text


def _fmt_eff(value: float | None) -> str:
    return "-" if value is None else sig3(value)


def _median_ping_ms(cell: CellView) -> str:
    ping = cell.median_ping_ms()
    return "-" if ping is None else sig3(ping)


def _table1_row(cell: CellView) -> list[str]:
    summary = cell.summary(throughput)
    theory = cell.theory_mib_s
    eff = efficiency(summary.median if summary is not None else None, theory)
    reference = reference_throughput(cell)
    return [
        setting_text(cell),
        transfer_text(cell),
        failed_or(cell, fmt_range(summary, fmt_mib_s)),
        fmt_mib_s(theory),
        _fmt_eff(eff),
        _median_ping_ms(cell),
        "-" if reference is None else f"{reference:g}",  # as published
        flags_text(cell.flags(throughput)),
    ]


TABLE1_HEADERS = (
    "client setting",
    "transfer",
    "MiB/s median (min-max)",
    "theory = window/RTT",
    "efficiency",
    "PING RTT ms",
    "reference MiB/s",
    "notes",
)


def _rtt_title(rtt_ms: float) -> str:
    return "loopback (no added delay)" if rtt_ms == 0 else f"RTT {rtt_ms:g} ms"


def render_windows(views: Sequence[CampaignView]) -> str:
    parts = ["## Table 1: window vs RTT (one stream, 256 KiB messages)"]
    for view in views:
        rtt = view.cells[0].trial.link.rtt_ms
        rows = [_table1_row(c) for c in sorted(view.cells, key=row_order)]
        parts += [
            f"### {_rtt_title(rtt)}",
            markdown_table(rows, TABLE1_HEADERS),
            _ratio_line(view),
            floor_line(view, throughput),
        ]
    parts.append(TABLE1_FOOTNOTES)
    return "\n\n".join(parts)


def _ratio_line(view: CampaignView) -> str:
    ours, theirs = window_ratio(view)
    text = "-" if ours is None else f"{sig3(ours)}x"
    suffix = "" if theirs is None else f" (reference: {theirs:.1f}x)"
    return f"h2 static 4 MiB / 64 KiB: **{text}**{suffix}."


TABLE1_FOOTNOTES = """\
Notes:
- *theory* = window / RTT (stream = connection window for the h2 rows); *efficiency* =
  median / theory; *PING RTT* is the median RTT of HTTP/2 PINGs seen during the transfer
  (above the configured RTT when a process is busy). The reference column is the grpc-go
  study's single run for the same window and RTT (see the source above).
- grpcio static rows can beat window/RTT: C-core grants a stream extra credit of
  min(bytes still missing of the message being read, 1 MiB) while the application waits for
  it, so with 256 KiB messages "static 64 KiB" behaves like a ~235 KiB window. That is real
  C-core behaviour; the h2 rows are the exact-window counterpart of the reference's static rows.
- Dynamic rows differ by stack: C-core starts at a 4 MiB window and grows it from BDP pings
  (4 -> 16 -> ... MiB within a few hundred ms), grpc-go (and our h2 client's estimator modelled
  on it) starts at 64 KiB and roughly doubles per round trip up to 16 MiB. A dynamic result
  therefore depends on the transfer size: the 8 MiB rows are the reference's shape (short
  transfers finish before the window has grown), the timed rows approach the steady state.
- The delay line is a userspace relay: it splits the TCP connection, so kernel TCP never sees
  the RTT and only HTTP/2 feedback (WINDOW_UPDATE, PING acks) is delayed. On 2 cores a row
  marked CPU-bound measures CPU, not the window."""
