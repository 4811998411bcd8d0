"""Pure rendering: table 8, the stacks side by side (``kit.analysis.tables.stacks``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, throughput
from kit.analysis.link import (
    mbit_s,
)
from kit.analysis.tables.stacks import (
    CREDIT_RULES,
    CREDIT_TOLERANCE,
    advertised,
    cell_efficiency,
    links_view,
    model_ratios,
    stack_version,
    uploads_view,
    windows_view,
)
from kit.analysis.tables.uploads import advertised as server_advertised
from kit.analysis.tables.uploads import implied_window_bytes
from kit.plan.tables.stacks import (
    ADAPTIVE_OPTIONS,
    CLIENT_STACKS,
    MODEL,
    REAL,
    SERVER_STACKS,
    UPLOAD_CLIENT,
    UPLOAD_RTT_MS,
    links_cells,
)
from kit.plan.trial import bdp_bytes
from kit.plan.units import format_rate
from kit.report.format import flags_text, fmt_mib_s, fmt_ms, fmt_size, markdown_table
from kit.report.tables.cells import floor_line
from kit.report.tables.links import estimator_columns, metric_range
from kit.results.records import Measurement


@dataclass(frozen=True)
class StacksViews:
    """Table 8's three campaigns (any may be missing) and the sessions' skipped stacks."""

    windows: CampaignView | None
    links: CampaignView | None
    uploads: CampaignView | None
    skipped: tuple[str, ...] = ()


def stacks_views(views: dict[str, CampaignView], skipped: Sequence[str]) -> StacksViews | None:
    found = StacksViews(windows_view(views), links_view(views), uploads_view(views), tuple(skipped))
    return found if found.windows or found.links or found.uploads else None


_range = metric_range


def _adaptive(options: tuple[tuple[str, int | str], ...]) -> bool:
    return options == ADAPTIVE_OPTIONS


def _window_text(cell: CellView) -> str:
    client = cell.trial.client
    if client.window_mode == "static":
        return f"static {fmt_size(client.window_bytes or 0)}"
    if _adaptive(client.channel_options):
        return "adaptive window on (http2_adaptive_window=1)"
    return "defaults (dynamic)"


def _stack_text(cell: CellView) -> str:
    """The stack and its version; tonic's adaptive-window cells say so."""
    adaptive = _adaptive(cell.trial.client.channel_options)
    return stack_version(cell) + (", adaptive window on" if adaptive else "")


def _size_or(value: int | None, default: str = "-") -> str:
    return default if value is None else fmt_size(value)


# --- part A ----------------------------------------------------------------------------------

WINDOWS_HEADERS = (
    "client stack",
    "window",
    "MiB/s median (min-max)",
    "window/RTT",
    "efficiency",
    "SETTINGS INITIAL_WINDOW_SIZE",
    "conn window at start",
    "final stream window (steps)",
    "PING RTT ms",
    "notes",
)


def _windows_row(cell: CellView) -> list[str]:
    seen = advertised(cell)
    eff = cell_efficiency(cell)
    wire = ["no tap records"] * 3 if seen is None else []
    if seen is not None:
        steps = f" ({seen.growth_steps})" if seen.growth_steps else ""
        wire = [
            _size_or(seen.initial_bytes, "not sent (65535)"),
            _size_or(seen.conn_start_bytes),
            _size_or(seen.final_bytes) + steps,
        ]
    return [
        stack_version(cell),
        _window_text(cell),
        _range(cell, throughput, fmt_mib_s),
        fmt_mib_s(cell.theory_mib_s),
        "-" if eff is None else f"{eff:.2f}",
        *wire,
        fmt_ms(cell.median_ping_ms()),
        flags_text(cell.flags(throughput)),
    ]


def _stack_order(cell: CellView) -> tuple[int, int, str]:
    client = cell.trial.client
    position = (
        CLIENT_STACKS.index(client.kind) if client.kind in CLIENT_STACKS else len(CLIENT_STACKS)
    )
    window = client.window_bytes or (1 if _adaptive(client.channel_options) else 0)
    return position, window, cell.key


def _render_windows(view: CampaignView) -> list[str]:
    parts = []
    for rtt in sorted({c.trial.link.rtt_ms for c in view.cells}):
        cells = sorted((c for c in view.cells if c.trial.link.rtt_ms == rtt), key=_stack_order)
        seconds = cells[0].trial.workload.timed_duration_s(rtt)
        parts += [
            f"#### RTT {rtt:g} ms (timed {seconds:g} s per cell)",
            markdown_table([_windows_row(c) for c in cells], WINDOWS_HEADERS),
        ]
    return [*parts, floor_line(view, throughput)]


# --- part B ----------------------------------------------------------------------------------

LINKS_HEADERS = (
    "link (rate x RTT, BDP)",
    "stack (dynamic)",
    "steady / rate",
    "Mbit/s (whole phase)",
    "final window / BDP",
    "to 90%: ms",
    "RTTs",
    "bytes",
    "PINGs",
    "peak queue",
    "notes",
)


def _mbit(m: Measurement) -> float | None:
    return mbit_s(throughput(m))


def _link_text(cell: CellView) -> str:
    link = cell.trial.link
    rate = link.rate_down_bits_s
    rate_text = "unlimited" if rate is None else format_rate(rate)
    return f"{rate_text} x {link.rtt_ms:g} ms ({fmt_size(bdp_bytes(cell.trial) or 0)})"


def _links_row(cell: CellView) -> list[str]:
    return [_link_text(cell), _stack_text(cell), *estimator_columns(cell)]


def _ratio_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _render_links(view: CampaignView) -> list[str]:
    order = {cell.key: i for i, cell in enumerate(links_cells(quick=False))}
    cells = sorted(view.cells, key=lambda c: (order.get(c.key, len(order)), c.key))
    ratios = [
        [r.link, _ratio_text(r.throughput), _ratio_text(r.final_window), _ratio_text(r.ramp)]
        for r in model_ratios(view)
    ]
    headers = ("link", "throughput", "final window", "time to 90%")
    return [
        markdown_table([_links_row(c) for c in cells], LINKS_HEADERS),
        floor_line(view, throughput),
        f"**The kit's model of grpc-go beside grpc-go** ({MODEL} dynamic / {REAL} dynamic, "
        "medians):\n\n" + markdown_table(ratios, headers),
    ]


# --- part C ----------------------------------------------------------------------------------

UPLOADS_HEADERS = (
    "server stack",
    "server window",
    "server advertised (SETTINGS; largest conn update)",
    "MiB/s median (min-max)",
    "window/RTT",
    "efficiency",
    "window implied = throughput x RTT",
    "notes",
)


def _server_advertised(cell: CellView) -> str:
    run = cell.median_run(throughput)
    if run is None or run.frames is None:
        return "FAILED" if not cell.ok else "no tap records"
    seen = server_advertised(run.frames)
    grown = "" if seen.grown_to is None else f" -> {fmt_size(seen.grown_to)}"
    initial = _size_or(seen.initial_bytes, "not sent (65535)")
    return f"{initial}{grown}; {fmt_size(seen.largest_conn_update)}"


def _server_window_text(window: int | None, options: tuple[tuple[str, int | str], ...]) -> str:
    if window is not None:
        return f"static {fmt_size(window)}"
    return "adaptive window on" if _adaptive(options) else "default"


def _uploads_row(cell: CellView) -> list[str]:
    server = cell.trial.server
    eff = cell_efficiency(cell)
    implied = implied_window_bytes(cell)
    return [
        stack_version(cell, server=True),
        _server_window_text(server.window_bytes, server.channel_options),
        _server_advertised(cell),
        _range(cell, throughput, fmt_mib_s),
        fmt_mib_s(cell.theory_mib_s),
        "-" if eff is None else f"{eff:.2f}",
        "-" if implied is None else fmt_size(int(implied)),
        flags_text(cell.flags(throughput)),
    ]


def _server_order(cell: CellView) -> tuple[int, int, bool, str]:
    server = cell.trial.server
    position = (
        SERVER_STACKS.index(server.kind) if server.kind in SERVER_STACKS else len(SERVER_STACKS)
    )
    adaptive = _adaptive(server.channel_options)
    return position, -(server.window_bytes or 0), adaptive, cell.key


def _render_uploads(view: CampaignView) -> list[str]:
    cells = sorted(view.cells, key=_server_order)
    return [
        markdown_table([_uploads_row(c) for c in cells], UPLOADS_HEADERS),
        floor_line(view, throughput),
    ]


# --- the section -----------------------------------------------------------------------------


def _absent_lines(found: StacksViews) -> list[str]:
    """One line per stack the records hold no cell of (skipped lines say why)."""
    held = {c.trial.client.kind for v in (found.windows, found.links) if v for c in v.cells}
    held |= {c.trial.server.kind for c in (found.uploads.cells if found.uploads else ())}
    lines = [f"- {line}" for line in found.skipped]
    said = {line.split(" ", 1)[0] for line in found.skipped}
    for kind in dict.fromkeys((*CLIENT_STACKS, *SERVER_STACKS)):
        if kind not in held and kind not in said:
            lines.append(f"- {kind}: no cells in these records")
    return lines


def render_stacks(found: StacksViews) -> str:
    parts = [
        "## Table 8: the stacks side by side (grpcio server; h2 is the kit's own client)",
        INTRO,
    ]
    absent = _absent_lines(found)
    if absent:
        parts.append("Not measured:\n" + "\n".join(absent))
    if found.windows is not None:
        parts += ["### A. Every client stack's windows: throughput against window / RTT"]
        parts += _render_windows(found.windows)
    if found.links is not None:
        parts += ["### B. Every stack's dynamic window on links with a bottleneck (cold)"]
        parts += _render_links(found.links)
    if found.uploads is not None:
        parts += [
            f"### C. Uploads into each server stack at {UPLOAD_RTT_MS:g} ms "
            f"({UPLOAD_CLIENT.kind} client for all)"
        ]
        parts += _render_uploads(found.uploads)
    parts.append(FOOTNOTES)
    return "\n\n".join(parts)


INTRO = (
    "Each stack as its own process through the same delay line, one stream of 256 KiB "
    "messages; every client warms its connection with one Ping call. *defaults (dynamic)* is "
    "the stack as shipped: grpcio C-core's BDP probe (starts at 4 MiB), h2 the kit's model of "
    "grpc-go's receiver, grpc-go its BDP estimator (from 64 KiB, up to 16 MiB), grpc-java "
    "Netty's auto flow control (from 1 MiB, up to 8 MiB), grpc-js Node's fixed 65535, tonic "
    "hyper's fixed windows (2 MiB stream, 5 MiB connection; the server 1 MiB), its adaptive "
    "window (hyper's BDP estimator, from 65535 up to 16 MiB) off as shipped and shown on "
    "beside it. *static* "
    "is the stack's own window knob, BDP off (stacks/<stack>/README.md)."
)

_RULES = "; ".join(
    f"{kind}: {rule}, ~{expected:.2f} of window/RTT"
    for kind, (rule, expected) in CREDIT_RULES.items()
)
FOOTNOTES = f"""Notes:
- *efficiency* = median throughput / (window / RTT). Each stack's credit rule bounds a static
  window below window / RTT: {_RULES} (expected at static 64 KiB, 20 ms, 256 KiB messages;
  the checks allow +-{CREDIT_TOLERANCE:g}). grpc-go's ~0.63 measured with messages smaller
  than the window rises here because it grants a message larger than the stream window whole
  (the connection's quarter-window credit on receipt then binds). h2 returns credit as it
  reads (1 MiB frames), near 1. grpcio can exceed 1: C-core grants a stream extra credit of
  min(bytes missing of the message being read, 1 MiB), so "64 KiB" moves about a 256 KiB
  message per round trip. At 1-4 MiB windows the processes, not the window, set the pace on
  2 cores (see the CPU notes).
- From the frame tap, the median round: *SETTINGS INITIAL_WINDOW_SIZE* is the client's first
  SETTINGS ("not sent": HTTP/2's 65535); *conn window at start* is 65535 + the connection
  WINDOW_UPDATEs the client sent before the first DATA frame arrived; *final stream window*
  is the last INITIAL_WINDOW_SIZE it announced, with the number of changes.
- Part B's cells start cold (only the one-Ping warm-up on their connection); its columns
  are the estimator table's (table 6). Model / real > 1: the model moved more, grew larger
  or took longer. Part C: the server is the receiver; *server advertised* is its first
  SETTINGS and its largest connection WINDOW_UPDATE; theory = server window / RTT."""
