"""Pure rendering: one measurement -> the ``kit run`` table and its ``--json`` object."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tabulate import tabulate

from kit.analysis.cells import cpu_limit, efficiency, latency_stats, ping_rtt_ms
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
        "frames": to_json(m.frames) if m.frames is not None else {},
        "notes": list(result.notes) if result else [],
        "meta": asdict(m.meta),
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
        (
            "stream / connection window",
            f"{fmt_window(data['window_bytes'])} / {fmt_window(data['conn_window_bytes'])}",
        ),
    ]
    if m.status != "ok":
        rows.append(("FAILED", m.error if verbose else short_error(m.error, 300)))
        return _table(rows)
    rows += _result_rows(data, unit)
    rows += _frame_rows(m.frames, verbose)
    rows += [("note", n) for n in data["notes"]]
    warning = cpu_warning(cpu_limit(m))
    if warning:
        rows.append(("WARNING", warning))
    return _table(rows)


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
                f"{fmt_rate(data['throughput_mib_s'], unit)} {unit} "
                f"({fmt_size(data['bytes'] or 0)} in {elapsed} s)",
            )
        )
        rows.append(
            (
                "theory = window / RTT",
                "-"
                if data["theory_mib_s"] is None
                else f"{fmt_rate(data['theory_mib_s'], unit)} {unit}",
            )
        )
        eff = data["efficiency"]
        rows.append(("efficiency", "-" if eff is None else sig3(eff)))
        finish = data["stream_finish_s"] or []
        if len(finish) > 1:
            rows.append(("stream finish times", f"{sig3(min(finish))} .. {sig3(max(finish))} s"))
    ping = data["ping_rtt_ms"]
    rows.append(("PING RTT during transfer", "-" if ping is None else f"{sig3(ping)} ms"))
    rows.append(
        ("CPU (fraction of a core)", ", ".join(f"{k} {v:.0%}" for k, v in data["cpu"].items()))
    )
    return rows


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
    if not frames.decodable:
        rows.append(("tap", "some frames could not be decoded"))
    return rows
