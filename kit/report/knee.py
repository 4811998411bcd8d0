"""Pure rendering of a window sweep's knee (``kit.analysis.knee``): text and JSON."""

from __future__ import annotations

import textwrap
from typing import Any

from kit.analysis.knee import Knee, KneePoint, Sweep
from kit.plan.units import MIB, format_bytes
from kit.report.compare import WIDTH, cpu_notes, fmt_cpu_count, fmt_summary
from kit.report.format import fmt_mib_s, one_line_table, short_verdict, sig3


def _share(knee: Knee, point: KneePoint) -> str:
    share = knee.share_of_best(point)
    return "-" if share is None else f"{share:.0%}"


def knee_sentence(
    knee: Knee, swept: str, rtt_ms: float = 0.0, rate_mib_s: float | None = None
) -> str:
    best, at = knee.best, knee.knee
    text = (
        f"knee: {swept} {format_bytes(at.window_bytes)} reaches "
        f"{_share(knee, at)} of the best ({fmt_mib_s(at.median)} of "
        f"{fmt_mib_s(best.median)} MiB/s at {format_bytes(best.window_bytes)})"
    )
    link_bound = rate_mib_s is not None and best.median >= knee.fraction * rate_mib_s
    if knee.best_is_cpu_bound:
        text += "; the best is CPU-bound: the machine, not the window, binds there"
    elif link_bound:
        # the bottleneck's queue, not the processes, then holds the data the PINGs wait behind
        text += "; the best fills the link rate: the link, not the window, binds there"
    elif rtt_ms > 0 and best.rtt_inflated(rtt_ms):
        text += (
            f"; the best runs saw PINGs at {best.ping_rtt_ms:.0f} ms against {rtt_ms:g} ms: "
            "data queued in the processes, so the machine, not the window, bound the top"
        )
    if at is knee.points[-1] and not link_bound:
        text += "; the largest window tried is the knee: it may lie beyond"
    return text


def window_setting(client: str, window_bytes: int, streams: int = 1) -> str:
    """What to type to give ``client`` the window the sweep set (the names the kit's options
    use); grpc-go and tonic then size the connection window W x the streams on it."""
    w = format_bytes(window_bytes).replace(" ", "")
    n, conn = str(window_bytes), str(window_bytes * streams)
    settings = {
        "h2": f"kit run --client h2 --window {w} --conn-window {w}",
        "grpcio": f"kit run --window {w} (channel arguments grpc.http2.lookahead_bytes={n}, "
        "grpc.http2.bdp_probe=0)",
        "grpc-go": f"WithInitialWindowSize({n}), WithInitialConnWindowSize({conn}) "
        f"(kit run --client grpc-go --window {w})",
        "grpc-java": f"flowControlWindow({n}) (kit run --client grpc-java --window {w})",
        "grpc-js": f"channel option grpc-node.flow_control_window={n} "
        f"(kit run --client grpc-js --window {w})",
        "tonic": f"initial_stream_window_size({n}), initial_connection_window_size({conn}), "
        f"http2_adaptive_window(false) (kit run --client tonic --window {w})",
    }
    return settings.get(client, f"kit run --client {client} --window {w}")


def _where(sweep: Sweep) -> str:
    mbit = None if sweep.rate_mib_s is None else sweep.rate_mib_s * MIB * 8 / 1e6
    rate = "" if mbit is None else f" on {sig3(mbit)} Mbit/s"
    return f"at {sweep.rtt_ms:g} ms{rate}"


def knee_answer(sweep: Sweep) -> str:
    """The answer a user came for: the window to set, what it reaches, what to type; and,
    when the sweep could not decide, what to do instead."""
    knee, at = sweep.knee, sweep.knee.knee
    top = knee.best.median
    limit = "the best it measured"
    if sweep.rate_mib_s is not None and sweep.rate_mib_s < top:
        top, limit = sweep.rate_mib_s, "the link rate"
    text = (
        f"answer: {_where(sweep)}: a {format_bytes(at.window_bytes)} window reaches "
        f"{knee.fraction:.0%} of {limit} ({fmt_mib_s(at.median)} of {fmt_mib_s(top)} MiB/s); "
        f"type: {window_setting(sweep.client, at.window_bytes, sweep.streams)}"
    )
    return text + "".join(f"\n{extra}" for extra in _caveats(sweep))


def _caveats(sweep: Sweep) -> list[str]:
    knee, at, largest = sweep.knee, sweep.knee.knee, sweep.knee.points[-1]
    out = []
    if knee.best.cpu_bound:
        out.append(
            f"the client is CPU-bound at {fmt_mib_s(knee.best.median)} MiB/s: a window beyond "
            f"{format_bytes(at.window_bytes)} does not help"
        )
    elif _still_grows(sweep):
        raise_to = largest.window_bytes * 4
        out.append(
            f"the throughput still grows at the largest window tried: raise --max-window to "
            f"{format_bytes(raise_to)} (about {2 * sweep.top_cell_s:.0f} s more)"
        )
    return out


def _still_grows(sweep: Sweep) -> bool:
    """The largest window tried is the knee (every smaller one is below 90 % of it) and the
    link rate, if any, is not reached yet."""
    knee = sweep.knee
    largest = knee.points[-1]
    if sweep.rate_mib_s is not None and largest.median >= knee.fraction * sweep.rate_mib_s:
        return False
    return knee.knee is largest


def _table(sweep: Sweep) -> str:
    knee, report, windows = sweep.knee, sweep.report, sweep.windows
    rows_by_window = {windows[r.key]: r for r in report.rows if r.key in windows}
    head = ["window", "MiB/s (min-max)", "best%", "theory", "PING ms", "vs largest", "CPU"]
    lines = []
    for p in knee.points:
        row = rows_by_window[p.window_bytes]
        mark = " <- knee" if p is knee.knee else ""
        ping = "-" if p.ping_rtt_ms is None else sig3(p.ping_rtt_ms)
        share = _share(knee, p)
        lines.append([format_bytes(p.window_bytes) + mark, fmt_summary(row.summary, "throughput")])
        verdict = short_verdict(row.verdict, reason=False)
        lines[-1] += [share, fmt_mib_s(p.theory_mib_s), ping, verdict, fmt_cpu_count(row)]
    table, _, _ = one_line_table(lines, head, WIDTH)  # a window's name is short: never cut
    notes = cpu_notes(
        [rows_by_window[p.window_bytes] for p in knee.points],
        {rows_by_window[p.window_bytes].key: format_bytes(p.window_bytes) for p in knee.points},
    )
    return "\n".join([table, *notes])


def render_knee(sweep: Sweep) -> str:
    report = sweep.report
    title = f"{report.meta.title}: {report.meta.setup}; windows swept: {sweep.swept}"
    floor = report.floor.describe() if report.floor else "noise floor: none"
    warnings = [f"warning: {w}" for w in report.warnings]
    sentence = knee_sentence(sweep.knee, sweep.swept, sweep.rtt_ms, sweep.rate_mib_s)
    lines = [title, _table(sweep), floor, sentence, *warnings, *knee_answer(sweep).split("\n")]
    return "\n".join(
        part
        for line in lines
        for part in (line.splitlines() if "\n" in line else textwrap.wrap(line, WIDTH) or [""])
    )


def knee_json(sweep: Sweep) -> dict[str, Any]:
    report, knee, swept, rtt_ms = sweep.report, sweep.knee, sweep.swept, sweep.rtt_ms
    return {
        "title": report.meta.title,
        "setup": report.meta.setup,
        "swept": swept,
        "fraction": knee.fraction,
        "knee_window_bytes": knee.knee.window_bytes,
        "best_window_bytes": knee.best.window_bytes,
        "best_mib_s": knee.best.median,
        "best_is_cpu_bound": knee.best_is_cpu_bound,
        "summary": knee_sentence(knee, swept, rtt_ms, sweep.rate_mib_s),
        "answer": knee_answer(sweep),
        "client": sweep.client,
        "points": [_point_json(p) for p in knee.points],
        "noise_floor_pct": report.floor.floor_pct if report.floor else None,
    }


def _point_json(p: KneePoint) -> dict[str, Any]:
    return {
        "window_bytes": p.window_bytes,
        "median_mib_s": p.median,
        "min": p.min,
        "max": p.max,
        "theory_mib_s": p.theory_mib_s,
        "cpu_bound": p.cpu_bound,
        "ping_rtt_ms": p.ping_rtt_ms,
    }
