"""Formatting shared by every report: numbers, windows, settings, warnings. Pure."""

from __future__ import annotations

from collections.abc import Callable

from kit.analysis.cells import OTHER_LOAD_CORES, CellFlags, CpuLimit
from kit.analysis.stats import Summary
from kit.plan.trial import Trial
from kit.plan.units import format_bytes
from kit.results.records import FrameSummary


def fmt_mib_s(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def fmt_window(window_bytes: int | None) -> str:
    return "-" if window_bytes is None else format_bytes(window_bytes)


def fmt_ms(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_range(summary: Summary | None, fmt: Callable[[float], str]) -> str:
    """'123.4 (120.1-125.0)', or the single value for one sample, or '-'."""
    if summary is None:
        return "-"
    if summary.n == 1:
        return fmt(summary.median)
    return f"{fmt(summary.median)} ({fmt(summary.min)}-{fmt(summary.max)})"


def cpu_warning(limit: CpuLimit | None) -> str:
    """Why a result may be CPU-bound rather than window-bound, or "" when nothing says so."""
    if limit is None:
        return ""
    if limit.processes:
        shares = ", ".join(f"{role} {fraction:.0%}" for role, fraction in limit.processes)
        return f"CPU-bound ({shares} of a core): this result is not window-bound"
    return (
        f"CPU-saturated machine ({limit.busy_cores:.2f} of {limit.cpus:.0f} cores busy, "
        f"{limit.other_cores:.2f} outside the measurement path): this result is not window-bound"
    )


def mode_label(trial: Trial) -> str:
    mode = trial.client.window_mode
    if mode == "dynamic":
        return (
            "dynamic (grpc-go-style BDP)" if trial.client.kind == "h2" else "dynamic (C-core BDP)"
        )
    return mode


def pings_text(frames: FrameSummary) -> str:
    """PINGs the client sent, saying how many were the kit's own RTT probes."""
    sent, probes = frames.pings_sent, frames.rtt_probe_pings
    return f"{sent} ({probes} kit RTT probes)" if probes else str(sent)


def settings_text(settings: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in settings.items()) or "(empty)"


def short_error(error: str, limit: int = 80) -> str:
    text = " ".join((error or "unknown error").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def flags_text(flags: CellFlags) -> str:
    """The notes column: control, CPU-bound rounds, machine load, spread > 10%, failures."""
    out = ["control (2 copies per round)"] if flags.control else []
    if flags.cpu_bound:
        shares = ", ".join(f"{role} {n}/{flags.ok_runs}" for role, n in flags.cpu_bound)
        out.append(f"CPU-bound: {shares}")
    if flags.saturated:
        out.append(f"CPU-saturated machine {flags.saturated}/{flags.ok_runs}")
    if flags.other_load:
        out.append(f"other work >= {OTHER_LOAD_CORES:g} core {flags.other_load}/{flags.ok_runs}")
    if flags.spread_pct is not None:
        out.append(f"spread {flags.spread_pct:.0f}% > 10%")
    if flags.failed:
        out.append(f"failed {flags.failed}/{flags.runs}: {short_error(flags.first_error)}")
    return "; ".join(out)
