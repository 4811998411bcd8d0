"""Pure: the figures, verdicts and check of table 4 (small unary calls and the window).

Per cell: pooled latency percentiles, and verdicts on the mean latency per call against the
same client's dynamic window (the window effect) and against grpcio dynamic (the
reference's baseline). Check: every window effect stays within max(noise floor, 5%).
"""

from __future__ import annotations

from typing import Literal

from kit.analysis.cells import CampaignView, CellView, mean_latency_ms
from kit.analysis.stats import Verdict, verdict
from kit.analysis.tables.checks import Bar, by_round, settled, unless_cpu_limited
from kit.analysis.tables.windows import row_order
from kit.plan.tables.unary import UNARY_CAMPAIGN
from kit.quantile import percentile

UNARY_MIN_PCT = 5.0


def unary_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(UNARY_CAMPAIGN)


def unary_rows(view: CampaignView) -> list[CellView]:
    """The cells in the reference's row order (table 1's)."""
    return sorted(view.cells, key=row_order)


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
    base, cand = by_round(baseline, mean_latency_ms), by_round(cell, mean_latency_ms)
    if floor is None or not base or not cand:
        return "not measured"
    seed = f"unary:{cell.key}:{baseline.key}"
    return verdict(base, cand, floor.floor_pct, higher_is_better=False, seed=seed)


def unary_bar(views: dict[str, CampaignView]) -> Bar:
    """Each static 64 KiB row against the same client's dynamic row (the window effect)."""
    name = f"unary: window differences < max(noise floor, {UNARY_MIN_PCT:g}%)"
    view = unary_view(views)
    floor = view.floor(mean_latency_ms) if view else None
    if view is None or floor is None:
        return Bar(name, None, "not measured (no noise floor)")
    limit = max(floor.floor_pct, UNARY_MIN_PCT)
    changes, missing, compared = {}, [], []
    for cell in (c for c in view.cells if c.trial.client.window_mode == "static"):
        base = view.dynamic_of(cell)
        base_values = base.values(mean_latency_ms) if base else []
        values = cell.values(mean_latency_ms)
        if not base_values or not values or base is None:
            missing.append(cell.key)
            continue
        change = verdict(base_values, values, floor.floor_pct, higher_is_better=False).change_pct
        changes[f"{cell.key} vs {base.key}"] = change
        if abs(change) >= limit:
            compared += [cell, base]
    if missing or not changes:
        return Bar(name, None, f"not measured: {', '.join(missing) or 'no static rows'}")
    details = ", ".join(f"{k} {v:+.1f}%" for k, v in changes.items())
    holds = all(abs(v) < limit for v in changes.values())
    worst = max(abs(v) for v in changes.values())
    bar = Bar(name, holds, f"{details} (limit ±{limit:.1f}%)")
    return unless_cpu_limited(settled(bar, worst - limit, floor.floor_pct, floor.rounds), compared)
