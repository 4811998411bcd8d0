"""Pure: a check against the reference study (a "bar"), as every table evaluates its own.

Each check holds, fails, or is "not measured" (a cell it needs is missing or failed every
round) or "not decided" (measured, but the noise is wider than the check's tolerance); its figures come from the records, never from typed-in numbers. Each table's module
evaluates its checks, ``kit.analysis.tables.evaluate_bars`` gathers them and
``kit.report.tables.checks`` renders them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kit.analysis.stats import DEFAULT_Z, MEDIAN_SE_FACTOR, relative_sigma_pct

# A figure on its bar is never decided by rounds; say "needs 50+" rather than infinity.
MAX_ROUNDS_TO_DECIDE = 50


@dataclass(frozen=True)
class Bar:
    name: str
    holds: bool | None  # None: not measured (or not decided)
    detail: str
    undecided: bool = False  # measured, but noisier than the check's tolerance


def rounds_to_decide(margin_pct: float, spread_pct: float) -> int:
    """Rounds whose median tells a figure ``margin_pct`` away from its bar apart, at a
    per-round spread (the noise floor) of ``spread_pct``: the median-difference sizing of
    ``kit.analysis.stats.repeats_needed``, without its floor of 3 (one round decides a
    figure far from its bar)."""
    if spread_pct <= 0:
        return 1
    if margin_pct <= 0:
        return MAX_ROUNDS_TO_DECIDE
    sigma = relative_sigma_pct(spread_pct)
    needed = 2.0 * (DEFAULT_Z * MEDIAN_SE_FACTOR * sigma / margin_pct) ** 2
    return min(MAX_ROUNDS_TO_DECIDE, max(1, math.ceil(needed - 1e-9)))


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
