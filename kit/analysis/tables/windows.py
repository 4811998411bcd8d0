"""Pure: the figures and checks of table 1 (window vs RTT), from a ``kit tables`` run.

The reference row of a cell, the h2 static 4 MiB / 64 KiB window ratio per RTT, and the
reference's row order, which tables 2 and 4 share. Checks: the ratio is large at 20 ms and
far smaller at loopback; h2 static windows deliver window/RTT where the processes allow it.
"""

from __future__ import annotations

from kit.analysis import reference as ref
from kit.analysis.cells import (
    CampaignView,
    CellView,
    efficiency,
    median_of,
    median_ratio,
    throughput,
)
from kit.analysis.tables.checks import (
    Bar,
    cells_interval,
    ratio_interval_of,
    ratio_spread_pct,
    rounds_to_decide,
    settled_ratio,
    unless_cpu_limited,
)
from kit.plan.tables.windows import TABLE1_PREFIX, table1_campaign_name
from kit.plan.units import MIB

RATIO_BAR_20MS = 30.0
LOOPBACK_FRACTION = 1 / 3  # "far smaller": at most a third of the 20 ms ratio
EFFICIENCY_BAR = 0.90
EFFICIENCY_MAX_THEORY_MIB_S = 200.0

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


# --- checks ------------------------------------------------------------------------------------


def _h2_ratio(view: CampaignView | None) -> float | None:
    if view is None:
        return None
    return median_ratio(view.cell("h2-static-4MiB"), view.cell("h2-static-64KiB"))


def ratio_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """The 4 MiB / 64 KiB ratio is large at 20 ms and far smaller at loopback; a ratio that
    misses its bar by less than one round's noise can tell is "not decided", not FAILS."""
    view20, view0 = views.get(table1_campaign_name(20.0)), views.get(table1_campaign_name(0.0))
    at20, loop = _h2_ratio(view20), _h2_ratio(view0)
    floor20, floor0 = _floor(view20), _floor(view0)
    name20 = f"RTT 20 ms: h2 static 4 MiB >= {RATIO_BAR_20MS:g}x 64 KiB"
    if at20 is None:
        bars = [Bar(name20, None, "not measured")]
    else:
        bar = Bar(name20, at20 >= RATIO_BAR_20MS, f"{at20:.1f}x")
        spread = ratio_spread_pct(floor20[0], floor20[0])
        ci = ratio_interval_of(*_h2_cells(view20), throughput, "table1:20ms")
        bars = [settled_ratio(bar, at20, RATIO_BAR_20MS, spread, floor20[1], ci)]
    if loop is None or at20 is None:
        bars.append(Bar("loopback ratio far smaller than at 20 ms", None, "not measured"))
        return bars
    bar = Bar(
        f"loopback ratio far smaller (<= 1/{1 / LOOPBACK_FRACTION:.0f} of 20 ms)",
        loop <= at20 * LOOPBACK_FRACTION,
        f"{loop:.1f}x at loopback vs {at20:.1f}x: {loop / at20:.2f} of it",
    )
    # a ratio of two ratios: four medians, two at each RTT's floor; each RTT's rounds are
    # resampled on their own (two campaigns)
    spread = ratio_spread_pct(floor0[0], floor0[0], floor20[0], floor20[0])
    rounds = min(floor0[1], floor20[1])
    ci = cells_interval(
        [_h2_cells(view0), _h2_cells(view20)],
        throughput,
        lambda m: (m[0] / m[1]) / (m[2] / m[3]),
        "table1:loopback/20ms",
    )
    bars.append(settled_ratio(bar, loop / at20, LOOPBACK_FRACTION, spread, rounds, ci))
    return bars


def _h2_cells(view: CampaignView | None) -> tuple[CellView | None, CellView | None]:
    """The h2 static 4 MiB and 64 KiB cells: the ratio's numerator and denominator."""
    if view is None:
        return None, None
    return view.cell("h2-static-4MiB"), view.cell("h2-static-64KiB")


def _floor(view: CampaignView | None) -> tuple[float | None, int]:
    """(floor %, rounds) of a campaign's throughput, or (None, 1) when it has none."""
    floor = view.floor(throughput) if view is not None else None
    return (None, 1) if floor is None else (floor.floor_pct, floor.rounds)


def efficiency_bar(views: dict[str, CampaignView]) -> Bar:
    name = (
        f"h2 static efficiency >= {EFFICIENCY_BAR:.2f} where window/RTT <= "
        f"{EFFICIENCY_MAX_THEORY_MIB_S:g} MiB/s"
    )
    checked, misses, needed, missed = 0, [], [], []
    for view_name in sorted(views):
        for cell in views[view_name].cells:
            theory = cell.theory_mib_s
            if not cell.key.startswith("h2-static-") or not view_name.startswith(TABLE1_PREFIX):
                continue
            if not theory or theory > EFFICIENCY_MAX_THEORY_MIB_S:
                continue
            eff = efficiency(median_of(cell), theory)
            checked += 1
            if eff is None or eff < EFFICIENCY_BAR:
                cpu = " (CPU-bound)" if cell.cpu_bound_counts() else ""
                shown = "failed" if eff is None else f"{eff:.2f}{_against_ping(cell, eff)}"
                misses.append(f"{view_name} {cell.key}: {shown}{cpu}")
                needed.append(_rounds_to_fail(views[view_name], eff))
                missed.append(cell)
    if checked == 0:
        return Bar(name, None, "not measured")
    detail = "; ".join(misses) if misses else f"all {checked} cells"
    if misses and min(needed) > needed_rounds(views):  # every miss lies within its noise
        rounds = needed_rounds(views)
        shown = f"{rounds} round{'s' if rounds != 1 else ''}; needs {min(needed)}"
        return Bar(name, None, f"{detail}; {shown}", undecided=True)
    return unless_cpu_limited(Bar(name, not misses, detail), missed)


def needed_rounds(views: dict[str, CampaignView]) -> int:
    """The rounds table 1's campaigns ran (their noise floors count them)."""
    floors = [
        f.rounds
        for n, v in views.items()
        if n.startswith(TABLE1_PREFIX)
        if (f := v.floor(throughput)) is not None
    ]
    return min(floors, default=1)


def _rounds_to_fail(view: CampaignView, eff: float | None) -> int:
    """Rounds that tell an efficiency below the bar from the bar at this campaign's floor
    (a failed cell needs none: it failed)."""
    floor = view.floor(throughput)
    if eff is None or floor is None:
        return 1
    return rounds_to_decide((EFFICIENCY_BAR - eff) / EFFICIENCY_BAR * 100, floor.floor_pct)


def _against_ping(cell: CellView, eff: float) -> str:
    """The efficiency against the RTT PINGs saw during the transfer, when it differs from the
    configured one: window / measured RTT is what a window can deliver on this path."""
    seen = cell.median_ping_ms()
    rtt = cell.trial.link.rtt_ms
    if seen is None or rtt <= 0:
        return ""
    return f" ({eff * seen / rtt:.2f} against the {seen:.1f} ms PING RTT)"
