"""Pure rendering: table 3, several streams share one connection window
(``kit.analysis.tables.starvation``)."""

from __future__ import annotations

from kit.analysis import reference as ref
from kit.analysis.cells import CampaignView, CellView, throughput, total_time_ms
from kit.analysis.tables.starvation import (
    starvation_ratio,
    starvation_rows,
    stream_finish_ms,
    theory_time_ms,
)
from kit.plan.units import format_bytes
from kit.report.format import flags_text, fmt_mib_s, fmt_range, markdown_table, sig3
from kit.report.tables.cells import failed_or, floor_line


def _finish_text(cell: CellView) -> str:
    finish = stream_finish_ms(cell)
    if not finish:
        return "-"
    spread = finish[-1] - finish[0]
    return f"{' / '.join(sig3(f) for f in finish)} (spread {sig3(spread)})"


def _starvation_row(cell: CellView) -> list[str]:
    trial = cell.trial
    conn = trial.client.conn_window_bytes or 0
    theory, theory_ms = cell.theory_mib_s, theory_time_ms(cell)
    reference = ref.STARVATION.get(conn)
    return [
        f"{format_bytes(conn)} ({conn} B)",
        format_bytes(trial.client.window_bytes or 0),
        failed_or(cell, fmt_range(cell.summary(total_time_ms), sig3)),
        failed_or(cell, fmt_range(cell.summary(throughput), fmt_mib_s)),
        _finish_text(cell),
        f"{fmt_mib_s(theory)} ({sig3(theory_ms)} ms)" if theory_ms else "-",
        "-" if reference is None else f"{reference[0]:g} ms, {reference[1]:g} MiB/s",
        flags_text(cell.flags(throughput)),
    ]


STARVATION_HEADERS = (
    "connection window",
    "stream windows",
    "total time ms median (min-max)",
    "aggregate MiB/s",
    "per-stream finish ms (median round)",
    "theory MiB/s (time)",
    "reference",
    "notes",
)


def render_starvation(view: CampaignView) -> str:
    cells = starvation_rows(view)
    rows = [_starvation_row(c) for c in cells]
    ratio, ref_ratio = starvation_ratio(view)
    shape = cells[0].trial if cells else None
    intro = (
        f"{shape.workload.streams} streams x {format_bytes(shape.workload.bytes_per_stream or 0)} "
        f"on one h2 connection at RTT {shape.link.rtt_ms:g} ms."
        if shape
        else ""
    )
    ratio_text = "-" if ratio is None else f"{sig3(ratio)}x"
    return "\n\n".join(
        [
            "## Table 3: several streams share one connection window",
            intro,
            markdown_table(rows, STARVATION_HEADERS),
            f"Connection window 4 MiB vs 64 KiB: **{ratio_text}** faster "
            f"(reference: {ref_ratio:.1f}x).",
            floor_line(view, throughput),
            "*theory* = min(streams x stream window, connection window) / RTT. Per-stream finish "
            "times are from the start of the timed phase.",
        ]
    )
