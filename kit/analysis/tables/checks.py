"""Pure: a check against the reference study (a "bar"), as every table evaluates its own.

Each check holds, fails, or is "not measured" (a cell it needs is missing or failed every
round) or "not decided" (measured, but the noise is wider than the check's tolerance); its
figures come from the records, never from typed-in numbers. Each table's module evaluates
its checks, ``kit.analysis.tables.evaluate_bars`` gathers them and
``kit.report.tables.checks`` renders them.

The one rule that decides a FAIL (``decide``): a figure (a median, or a ratio of medians)
carries an interval, from its per-round spread (the rounds' own, or the duplicate control's
floor when wider) and the rounds behind it. The check FAILS only when that interval lies
wholly outside the target range; a figure outside the range whose interval still reaches it
is "not decided", with the rounds that would decide it were the figure to stay where it is.
A figure inside the range holds: each check's range already is its tolerance. A failure on
runs most of which had no core to spare is "not decided" as well (``unless_cpu_limited``):
it measures the machine, not the rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from kit.analysis.cells import CampaignView, CellView, Metric, cpu_limit
from kit.analysis.stats import DEFAULT_Z, MEDIAN_SE_FACTOR, relative_sigma_pct

# A figure on its bar is never decided by rounds; say "needs 50+" rather than infinity.
MAX_ROUNDS_TO_DECIDE = 50


@dataclass(frozen=True)
class Bar:
    name: str
    holds: bool | None  # None: not measured (or not decided)
    detail: str
    undecided: bool = False  # measured, but noisier than the check's tolerance


# --- the rule ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A measured figure with its noise: ``spread_pct`` is the relative spread of one
    round's value (None: unknown, no rounds' spread and no control floor), ``rounds`` how
    many rounds its median is taken over."""

    value: float
    spread_pct: float | None
    rounds: int

    @property
    def half_width_pct(self) -> float | None:
        """The interval's half-width in % of the figure (None: the spread is unknown)."""
        if self.spread_pct is None:
            return None
        return half_width_pct(self.spread_pct, self.rounds)

    @property
    def interval(self) -> tuple[float, float] | None:
        half = self.half_width_pct
        if half is None:
            return None
        return self.value * (1 - half / 100), self.value * (1 + half / 100)


def half_width_pct(spread_pct: float, rounds: int) -> float:
    """The interval around a median of ``rounds`` rounds at a per-round spread (max - min
    over a few samples, about two sigma) of ``spread_pct``: z x 1.2533 x sigma / sqrt(n),
    the sizing of ``kit.analysis.stats.repeats_needed`` (z = 2.8)."""
    sigma = relative_sigma_pct(spread_pct)
    return DEFAULT_Z * MEDIAN_SE_FACTOR * sigma / math.sqrt(max(1, rounds))


def rounds_needed(margin_pct: float, spread_pct: float) -> int:
    """The rounds whose interval is no wider than ``margin_pct`` (the figure's distance from
    its range, in % of the figure) at this per-round spread; capped at 50 ("needs 50+")."""
    if spread_pct <= 0:
        return 1
    if margin_pct <= 0:
        return MAX_ROUNDS_TO_DECIDE
    needed = (DEFAULT_Z * MEDIAN_SE_FACTOR * relative_sigma_pct(spread_pct) / margin_pct) ** 2
    return min(MAX_ROUNDS_TO_DECIDE, max(1, math.ceil(needed - 1e-9)))


Verdict = Literal["inside", "outside", "not decided"]


@dataclass(frozen=True)
class Decision:
    """What one figure says against its target range: ``inside`` it, decidedly ``outside``
    it (its whole interval), or ``not decided`` (outside, but within its noise of the range:
    ``needs`` rounds would decide it; None: its noise is unknown)."""

    verdict: Verdict
    needs: int | None = None

    @property
    def rounds_text(self) -> str:
        """The rounds it needs, as printed: "needs 12 rounds", "needs 50+ rounds", "no noise
        floor to judge it by"."""
        if self.needs is None:
            return "no noise floor to judge it by"
        more = "+" if self.needs >= MAX_ROUNDS_TO_DECIDE else ""
        return f"needs {self.needs}{more} rounds"


def decide(figure: Figure, target: tuple[float, float]) -> Decision:
    """The rule: outside ``target`` (low, high) only when the figure's whole interval is."""
    low, high = target
    value = figure.value
    if low <= value <= high:
        return Decision("inside")
    if figure.spread_pct is None or value == 0:
        return Decision("not decided")
    edge = low if value < low else high
    needs = rounds_needed(abs(value - edge) / abs(value) * 100, figure.spread_pct)
    # the interval at ``rounds`` clears the range exactly when ``rounds >= needs``
    return Decision("outside") if figure.rounds >= needs else Decision("not decided", needs)


def spread_of(own_pct: float | None, floor_pct: float | None) -> float | None:
    """A figure's per-round spread: the wider of its rounds' own spread (None with one
    round) and the duplicate control's floor (None without one)."""
    known = [s for s in (own_pct, floor_pct) if s is not None]
    return max(known) if known else None


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
    check's own tolerance (the floor, a range) already makes "holds" the cautious call."""
    if bar.holds is not False or spread_pct is None:
        return bar
    needed = rounds_to_decide(abs(margin_pct), spread_pct)
    if rounds >= needed:
        return bar
    shown = f"{rounds} round{'s' if rounds != 1 else ''}; needs {needed}"
    more = "+" if needed == MAX_ROUNDS_TO_DECIDE else ""
    return Bar(bar.name, None, f"{bar.detail}; {shown}{more}", undecided=True)


def ratio_spread_pct(*floors_pct: float | None) -> float | None:
    """The spread of a ratio of medians, each carrying a noise floor: the floors add in
    quadrature (two cells at a 5% floor: a ratio at 7.1%). None when a floor is unknown."""
    if not floors_pct or any(f is None for f in floors_pct):
        return None
    return math.sqrt(sum((f or 0.0) ** 2 for f in floors_pct))


def settled_ratio(
    bar: Bar, ratio: float, bound: float, spread_pct: float | None, rounds: int
) -> Bar:
    """``settled`` for a ratio against its bound (``ratio >= bound`` or ``<=``, whichever the
    bar asks): the margin is how far, in percent of the bound, the ratio lies from it."""
    if bound <= 0:
        return bar
    return settled(bar, abs(ratio / bound - 1) * 100, spread_pct, rounds)


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
    return Figure(value, spread, max(1, min(cell_rounds(c) for c in cells)))


Judged = tuple[str, Figure, tuple[float, float]]  # (what, the figure, its target range)


def judged_bar(name: str, detail: str, figures: Sequence[Judged]) -> Bar:
    """A check over several figures, each against its range (``decide``): FAILS when one
    lies outside beyond its noise; else "not decided" when one lies outside within it (the
    nearest to deciding named, with the rounds it needs); else holds."""
    decided = [(what, f, t, decide(f, t)) for what, f, t in figures]
    outside = [(w, f, t) for w, f, t, d in decided if d.verdict == "outside"]
    if outside:
        w, f, t = outside[0]
        return Bar(name, False, f"{detail}; {w} {_noisy(f)} lies outside {t[0]:g}-{t[1]:g}")
    open_ = [(w, f, d) for w, f, _, d in decided if d.verdict == "not decided"]
    if not open_:
        return Bar(name, True, detail)
    w, f, d = min(open_, key=lambda x: x[2].needs or MAX_ROUNDS_TO_DECIDE + 1)
    rounds = f"{f.rounds} round{'s' if f.rounds != 1 else ''}"
    return Bar(name, None, f"{detail}; {w} {_noisy(f)}: {rounds}, {d.rounds_text}", undecided=True)


def _noisy(figure: Figure) -> str:
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
    return Bar(bar.name, None, f"{bar.detail}; {why}", undecided=True)
