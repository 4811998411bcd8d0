"""Pure: the checks of table 6 (each BDP estimator against the link's bandwidth x RTT).

The per-cell figures are a link's (``kit.analysis.link``, shared with ``kit run``): rate
fraction, ramp, steady state. Checks: both estimators carry >= 0.8 of the rate on the bar
link over its whole timed phase, and no cell carries more than the link's rate.
"""

from __future__ import annotations

from kit.analysis.cells import CampaignView, median_of
from kit.analysis.link import rate_fraction, steady_fraction
from kit.analysis.tables.checks import Bar
from kit.plan.tables.links import BAR_CASE, ESTIMATORS, LINKS_CAMPAIGN, cell_key

ESTIMATOR_BAR = 0.8
RATE_CEILING = 1.02  # a link never carries more than its rate (+2%: the trace's buckets)


def links_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(LINKS_CAMPAIGN)


def links_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """The table's checks; none when the run did not measure it."""
    if links_view(views) is None:
        return []
    return [estimator_bar(views), rate_ceiling_bar(views)]


def estimator_bar(views: dict[str, CampaignView]) -> Bar:
    """Both estimators carry >= 0.8 of the rate over the bar link's whole timed phase."""
    name = (
        f"links: both estimators carry >= {ESTIMATOR_BAR:g} of the rate on {BAR_CASE.name} "
        f"over {BAR_CASE.duration_s:g} s"
    )
    view = links_view(views)
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
    return rate_ceiling(name, links_view(views))


def rate_ceiling(name: str, view: CampaignView | None) -> Bar:
    """No cell of ``view`` delivered more than its link's rate (steady / rate, medians)."""
    fractions = {c.key: median_of(c, steady_fraction) for c in view.cells} if view else {}
    measured = {k: v for k, v in fractions.items() if v is not None}
    if not measured:
        return Bar(name, None, "not measured")
    over = [f"{k} {v:.3f}" for k, v in measured.items() if v > RATE_CEILING]
    top = max(measured.values())
    return Bar(name, not over, "; ".join(over) or f"highest {top:.3f} of {len(measured)} cells")
