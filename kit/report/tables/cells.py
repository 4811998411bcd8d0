"""Pure rendering: how a cell reads in the tables (its client setting, its transfer, a cell
that failed) and a campaign's noise-floor line; shared by several tables."""

from __future__ import annotations

from kit.analysis.cells import CampaignView, CellView, Metric
from kit.plan.units import format_bytes
from kit.report.format import mode_label


def floor_line(view: CampaignView, metric: Metric) -> str:
    floor = view.floor(metric)
    control = view.control
    name = control.key if control else "none"
    if floor is None:
        return f"Noise floor: not available (control `{name}` has no round with both copies)."
    return f"Noise floor (control `{name}`): {floor.describe()}."


def failed_or(cell: CellView, text: str) -> str:
    if cell.ok:
        return text
    return "FAILED" if cell.runs else "-"


def setting_text(cell: CellView) -> str:
    client = cell.trial.client
    if client.window_mode == "dynamic":
        return f"{client.kind} {mode_label(cell.trial)}"
    return client.label


def transfer_text(cell: CellView) -> str:
    workload = cell.trial.workload
    if workload.kind == "unary":
        return f"{workload.calls} calls"
    streams = f"{workload.streams} x " if workload.streams > 1 else ""
    if workload.bytes_per_stream is not None:
        return f"{streams}{format_bytes(workload.bytes_per_stream)}"
    return f"{streams}timed {workload.timed_duration_s(cell.trial.link.rtt_ms):g} s"
