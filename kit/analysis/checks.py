"""Pure: the checks against the reference study, evaluated from the records.

Each check (a "bar") holds, fails, or is "not measured" (a cell it needs is missing or
failed every round); its figures come from the records, never from typed-in numbers.
``kit.report.checks`` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.analysis.cells import (
    CampaignView,
    CellView,
    efficiency,
    mean_latency_ms,
    median_of,
    median_ratio,
)
from kit.analysis.link import rate_fraction, steady_fraction
from kit.analysis.sharing import conn_window_opened, pool_rows, sharing_rows
from kit.analysis.stats import verdict
from kit.analysis.upload_table import upload_views, window_effects
from kit.plan.links import BAR_CASE, ESTIMATORS, LINKS_CAMPAIGN, cell_key
from kit.plan.tables import SHARING_CAMPAIGN
from kit.plan.upload_table import HAPROXY_RTT_MS, SMALL_SERVER_KEY, UPLOAD_CONTROL

RATIO_BAR_20MS = 30.0
LOOPBACK_FRACTION = 1 / 3  # "far smaller": at most a third of the 20 ms ratio
STARVATION_BAR = 10.0
UNARY_MIN_PCT = 5.0
EFFICIENCY_BAR = 0.90
EFFICIENCY_MAX_THEORY_MIB_S = 200.0
# Uploads at 103 ms, h2 client: server window 4 MiB vs 64 KiB. window/RTT says 64x; C-core's
# extra credit of up to one 256 KiB message lifts "64 KiB" to ~256 KiB, so ~16x is expected
# (HAProxy, real TCP: 50x). The bar asks for half of that.
UPLOAD_SERVER_BAR = 8.0


@dataclass(frozen=True)
class Bar:
    name: str
    holds: bool | None  # None: not measured
    detail: str


def _h2_ratio(view: CampaignView | None) -> float | None:
    if view is None:
        return None
    return median_ratio(view.cell("h2-static-4MiB"), view.cell("h2-static-64KiB"))


def ratio_bars(views: dict[str, CampaignView]) -> list[Bar]:
    at20 = _h2_ratio(views.get("table1-rtt20ms"))
    loop = _h2_ratio(views.get("table1-loopback"))
    bars = [
        Bar(
            f"RTT 20 ms: h2 static 4 MiB >= {RATIO_BAR_20MS:g}x 64 KiB",
            None if at20 is None else at20 >= RATIO_BAR_20MS,
            "not measured" if at20 is None else f"{at20:.1f}x",
        )
    ]
    if loop is None or at20 is None:
        bars.append(Bar("loopback ratio far smaller than at 20 ms", None, "not measured"))
    else:
        bars.append(
            Bar(
                f"loopback ratio far smaller (<= 1/{1 / LOOPBACK_FRACTION:.0f} of 20 ms)",
                loop <= at20 * LOOPBACK_FRACTION,
                f"{loop:.1f}x at loopback vs {at20:.1f}x",
            )
        )
    return bars


def starvation_bar(views: dict[str, CampaignView]) -> Bar:
    view = views.get("table3-starvation")
    slow = median_of(view.cell("h2-conn-64KiB")) if view else None
    fast = median_of(view.cell("h2-conn-4MiB")) if view else None
    name = f"starvation: conn window 64 KiB >= {STARVATION_BAR:g}x slower than 4 MiB"
    if slow is None or fast is None or slow <= 0:
        return Bar(name, None, "not measured")
    ratio = fast / slow
    return Bar(name, ratio >= STARVATION_BAR, f"{ratio:.1f}x")


def unary_bar(views: dict[str, CampaignView]) -> Bar:
    """Each static 64 KiB row against the same client's dynamic row (the window effect)."""
    name = f"unary: window differences < max(noise floor, {UNARY_MIN_PCT:g}%)"
    view = views.get("table4-unary")
    floor = view.floor(mean_latency_ms) if view else None
    if view is None or floor is None:
        return Bar(name, None, "not measured (no noise floor)")
    limit = max(floor.floor_pct, UNARY_MIN_PCT)
    changes, missing = {}, []
    for cell in (c for c in view.cells if c.trial.client.window_mode == "static"):
        base = view.dynamic_of(cell)
        base_values = base.values(mean_latency_ms) if base else []
        values = cell.values(mean_latency_ms)
        if not base_values or not values or base is None:
            missing.append(cell.key)
            continue
        change = verdict(base_values, values, floor.floor_pct, higher_is_better=False).change_pct
        changes[f"{cell.key} vs {base.key}"] = change
    if missing or not changes:
        return Bar(name, None, f"not measured: {', '.join(missing) or 'no static rows'}")
    details = ", ".join(f"{k} {v:+.1f}%" for k, v in changes.items())
    holds = all(abs(v) < limit for v in changes.values())
    return Bar(name, holds, f"{details} (limit ±{limit:.1f}%)")


def efficiency_bar(views: dict[str, CampaignView]) -> Bar:
    name = (
        f"h2 static efficiency >= {EFFICIENCY_BAR:.2f} where window/RTT <= "
        f"{EFFICIENCY_MAX_THEORY_MIB_S:g} MiB/s"
    )
    checked, misses = 0, []
    for view_name in sorted(views):
        for cell in views[view_name].cells:
            theory = cell.theory_mib_s
            if not cell.key.startswith("h2-static-") or not view_name.startswith("table1-"):
                continue
            if not theory or theory > EFFICIENCY_MAX_THEORY_MIB_S:
                continue
            eff = efficiency(median_of(cell), theory)
            checked += 1
            if eff is None or eff < EFFICIENCY_BAR:
                cpu = " (CPU-bound)" if cell.cpu_bound_counts() else ""
                shown = "failed" if eff is None else f"{eff:.2f}{_against_ping(cell, eff)}"
                misses.append(f"{view_name} {cell.key}: {shown}{cpu}")
    if checked == 0:
        return Bar(name, None, "not measured")
    detail = "; ".join(misses) if misses else f"all {checked} cells"
    return Bar(name, not misses, detail)


def _against_ping(cell: CellView, eff: float) -> str:
    """The efficiency against the RTT PINGs saw during the transfer, when it differs from the
    configured one: window / measured RTT is what a window can deliver on this path."""
    seen = cell.median_ping_ms()
    rtt = cell.trial.link.rtt_ms
    if seen is None or rtt <= 0:
        return ""
    return f" ({eff * seen / rtt:.2f} against the {seen:.1f} ms PING RTT)"


def upload_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """The server's window governs uploads (>= 8x from 64 KiB to 4 MiB at 103 ms); the
    client's own receive window does not (64 KiB vs 16 MiB within noise)."""
    at103 = next(
        (v for v in upload_views(views) if v.cells[0].trial.link.rtt_ms == HAPROXY_RTT_MS), None
    )
    if at103 is None:
        return []
    ratio = median_ratio(at103.cell(UPLOAD_CONTROL), at103.cell(SMALL_SERVER_KEY))
    bars = [
        Bar(
            f"uploads at 103 ms: server window 4 MiB >= {UPLOAD_SERVER_BAR:g}x 64 KiB (h2)",
            None if ratio is None else ratio >= UPLOAD_SERVER_BAR,
            "not measured" if ratio is None else f"{ratio:.1f}x",
        )
    ]
    client, server = window_effects(at103)
    name = "uploads: the client's receive window is within noise, the server's is not"
    if client.result is None or server.result is None:
        bars.append(Bar(name, None, "not measured (a cell or the noise floor is missing)"))
    else:
        holds = not client.result.significant and server.result.significant
        detail = f"client: {client.result.describe()}; server: {server.result.describe()}"
        bars.append(Bar(name, holds, detail))
    return bars


ESTIMATOR_BAR = 0.8
RATE_CEILING = 1.02  # a link never carries more than its rate (+2%: the trace's buckets)


def estimator_bar(views: dict[str, CampaignView]) -> Bar:
    """Both estimators carry >= 0.8 of the rate over the bar link's whole timed phase."""
    name = (
        f"links: both estimators carry >= {ESTIMATOR_BAR:g} of the rate on {BAR_CASE.name} "
        f"over {BAR_CASE.duration_s:g} s"
    )
    view = views.get(LINKS_CAMPAIGN)
    found = {}
    for key, _client in ESTIMATORS:
        cell = view.cell(cell_key(BAR_CASE, key)) if view else None
        found[key] = median_of(cell, rate_fraction)
    if any(v is None for v in found.values()):
        return Bar(name, None, "not measured")
    detail = ", ".join(f"{k} {v:.2f}" for k, v in found.items() if v is not None)
    return Bar(name, all(v is not None and v >= ESTIMATOR_BAR for v in found.values()), detail)


def rate_ceiling_bar(views: dict[str, CampaignView]) -> Bar:
    """No cell of the estimator table delivered more than the link's rate."""
    name = f"links: no window carries more than the rate (steady <= {RATE_CEILING:g} x rate)"
    view = views.get(LINKS_CAMPAIGN)
    fractions = {c.key: median_of(c, steady_fraction) for c in view.cells} if view else {}
    measured = {k: v for k, v in fractions.items() if v is not None}
    if not measured:
        return Bar(name, None, "not measured")
    over = [f"{k} {v:.3f}" for k, v in measured.items() if v > RATE_CEILING]
    top = max(measured.values())
    return Bar(name, not over, "; ".join(over) or f"highest {top:.3f} of {len(measured)} cells")


def evaluate_bars(views: dict[str, CampaignView]) -> list[Bar]:
    bars = [*ratio_bars(views), starvation_bar(views), unary_bar(views), efficiency_bar(views)]
    bars += upload_bars(views)
    if LINKS_CAMPAIGN in views:
        bars += [estimator_bar(views), rate_ceiling_bar(views)]
    bars += sharing_bars(views)
    return bars


# --- the sharing table -------------------------------------------------------------------------

READ_CREDIT_MAX_RATIO = 0.5
SHARING_MIN_RATIO = 0.8
POOL_WINDOW_TOLERANCE = 0.25
POOL_BAR_STREAMS = 8


def sharing_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """Head-of-line blocking shown with read credit; not with receipt credit nor the pool;
    the pool's 8 shares as expected, its connection window never binding."""
    view = views.get(SHARING_CAMPAIGN)
    if view is None:
        return []  # the table was not run (older records hold no such campaign)
    rows = {r.key: r for r in sharing_rows(view)}
    bars = []
    for key, bound, above in (
        ("read-4MiB", READ_CREDIT_MAX_RATIO, False),
        ("receipt-4MiB", SHARING_MIN_RATIO, True),
        ("pool", SHARING_MIN_RATIO, True),
    ):
        row = rows.get(key)
        ratio = row.ratio if row else None
        sign = ">=" if above else "<="
        name = (
            f"sharing: {key} fast stream beside a slow reader {sign} {bound:g}x beside a fast one"
        )
        holds = None if ratio is None else (ratio >= bound if above else ratio <= bound)
        bars.append(Bar(name, holds, "not measured" if ratio is None else f"{ratio:.2f}x"))
    bars.append(_pool_share_bar(view))
    return bars


def _pool_share_bar(view: CampaignView) -> Bar:
    name = (
        f"sharing: pool with {POOL_BAR_STREAMS} streams, every window within "
        f"{POOL_WINDOW_TOLERANCE:.0%} of its share, connection window never binds"
    )
    row = (
        next((r for r in pool_rows(view) if r.streams == POOL_BAR_STREAMS), None) if view else None
    )
    errors = row.window_errors() if row else []
    opened = conn_window_opened(row.cell) if row else None
    if row is None or not errors or opened is None:
        return Bar(name, None, "not measured")
    worst = max(abs(e) for e in errors)
    aggregate = median_of(row.cell)
    binds = aggregate is not None and aggregate > row.bound_mib_s * 1.05
    holds = worst <= POOL_WINDOW_TOLERANCE and opened and not binds
    detail = (
        f"worst window {worst:.0%} off {row.expected_share_bytes} B over {len(errors)} windows; "
        f"connection window {'opened to 2^31-1' if opened else 'NOT opened'}"
    )
    return Bar(name, holds, detail)
