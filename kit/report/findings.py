"""Pure rendering of what a few lone runs show together (``kit.analysis.findings``): the
closing summary of ``make run`` (``kit report FILE --summary``), every line within 100
columns, every derived figure defined where it is shown."""

from __future__ import annotations

import textwrap

from kit.analysis.findings import CAMPAIGNS_NAMED, Findings, RunFigure, WindowRatio
from kit.plan.units import format_bytes
from kit.report.format import sig3

WIDTH = 100
EFFICIENCY = "efficiency = throughput / (window / RTT)"


def _setting(r: RunFigure) -> str:
    window = f"static {format_bytes(r.window_bytes)}" if r.window_bytes else f"{r.mode} window"
    streams = f", {r.streams} streams" if r.streams > 1 else ""
    return f"{r.client}, {window}{streams} at {r.rtt_ms:g} ms"


def run_line(r: RunFigure) -> str:
    """One run: its throughput against its bound, or a dynamic window's growth."""
    text = f"{_setting(r)}: {sig3(r.throughput_mib_s)} MiB/s"
    eff = r.efficiency
    if eff is not None and r.theory_mib_s is not None:
        text += f", efficiency {eff:.2f} of {sig3(r.theory_mib_s)} MiB/s"
    if r.window_bytes is None and r.final_window_bytes:
        text += f"; its window grew to {format_bytes(r.final_window_bytes)}"
        if not r.rate_limited:
            text += " (no rate on this link to hold it: --rate bounds it)"
    reference = r.reference_dynamic_mib_s
    if reference is not None:
        text += f"; the reference study's dynamic (grpc-go) client: {reference:g} MiB/s"
    return text + (" [CPU-limited]" if r.cpu_limited else "")


def ratio_line(w: WindowRatio) -> str:
    """The largest window against the smallest, beside window / RTT and the reference."""
    large = format_bytes(w.large.window_bytes or 0)
    small = format_bytes(w.small.window_bytes or 0)
    text = (
        f"{w.client} at {w.rtt_ms:g} ms: {large} carries {w.ratio:.1f}x what {small} carries "
        f"({sig3(w.large.throughput_mib_s)} / {sig3(w.small.throughput_mib_s)} MiB/s); "
        f"window / RTT predicts {w.window_ratio:.0f}x"
    )
    reference = w.reference
    if reference is not None:
        text += f"; the reference study measured {reference:.0f}x"
    return text


def render_findings(found: Findings) -> str:
    """The summary: a line per run, the window ratios, what limits the figures."""
    runs = len(found.runs)
    head = f"What the {runs} run{'s' if runs != 1 else ''} show; {EFFICIENCY}:"
    items = [run_line(r) for r in found.runs] + [ratio_line(w) for w in found.ratios]
    notes = []
    if found.cpu_limited:
        notes.append(
            f"{found.cpu_limited} of {runs} runs had no core to spare [CPU-limited]: their "
            "throughput measures this machine as much as the window"
        )
    if found.not_ok:
        notes.append(f"{found.not_ok} run(s) failed or were cut short: not summarised")
    if found.other:
        notes.append(f"{found.other} run(s) of other workloads (uploads, unary): not summarised")
    if found.campaign_runs:
        notes.append(_campaigns_note(found, runs))
    elif not runs:
        notes.append("no download run finished: nothing to summarise")
    if not runs and found.campaign_runs:  # nothing of its own to say but where to look
        return "\n".join(line for note in notes for line in _wrapped(note, ""))
    lines = _wrapped(head, "")
    for item in items:
        lines += _wrapped(item, "- ")
    for note in notes:
        lines += _wrapped(note, "")
    return "\n".join(lines)


def _campaigns_note(found: Findings, runs: int) -> str:
    """Where a file's campaign runs are read: they are not lone runs, so not summarised."""
    names = list(found.campaigns[:CAMPAIGNS_NAMED])
    more = ", ..." if len(found.campaigns) > CAMPAIGNS_NAMED else ""
    what = f"{found.campaign_runs} run(s) of campaigns ({', '.join(names)}{more})"
    head = "No lone run (kit run) in these records: their " if not runs else ""
    return f"{head}{what} are shown by kit report without --summary"


def _wrapped(text: str, first: str) -> list[str]:
    return textwrap.wrap(
        text, WIDTH, initial_indent=first, subsequent_indent="  ", break_on_hyphens=False
    )
