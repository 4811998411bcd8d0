"""Pure rendering: one measurement -> the ``kit run`` table and its ``--json`` object."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tabulate import tabulate

from kit.analysis.cells import cpu_limit, efficiency, latency_stats, ping_rtt_ms
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
        "frames": _frames_json(m),
        "notes": list(result.notes) if result else [],
        "meta": asdict(m.meta),
        **(_upload_json(m) if trial.workload.kind == "upload" else {}),
    }


def _frames_json(m: Measurement) -> dict[str, Any]:
    """The tap's summary; the server's side only for uploads (where the server receives)."""
    if m.frames is None:
        return {}
    data: dict[str, Any] = to_json(m.frames)
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


def run_table(m: Measurement) -> str:
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
    if m.status != "ok":
        rows.append(("FAILED", m.error))
        return tabulate(rows, tablefmt="simple")
    rows += _result_rows(data)
    rows += _upload_frame_rows(m.frames) if m.trial.workload.kind == "upload" else []
    rows += [] if m.trial.workload.kind == "upload" else _frame_rows(m.frames)
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
                "theory = server window / RTT"
                if data["workload"] == "upload"
                else "theory = window / RTT",
                "-" if data["theory_mib_s"] is None else f"{fmt_mib_s(data['theory_mib_s'])} MiB/s",
            )
        )
        eff = data["efficiency"]
        rows.append(("efficiency", "-" if eff is None else f"{eff:.2f}"))
        finish = data["stream_finish_s"] or []
        if len(finish) > 1:
            rows.append(("stream finish times", f"{min(finish):.3f} .. {max(finish):.3f} s"))
    rows.append(("PING RTT during transfer", f"{fmt_ms(data['ping_rtt_ms'])} ms"))
    rows.append(
        ("CPU (fraction of a core)", ", ".join(f"{k} {v:.0%}" for k, v in data["cpu"].items()))
    )
    return rows


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


def _window_row(m: Measurement, data: dict[str, Any]) -> tuple[str, str]:
    if m.trial.workload.kind == "upload":  # the server receives: its window governs
        return ("server receive window", m.trial.server.label.removeprefix("server "))
    return (
        "stream / connection window",
        f"{fmt_window(data['window_bytes'])} / {fmt_window(data['conn_window_bytes'])}",
    )


def _upload_frame_rows(frames: FrameSummary | None) -> list[tuple[str, str]]:
    """An upload's tap rows: the server's SETTINGS and credit (it is the receiver)."""
    if frames is None:
        return [("frames", "no tap (direct connection)")]
    wu = frames.server_conn_window_updates
    growth = [step.window_bytes for step in frames.server_window_growth]
    rows = [
        ("server SETTINGS (first)", settings_text(frames.server_settings)),
        (
            "conn WINDOW_UPDATEs from server",
            f"{wu.count}; first: {' '.join(str(i) for i in wu.first)}",
        ),
        ("stream WINDOW_UPDATEs from server", str(frames.server_stream_window_updates.count)),
        ("server SETTINGS changes", str(frames.server_settings_changes)),
        ("PINGs sent by server", str(frames.server_pings_sent)),
        (
            "DATA frames sent",
            f"{frames.data_up.frames} (max {format_bytes(frames.data_up.max_frame)})",
        ),
    ]
    if len(growth) > 1:
        rows.append(("server window growth", " -> ".join(format_bytes(g) for g in growth)))
    if not frames.decodable:
        rows.append(("tap", "some frames could not be decoded"))
    return rows
