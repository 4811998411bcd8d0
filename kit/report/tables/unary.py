"""Pure rendering: table 4, small unary calls and the window (``kit.analysis.tables.unary``)."""

from __future__ import annotations

from kit.analysis import reference as ref
from kit.analysis.cells import CampaignView, CellView, mean_latency_ms
from kit.analysis.tables.unary import pooled_latency_ms, unary_rows, unary_verdict
from kit.report.format import flags_text, fmt_range, markdown_table, sig3
from kit.report.tables.cells import failed_or, floor_line, setting_text, transfer_text


def unary_verdict_text(view: CampaignView, cell: CellView, baseline: CellView | None) -> str:
    found = unary_verdict(view, cell, baseline)
    return found if isinstance(found, str) else found.describe()


def _unary_row(view: CampaignView, cell: CellView) -> list[str]:
    pooled = pooled_latency_ms(cell)
    client = cell.trial.client
    reference = ref.UNARY_MEAN_MS.get(client.window_bytes) if client.kind == "grpcio" else None
    return [
        setting_text(cell),
        transfer_text(cell),
        failed_or(cell, fmt_range(cell.summary(mean_latency_ms), sig3)),
        sig3(pooled[0]) if pooled else "-",
        sig3(pooled[1]) if pooled else "-",
        unary_verdict_text(view, cell, view.dynamic_of(cell)),
        unary_verdict_text(view, cell, view.control),
        "-" if reference is None else f"{reference:g}",
        flags_text(cell.flags(mean_latency_ms)),
    ]


UNARY_HEADERS = (
    "client setting",
    "calls per round",
    "mean ms per call, median (min-max)",
    "p50 ms",
    "p99 ms",
    "window effect: vs same client dynamic",
    "vs grpcio dynamic (window + stack)",
    "reference mean ms",
    "notes",
)


def render_unary(view: CampaignView) -> str:
    cells = unary_rows(view)
    rtt = cells[0].trial.link.rtt_ms if cells else 0.0
    return "\n\n".join(
        [
            f"## Table 4: small unary calls do not care about the window (RTT {rtt:g} ms)",
            markdown_table([_unary_row(view, c) for c in cells], UNARY_HEADERS),
            floor_line(view, mean_latency_ms),
            "The window effect is judged within one client (static 64 KiB vs that client's "
            "dynamic window); the last verdict column compares with grpcio dynamic, as the "
            "reference does, which mixes in the difference between the two stacks' per-call cost. "
            "p50 and p99 pool every call of every round. A verdict says *faster*/"
            "*slower* only when the change of medians clears the noise floor and the rounds do "
            "not overlap. The reference rows are grpc-go's (dynamic, static 64 KiB); they are "
            "shown beside the grpcio rows.",
        ]
    )
