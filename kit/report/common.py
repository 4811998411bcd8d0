"""Formatting shared by every report: throughput, windows, warnings. Pure."""

from __future__ import annotations

from statistics import median
from typing import Any

from kit.measure import CPU_BOUND_FRACTION, Measurement
from kit.units import format_bytes


def fmt_mib_s(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def fmt_window(window_bytes: int | None) -> str:
    return "-" if window_bytes is None else format_bytes(window_bytes)


def fmt_ms(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def efficiency(throughput_mib_s: float | None, theory: float | None) -> float | None:
    if throughput_mib_s is None or not theory:
        return None
    return throughput_mib_s / theory


def ping_rtt_ms(m: Measurement) -> float | None:
    """RTT seen by HTTP/2 PINGs during the transfer: the client's own, else the tap's estimate."""
    result = m.client_result
    if result is not None and result.ping_rtt_ms:
        return float(median(result.ping_rtt_ms))
    client = (m.frames.get("ping_rtt_ms") or {}).get("client") or {}
    value = client.get("median")
    return float(value) if value is not None else None


def cpu_warning(m: Measurement) -> str:
    """Why a result may be CPU-bound rather than window-bound, or "" when nothing says so.

    One process near a full core is the classic case; on a 2-core machine three busy
    processes saturate the machine without any one of them reaching it.
    """
    if m.cpu_bound_roles:
        shares = ", ".join(f"{c.role} {c.cpu_fraction:.0%}" for c in m.cpu if c.bound)
        return f"CPU-bound ({shares} of a core): this result is not window-bound"
    machine = m.meta.get("machine") or {}
    busy, cpus = float(machine.get("busy_cores", 0.0)), float(machine.get("cpus", 0.0))
    if cpus and busy >= CPU_BOUND_FRACTION * cpus:
        other = float(machine.get("other_cores", 0.0))
        return (
            f"CPU-saturated machine ({busy:.2f} of {cpus:.0f} cores busy, {other:.2f} outside "
            "the measurement path): this result is not window-bound"
        )
    return ""


def mode_label(trial: dict[str, Any]) -> str:
    client = trial["client"]
    mode = str(client["window_mode"])
    if mode == "dynamic":
        return "dynamic (grpc-go-style BDP)" if client["kind"] == "h2" else "dynamic (C-core BDP)"
    return mode


def pings_text(frames: dict[str, Any]) -> str:
    """PINGs the client sent, saying how many were the kit's own RTT probes."""
    sent = int(frames.get("pings_sent", 0))
    probes = int(frames.get("rtt_probe_pings", 0))
    return f"{sent} ({probes} kit RTT probes)" if probes else str(sent)
