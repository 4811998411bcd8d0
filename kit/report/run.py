"""Pure rendering: one measurement -> the ``kit run`` table (``--json`` is the flat row of
``kit.analysis.flat``).

Rendered from the typed record and the analyses of it (``kit.analysis.cells``, ``.link``,
``.sharing``), never from a dict of it: a renamed field is a type error here, not a key
that silently reads as missing.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tabulate import tabulate

from kit.analysis.cells import cpu_limit, efficiency, latency_stats, ping_rtt_ms
from kit.analysis.intervals import intervals_of
from kit.analysis.limits import (
    FEW_LOSSES,
    NOT_LOSS_BASED,
    CreditRule,
    congestion_used,
    credit_rule,
    limit_of,
    loss_events,
    path_band,
    server_credit_rule,
    slow_readers,
    window_bound,
)
from kit.analysis.link import Ramp, bdp_of, largest_window_bytes, mbit_s, ramp_of
from kit.analysis.sharing import StreamSharing, stream_sharing
from kit.clients.pacing import slow_streams_text
from kit.plan.packet import mathis_bits_s, queue_bytes_for
from kit.plan.trial import Link, Trial
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
from kit.report.limits import (
    efficiency_text,
    expectation,
    limit_sentence,
    read_received,
    theory_rule,
)
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
    rows += _link_rows(trial.link, bdp_of(m), congestion_used(m))
    if m.status != "ok":
        rows.append(("FAILED", m.error if verbose else short_error(m.error, 300)))
        return _table(rows)
    rows += _result_rows(m, unit)
    rows += _tcp_rows(m)
    rows += _frame_rows(m.frames, trial.workload.kind == "upload", verbose, m.meta.path)
    rows += [("note", n) for n in (m.result.notes if m.result else ())]
    if m.meta.keep_awake:
        rows.append(("note", "every CPU kept awake by nice-19 busy loops (--keep-awake)"))
    warning = cpu_warning(cpu_limit(m))
    if warning:
        rows.append(("WARNING", warning))
    return _table(rows) + "\n" + "\n".join(textwrap.wrap(limit_sentence(limit_of(m), unit), WIDTH))


def _rtt_text(link: Link) -> str:
    return f"{link.rtt_ms:g} ms (up {link.delay_up_ms:g} + down {link.delay_down_ms:g})"


def _link_rows(link: Link, bdp: int | None, congestion: str = "") -> list[Row]:
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
        rows.append(("packet link", packet_link_text(link, congestion)))
        mathis = bounds_of(link)
        if mathis is not None:
            burst = bool(link.loss_burst_len)
            rows.append(("Mathis bound (loss)", _mathis_text(mathis, congestion, burst)))
    return rows


def packet_link_text(link: Link, congestion: str = "") -> str:
    """ "MTU 1500, drop-tail queue 610 KiB, loss 0.1% independent (seed 1), congestion
    control bbr (the kernel's default)": ``congestion`` is what the sockets ran."""
    rates = [r for r in (link.rate_up_bits_s, link.rate_down_bits_s) if r is not None]
    parts = [f"MTU {link.mtu}"]
    if rates:
        parts.append(f"drop-tail queue {fmt_size(queue_bytes_for(link, min(rates)))}")
    if link.loss:
        kind = (
            f"in bursts of mean {link.loss_burst_len:g}" if link.loss_burst_len else "independent"
        )
        parts.append(f"loss {link.loss * 100:g}% {kind} (seed {link.seed})")
    used = congestion or link.congestion
    if not used:
        parts.append("congestion control the kernel's default")
    elif link.congestion:
        parts.append(f"congestion control {used}")
    else:
        parts.append(f"congestion control {used} (the kernel's default)")
    return ", ".join(parts)


def bounds_of(link: Link) -> float | None:
    """The Mathis bound of one connection (p: loss events, a burst counted once)."""
    events = replace(link, loss=loss_events(link), loss_burst_len=0.0)
    return mathis_bits_s(events)


def _mathis_text(mathis: float, congestion: str, burst: bool = False) -> str:
    p = "p, loss events (a burst counts once)" if burst else "p"
    text = f"{format_rate(mathis)} per connection = MSS / RTT x 1.22 / sqrt({p})"
    if congestion in NOT_LOSS_BASED:
        return f"{text}; a model of Reno/CUBIC: {congestion} does not back off on random loss"
    return text


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


def _tcp_rows(m: Measurement) -> list[Row]:
    """Each connection's kernel view on the packet link, senders (most bytes) first."""
    ordered = sorted(m.tcp, key=lambda v: -v.bytes_sent)
    rows = [(f"TCP {v.side} {v.local}", _tcp_text(v)) for v in ordered[:MAX_TCP_ROWS]]
    if len(ordered) > MAX_TCP_ROWS:
        rows.append(("TCP", f"... {len(ordered) - MAX_TCP_ROWS} more connection ends"))
    why = _retransmits_why(m)
    if why:
        rows.append(("retransmits", why))
    return rows


def _tcp_text(v: TcpView) -> str:
    share = _share(v)
    shown = f" ({share:.2%} of ~{_segments(v)} segments sent)" if share is not None else ""
    return (
        f"{v.congestion or '?'}, cwnd {v.cwnd_packets} x {v.mss_bytes} B, srtt {sig3(v.srtt_ms)} ms, "
        f"{v.retransmits} retransmitted{shown}, {fmt_size(v.bytes_sent)} sent"
    )


def _segments(v: TcpView) -> int:
    return v.bytes_sent // max(1, v.mss_bytes)


def _share(v: TcpView) -> float | None:
    """Retransmitted / sent segments; a share of a handful of segments (a receiver's) says
    nothing: only a sender's."""
    segments = _segments(v)
    return (
        v.retransmits / segments if v.retransmits and segments >= MIN_SEGMENTS_FOR_SHARE else None
    )


# A sender resending this many times the link's loss share resent more than the link lost.
RESENT_OVER_LOSS = 2.0


def _retransmits_why(m: Measurement) -> str:
    """Why the senders resent more segments than the link's loss dropped: the bottleneck's
    drop-tail queue dropped the rest (the window overfilled it: its peak reached the
    queue's size), or a retransmission timeout resent a whole flight, lost or not."""
    link, frames = m.trial.link, m.frames
    senders = [(v, share) for v in m.tcp if v.side == "server" and (share := _share(v))]
    if link.kind != "packet" or not senders:
        return ""
    share = max(share for _, share in senders)
    resent = sum(v.retransmits for v, _ in senders)
    if share <= RESENT_OVER_LOSS * link.loss or resent < FEW_LOSSES:
        return ""  # as the loss says, or too few to say anything
    lost = f"the link lost {link.loss:.2%} of packets" if link.loss else "the link lost none"
    rate = link.rate_down_bits_s
    queue = queue_bytes_for(link, rate) if rate is not None else None
    peak = frames.peak_queued_bytes_down if frames is not None else 0
    text = f"{share:.2%} of segments resent where {lost}: TCP resends more than the link drops"
    if queue is not None and peak >= FULL_QUEUE * queue:
        return (
            f"{text}: the drop-tail queue filled (peak {fmt_size(peak)} of {fmt_size(queue)}) and "
            "dropped what the window sent beyond it, and a timeout resends a whole flight"
        )
    return f"{text}: after a retransmission timeout it resends every segment in flight, lost or not"


FULL_QUEUE = 0.9  # of its size: the drop-tail queue was full, so it dropped


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
        rows += _read_rows(m)
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
            else f"{fmt_rate(m.theory_mib_s, unit)} {unit} = {theory_rule(m.trial, unit)}",
        ),
    ]
    eff = efficiency(throughput, m.theory_mib_s)
    rule = _rule_of(m)
    path = path_band(rule, m.trial.link.rtt_ms, ping_rtt_ms(m))
    rows.append(("efficiency", efficiency_text(eff, rule, path)))
    rows += _fast_efficiency_rows(m)
    finish = result.stream_finish_s if result else ()
    if len(finish) > 1:
        rows.append(("stream finish times", f"{sig3(min(finish))} .. {sig3(max(finish))} s"))
    return rows


def _rule_of(m: Measurement) -> CreditRule | None:
    """The credit rule that caps the window that binds (None: the rate binds, or no rule)."""
    bound, rate = window_bound(m.trial), m.theory_mib_s
    if bound is None or rate is None or rate < bound.mib_s:
        return None
    return server_credit_rule(m.trial) if bound.layer == "server" else credit_rule(m.trial.client)


def _fast_efficiency_rows(m: Measurement) -> list[Row]:
    """With streams read slowly on purpose, the efficiency of the others alone: each
    stream's share of the bound is theory / streams (one window or one pool share each)."""
    slow = slow_readers(m)
    if slow is None or slow.fast_efficiency is None:
        return []
    n, streams = len(slow.fast_mib_s), slow.streams
    text = (
        f"{sig3(slow.fast_efficiency)} = their throughput / their share of the theory "
        f"({n} of {streams} streams: theory x {n}/{streams})"
    )
    rule = slow.rule
    if rule is not None and rule.beyond and slow.fast_efficiency > 1:
        text += f"; above 1 because {rule.who} {rule.text}"
    elif rule is not None:
        text += f"; {expectation(rule)}"
    return [("efficiency, full-speed streams", text)]


def _mbit_text(m: Measurement, unit: str, bdp: int | None) -> str:
    """Also in Mbit/s on a link with a rate (rates are set in bits per second)."""
    mbit = mbit_s(m.throughput_mib_s if m.ok else None)
    if bdp is None or mbit is None or unit == "Mbit/s":
        return ""
    return f" = {sig3(mbit)} Mbit/s"


def _tap_link_rows(m: Measurement, bdp: int | None) -> list[Row]:
    """What the tap and the link saw: the final window, the bottleneck's queue, the ramp."""
    frames, rows = m.frames, []
    largest = largest_window_bytes(m)
    if largest is not None:
        announced = frames.window_final_bytes if frames is not None else None
        text = f"{fmt_size(largest)} (the largest window a stream's sender had)"
        if announced is not None and abs(largest - announced) > 0.01 * largest:
            text += f"; the last SETTINGS announced {fmt_size(announced)}"
        rows.append(("final stream window", text))
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
        jain = f"{sig3(sharing.jain)} (1: equal shares; 1/n: one stream took all)"
        rows.append(("Jain's index (full-speed streams)", jain))
    if sharing is not None and sharing.peak_unread_total_bytes is not None:
        rows.append(("peak bytes received, unread", fmt_size(sharing.peak_unread_total_bytes)))
    if windows:
        rows.append(("largest stream window", _per_stream(windows, slow)))
    seen = _tap_windows(frames.stream_windows if frames is not None else ())
    if seen:
        rows.append(("stream windows at tap (median/max)", seen))
    return rows


def _read_rows(m: Measurement) -> list[Row]:
    slow = slow_readers(m)
    if slow is None:
        return []
    label = f"{slow_streams_text(slow.slow)}: read, received"
    return [(label, read_received(slow, m.trial.client.kind))]


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
