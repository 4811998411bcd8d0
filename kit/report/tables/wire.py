"""Pure rendering: table 2, the two window layers on the wire (``kit.analysis.tables.wire``).

Each row is the frame tap of a 20 ms cell's median round of table 1, beside the reference's
grpc-go dynamic row.
"""

from __future__ import annotations

from kit.analysis import reference as ref
from kit.analysis.cells import CampaignView, CellView
from kit.analysis.tables.wire import median_round, wire_rows
from kit.plan.units import format_bytes
from kit.report.format import fmt_mib_s, markdown_table, pings_text, settings_text
from kit.report.tables.cells import setting_text, transfer_text
from kit.results.records import FrameSummary


def _growth_text(frames: FrameSummary, cell: CellView) -> str:
    growth = [step.window_bytes for step in frames.client.window_growth]
    if len(growth) > 1:
        steps = [format_bytes(g, digits=0) for g in growth]
        shown = steps if len(steps) <= 6 else [*steps[:3], "...", *steps[-2:]]
        return f"grew: {' -> '.join(shown)} ({len(growth)} SETTINGS)"
    total = frames.client.conn_window_updates.total
    if cell.trial.client.window_mode == "dynamic":
        return f"no SETTINGS growth; conn credit granted {format_bytes(total)}"
    return "fixed"


def _wire_row(cell: CellView) -> list[str]:
    run = median_round(cell)
    frames = run.frames if run is not None else None
    if run is None or frames is None:
        why = "FAILED" if not cell.ok else "no tap records"
        return [setting_text(cell), transfer_text(cell), why, "-", "-", "-", "-", "-", "-"]
    conn = frames.client.conn_window_updates
    return [
        setting_text(cell),
        transfer_text(cell),
        settings_text(frames.client.settings),
        str(conn.count),
        " ".join(str(i) for i in conn.first),
        str(frames.client.stream_window_updates.count),
        pings_text(frames),
        _growth_text(frames, cell),
        fmt_mib_s(run.throughput_mib_s),
    ]


WIRE_HEADERS = (
    "client setting",
    "transfer",
    "client SETTINGS as sent",
    "conn WINDOW_UPDATEs",
    "first 10 conn increments (bytes)",
    "stream WINDOW_UPDATEs",
    "PINGs sent",
    "window growth",
    "MiB/s",
)


def _wire_reference_row() -> list[str]:
    wire = ref.WIRE_DYNAMIC_20MS
    return [
        "reference: grpc-go dynamic",
        "~8 MiB",
        ref.CLIENT_SETTINGS[None],
        str(wire.conn_window_updates),
        " ".join(str(i) for i in wire.first_increments),
        "-",
        str(wire.pings_sent),
        "grows from 64 KiB",
        f"{wire.throughput_mib_s:g}",
    ]


def render_wire(view: CampaignView) -> str:
    rows = [_wire_row(c) for c in wire_rows(view)]
    rows.append(_wire_reference_row())
    static_ref = ", ".join(
        f"static {format_bytes(w)}: {s}" for w, s in ref.CLIENT_SETTINGS.items() if w
    )
    return "\n\n".join(
        [
            "## Table 2: the two window layers on the wire (RTT 20 ms, from the proxy's frame tap)",
            markdown_table(rows, WIRE_HEADERS),
            "Frames of each cell's median round (the round closest to the median throughput) of "
            "table 1's 20 ms campaign. *window growth* lists the INITIAL_WINDOW_SIZE values the "
            "client announced in successive SETTINGS frames. Counts are per connection and include "
            "the client's own warm-up call before the timed phase. Reference client SETTINGS: "
            f"dynamic: {ref.CLIENT_SETTINGS[None]}, {static_ref}.",
        ]
    )
