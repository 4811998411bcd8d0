"""Pure rendering of a window sweep's knee (``kit.analysis.knee``): text and JSON."""

from __future__ import annotations

import textwrap
from typing import Any

from kit.analysis.compare import Row
from kit.analysis.knee import Knee, KneePoint, Sweep
from kit.plan.trial import DEFAULT_MESSAGE_BYTES, Trial
from kit.plan.units import MIB, format_bytes, rate_spec, size_spec
from kit.report.compare import (
    WIDTH,
    cpu_notes,
    fmt_cpu_count,
    fmt_interval,
    fmt_summary,
    limit_lines,
)
from kit.report.format import fmt_mib_s, markdown_table, one_line_table, short_verdict, sig3


def _share(knee: Knee, point: KneePoint) -> str:
    share = knee.share_of_best(point)
    return "-" if share is None else f"{share:.0%}"


def _share_ci(knee: Knee, point: KneePoint) -> str:
    """The window's median over the best's beside its 95% interval: "0.92 [0.85, 0.99]";
    the best itself "1 (best)"."""
    share = knee.share(point)
    if share is None:
        return "-"
    if point is knee.best:
        return "1 (best)"
    rounds = len(set(point.by_round) & set(knee.best.by_round)) or None
    return fmt_interval(share.ratio, share.ci, rounds)


def undecided_line(knee: Knee) -> str | None:
    """The windows below the knee whose interval still reaches the knee's share: the knee
    may lie lower (None: every such window is decided)."""
    open_ = knee.undecided()
    if not open_:
        return None
    needs = [s.decision.needs for p in open_ if (s := knee.share(p)) is not None]
    most = max((n for n in needs if n is not None), default=None)
    windows = ", ".join(format_bytes(p.window_bytes) for p in open_)
    rounds = "" if most is None else f" (needs up to {most} rounds; kit knee --until-decided)"
    return (
        f"not decided: {windows} may reach {knee.fraction:.0%} of the best too: its interval "
        f"reaches the share, so the knee may lie lower{rounds}"
    )


def knee_sentence(
    knee: Knee, swept: str, rtt_ms: float = 0.0, rate_mib_s: float | None = None
) -> str:
    best, at = knee.best, knee.knee
    share = knee.share(at)
    ci = share.ci if share is not None else None
    within = "" if ci is None else f" [{ci.low:.0%}, {ci.high:.0%}]"
    text = (
        f"knee: {swept} {format_bytes(at.window_bytes)} reaches "
        f"{_share(knee, at)}{within} of the best ({fmt_mib_s(at.median)} of "
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


# The calls each stack's client program makes for a static window (stacks/<stack>/): what a
# user types in that stack's own API. grpc-go: the static-window dial options (grpc-go >=
# 1.74; WithInitialWindowSize is the older name of the stream one); grpc-java: its one
# window knob (the connection window follows it unless set on Netty's flow controller).
def window_setting(client: str, window_bytes: int, conn_window_bytes: int | None = None) -> str:
    """What to type to give ``client`` the stream window ``window_bytes`` and the
    connection window ``conn_window_bytes`` (None: the client's own rule)."""
    n = window_bytes
    m = n if conn_window_bytes is None else conn_window_bytes
    if client == "grpcio":
        return f'options=[("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", {n})]'
    if client == "grpc-go":
        return f"grpc.WithStaticStreamWindowSize({n}), grpc.WithStaticConnWindowSize({m})"
    if client == "grpc-java":
        own = "" if m == n else f" (connection window {m}: set on Netty's flow controller)"
        return f"NettyChannelBuilder.flowControlWindow({n}){own}"
    if client == "grpc-js":
        return f"{{'grpc-node.flow_control_window': {n}}}"
    if client == "tonic":
        return f"Endpoint::initial_stream_window_size({n}) + initial_connection_window_size({m})"
    return f"--window {size_spec(n)} --conn-window {size_spec(m)} (the kit's h2 client)"


def run_command(trial: Trial) -> str:
    """The ``kit run`` command that measures ``trial`` again (a download of the sweep)."""
    link, client, workload = trial.link, trial.client, trial.workload
    parts = ["kit run", f"--client {client.kind}"]
    if link.delay_up_ms == link.delay_down_ms:
        parts.append(f"--rtt {link.rtt_ms:g}ms")
    else:
        parts.append(f"--delay-up {link.delay_up_ms:g}ms --delay-down {link.delay_down_ms:g}ms")
    up, down = link.rate_up_bits_s, link.rate_down_bits_s
    if up is not None and up == down:
        parts.append(f"--rate {rate_spec(up)}")
    else:
        parts += [f"--rate-{n} {rate_spec(r)}" for n, r in (("down", down), ("up", up)) if r]
    if link.jitter_ms:
        parts.append(f"--jitter {link.jitter_ms:g}ms")
    if client.window_bytes is not None:
        parts.append(f"--window {size_spec(client.window_bytes)}")
    if client.conn_window_bytes is not None:
        parts.append(f"--conn-window {size_spec(client.conn_window_bytes)}")
    if workload.streams > 1:
        parts.append(f"--streams {workload.streams}")
    if workload.message_bytes != DEFAULT_MESSAGE_BYTES:
        parts.append(f"--message-size {size_spec(workload.message_bytes)}")
    if workload.bytes_per_stream is not None:
        parts.append(f"--bytes {size_spec(workload.bytes_per_stream)}")
    elif workload.duration_s is not None:
        parts.append(f"--duration {workload.duration_s:g}s")
    return " ".join(parts)


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
    conn = at.conn_window_bytes
    if conn is None and sweep.client != "grpcio":  # a sweep built without its trials
        conn = at.window_bytes * sweep.streams
    text = (
        f"answer: {_where(sweep)}: a {format_bytes(at.window_bytes)} window reaches "
        f"{knee.fraction:.0%} of {limit} ({fmt_mib_s(at.median)} of {fmt_mib_s(top)} MiB/s); "
        f"type: {window_setting(sweep.client, at.window_bytes, conn)}"
    )
    trial = sweep.knee_trial
    if trial is not None:
        text += f"; measure it again: {run_command(trial)}"
    return text + "".join(f"\n{extra}" for extra in _caveats(sweep))


def _open(sweep: Sweep) -> list[str]:
    line = undecided_line(sweep.knee)
    return [] if line is None else [line]


def _caveats(sweep: Sweep) -> list[str]:
    knee, at, largest = sweep.knee, sweep.knee.knee, sweep.knee.points[-1]
    out = _open(sweep)
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


def _row_of(sweep: Sweep, point: KneePoint) -> Row:
    """The report's row of a point: by its cell's key (by its window for a point built
    without one)."""
    if point.key:
        return sweep.report.row(point.key)
    return next(r for r in sweep.report.rows if sweep.windows.get(r.key) == point.window_bytes)


HEAD = ("window", "MiB/s (min-max)", "x best [95% CI]", "theory", "PING ms", "vs largest", "CPU")


def _cells(sweep: Sweep) -> list[list[str]]:
    """A row per window of the sweep: what the text and markdown tables show."""
    knee = sweep.knee
    lines = []
    for p in knee.points:
        row = _row_of(sweep, p)
        mark = " <- knee" if p is knee.knee else ""
        ping = "-" if p.ping_rtt_ms is None else sig3(p.ping_rtt_ms)
        share = _share_ci(knee, p)
        lines.append([format_bytes(p.window_bytes) + mark, fmt_summary(row.summary, "throughput")])
        verdict = "not decided" if row.undecided else short_verdict(row.verdict, reason=False)
        if row.key == sweep.report.meta.baseline_key and row.summary is not None:
            verdict = "control"
        lines[-1] += [share, fmt_mib_s(p.theory_mib_s), ping, verdict, fmt_cpu_count(row)]
    return lines


def _table(sweep: Sweep) -> str:
    knee = sweep.knee
    table, _, _ = one_line_table(_cells(sweep), HEAD, WIDTH)  # a window's name is short
    rows = [_row_of(sweep, p) for p in knee.points]
    names = {r.key: format_bytes(p.window_bytes) for r, p in zip(rows, knee.points, strict=True)}
    notes = cpu_notes(rows, names)
    return "\n".join([table, *textwrap.wrap(_legend(sweep), WIDTH), *notes])


def _legend(sweep: Sweep) -> str:
    bound = f"{sweep.swept} / RTT"
    theory = bound if sweep.rate_mib_s is None else f"min(link rate, {bound})"
    return (
        "x best = median / the best median, [95% CI] its percentile bootstrap over rounds "
        f"(none with fewer than 3); theory = {theory}; vs largest = the change "
        "against the largest window (the control)"
    )


def render_knee(sweep: Sweep) -> str:
    report = sweep.report
    title = f"{report.meta.title}: {report.meta.setup}; windows swept: {sweep.swept}"
    floor = report.floor.describe() if report.floor else "noise floor: none"
    warnings = [f"warning: {w}" for w in report.warnings]
    sentence = knee_sentence(sweep.knee, sweep.swept, sweep.rtt_ms, sweep.rate_mib_s)
    names = {_row_of(sweep, p).key: format_bytes(p.window_bytes) for p in sweep.knee.points}
    limits = "\n".join(limit_lines([_row_of(sweep, p) for p in sweep.knee.points], names))
    lines = [title, _table(sweep), floor, sentence, *warnings]
    lines += [*([limits] if limits else []), *knee_answer(sweep).split("\n")]
    return "\n".join(
        part
        for line in lines
        for part in (line.splitlines() if "\n" in line else textwrap.wrap(line, WIDTH) or [""])
    )


def knee_markdown(sweep: Sweep) -> str:
    """The sweep as markdown: its table, then what the terminal says under it (the
    definitions, the noise floor, the knee, what limited each window, the answer)."""
    report = sweep.report
    sentence = knee_sentence(sweep.knee, sweep.swept, sweep.rtt_ms, sweep.rate_mib_s)
    floor = report.floor.describe() if report.floor else "noise floor: none"
    warnings = [f"warning: {w}" for w in report.warnings]
    body = [f"- {line}" for line in (_legend(sweep), floor, sentence, *warnings)]
    names = {_row_of(sweep, p).key: format_bytes(p.window_bytes) for p in sweep.knee.points}
    limits = limit_lines([_row_of(sweep, p) for p in sweep.knee.points], names, width=None)
    if limits:
        body += [f"- {limits[0]}", *(f"  - {line.strip()}" for line in limits[1:])]
    body += [f"- {line}" for line in knee_answer(sweep).split("\n")]
    setup = f"{report.meta.setup}; windows swept: {sweep.swept}"
    table = markdown_table(_cells(sweep), HEAD)
    return "\n".join([f"### {report.meta.title}", "", setup, "", table, "", *body, ""])


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
        "points": [{**_point_json(p), **_share_json(knee, p)} for p in knee.points],
        "undecided_windows": [p.window_bytes for p in knee.undecided()],
        "noise_floor_pct": report.floor.floor_pct if report.floor else None,
    }


def _point_json(p: KneePoint) -> dict[str, Any]:
    return {
        "key": p.key,
        "window_bytes": p.window_bytes,
        "conn_window_bytes": p.conn_window_bytes,
        "median_mib_s": p.median,
        "min": p.min,
        "max": p.max,
        "theory_mib_s": p.theory_mib_s,
        "cpu_bound": p.cpu_bound,
        "ping_rtt_ms": p.ping_rtt_ms,
    }


def _share_json(knee: Knee, p: KneePoint) -> dict[str, Any]:
    share = knee.share(p)
    if share is None:
        return {"share_of_best": None, "ci_low": None, "ci_high": None, "decision": None}
    return {
        "share_of_best": share.ratio,
        "ci_low": share.ci.low if share.ci else None,
        "ci_high": share.ci.high if share.ci else None,
        "decision": share.decision.verdict,
        "needs_rounds": share.decision.needs,
    }
