"""Pure: the figures and checks of table 9 (the receive-window policies side by side).

Part A: every policy on each link, one and four streams, cold, with the estimator table's
figures (``kit.analysis.link``) and the peak memory the receiver committed: the stream
credit it had granted and the sender had not yet used, summed over the connection's
streams, as the frame tap saw it. The real stacks sit beside the models of their policies
(model / real). Part B: the sharing table's slow-reader case under every policy.

Checks: no policy carries more than a link's rate; each model with a real stack here
(grpc-go's, grpc-java's, hyper's) within 0.9-1.1x of it on delivered throughput (the link's,
from its first byte) and 0.7-1.3x on the final window / BDP on every link ("not decided"
when the cells' noise is wider).
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, Metric, median_of, throughput
from kit.analysis.link import delivered_mib_s, ramp_ms, window_over_bdp
from kit.analysis.tables.checks import Bar, Judged, judged_bar, ratio_figure, unless_cpu_limited
from kit.analysis.tables.links import RATE_CEILING, rate_ceiling
from kit.analysis.tables.sharing import SharingRow
from kit.plan.tables.policies import (
    MODEL_OF,
    POLICIES_LINKS_CAMPAIGN,
    POLICIES_SHARING_CAMPAIGN,
    POLICY_LINK_CASES,
    POLICY_NAMES,
    STREAM_COUNTS,
    link_key,
    real_key,
    sharing_key,
)
from kit.results.records import Measurement

THROUGHPUT_RANGE = (0.9, 1.1)
WINDOW_RANGE = (0.7, 1.3)


def links_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(POLICIES_LINKS_CAMPAIGN)


def sharing_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(POLICIES_SHARING_CAMPAIGN)


def policies_held(views: dict[str, CampaignView]) -> bool:
    return links_view(views) is not None or sharing_view(views) is not None


def committed_bytes(m: Measurement) -> float | None:
    """The peak credit the receiver had granted and the sender not yet used, summed over
    the first connection's streams (the tap's stream windows; a stream counts from its
    first update; the connection window may have held the sender below it)."""
    if not m.ok or m.frames is None or not m.frames.stream_windows:
        return None
    open_now: dict[int, int] = {}
    peak = 0
    for point in sorted(m.frames.stream_windows, key=lambda p: p.t_ns):
        open_now[point.stream_id] = max(0, point.window_bytes)
        peak = max(peak, sum(open_now.values()))
    return float(peak)


# --- model beside the real stack ---------------------------------------------------------


@dataclass(frozen=True)
class ModelRatio:
    """On one link and stream count: a model over the real stack it models (None: missing)."""

    stack: str
    model: str
    link: str
    streams: int
    throughput: float | None
    final_window: float | None
    ramp: float | None
    model_cell: CellView | None
    real_cell: CellView | None
    delivered: float | None = None  # the link's delivery from its first byte (the check's)

    @property
    def judged(self) -> float | None:
        """The throughput ratio the check judges: delivered (a stack's time to send its
        first request is no window rule: a fresh JVM's first call takes 40-120 ms), else
        the clients' own."""
        return self.delivered if self.delivered is not None else self.throughput


def _ratio(a: CellView | None, b: CellView | None, metric: Metric) -> float | None:
    x, y = median_of(a, metric), median_of(b, metric)
    return x / y if x is not None and y else None


def model_ratios(view: CampaignView) -> list[ModelRatio]:
    out = []
    for stack, model in MODEL_OF.items():
        for case in POLICY_LINK_CASES:
            for streams in STREAM_COUNTS:
                m = view.cell(link_key(case, streams, model))
                r = view.cell(real_key(case, streams, stack))
                if m is None and r is None:
                    continue
                out.append(
                    ModelRatio(
                        stack,
                        model,
                        case.name,
                        streams,
                        _ratio(m, r, throughput),
                        _ratio(m, r, window_over_bdp),
                        _ratio(m, r, ramp_ms),
                        m,
                        r,
                        _ratio(m, r, delivered_mib_s),
                    )
                )
    return out


# --- part B ------------------------------------------------------------------------------


def sharing_rows(view: CampaignView) -> list[SharingRow]:
    rows = []
    for name in POLICY_NAMES:
        slow, fast = view.cell(sharing_key(name, True)), view.cell(sharing_key(name, False))
        if slow is not None or fast is not None:
            rows.append(SharingRow(name, name, slow, fast))
    return rows


# --- checks ------------------------------------------------------------------------------


def policies_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """The table's checks; none when the run did not measure it."""
    if not policies_held(views):
        return []
    name = f"policies: no policy carries more than the rate (steady <= {RATE_CEILING:g})"
    bars = [rate_ceiling(name, links_view(views))]
    return bars + [model_bar(views, stack) for stack in MODEL_OF]


def model_bar(views: dict[str, CampaignView], stack: str) -> Bar:
    """``stack``'s model within 0.9-1.1x of it on delivered throughput, 0.7-1.3x on final
    window/BDP; FAILS only beyond the figures' noise (``kit.analysis.tables.checks.decide``:
    a final window grows in doublings, so one round's window ratio is noisy)."""
    model = MODEL_OF[stack]
    name = (
        f"policies: the {model} model within {THROUGHPUT_RANGE[0]:g}-{THROUGHPUT_RANGE[1]:g}x "
        f"of real {stack} on delivered throughput and "
        f"{WINDOW_RANGE[0]:g}-{WINDOW_RANGE[1]:g}x on final window / BDP, every link"
    )
    view = links_view(views)
    ratios = [r for r in model_ratios(view) if r.stack == stack] if view else []
    measured = [r for r in ratios if r.throughput is not None]
    if view is None or not measured:
        return Bar(name, None, "not measured")
    detail = ", ".join(
        f"{r.link} x{r.streams} {r.judged:.2f}"
        + ("" if r.final_window is None else f"/{r.final_window:.2f}")
        for r in measured
        if r.judged is not None
    )
    bar = judged_bar(name, detail, [f for r in measured for f in _figures(r, view)])
    return unless_cpu_limited(bar, [c for r in measured for c in (r.model_cell, r.real_cell)])


def _figures(r: ModelRatio, view: CampaignView) -> list[Judged]:
    """The ratios a model check judges on one link, each with its noise."""
    cells = (r.model_cell, r.real_cell)
    where = f"{r.link} x{r.streams}"
    out: list[Judged] = []
    if r.judged is not None:
        metric = delivered_mib_s if r.delivered is not None else throughput
        figure = ratio_figure(r.judged, cells, view, metric)
        out.append((f"{where} throughput", figure, THROUGHPUT_RANGE))
    if r.final_window is not None:
        figure = ratio_figure(r.final_window, cells, view, window_over_bdp)
        out.append((f"{where} final window / BDP", figure, WINDOW_RANGE))
    return out
