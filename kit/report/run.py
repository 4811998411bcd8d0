"""Pure rendering: one measurement -> the ``kit run`` table and its ``--json`` object."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tabulate import tabulate

from kit.analysis.cells import cpu_limit, efficiency, latency_stats, ping_rtt_ms
from kit.analysis.link import link_json
from kit.analysis.sharing import stream_sharing
from kit.plan.units import format_rate
from kit.report.format import (
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
from kit.results.codec import to_json
from kit.results.records import FrameSummary, Measurement


def run_json(m: Measurement) -> dict[str, Any]:
    trial = m.trial
    result = m.result
    throughput = result.throughput_mib_s if result else None
    latency = latency_stats(result.latencies_ms) if result else None
    return {
        "status": m.status,
        "error": m.error or None,
        "client": trial.client.kind,
        "mode": trial.client.window_mode,
        "workload": trial.workload.kind,
        "streams": trial.workload.streams,
        "connections": trial.client.connections,
        "rtt_ms": trial.link.rtt_ms,
        "delay_up_ms": trial.link.delay_up_ms,
        "delay_down_ms": trial.link.delay_down_ms,
        "window_bytes": trial.client.window_bytes,
        "conn_window_bytes": trial.conn_window_bytes,
        "throughput_mib_s": throughput,
        "theory_mib_s": m.theory_mib_s,
        "efficiency": efficiency(throughput, m.theory_mib_s),
        "ping_rtt_ms": ping_rtt_ms(m),
        "bytes": result.bytes if result else None,
        "messages": result.messages if result else None,
        "elapsed_s": result.elapsed_s if result else None,
        "latency_ms": None
        if latency is None
        else {"mean": latency.mean_ms, "p50": latency.p50_ms, "p99": latency.p99_ms},
        "stream_finish_s": list(result.stream_finish_s) if result else None,
        "cpu": {c.role: round(c.cpu_fraction, 3) for c in m.cpu},
        "cpu_bound": list(m.cpu_bound_roles),
        "frames": _frames_json(m),
        "notes": list(result.notes) if result else [],
        "meta": asdict(m.meta),
        **link_json(m),
        **(_upload_json(m) if trial.workload.kind == "upload" else {}),
        **_sharing_json(m),
    }


def _frames_json(m: Measurement) -> dict[str, Any]:
    """The tap's summary; the server's side only for uploads (where the server receives)."""
    if m.frames is None:
        return {}
    data: dict[str, Any] = to_json(m.frames)
    # the link's delivery trace (thousands of numbers) stays in the records file; its
    # meaning is in the link keys (ramp_90_ms, steady_bits_s)
    data.pop("delivered_down", None)
    if m.trial.workload.kind != "upload":
        data = {k: v for k, v in data.items() if not k.startswith("server_")}
    return data


def _upload_json(m: Measurement) -> dict[str, Any]:
    """An upload's extra keys: the server's window (it receives) and what the client sent."""
    server, result = m.trial.server, m.result
    return {
        "server_mode": server.window_mode,
        "server_window_bytes": server.window_bytes,
        "server_options": dict(server.channel_options),
        "sent_bytes": result.sent_bytes if result else None,
        "credit_wait_s": result.credit_wait_s if result else None,
    }


def _sharing_json(m: Measurement) -> dict[str, Any]:
    """Receive-side policy and per-stream sharing (slow readers, the pool)."""
    client, workload = m.trial.client, m.trial.workload
    out: dict[str, Any] = {
        "window_policy": client.window_mode,
        "credit_policy": client.threshold_policy if client.kind == "h2" else None,
        "conn_credit": client.conn_credit if client.kind == "h2" else None,
        "pool_bytes": client.pool_size_bytes if client.window_mode == "pool" else None,
        "slow_streams": workload.slow_streams,
        "read_rate_bits_s": workload.read_rate_bits_s,
    }
    if m.result is None or m.trial.workload.kind != "download":
        return out
    sharing = stream_sharing(m.result)
    return out | {
        "stream_throughput_mib_s": list(sharing.throughput_mib_s),
        "stream_peak_unread_bytes": list(sharing.peak_unread_bytes) or None,
        "stream_window_bytes": list(sharing.window_bytes) or None,
        "peak_unread_bytes": sharing.peak_unread_total_bytes,
        "jain_index": sharing.jain,
    }


WIDTH = 100  # every line of the table fits this many columns
LABEL_WIDTH = 26


def _table(rows: list[tuple[str, str]]) -> str:
    """Two columns, the values wrapped so that no line is wider than ``WIDTH``."""
    return tabulate(rows, tablefmt="simple", maxcolwidths=[LABEL_WIDTH, WIDTH - LABEL_WIDTH - 2])


def run_table(m: Measurement, verbose: bool = False, unit: str = "MiB/s") -> str:
    """The ``kit run`` table; ``verbose`` shows every SETTING and increment, ``unit`` is the
    throughput unit (MiB/s, MB/s, Mbit/s)."""
    data = run_json(m)
    rows: list[tuple[str, str]] = [
        ("client", f"{data['client']} {mode_label(m.trial)}"),
        ("workload", _workload_text(data)),
        (
            "RTT",
            f"{data['rtt_ms']:g} ms (up {data['delay_up_ms']:g} + down {data['delay_down_ms']:g})",
        ),
        _window_row(m, data),
    ]
    rows += _link_rows(data)
    if m.status != "ok":
        rows.append(("FAILED", m.error if verbose else short_error(m.error, 300)))
        return _table(rows)
    rows += _result_rows(data, unit)
    upload = m.trial.workload.kind == "upload"
    rows += (_upload_frame_rows if upload else _frame_rows)(m.frames, verbose)
    rows += [("note", n) for n in data["notes"]]
    if m.meta.keep_awake:
        rows.append(("note", "every CPU kept awake by nice-19 busy loops (--keep-awake)"))
    warning = cpu_warning(cpu_limit(m))
    if warning:
        rows.append(("WARNING", warning))
    return _table(rows)


def _link_rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The link's rate, jitter and BDP (nothing for today's unlimited, steady link)."""
    up, down = data["rate_up_bits_s"], data["rate_down_bits_s"]
    rows = []
    if up is not None or down is not None:
        rates = [
            f"{n} {'unlimited' if r is None else format_rate(r)}"
            for n, r in (("down", down), ("up", up))
        ]
        bdp = data["bdp_bytes"]
        rows.append(("link rate", ", ".join(rates)))
        rows.append(("BDP = rate x RTT", "-" if bdp is None else fmt_size(bdp)))
    if data["jitter_ms"]:
        rows.append(("jitter", f"+-{data['jitter_ms']:g} ms per chunk (seed {data['seed']})"))
    return rows


def _mbit_text(data: dict[str, Any], unit: str) -> str:
    """Also in Mbit/s on a link with a rate (rates are set in bits per second)."""
    if data["bdp_bytes"] is None or data["throughput_mbit_s"] is None or unit == "Mbit/s":
        return ""
    return f" = {sig3(data['throughput_mbit_s'])} Mbit/s"


def _workload_text(data: dict[str, Any]) -> str:
    text = f"{data['workload']}, {data['streams']} stream(s) on {data['connections']} connection(s)"
    return text


def _result_rows(data: dict[str, Any], unit: str = "MiB/s") -> list[tuple[str, str]]:
    rows = []
    if data["latency_ms"]:
        lat = data["latency_ms"]
        rows.append(
            (
                "unary latency",
                f"mean {sig3(lat['mean'])} ms, p50 {sig3(lat['p50'])} ms, "
                f"p99 {sig3(lat['p99'])} ms over {data['messages']} calls",
            )
        )
    else:
        elapsed = sig3(data["elapsed_s"] or 0.0)
        rows.append(
            (
                "throughput",
                f"{fmt_rate(data['throughput_mib_s'], unit)} {unit}{_mbit_text(data, unit)} "
                f"({fmt_size(data['bytes'] or 0)} in {elapsed} s)",
            )
        )
        rows.append(
            (
                "theory",
                "-"
                if data["theory_mib_s"] is None
                else f"{fmt_rate(data['theory_mib_s'], unit)} {unit} = {_theory_rule(data)}",
            )
        )
        eff = data["efficiency"]
        rows.append(("efficiency", "-" if eff is None else sig3(eff)))
        finish = data["stream_finish_s"] or []
        if len(finish) > 1:
            rows.append(("stream finish times", f"{sig3(min(finish))} .. {sig3(max(finish))} s"))
        rows += _sharing_rows(data)
    if data["window_final_bytes"] is not None:
        rows.append(("final stream window (tap)", fmt_size(data["window_final_bytes"])))
    if data["bdp_bytes"] is not None:
        rows.append(("peak queued at bottleneck", fmt_size(data["peak_queued_bytes"] or 0)))
        if data["ramp_90_ms"] is not None:
            rtts = data["ramp_90_ms"] / data["rtt_ms"] if data["rtt_ms"] else 0
            rows.append(
                (
                    "time to 90% of rate",
                    f"{sig3(data['ramp_90_ms'])} ms ({sig3(rtts)} RTT), "
                    f"{fmt_size(data['ramp_90_bytes'] or 0)}",
                )
            )
    ping = data["ping_rtt_ms"]
    rows.append(("PING RTT during transfer", "-" if ping is None else f"{sig3(ping)} ms"))
    rows.append(
        ("CPU (fraction of a core)", ", ".join(f"{k} {v:.0%}" for k, v in data["cpu"].items()))
    )
    return rows


def _theory_rule(data: dict[str, Any]) -> str:
    window = "server window" if data["workload"] == "upload" else "window"
    if data["bdp_bytes"] is not None:
        return f"min(rate, {window} / RTT)"
    return f"{window} / RTT"


def _sharing_rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    rates = data.get("stream_throughput_mib_s") or []
    if not data["slow_streams"] and (len(rates) < 2 or not data.get("stream_window_bytes")):
        return []  # one stream, or a record from before per-stream windows were kept
    slow = data["slow_streams"]
    text = " ".join(("slow " if i < slow else "") + sig3(r) for i, r in enumerate(rates))
    rows = [("stream throughput (MiB/s)", text)]
    if data.get("jain_index") is not None:
        rows.append(("Jain's index (full-speed streams)", sig3(data["jain_index"])))
    if data.get("peak_unread_bytes") is not None:
        rows.append(("peak bytes received, unread", fmt_size(data["peak_unread_bytes"])))
    windows = data.get("stream_window_bytes") or []
    if windows:
        rows.append(("largest stream window", " ".join(fmt_size(w) for w in windows)))
    seen = _tap_windows(data.get("frames") or {})
    if seen:
        rows.append(("stream windows at the tap (median, max)", seen))
    return rows


def _tap_windows(frames: dict[str, Any]) -> str:
    """Each stream's window over time as the tap saw it, in two figures per stream."""
    by_stream: dict[int, list[int]] = {}
    for point in frames.get("stream_windows") or []:
        by_stream.setdefault(point["stream_id"], []).append(point["window_bytes"])
    parts = [
        f"#{sid} {fmt_size(sorted(w)[len(w) // 2])}/{fmt_size(max(w))}"
        for sid, w in sorted(by_stream.items())
        if len(w) > 1
    ]
    return " ".join(parts)


def _frame_rows(frames: FrameSummary | None, verbose: bool = True) -> list[tuple[str, str]]:
    if frames is None:
        return [("frames", "no tap (direct connection)")]
    wu = frames.conn_window_updates
    growth = [step.window_bytes for step in frames.window_growth]
    first = wu.first if verbose else wu.first[:5]
    more = "" if len(first) == len(wu.first) else " ..."
    rows = [
        ("client SETTINGS (first)", settings_text(frames.client_settings, verbose)),
        ("conn WINDOW_UPDATEs sent", f"{wu.count}; first: {' '.join(map(str, first))}{more}"),
        ("stream WINDOW_UPDATEs sent", str(frames.stream_window_updates.count)),
        ("PINGs sent by client", pings_text(frames)),
        (
            "DATA frames received",
            f"{frames.data_down.frames} (max {fmt_size(frames.data_down.max_frame)})",
        ),
    ]
    if len(growth) > 1:
        steps = [fmt_size(g) for g in growth]
        if not verbose and len(steps) > 6:
            steps = [*steps[:3], "...", *steps[-2:]]
        rows.append(("stream window growth", " -> ".join(steps)))
    if frames.tap_lines_skipped:
        rows.append(("tap", f"{frames.tap_lines_skipped} corrupt tap-file line(s) skipped"))
    if frames.not_decoded_bytes:
        rows.append(("tap", f"tap incomplete: {frames.not_decoded_bytes} bytes not decoded"))
    if not frames.decodable:
        rows.append(("tap", "some frames could not be decoded"))
    return rows


def _window_row(m: Measurement, data: dict[str, Any]) -> tuple[str, str]:
    if m.trial.workload.kind == "upload":  # the server receives: its window governs
        return ("server receive window", m.trial.server.label.removeprefix("server "))
    return (
        "stream / connection window",
        f"{fmt_window(data['window_bytes'])} / {fmt_window(data['conn_window_bytes'])}",
    )


def _upload_frame_rows(frames: FrameSummary | None, verbose: bool = True) -> list[tuple[str, str]]:
    """An upload's tap rows: the server's SETTINGS and credit (it is the receiver)."""
    if frames is None:
        return [("frames", "no tap (direct connection)")]
    wu = frames.server_conn_window_updates
    growth = [step.window_bytes for step in frames.server_window_growth]
    rows = [
        ("server SETTINGS (first)", settings_text(frames.server_settings, verbose)),
        (
            "conn WINDOW_UPDATEs from server",
            f"{wu.count}; first: {' '.join(str(i) for i in wu.first)}",
        ),
        ("stream WINDOW_UPDATEs from server", str(frames.server_stream_window_updates.count)),
        ("server SETTINGS changes", str(frames.server_settings_changes)),
        ("PINGs sent by server", str(frames.server_pings_sent)),
        (
            "DATA frames sent",
            f"{frames.data_up.frames} (max {fmt_size(frames.data_up.max_frame)})",
        ),
    ]
    if len(growth) > 1:
        rows.append(("server window growth", " -> ".join(fmt_size(g) for g in growth)))
    if not frames.decodable:
        rows.append(("tap", "some frames could not be decoded"))
    return rows
