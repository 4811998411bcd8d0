"""Pure: the figures and check of table 3 (streams sharing one connection window).

Per cell: the per-stream finish times of the median round and the time the whole transfer
takes at window/RTT; the largest / smallest connection window ratio against the
reference's. Check: the 64 KiB connection window is at least 10x slower than 4 MiB.
"""

from __future__ import annotations

from kit.analysis import reference as ref
from kit.analysis.cells import (
    CampaignView,
    CellView,
    median_of,
    median_ratio,
    throughput,
    total_time_ms,
)
from kit.analysis.tables.checks import Bar, ratio_interval_of, ratio_spread_pct, settled_ratio
from kit.plan.tables.starvation import STARVATION_CAMPAIGN
from kit.plan.units import KIB, MIB

STARVATION_BAR = 10.0


def starvation_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(STARVATION_CAMPAIGN)


def stream_finish_ms(cell: CellView) -> list[float]:
    """Per-stream finish times of the median round (by total time), sorted, in ms."""
    run = cell.median_run(total_time_ms)
    result = run.result if run is not None else None
    return sorted(s * 1000 for s in result.stream_finish_s) if result is not None else []


def theory_time_ms(cell: CellView) -> float | None:
    """How long the whole fixed transfer takes at window/RTT."""
    workload, theory = cell.trial.workload, cell.theory_mib_s
    total = (workload.bytes_per_stream or 0) * workload.streams
    return total / MIB / theory * 1000 if theory else None


def starvation_rows(view: CampaignView) -> list[CellView]:
    """The cells by connection window, smallest first."""
    return sorted(view.cells, key=lambda c: c.trial.client.conn_window_bytes or 0)


def starvation_ratio(view: CampaignView) -> tuple[float | None, float]:
    """(ours, the reference's) largest / smallest connection window aggregate throughput."""
    cells = starvation_rows(view)
    ours = median_ratio(cells[-1], cells[0]) if len(cells) > 1 else None
    return ours, ref.STARVATION[64 * KIB][0] / ref.STARVATION[4 * MIB][0]


def starvation_bar(views: dict[str, CampaignView]) -> Bar:
    view = starvation_view(views)
    slow = median_of(view.cell("h2-conn-64KiB")) if view else None
    fast = median_of(view.cell("h2-conn-4MiB")) if view else None
    name = f"starvation: conn window 64 KiB >= {STARVATION_BAR:g}x slower than 4 MiB"
    if slow is None or fast is None or slow <= 0:
        return Bar(name, None, "not measured")
    ratio = fast / slow
    bar = Bar(name, ratio >= STARVATION_BAR, f"{ratio:.1f}x")
    floor = view.floor(throughput) if view else None
    if floor is None:
        return bar
    spread = ratio_spread_pct(floor.floor_pct, floor.floor_pct)
    cells = (view.cell("h2-conn-4MiB"), view.cell("h2-conn-64KiB")) if view else (None, None)
    ci = ratio_interval_of(*cells, throughput, "table3:starvation")
    return settled_ratio(bar, ratio, STARVATION_BAR, spread, floor.rounds, ci)
