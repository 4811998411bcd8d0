"""Pure rendering: one measurement -> the ``kit run`` table and its ``--json`` object."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tabulate import tabulate

from kit.analysis.cells import cpu_limit, efficiency, latency_stats, ping_rtt_ms
from kit.analysis.sharing import stream_sharing
from kit.plan.units import format_bytes
from kit.report.format import (
    cpu_warning,
    fmt_mib_s,
    fmt_ms,
    fmt_window,
    mode_label,
    pings_text,
    settings_text,
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
        "frames": to_json(m.frames) if m.frames is not None else {},
        "notes": list(result.notes) if result else [],
        "meta": asdict(m.meta),
        **_sharing_json(m),
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


def run_table(m: Measurement) -> str:
    data = run_json(m)
    rows: list[tuple[str, str]] = [
        ("client", f"{data['client']} {mode_label(m.trial)}"),
        ("workload", _workload_text(data)),
        (
            "RTT",
            f"{data['rtt_ms']:g} ms (up {data['delay_up_ms']:g} + down {data['delay_down_ms']:g})",
        ),
        (
            "stream / connection window",
            f"{fmt_window(data['window_bytes'])} / {fmt_window(data['conn_window_bytes'])}",
        ),
    ]
    if m.status != "ok":
        rows.append(("FAILED", m.error))
        return tabulate(rows, tablefmt="simple")
    rows += _result_rows(data)
    rows += _frame_rows(m.frames)
    rows += [("note", n) for n in data["notes"]]
    warning = cpu_warning(cpu_limit(m))
    if warning:
        rows.append(("WARNING", warning))
    return tabulate(rows, tablefmt="simple")


def _workload_text(data: dict[str, Any]) -> str:
    text = f"{data['workload']}, {data['streams']} stream(s) on {data['connections']} connection(s)"
    return text


def _result_rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    if data["latency_ms"]:
        lat = data["latency_ms"]
        rows.append(
            (
                "unary latency",
                f"mean {lat['mean']:.2f} ms, p50 {lat['p50']:.2f} ms, p99 {lat['p99']:.2f} ms over {data['messages']} calls",
            )
        )
    else:
        rows.append(
            (
                "throughput",
                f"{fmt_mib_s(data['throughput_mib_s'])} MiB/s ({format_bytes(data['bytes'] or 0)} in {data['elapsed_s']:.2f} s)",
            )
        )
        rows.append(
            (
                "theory = window / RTT",
                "-" if data["theory_mib_s"] is None else f"{fmt_mib_s(data['theory_mib_s'])} MiB/s",
            )
        )
        eff = data["efficiency"]
        rows.append(("efficiency", "-" if eff is None else f"{eff:.2f}"))
        finish = data["stream_finish_s"] or []
        if len(finish) > 1:
            rows.append(("stream finish times", f"{min(finish):.3f} .. {max(finish):.3f} s"))
        rows += _sharing_rows(data)
    rows.append(("PING RTT during transfer", f"{fmt_ms(data['ping_rtt_ms'])} ms"))
    rows.append(
        ("CPU (fraction of a core)", ", ".join(f"{k} {v:.0%}" for k, v in data["cpu"].items()))
    )
    return rows


def _sharing_rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    rates = data.get("stream_throughput_mib_s") or []
    if not data["slow_streams"] and (len(rates) < 2 or not data.get("stream_window_bytes")):
        return []  # one stream, or a record from before per-stream windows were kept
    slow = data["slow_streams"]
    text = " ".join(("slow " if i < slow else "") + fmt_mib_s(r) for i, r in enumerate(rates))
    rows = [("stream throughput (MiB/s)", text)]
    if data.get("jain_index") is not None:
        rows.append(("Jain's index (full-speed streams)", f"{data['jain_index']:.3f}"))
    if data.get("peak_unread_bytes") is not None:
        rows.append(("peak bytes received, unread", format_bytes(data["peak_unread_bytes"])))
    windows = data.get("stream_window_bytes") or []
    if windows:
        rows.append(("largest stream window", " ".join(format_bytes(w) for w in windows)))
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
        f"#{sid} {format_bytes(sorted(w)[len(w) // 2], 0)}/{format_bytes(max(w), 0)}"
        for sid, w in sorted(by_stream.items())
        if len(w) > 1
    ]
    return " ".join(parts)


def _frame_rows(frames: FrameSummary | None) -> list[tuple[str, str]]:
    if frames is None:
        return [("frames", "no tap (direct connection)")]
    wu = frames.conn_window_updates
    growth = [step.window_bytes for step in frames.window_growth]
    rows = [
        ("client SETTINGS (first)", settings_text(frames.client_settings)),
        ("conn WINDOW_UPDATEs sent", f"{wu.count}; first: {' '.join(str(i) for i in wu.first)}"),
        ("stream WINDOW_UPDATEs sent", str(frames.stream_window_updates.count)),
        ("PINGs sent by client", pings_text(frames)),
        (
            "DATA frames received",
            f"{frames.data_down.frames} (max {format_bytes(frames.data_down.max_frame)})",
        ),
    ]
    if len(growth) > 1:
        rows.append(("stream window growth", " -> ".join(format_bytes(g) for g in growth)))
    if frames.tap_lines_skipped:
        rows.append(("tap", f"{frames.tap_lines_skipped} corrupt tap-file line(s) skipped"))
    if not frames.decodable:
        rows.append(("tap", "some frames could not be decoded"))
    return rows
