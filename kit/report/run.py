"""Pure rendering: one measurement -> the ``kit run`` table (``--json`` is the flat row of
``kit.analysis.flat``).

Rendered from the typed record and the analyses of it (``kit.analysis.cells``, ``.link``,
``.sharing``), never from a dict of it: a renamed field is a type error here, not a key
that silently reads as missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tabulate import tabulate

from kit.analysis.cells import cpu_limit, efficiency, latency_stats, ping_rtt_ms
from kit.analysis.intervals import intervals_of
from kit.analysis.link import Ramp, bdp_of, mbit_s, ramp_of
from kit.analysis.sharing import StreamSharing, stream_sharing
from kit.plan.packet import mathis_bits_s, packet_link_text
from kit.plan.trial import Link, Trial, pool_granted_bytes
from kit.plan.units import format_rate
from kit.report.format import (
    ColumnWidths,
    StreamTable,
    cpu_warning,
    fmt_rate,
    fmt_size,
    fmt_window,
    mode_label,
    pings_text,
    settings_text,
    short_error,
    sig3,
)
from kit.report.intervals import intervals_text
from kit.results.records import FrameSummary, Measurement, ProcessCpu, StreamWindowPoint, TcpView

Row = tuple[str, str]
WIDTH = 100  # every line of the table fits this many columns
MAX_LABEL_WIDTH = 44  # every label is shorter: labels never wrap


def _table(rows: list[Row]) -> str:
    """Two columns: labels whole (the column as wide as the longest), the values wrapped
    so that no line is wider than ``WIDTH``."""
    label_width = min(MAX_LABEL_WIDTH, max(len(label) for label, _ in rows))
    return tabulate(rows, tablefmt="simple", maxcolwidths=[label_width, WIDTH - label_width - 2])


def runs_summary(measurements: Sequence[Measurement]) -> str:
    """One line per run, before their tables (``kit report`` on a runs file)."""
    return summary_table([summary_row(i + 1, m) for i, m in enumerate(measurements)])


SUMMARY_HEAD = ("#", "started", "client", "server", "workload", "RTT", "window", "MiB/s", "eff.")
SUMMARY_CAPS = (6, 19, 24, 20, 16, 8, 14, 8, 6)
SUMMARY_RIGHT = (0, 7, 8)  # the run's number and the figures


def summary_widths() -> ColumnWidths:
    """The runs' summary columns, to ``measure`` each ``summary_row`` with."""
    return ColumnWidths.of(SUMMARY_HEAD)


def summary_layout(widths: ColumnWidths, width: int = WIDTH) -> StreamTable:
    """The summary table laid out for the rows ``widths`` measured: its header, then each
    row printed as it comes (a records file's runs are never held together)."""
    return widths.layout(SUMMARY_CAPS, width, SUMMARY_RIGHT)


def summary_table(rows: Sequence[tuple[str, ...]]) -> str:
    """The runs' one-line summaries (``summary_row``) as a table."""
    widths = summary_widths()
    for row in rows:
        widths.measure(row)
    table = summary_layout(widths)
    return "\n".join([table.header(), *(table.row(row) for row in rows)])


def summary_row(n: int, m: Measurement) -> tuple[str, ...]:
    """Run ``n``'s line in the runs' summary."""
    trial = m.trial
    server = f"target {m.meta.target}" if m.meta.target else trial.server.kind
    workload = f"{trial.workload.kind} x{trial.workload.streams}"
    tput = m.throughput_mib_s if m.ok else None
    eff = efficiency(tput, m.theory_mib_s)
    return (
        str(n),
        m.meta.started_at[:19].replace("T", " "),
        f"{trial.client.kind} {trial.client.window_mode}",
        server,
        workload,
        f"{trial.link.rtt_ms:g} ms",
        fmt_window(trial.client.window_bytes)
        if trial.client.window_bytes
        else trial.client.window_mode,
        fmt_rate(tput) if m.ok else m.status,
        "-" if eff is None else sig3(eff),
    )


def run_table(m: Measurement, verbose: bool = False, unit: str = "MiB/s") -> str:
    """The ``kit run`` table; ``verbose`` shows every SETTING and increment, ``unit`` is the
    throughput unit (MiB/s, MB/s, Mbit/s)."""
    trial = m.trial
    ran = f" ({m.meta.client_stack})" if m.meta.client_stack else ""
    rows: list[Row] = [("client", f"{trial.client.kind} {mode_label(trial)}{ran}")]
    if m.meta.target:  # a server the kit did not start: name it
        rows.append(("server", f"target {m.meta.target}"))
    elif trial.server.kind != "grpcio":
        rows.append(("server", m.meta.server_stack or trial.server.kind))
    rows += [
        ("workload", _workload_text(trial)),
        ("RTT", _rtt_text(trial.link)),
        _window_row(trial),
    ]
    rows += _link_rows(trial.link, bdp_of(m))
    if m.status != "ok":
        rows.append(("FAILED", m.error if verbose else short_error(m.error, 300)))
        return _table(rows)
    rows += _result_rows(m, unit)
    rows += _tcp_rows(m.tcp)
    rows += _frame_rows(m.frames, trial.workload.kind == "upload", verbose, m.meta.path)
    rows += [("note", n) for n in (m.result.notes if m.result else ())]
    if m.meta.keep_awake:
        rows.append(("note", "every CPU kept awake by nice-19 busy loops (--keep-awake)"))
    warning = cpu_warning(cpu_limit(m))
    if warning:
        rows.append(("WARNING", warning))
    return _table(rows)


def _rtt_text(link: Link) -> str:
    return f"{link.rtt_ms:g} ms (up {link.delay_up_ms:g} + down {link.delay_down_ms:g})"


def _link_rows(link: Link, bdp: int | None) -> list[Row]:
    """The link's rate, jitter and BDP (nothing for today's unlimited, steady link)."""
    up, down = link.rate_up_bits_s, link.rate_down_bits_s
    rows = []
    if up is not None or down is not None:
        rates = [
            f"{n} {'unlimited' if r is None else format_rate(r)}"
            for n, r in (("down", down), ("up", up))
        ]
        rows.append(("link rate", ", ".join(rates)))
        rows.append(("BDP = rate x RTT", "-" if bdp is None else fmt_size(bdp)))
    if link.jitter_ms:
        unit = "packet" if link.kind == "packet" else "chunk"
        rows.append(("jitter", f"+-{link.jitter_ms:g} ms per {unit} (seed {link.seed})"))
    if link.rate_steps:
        rows.append(("down rate over time", _steps_text(link)))
    if link.kind == "packet":
        rows.append(("packet link", packet_link_text(link)))
        mathis = mathis_bits_s(link)
        if mathis is not None:
            rows.append(
                ("Mathis bound (loss)", f"{format_rate(mathis)} = MSS / RTT x 1.22 / sqrt(p)")
            )
    return rows


MAX_TCP_ROWS = 8
MIN_SEGMENTS_FOR_SHARE = 100
MAX_STEPS_SHOWN = 4


def _steps_text(link: Link) -> str:
    """The rate steps (a few), or their summary (a trace's many)."""
    steps = link.rate_steps
    period_ms = sum(s.duration_ms for s in steps)
    mean = sum(s.rate_bits_s * s.duration_ms for s in steps) / period_ms
    if len(steps) <= MAX_STEPS_SHOWN:
        shown = ", ".join(f"{format_rate(s.rate_bits_s)} {s.duration_ms:g} ms" for s in steps)
    else:
        rates = [s.rate_bits_s for s in steps]
        shown = f"{len(steps)} steps, {format_rate(min(rates))}..{format_rate(max(rates))}"
    return f"{shown}; looped every {period_ms:g} ms, mean {format_rate(mean)}"


def _tcp_rows(views: tuple[TcpView, ...]) -> list[Row]:
    """Each connection's kernel view on the packet link, senders (most bytes) first."""
    ordered = sorted(views, key=lambda v: -v.bytes_sent)
    rows = [(f"TCP {v.side} {v.local}", _tcp_text(v)) for v in ordered[:MAX_TCP_ROWS]]
    if len(ordered) > MAX_TCP_ROWS:
        rows.append(("TCP", f"... {len(ordered) - MAX_TCP_ROWS} more connection ends"))
    return rows


def _tcp_text(v: TcpView) -> str:
    segments = v.bytes_sent // max(1, v.mss_bytes)
    # A share of a handful of segments (a receiver's) says nothing: only a sender's.
    many = v.retransmits and segments >= MIN_SEGMENTS_FOR_SHARE
    share = f" ({v.retransmits / segments:.2%} of ~{segments} segments)" if many else ""
    return (
        f"{v.congestion or '?'}, cwnd {v.cwnd_packets} x {v.mss_bytes} B, srtt {sig3(v.srtt_ms)} ms, "
        f"{v.retransmits} retransmitted{share}, {fmt_size(v.bytes_sent)} sent"
    )


def _workload_text(trial: Trial) -> str:
    workload, connections = trial.workload, trial.client.connections
    return f"{workload.kind}, {workload.streams} stream(s) on {connections} connection(s)"


def _result_rows(m: Measurement, unit: str = "MiB/s") -> list[Row]:
    result, bdp = m.result, bdp_of(m)
    latency = latency_stats(result.latencies_ms) if result else None
    if latency is not None and result is not None:
        rows = [
            (
                "unary latency",
                f"mean {sig3(latency.mean_ms)} ms, p50 {sig3(latency.p50_ms)} ms, "
                f"p99 {sig3(latency.p99_ms)} ms over {result.messages} calls",
            )
        ]
    else:
        rows = _throughput_rows(m, unit, bdp)
        download = m.trial.workload.kind == "download"
        sharing = stream_sharing(result) if result is not None and download else None
        rows += _sharing_rows(m.trial.workload.slow_streams, sharing, m.frames)
    rows += _tap_link_rows(m, bdp)
    intervals = intervals_of(m)
    if intervals:
        every = f"throughput per {m.meta.interval_ms:g} ms"
        rows.append((every, intervals_text(intervals, m.meta.interval_ms, unit)))
    ping = ping_rtt_ms(m)
    rows.append(("PING RTT during transfer", "-" if ping is None else f"{sig3(ping)} ms"))
    rows.append(("CPU (fraction of a core)", _cpu_text(m.cpu)))
    return rows


def _throughput_rows(m: Measurement, unit: str, bdp: int | None) -> list[Row]:
    result = m.result
    throughput = result.throughput_mib_s if result else None
    elapsed = sig3((result.elapsed_s if result else None) or 0.0)
    size = fmt_size((result.bytes if result else None) or 0)
    rows = [
        (
            "throughput",
            f"{fmt_rate(throughput, unit)} {unit}{_mbit_text(m, unit, bdp)} ({size} in {elapsed} s)",
        ),
        (
            "theory",
            "-"
            if m.theory_mib_s is None
            else f"{fmt_rate(m.theory_mib_s, unit)} {unit} = {_theory_rule(m.trial, bdp)}",
        ),
    ]
    eff = efficiency(throughput, m.theory_mib_s)
    rows.append(("efficiency", "-" if eff is None else sig3(eff)))
    rows += _fast_efficiency_rows(m)
    finish = result.stream_finish_s if result else ()
    if len(finish) > 1:
        rows.append(("stream finish times", f"{sig3(min(finish))} .. {sig3(max(finish))} s"))
    return rows


def _fast_efficiency_rows(m: Measurement) -> list[Row]:
    """With streams read slowly on purpose, the efficiency of the others alone: each
    stream's share of the bound is theory / streams (one window or one pool share each)."""
    result, slow, streams = m.result, m.trial.workload.slow_streams, m.trial.workload.streams
    if result is None or not slow or slow >= streams or m.theory_mib_s is None:
        return []
    fast = result.stream_throughput_mib_s[slow:]
    if len(fast) != streams - slow:
        return []
    eff = efficiency(sum(fast), m.theory_mib_s * len(fast) / streams)
    which = "stream 1" if slow == 1 else f"streams 1..{slow}"
    return [("efficiency, full-speed streams", f"{sig3(eff or 0)} ({which} throttled on purpose)")]


def _mbit_text(m: Measurement, unit: str, bdp: int | None) -> str:
    """Also in Mbit/s on a link with a rate (rates are set in bits per second)."""
    mbit = mbit_s(m.throughput_mib_s if m.ok else None)
    if bdp is None or mbit is None or unit == "Mbit/s":
        return ""
    return f" = {sig3(mbit)} Mbit/s"


def _theory_rule(trial: Trial, bdp: int | None) -> str:
    window = "server window" if trial.workload.kind == "upload" else "window"
    if trial.client.window_mode == "pool" and trial.workload.kind == "download":
        rule = _pool_rule(trial)
        return f"min(rate, {rule})" if bdp is not None else rule
    if bdp is not None:
        return f"min(rate, {window} / RTT)"
    return f"{window} / RTT"


def _pool_rule(trial: Trial) -> str:
    """What the pool really granted: its shares, or a buffer per stream beyond its size."""
    granted, pool = pool_granted_bytes(trial), trial.client.pool_size_bytes
    connections = min(trial.client.connections, trial.workload.streams)
    if granted > pool * connections:
        return (
            f"granted / RTT ({trial.workload.streams} streams x 16 KiB, "
            f"above the {fmt_size(pool)} pool)"
        )
    pools = (
        f"{connections} x {fmt_size(pool)} pools"
        if connections > 1
        else f"the {fmt_size(pool)} pool"
    )
    return f"granted / RTT (shares: {fmt_size(granted)} of {pools})"


def _tap_link_rows(m: Measurement, bdp: int | None) -> list[Row]:
    """What the tap and the link saw: the final window, the bottleneck's queue, the ramp."""
    frames, rows = m.frames, []
    if frames is not None and frames.window_final_bytes is not None:
        rows.append(("final stream window (tap)", fmt_size(frames.window_final_bytes)))
    if bdp is not None:  # the packet link's queue counts IP packets, the stream link's bytes
        queued = frames.peak_queued_bytes_down if frames is not None else 0
        rows.append(("peak queued at bottleneck", fmt_size(queued)))
        rows += _ramp_rows(ramp_of(m), m.trial.link.rtt_ms)
    return rows


def _ramp_rows(ramp: Ramp | None, rtt_ms: float) -> list[Row]:
    if ramp is None or ramp.to_fraction_ms is None:
        return []
    rtts = ramp.to_fraction_ms / rtt_ms if rtt_ms else 0
    return [
        (
            "time to 90% of rate",
            f"{sig3(ramp.to_fraction_ms)} ms ({sig3(rtts)} RTT), "
            f"{fmt_size(ramp.to_fraction_bytes or 0)}",
        )
    ]


def _cpu_text(cpu: tuple[ProcessCpu, ...]) -> str:
    # Rounded to 0.1% first, as the records' own figures are, then shown in whole percents;
    # one figure per role (a role measured twice shows its last figure).
    shares = {c.role: round(c.cpu_fraction, 3) for c in cpu}
    return ", ".join(f"{role} {share:.0%}" for role, share in shares.items())


def _sharing_rows(
    slow: int, sharing: StreamSharing | None, frames: FrameSummary | None
) -> list[Row]:
    rates = sharing.throughput_mib_s if sharing else ()
    windows = sharing.window_bytes if sharing else ()
    if not slow and (len(rates) < 2 or not windows):
        return []  # one stream, or a record from before per-stream windows were kept
    text = " ".join(("slow " if i < slow else "") + sig3(r) for i, r in enumerate(rates))
    rows = [("stream throughput (MiB/s)", text)]
    if sharing is not None and sharing.jain is not None:
        rows.append(("Jain's index (full-speed streams)", sig3(sharing.jain)))
    if sharing is not None and sharing.peak_unread_total_bytes is not None:
        rows.append(("peak bytes received, unread", fmt_size(sharing.peak_unread_total_bytes)))
    if windows:
        rows.append(("largest stream window", _per_stream(windows, slow)))
    seen = _tap_windows(frames.stream_windows if frames is not None else ())
    if seen:
        rows.append(("stream windows at tap (median/max)", seen))
    return rows


def _per_stream(sizes: Sequence[int], slow: int) -> str:
    """Each stream's size, labelled with its stream (``#1 slow 256 KiB, #2 256 KiB``), or
    one size for them all."""
    if len(set(sizes)) == 1 and not slow:
        return f"{fmt_size(sizes[0])} each ({len(sizes)} streams)"
    return ", ".join(
        f"#{i + 1}{' slow' if i < slow else ''} {fmt_size(n)}" for i, n in enumerate(sizes)
    )


def _tap_windows(points: tuple[StreamWindowPoint, ...]) -> str:
    """Each stream's window over time as the tap saw it, in two figures per stream."""
    by_stream: dict[int, list[int]] = {}
    for point in points:
        by_stream.setdefault(point.stream_id, []).append(point.window_bytes)
    parts = [
        f"id {sid}: {fmt_size(sorted(w)[len(w) // 2])}/{fmt_size(max(w))}"
        for sid, w in sorted(by_stream.items())
        if len(w) > 1
    ]
    return ", ".join(parts)


def _window_row(trial: Trial) -> Row:
    if trial.workload.kind == "upload":  # the server receives: its window governs
        return ("server receive window", trial.server.label.removeprefix("server "))
    return (
        "stream / connection window",
        f"{fmt_window(trial.client.window_bytes)} / {fmt_window(trial.conn_window_bytes)}",
    )


@dataclass(frozen=True)
class _SideView:
    """How the table shows the receiver's side of the tap: the client's on a download, the
    server's on an upload (its credit paces the client). The two differ where the table
    always has: a download's long lists are shortened without ``--verbose``, an upload's
    shows the server's later SETTINGS, and only a download's tells how complete the tap is."""

    who: str  # "client" | "server"
    window_updates: str  # how its WINDOW_UPDATEs are labelled
    data: str  # the transfer's DATA frames, as the client saw them
    growth: str
    shortened: bool
    settings_changes: bool
    tap_completeness: bool


_DOWNLOAD = _SideView(
    who="client",
    window_updates="sent",
    data="DATA frames received",
    growth="stream window growth",
    shortened=True,
    settings_changes=False,
    tap_completeness=True,
)
_UPLOAD = _SideView(
    who="server",
    window_updates="from server",
    data="DATA frames sent",
    growth="server window growth",
    shortened=False,
    settings_changes=True,
    tap_completeness=False,
)


NO_TAP_RECORDS = (
    "tap incomplete: the delay line's frame decoder wrote no record of this run's "
    "connections (it was stopped or died)"
)


def _frame_rows(
    frames: FrameSummary | None, upload: bool, verbose: bool = True, path: str = ""
) -> list[Row]:
    """The tap's rows: what the receiving endpoint sent (its SETTINGS, credit and PINGs)."""
    if frames is None and path == "delay line":  # a tap, but no record of it came back
        return [("frames", NO_TAP_RECORDS)]
    if frames is None:
        return [("frames", "no tap (direct connection)")]
    view = _UPLOAD if upload else _DOWNLOAD
    side, data = (frames.server, frames.data_up) if upload else (frames.client, frames.data_down)
    short = view.shortened and not verbose
    wu = side.conn_window_updates
    first = wu.first[:5] if short else wu.first
    more = "" if len(first) == len(wu.first) else " ..."
    rows = [
        (f"{view.who} SETTINGS (first)", settings_text(side.settings, verbose)),
        (f"conn WINDOW_UPDATEs {view.window_updates}", f"{wu.count}; first: {_ints(first)}{more}"),
        (f"stream WINDOW_UPDATEs {view.window_updates}", str(side.stream_window_updates.count)),
    ]
    if view.settings_changes:
        rows.append((f"{view.who} SETTINGS changes", str(side.settings_changes)))
    rows.append((f"PINGs sent by {view.who}", pings_text(frames, server=upload)))
    rows.append((view.data, f"{data.frames} (max {fmt_size(data.max_frame)})"))
    rows += _growth_rows(view.growth, [step.window_bytes for step in side.window_growth], short)
    return rows + _tap_rows(frames, view.tap_completeness)


def _ints(values: tuple[int, ...]) -> str:
    return " ".join(map(str, values))


def _growth_rows(label: str, growth: list[int], short: bool) -> list[Row]:
    if len(growth) < 2:
        return []
    steps = [fmt_size(g) for g in growth]
    if short and len(steps) > 6:
        steps = [*steps[:3], "...", *steps[-2:]]
    return [(label, " -> ".join(steps))]


def _tap_rows(frames: FrameSummary, completeness: bool) -> list[Row]:
    rows = []
    if completeness and frames.tap_lines_skipped:
        rows.append(("tap", f"{frames.tap_lines_skipped} corrupt tap-file line(s) skipped"))
    if completeness and frames.not_decoded_bytes:
        rows.append(("tap", f"tap incomplete: {frames.not_decoded_bytes} bytes not decoded"))
    if not frames.decodable:
        rows.append(("tap", "some frames could not be decoded"))
    return rows
