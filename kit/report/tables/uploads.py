"""Pure rendering: table 5, uploads (markdown), from ``kit.analysis.tables.uploads``."""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.cells import CampaignView, CellView, efficiency, throughput
from kit.analysis.tables.uploads import (
    HAPROXY_SOURCE,
    advertised,
    haproxy_reference,
    implied_window_bytes,
    mbit_s,
    window_effects,
)
from kit.report.format import flags_text, fmt_mib_s, fmt_range, fmt_size, markdown_table
from kit.report.tables.cells import floor_line

HEADERS = (
    "client",
    "server window",
    "server advertised (SETTINGS; conn credit)",
    "MiB/s median (min-max)",
    "Mbit/s",
    "theory = server window/RTT",
    "efficiency",
    "window implied = throughput x RTT",
    "HAProxy at 103 ms (real TCP)",
    "notes",
)


def _advertised_text(cell: CellView) -> str:
    run = cell.median_run(throughput)
    if run is None or run.frames is None:
        return "FAILED" if not cell.ok else "no tap records"
    seen = advertised(run.frames)
    initial = "-" if seen.initial_bytes is None else fmt_size(seen.initial_bytes)
    grown = "" if seen.grown_to is None else f" -> {fmt_size(seen.grown_to)}"
    largest = fmt_size(seen.largest_conn_update)
    return f"{initial}{grown}; largest conn update {largest}"


def _row(cell: CellView) -> list[str]:
    summary = cell.summary(throughput)
    median = summary.median if summary is not None else None
    reference = haproxy_reference(cell)
    implied = implied_window_bytes(cell)
    server = cell.trial.server
    client = cell.trial.client
    client_text: str = client.kind
    if client.window_bytes is not None:
        client_text += f" (receive window {fmt_size(client.window_bytes)})"
    return [
        client_text,
        fmt_size(server.window_bytes) if server.window_bytes else "dynamic (C-core BDP)",
        _advertised_text(cell),
        "FAILED" if not cell.ok else fmt_range(summary, fmt_mib_s),
        fmt_mib_s(mbit_s(median)),
        fmt_mib_s(cell.theory_mib_s),
        "-" if (e := efficiency(median, cell.theory_mib_s)) is None else f"{e:.2f}",
        "-" if implied is None else fmt_size(int(implied)),
        "-" if reference is None else f"{reference[1]:g} Mbit/s ({reference[0]})",
        flags_text(cell.flags(throughput)),
    ]


def _order(cell: CellView) -> tuple[int, int, int, str]:
    trial = cell.trial
    window = trial.server.window_bytes
    return (
        0 if trial.client.kind == "h2" else 1,
        window if window is not None else 2**40,
        trial.client.window_bytes or 0,
        cell.key,
    )


def _effects_text(view: CampaignView) -> str:
    lines = []
    for effect in window_effects(view):
        if effect.result is None:
            lines.append(f"- {effect.what}: not measured")
            continue
        lines.append(f"- {effect.what}: {effect.result.describe()}")
    return "\n".join(lines)


def render_uploads(views: Sequence[CampaignView]) -> str:
    parts = [
        "## Table 5: uploads are paced by the server's receive window (one stream, 256 KiB messages)"
    ]
    for view in views:
        rtt = view.cells[0].trial.link.rtt_ms
        rows = [_row(c) for c in sorted(view.cells, key=_order)]
        parts += [
            f"### RTT {rtt:g} ms",
            markdown_table(rows, HEADERS),
            floor_line(view, throughput),
        ]
        if view.cell("h2-server-4MiB-client-16MiB") is not None:
            parts += [
                "**The write path follows the server's window only** (h2 client, same campaign):\n"
                + _effects_text(view)
            ]
    parts.append(FOOTNOTES)
    return "\n\n".join(parts)


FOOTNOTES = f"""Notes:
- Throughput = payload bytes the server confirmed (its reply to the upload) / time from the
  first byte to that reply; the last message and the reply add about one RTT to each cell.
- *theory* = the server's static window / RTT. The server is grpcio (C-core), which grants
  each stream extra credit of min(bytes missing of the message being read, 1 MiB) while it
  waits for a message, so with 256 KiB messages a "64 KiB" server window behaves like one of
  about 256 KiB: *window implied* shows the window the upload actually had, and the server's
  WINDOW_UPDATEs (largest conn update) show the extra credit on the wire.
- *server advertised* is the INITIAL_WINDOW_SIZE of the server's first SETTINGS (and its
  last, when its BDP probe grew it), from the delay line's frame tap.
- The h2 rows receive with a 64 KiB window; the extra row raises it to 16 MiB. Mbit/s are
  decimal megabits (10^6 bits).
- Reference: {HAPROXY_SOURCE}. It is a different server (HAProxy) and real TCP, so compare
  the shape: the window, not the client, sets the pace."""
