"""Pure rendering: the records of a ``kit tables`` run -> results/tables.md (markdown).

Each table sits beside the reference study's figure for the same row and ends with its
noise floor, from the duplicate control's copies; the figures come from
``kit.analysis.tables``. Cells show the median of rounds with min-max; CPU-bound rounds,
spreads over 10% and failed rounds are marked in a notes column, and a cell whose every
round failed reads FAILED, never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tabulate import tabulate

from kit.analysis import reference as ref
from kit.analysis.cells import (
    CampaignView,
    CellView,
    Metric,
    efficiency,
    group_campaigns,
    mean_latency_ms,
    throughput,
    total_time_ms,
)
from kit.analysis.checks import evaluate_bars
from kit.analysis.tables import (
    SessionFacts,
    pooled_latency_ms,
    reference_throughput,
    row_order,
    session_facts,
    starvation_cells,
    starvation_ratio,
    stream_finish_ms,
    table1_views,
    tables_in,
    theory_time_ms,
    unary_verdict,
    window_ratio,
)
from kit.analysis.upload_table import upload_views
from kit.plan.links import LINKS_CAMPAIGN
from kit.plan.tables import (
    SHARING_CAMPAIGN,
    STARVATION_CAMPAIGN,
    TABLE_NUMBERS,
    UNARY_CAMPAIGN,
    WIRE_CAMPAIGN,
    TablesSettings,
)
from kit.plan.units import format_bytes
from kit.report.checks import render_bars
from kit.report.format import (
    flags_text,
    fmt_mib_s,
    fmt_range,
    mode_label,
    pings_text,
    settings_text,
    sig3,
)
from kit.report.links import render_links
from kit.report.sharing import render_sharing
from kit.report.upload_table import render_uploads
from kit.results.records import FrameSummary, Measurement
from kit.results.store import RecordsRead


def _md(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    return tabulate(rows, headers=list(headers), tablefmt="github", disable_numparse=True)


def _floor_line(view: CampaignView, metric: Metric) -> str:
    floor = view.floor(metric)
    control = view.control
    name = control.key if control else "none"
    if floor is None:
        return f"Noise floor: not available (control `{name}` has no round with both copies)."
    return f"Noise floor (control `{name}`): {floor.describe()}."


def _failed_or(cell: CellView, text: str) -> str:
    if cell.ok:
        return text
    return "FAILED" if cell.runs else "-"


def _setting(cell: CellView) -> str:
    client = cell.trial.client
    if client.window_mode == "dynamic":
        return f"{client.kind} {mode_label(cell.trial)}"
    return client.label


def _transfer(cell: CellView) -> str:
    workload = cell.trial.workload
    if workload.kind == "unary":
        return f"{workload.calls} calls"
    streams = f"{workload.streams} x " if workload.streams > 1 else ""
    if workload.bytes_per_stream is not None:
        return f"{streams}{format_bytes(workload.bytes_per_stream)}"
    return f"{streams}timed {workload.timed_duration_s(cell.trial.link.rtt_ms):g} s"


def _fmt_eff(value: float | None) -> str:
    return "-" if value is None else sig3(value)


def _median_ping_ms(cell: CellView) -> str:
    ping = cell.median_ping_ms()
    return "-" if ping is None else sig3(ping)


# --- table 1 ------------------------------------------------------------------------------


def _table1_row(cell: CellView) -> list[str]:
    summary = cell.summary(throughput)
    theory = cell.theory_mib_s
    eff = efficiency(summary.median if summary is not None else None, theory)
    reference = reference_throughput(cell)
    return [
        _setting(cell),
        _transfer(cell),
        _failed_or(cell, fmt_range(summary, fmt_mib_s)),
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


def render_table1(views: Sequence[CampaignView]) -> str:
    parts = ["## Table 1: window vs RTT (one stream, 256 KiB messages)"]
    for view in views:
        rtt = view.cells[0].trial.link.rtt_ms
        rows = [_table1_row(c) for c in sorted(view.cells, key=row_order)]
        parts += [
            f"### {_rtt_title(rtt)}",
            _md(rows, TABLE1_HEADERS),
            _ratio_line(view),
            _floor_line(view, throughput),
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


# --- table 2 ------------------------------------------------------------------------------


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
    run = cell.median_run(throughput)
    frames = run.frames if run is not None else None
    if run is None or frames is None:
        why = "FAILED" if not cell.ok else "no tap records"
        return [_setting(cell), _transfer(cell), why, "-", "-", "-", "-", "-", "-"]
    conn = frames.client.conn_window_updates
    return [
        _setting(cell),
        _transfer(cell),
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


def render_table2(view: CampaignView) -> str:
    rows = [_wire_row(c) for c in sorted(view.cells, key=row_order)]
    rows.append(_wire_reference_row())
    static_ref = ", ".join(
        f"static {format_bytes(w)}: {s}" for w, s in ref.CLIENT_SETTINGS.items() if w
    )
    return "\n\n".join(
        [
            "## Table 2: the two window layers on the wire (RTT 20 ms, from the proxy's frame tap)",
            _md(rows, WIRE_HEADERS),
            "Frames of each cell's median round (the round closest to the median throughput) of "
            "table 1's 20 ms campaign. *window growth* lists the INITIAL_WINDOW_SIZE values the "
            "client announced in successive SETTINGS frames. Counts are per connection and include "
            "the client's own warm-up call before the timed phase. Reference client SETTINGS: "
            f"dynamic: {ref.CLIENT_SETTINGS[None]}, {static_ref}.",
        ]
    )


# --- table 3 ------------------------------------------------------------------------------


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
        _failed_or(cell, fmt_range(cell.summary(total_time_ms), sig3)),
        _failed_or(cell, fmt_range(cell.summary(throughput), fmt_mib_s)),
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


def render_table3(view: CampaignView) -> str:
    cells = starvation_cells(view)
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
            _md(rows, STARVATION_HEADERS),
            f"Connection window 4 MiB vs 64 KiB: **{ratio_text}** faster "
            f"(reference: {ref_ratio:.1f}x).",
            _floor_line(view, throughput),
            "*theory* = min(streams x stream window, connection window) / RTT. Per-stream finish "
            "times are from the start of the timed phase.",
        ]
    )


# --- table 4 ------------------------------------------------------------------------------


def unary_verdict_text(view: CampaignView, cell: CellView, baseline: CellView | None) -> str:
    found = unary_verdict(view, cell, baseline)
    return found if isinstance(found, str) else found.describe()


def _unary_row(view: CampaignView, cell: CellView) -> list[str]:
    pooled = pooled_latency_ms(cell)
    client = cell.trial.client
    reference = ref.UNARY_MEAN_MS.get(client.window_bytes) if client.kind == "grpcio" else None
    return [
        _setting(cell),
        _transfer(cell),
        _failed_or(cell, fmt_range(cell.summary(mean_latency_ms), sig3)),
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


def render_table4(view: CampaignView) -> str:
    cells = sorted(view.cells, key=row_order)
    rtt = cells[0].trial.link.rtt_ms if cells else 0.0
    return "\n\n".join(
        [
            f"## Table 4: small unary calls do not care about the window (RTT {rtt:g} ms)",
            _md([_unary_row(view, c) for c in cells], UNARY_HEADERS),
            _floor_line(view, mean_latency_ms),
            "The window effect is judged within one client (static 64 KiB vs that client's "
            "dynamic window); the last verdict column compares with grpcio dynamic, as the "
            "reference does, which mixes in the difference between the two stacks' per-call cost. "
            "p50 and p99 pool every call of every round. A verdict says *faster*/"
            "*slower* only when the change of medians clears the noise floor and the rounds do "
            "not overlap. The reference rows are grpc-go's (dynamic, static 64 KiB); they are "
            "shown beside the grpcio rows.",
        ]
    )


# --- the whole document -------------------------------------------------------------------


def _session_text(facts: SessionFacts) -> str:
    meta = facts.meta
    machine = (
        f"{meta.cpus if meta else '?'} CPUs, Python {meta.python if meta else '?'}, grpcio "
        f"{meta.grpcio if meta else '?'}, h2 {meta.h2 if meta else '?'}, "
        f"path: {meta.path if meta else '?'}"
    )
    if not facts.sessions:
        return f"Machine: {machine}."
    minutes, seconds = divmod(facts.elapsed_s, 60)
    load_others = ""
    if facts.other_cores is not None:
        median, top = facts.other_cores
        load_others = (
            f" Other processes used {median:.2f} cores in the median cell's timed window "
            f"(max {top:.2f})."
        )
    load = ""
    if facts.load_range is not None:
        load = f" 1-min load average during the run: {facts.load_range[0]:.1f}-{facts.load_range[1]:.1f}."
    return (
        f"Measured {facts.cells_run} cells in {facts.elapsed_s:.0f} s ({minutes:.0f} min "
        f"{seconds:.0f} s, {facts.sessions} session(s), warm-ups included). "
        f"Machine: {machine}.{load}{load_others}"
    )


def _plan_text(plans: Sequence[TablesSettings]) -> str:
    if not plans:
        return "Settings: unknown (no plan record)."
    plan = plans[0]
    mode = "--quick (short cells)" if plan.quick else "default cells (1-1.5 s timed)"
    only = ",".join(plan.only)
    return f"Settings: {mode}, {plan.rounds} round(s), seed {plan.seed}, tables {only}."


METHOD = (
    "Method: every table is a campaign of rounds; each round runs every cell once plus a second "
    "copy of a control cell, in a seeded order reshuffled every round. Each cell is a fresh "
    "client process that warms its own connection before timing; each (server, delay line) "
    "ran one discarded warm-up trial first. Timed cells last max(20 RTTs, the time to carry "
    "4 MiB at window/RTT, 1 s), capped at 1.5 s (0.3-0.5 s, 1 MiB with --quick); h2 static "
    "rows whose window/RTT is at most 200 MiB/s carry a fixed transfer of that size instead "
    "(throughput = bytes / time from the request to the last byte, as in the reference). "
    "Each cell has a hard timeout."
)


def _renderers(views: dict[str, CampaignView]) -> dict[str, Callable[[], str | None]]:
    def one(name: str, render: Callable[[CampaignView], str]) -> Callable[[], str | None]:
        return lambda: render(views[name]) if name in views else None

    table1 = table1_views(views)
    uploads = upload_views(views)
    return {
        "windows": lambda: render_table1(table1) if table1 else None,
        "wire": one(WIRE_CAMPAIGN, render_table2),
        "starvation": one(STARVATION_CAMPAIGN, render_table3),
        "unary": one(UNARY_CAMPAIGN, render_table4),
        "uploads": lambda: render_uploads(uploads) if uploads else None,
        "links": one(LINKS_CAMPAIGN, render_links),
        "sharing": one(SHARING_CAMPAIGN, render_sharing),
    }


def render_bars_of(measurements: Sequence[Measurement]) -> str:
    """Just the checks, for the terminal at the end of a run."""
    return render_bars(evaluate_bars(group_campaigns(measurements)))


def render_tables(read: RecordsRead, records_name: str) -> str:
    """The whole results/tables.md: header, the tables the run asked for, the checks."""
    views = group_campaigns(read.measurements)
    wanted = tables_in(read.tables_plans, views)
    renderers = _renderers(views)
    parts = [
        "# The reference tables, reproduced with kit",
        f"Records: `{records_name}` (re-render with `kit report {records_name}`). "
        + _plan_text(read.tables_plans),
        _session_text(session_facts(read.sessions, read.measurements)),
        METHOD,
        f"Reference figures: {ref.SOURCE}.",
    ]
    for table in wanted:
        text = renderers[table]()
        parts.append(
            text
            if text is not None
            else f"## Table {TABLE_NUMBERS[table]} ({table})\n\nNot measured in these records."
        )
    parts.append(render_bars(evaluate_bars(views)))
    return "\n\n".join(parts) + "\n"
