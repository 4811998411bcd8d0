"""Pure: the figures of the reference tables, computed from a ``kit tables`` run's records.

Everything ``kit.report.tables`` prints that is a number or a verdict comes from here: the
reference row of a cell, the window ratios, per-stream finish times, pooled latency
percentiles, the window-effect verdicts of the unary table, which tables a run holds and
what its sessions took.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from kit.analysis import reference as ref
from kit.analysis.cells import (
    CampaignView,
    CellView,
    mean_latency_ms,
    median_ratio,
    other_cores,
    total_time_ms,
)
from kit.analysis.stats import Verdict, verdict
from kit.plan.links import LINKS_CAMPAIGN
from kit.plan.tables import (
    SHARING_CAMPAIGN,
    STARVATION_CAMPAIGN,
    TABLE1_PREFIX,
    UNARY_CAMPAIGN,
    WIRE_CAMPAIGN,
    TablesSettings,
)
from kit.plan.units import KIB, MIB
from kit.plan.upload_table import UPLOAD_PREFIX
from kit.quantile import percentile
from kit.results.records import Measurement, RunMeta, SessionRecord

_ROW_GROUPS = {
    ("grpcio", "dynamic"): 0,
    ("h2", "static"): 1,
    ("grpcio", "static"): 2,
    ("h2", "dynamic"): 3,
}


def row_order(cell: CellView) -> tuple[int, int, bool, str]:
    """The reference's row order: grpcio dynamic, h2 static, grpcio static, h2 dynamic."""
    client, workload = cell.trial.client, cell.trial.workload
    group = _ROW_GROUPS.get((client.kind, client.window_mode), 4)
    return group, client.window_bytes or 0, workload.bytes_per_stream is None, cell.key


def table1_views(views: dict[str, CampaignView]) -> list[CampaignView]:
    """Table 1's campaigns (one per RTT), by RTT."""
    found = [v for n, v in views.items() if n.startswith(TABLE1_PREFIX)]
    return sorted(found, key=lambda v: v.cells[0].trial.link.rtt_ms)


def reference_throughput(cell: CellView) -> float | None:
    """The reference row for this cell: static rows by window; the dynamic row only for the
    8 MiB transfer it was measured with (a timed dynamic row is a different experiment)."""
    trial = cell.trial
    if trial.client.window_mode == "dynamic" and trial.workload.bytes_per_stream != 8 * MIB:
        return None
    return ref.THROUGHPUT_MIB_S.get((trial.link.rtt_ms, trial.client.window_bytes))


def window_ratio(view: CampaignView) -> tuple[float | None, float | None]:
    """(ours, the reference's) h2 static 4 MiB / 64 KiB throughput at this campaign's RTT."""
    rtt = view.cells[0].trial.link.rtt_ms
    ours = median_ratio(view.cell("h2-static-4MiB"), view.cell("h2-static-64KiB"))
    theirs = ref.window_ratio(rtt) if (rtt, 4 * MIB) in ref.THROUGHPUT_MIB_S else None
    return ours, theirs


# --- table 3 ---------------------------------------------------------------------------------


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


def starvation_cells(view: CampaignView) -> list[CellView]:
    return sorted(view.cells, key=lambda c: c.trial.client.conn_window_bytes or 0)


def starvation_ratio(view: CampaignView) -> tuple[float | None, float]:
    """(ours, the reference's) largest / smallest connection window aggregate throughput."""
    cells = starvation_cells(view)
    ours = median_ratio(cells[-1], cells[0]) if len(cells) > 1 else None
    return ours, ref.STARVATION[64 * KIB][0] / ref.STARVATION[4 * MIB][0]


# --- table 4 ---------------------------------------------------------------------------------


def pooled_latency_ms(cell: CellView) -> tuple[float, float] | None:
    """(p50, p99) over every call of every ok round of a unary cell."""
    pooled = [lat for m in cell.ok if m.result is not None for lat in m.result.latencies_ms]
    return (percentile(pooled, 50), percentile(pooled, 99)) if pooled else None


UnaryVerdict = Verdict | Literal["baseline", "not measured"]


def unary_verdict(view: CampaignView, cell: CellView, baseline: CellView | None) -> UnaryVerdict:
    """Mean latency per call of ``cell`` against ``baseline`` (lower is faster)."""
    if baseline is None or baseline.key == cell.key:
        return "baseline"
    floor = view.floor(mean_latency_ms)
    base, cand = baseline.values(mean_latency_ms), cell.values(mean_latency_ms)
    if floor is None or not base or not cand:
        return "not measured"
    return verdict(base, cand, floor.floor_pct, higher_is_better=False)


# --- the whole run ---------------------------------------------------------------------------


def tables_in(plans: Sequence[TablesSettings], views: dict[str, CampaignView]) -> list[str]:
    """Which tables to render (by name): the run's --only, else whatever the records hold."""
    if plans:
        return list(plans[0].only)
    found = ["windows"] if any(n.startswith(TABLE1_PREFIX) for n in views) else []
    named = (
        ("wire", WIRE_CAMPAIGN),
        ("starvation", STARVATION_CAMPAIGN),
        ("unary", UNARY_CAMPAIGN),
        ("links", LINKS_CAMPAIGN),
        ("sharing", SHARING_CAMPAIGN),
    )
    uploads = ["uploads"] if any(n.startswith(UPLOAD_PREFIX) for n in views) else []
    return found + [t for t, n in named if n in views] + uploads


@dataclass(frozen=True)
class SessionFacts:
    """What the sessions of a tables run took, and how loaded the machine was."""

    sessions: int
    cells_run: int
    elapsed_s: float
    load_range: tuple[float, float] | None
    other_cores: tuple[float, float] | None  # (median, max) over ok cells
    meta: RunMeta | None


def session_facts(
    sessions: Sequence[SessionRecord], measurements: Sequence[Measurement]
) -> SessionFacts:
    loads = [x for s in sessions for x in s.load_1min if x is not None]
    others = sorted(other_cores(m) for m in measurements if m.ok and m.meta.machine is not None)
    return SessionFacts(
        sessions=len(sessions),
        cells_run=sum(s.cells_run for s in sessions),
        elapsed_s=sum(s.elapsed_s for s in sessions),
        load_range=(min(loads), max(loads)) if loads else None,
        other_cores=(statistics.median(others), others[-1]) if others else None,
        meta=measurements[0].meta if measurements else None,
    )
