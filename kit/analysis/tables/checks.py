"""Pure: a check against the reference study (a "bar"), as every table evaluates its own.

Each check holds, fails, or is "not measured" (a cell it needs is missing or failed every
round) or "not decided" (measured, but the noise is wider than the check's tolerance); its
figures come from the records, never from typed-in numbers. Each table's module evaluates
its checks, ``kit.analysis.tables.evaluate_bars`` gathers them and
``kit.report.tables.checks`` renders them.

The one rule that decides a FAIL (``decide``, in ``kit.analysis.stats`` with the verdicts of
``kit compare``, and re-exported here): a figure (a median, or a ratio of medians) carries
an interval: its 95% bootstrap interval over rounds (from 3 rounds on), widened to the one
its per-round spread gives (the rounds' own, or the duplicate control's floor when wider)
over the rounds behind it. The check FAILS only when that interval lies wholly outside the
target range; a figure outside the range whose interval still reaches it is "not decided",
with the rounds that would decide it were the figure to stay where it is.
A figure inside the range holds: each check's range already is its tolerance. A failure on
runs most of which had no core to spare is "not decided" as well (``unless_cpu_limited``):
it measures the machine, not the rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, Metric, cpu_limit
from kit.analysis.stats import (
    MAX_ROUNDS_TO_DECIDE,
    ByRound,
    ConfidenceInterval,
    Decision,
    Figure,
    decide,
    half_width_pct,
    medians_interval,
    rounds_needed,
)

__all__ = [
    "MAX_ROUNDS_TO_DECIDE",
    "Bar",
    "Decision",
    "Figure",
    "decide",
    "half_width_pct",
    "rounds_needed",
]


@dataclass(frozen=True)
class Bar:
    name: str
    holds: bool | None  # None: not measured (or not decided)
    detail: str
    undecided: bool = False  # measured, but noisier than the check's tolerance
    # The figure the check turned on and its 95% bootstrap interval (None: fewer than 3
    # rounds, or a check that is not a ratio of medians).
    value: float | None = None
    ci: ConfidenceInterval | None = None


# --- the rule lives in ``kit.analysis.stats.decide``; what the tables add to it -------------


def spread_of(own_pct: float | None, floor_pct: float | None) -> float | None:
    """A figure's per-round spread: the wider of its rounds' own spread (None with one
    round) and the duplicate control's floor (None without one). None too when both are 0:
    identical samples of a figure that moves in steps (a final window grows in doublings)
    say nothing of its noise, and a 0% spread would decide it from one round."""
    known = [s for s in (own_pct, floor_pct) if s is not None]
    return max(known) if known and max(known) > 0 else None


# --- the helpers the tables use ------------------------------------------------------------


def rounds_to_decide(margin_pct: float, spread_pct: float) -> int:
    """Rounds whose median tells a figure ``margin_pct`` away from its bar apart, when the
    figure is made of two medians each at a per-round spread (the noise floor) of
    ``spread_pct``: ``rounds_needed`` at their spreads in quadrature (one round decides a
    figure far from its bar)."""
    return rounds_needed(margin_pct, math.sqrt(2) * spread_pct)


def settled(bar: Bar, margin_pct: float, spread_pct: float | None, rounds: int) -> Bar:
    """A failing ``bar`` as decided, or "not decided (1 round; needs N)" when its figure lies
    closer to the bar than ``rounds`` rounds at this spread can tell: a quick run's single
    round must not print FAILS for what noise alone could flip. A holding bar stays: each
    check's own tolerance (the floor, a range) already makes "holds" the cautious call.
    The figure is ``margin_pct`` beyond its bar, judged by ``decide`` (two medians at
    ``spread_pct`` each)."""
    if bar.holds is not False or spread_pct is None:
        return bar
    figure = Figure(1.0, math.sqrt(2) * spread_pct, rounds)
    return _judged_failure(bar, decide(figure, (-math.inf, 1 - abs(margin_pct) / 100)), rounds)


def _judged_failure(bar: Bar, decision: Decision, rounds: int) -> Bar:
    """A failing bar kept when ``decision`` says outside, else "not decided (N rounds; needs
    M)"."""
    if decision.verdict != "not decided":
        return bar
    needed = decision.needs or MAX_ROUNDS_TO_DECIDE
    shown = f"{rounds} round{'s' if rounds != 1 else ''}; needs {needed}"
    more = "+" if needed == MAX_ROUNDS_TO_DECIDE else ""
    return Bar(bar.name, None, f"{bar.detail}; {shown}{more}", True, value=bar.value, ci=bar.ci)


def ratio_spread_pct(*floors_pct: float | None) -> float | None:
    """The spread of a ratio of medians, each carrying a noise floor: the floors add in
    quadrature (two cells at a 5% floor: a ratio at 7.1%). None when a floor is unknown."""
    if not floors_pct or any(f is None for f in floors_pct):
        return None
    return math.sqrt(sum((f or 0.0) ** 2 for f in floors_pct))


def settled_ratio(
    bar: Bar,
    ratio: float,
    bound: float,
    spread_pct: float | None,
    rounds: int,
    ci: ConfidenceInterval | None = None,
) -> Bar:
    """``settled`` for a ratio against its bound (``ratio >= bound`` or ``<=``, whichever the
    bar asks), by ``decide``: the ratio's interval is the wider of its bootstrap interval
    over rounds (``ci``) and the one ``spread_pct`` gives over ``rounds``. The bar carries
    the ratio and its interval, also when it holds."""
    spread = None if spread_pct is None else math.sqrt(2) * spread_pct
    figure = Figure(ratio, spread, rounds, ci)
    shown = figure.shown
    detail = bar.detail if shown is None else f"{bar.detail} {shown.text()}"
    bar = Bar(bar.name, bar.holds, detail, bar.undecided, ratio, shown)
    if bar.holds is not False or bound <= 0 or (spread_pct is None and ci is None):
        return bar
    target = (bound, math.inf) if ratio < bound else (-math.inf, bound)
    return _judged_failure(bar, decide(figure, target), rounds)


# --- intervals of the cells' medians ---------------------------------------------------------


def by_round(cell: CellView | None, metric: Metric) -> dict[int, list[float]]:
    """A cell's ``metric`` per round (the control's copies together)."""
    out: dict[int, list[float]] = {}
    for m in cell.ok if cell is not None else ():
        value = metric(m)
        if value is not None:
            out.setdefault(m.tags.round, []).append(value)
    return out


def cells_interval(
    groups: Sequence[Sequence[CellView | None]],
    metric: Metric,
    combine: Callable[[Sequence[float]], float],
    seed: str,
) -> ConfidenceInterval | None:
    """The bootstrap interval of ``combine(the cells' medians)``: each group's cells are
    measured in the same rounds (one campaign) and resampled by round together."""
    samples: list[list[ByRound]] = [[by_round(c, metric) for c in group] for group in groups]
    return medians_interval(samples, combine, seed)


def ratio_interval_of(
    num: CellView | None, den: CellView | None, metric: Metric, seed: str = ""
) -> ConfidenceInterval | None:
    """median(num) / median(den)'s bootstrap interval over their common rounds."""
    name = seed or f"{num.key if num else '-'}/{den.key if den else '-'}"
    return cells_interval([[num, den]], metric, lambda m: m[0] / m[1], name)


# --- a check's figures judged by the rule --------------------------------------------------


def cell_rounds(cell: CellView | None) -> int:
    """The rounds a cell has a result in (0: none)."""
    return len({m.tags.round for m in cell.ok}) if cell is not None else 0


def cell_spread_pct(cell: CellView | None, view: CampaignView, metric: Metric) -> float | None:
    """One round's spread of a cell's ``metric``: its own samples' (max - min) / median when
    it has several, or the campaign's duplicate-control floor of that metric, whichever is
    wider (None: neither)."""
    summary = cell.summary(metric) if cell is not None else None
    own = summary.spread_pct if summary is not None and summary.n > 1 else None
    floor = view.floor(metric)
    return spread_of(own, floor.floor_pct if floor is not None else None)


def ratio_figure(
    value: float, cells: Sequence[CellView | None], view: CampaignView, metric: Metric
) -> Figure:
    """A ratio of the medians of ``cells`` with its noise: their spreads in quadrature, over
    the fewest rounds any of them has."""
    spread = ratio_spread_pct(*(cell_spread_pct(c, view, metric) for c in cells))
    ci = ratio_interval_of(cells[0], cells[1], metric) if len(cells) == 2 else None
    return Figure(value, spread, max(1, min(cell_rounds(c) for c in cells)), ci)


Judged = tuple[str, Figure, tuple[float, float]]  # (what, the figure, its target range)


def judged_bar(name: str, detail: str, figures: Sequence[Judged]) -> Bar:
    """A check over several figures, each against its range (``decide``): FAILS when one
    lies outside beyond its noise; else "not decided" when one lies outside within it (the
    nearest to deciding named, with the rounds it needs); else holds."""
    decided = [(what, f, t, decide(f, t)) for what, f, t in figures]
    outside = [(w, f, t) for w, f, t, d in decided if d.verdict == "outside"]
    if outside:
        w, f, t = outside[0]
        text = f"{detail}; {w} {_noisy(f)} lies outside {t[0]:g}-{t[1]:g}"
        return Bar(name, False, text, value=f.value, ci=f.shown)
    open_ = [(w, f, d) for w, f, _, d in decided if d.verdict == "not decided"]
    if not open_:
        nearest = min(figures, key=lambda x: _closeness(x[1], x[2]))[1] if figures else None
        shown = _ci(nearest)
        if shown is not None and len(figures) == 1:  # one figure: its interval beside it
            detail = f"{detail} {shown.text()}"
        return Bar(name, True, detail, value=_value(nearest), ci=shown)
    w, f, d = min(open_, key=lambda x: x[2].needs or MAX_ROUNDS_TO_DECIDE + 1)
    rounds = f"{f.rounds} round{'s' if f.rounds != 1 else ''}"
    text = f"{detail}; {w} {_noisy(f)}: {rounds}, {d.rounds_text}"
    return Bar(name, None, text, undecided=True, value=f.value, ci=f.shown)


def _closeness(figure: Figure, target: tuple[float, float]) -> float:
    """How far inside its range a figure lies (relative): the nearest to an edge first."""
    low, high = target
    return min(abs(figure.value - low), abs(high - figure.value)) / max(abs(figure.value), 1e-12)


def _value(figure: Figure | None) -> float | None:
    return None if figure is None else figure.value


def _ci(figure: Figure | None) -> ConfidenceInterval | None:
    return None if figure is None else figure.shown


def _noisy(figure: Figure) -> str:
    """The figure and the interval it was judged by: "0.60 [0.42, 0.78]" (the bootstrap's,
    widened to the spread's); with fewer than 3 rounds the spread's half-width, "0.60 ±30%"
    (no confidence interval from so few rounds); "0.60" without either."""
    shown = figure.shown
    if shown is not None:
        return f"{figure.value:.2f} {shown.text()}"
    half = figure.half_width_pct
    return f"{figure.value:.2f}" + ("" if half is None else f" ±{half:.0f}%")


def unless_cpu_limited(bar: Bar, cells: Sequence[CellView | None]) -> Bar:
    """A failing ``bar`` as decided, or "not decided" when at least half of the runs of the
    cells it failed on had no core to spare (a process near a full core, or the machine
    saturated: ``kit.analysis.cells.cpu_limit``): such a figure measures the machine, not
    the rule the check is about (the model checks' "CPU-limited" verdict)."""
    if bar.holds is not False:
        return bar
    runs = [m for c in cells if c is not None for m in c.ok]
    limited = sum(1 for m in runs if cpu_limit(m) is not None)
    if not runs or 2 * limited < len(runs):
        return bar
    why = f"CPU-limited: {limited} of {len(runs)} runs had no core to spare"
    return Bar(bar.name, None, f"{bar.detail}; {why}", True, value=bar.value, ci=bar.ci)
