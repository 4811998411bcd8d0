"""Pure statistics for interleaved benchmark rounds: summaries, noise floor, verdicts.

The methodology follows what made published window-tuning numbers trustworthy: every
round runs every cell once plus duplicate copies of a control cell (``kit.plan.schedule``); the
spread between those copies is the *noise floor*; a cell is compared with the baseline by
the median over rounds. Every ratio of medians carries a 95% interval, a percentile
bootstrap over rounds (``medians_interval``: whole rounds resampled, seeded by the figure's
name so a report is reproducible; none with fewer than 3 rounds). One rule (``decide``)
judges a figure against a target range by its whole interval; a comparison's range is
1 +- the floor, so a change is only called "faster"/"slower" when its interval clears the
floor, "within noise" when the ratio lies inside it (no percentage printed: a bare "+3.2%"
against a 4.8% floor is the classic false positive), else "not decided", with the rounds
that would decide it. Nothing here does IO or reads a clock.

Invalid arguments (no samples, NaN, a negative floor) raise ``UsageError`` naming the
argument: they come from records the user chose, so they must not become tracebacks.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from kit.errors import UsageError
from kit.quantile import percentile

Label = Literal["faster", "slower", "within noise", "not decided"]

DEFAULT_SPREAD_THRESHOLD_PCT = 10.0
# Sample size for comparing two medians: z(95% two-sided) + z(80% power) = 1.96 + 0.84.
DEFAULT_Z = 2.8
# Asymptotic efficiency of the median: its standard error is ~1.2533 x sigma / sqrt(n).
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)
# With only a range to go on, a handful of rounds spans about 2 sigma (d2(4) = 2.06).
RANGE_TO_SIGMA = 2.0
# Fewer rounds than this and one unlucky run moves the median.
MIN_ROUNDS = 3


def _finite_samples(samples: Sequence[float], what: str) -> list[float]:
    values = [float(s) for s in samples]
    if not values:
        raise UsageError(f"{what}: no samples (did every run of this cell fail?)")
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"{what}: samples must be finite numbers, got {values!r}")
    return values


def _relative_pct(delta: float, reference: float) -> float:
    """delta / |reference| in %, where 0/0 is 0 and x/0 is infinite (never a ZeroDivisionError)."""
    if reference == 0:
        return 0.0 if delta == 0 else math.copysign(math.inf, delta)
    return delta / abs(reference) * 100.0


@dataclass(frozen=True)
class Summary:
    """Location and spread of one cell's samples (one per round).

    ``spread_pct`` = (max - min) / median x 100: the whole range, not a standard deviation,
    because with 3-10 rounds the range is what a reader can check by eye.
    """

    n: int
    median: float
    min: float
    max: float
    mean: float
    spread_pct: float

    def overlaps(self, other: Summary) -> bool:
        """True when either median lies inside the other's [min, max] range."""
        return self.min <= other.median <= self.max or other.min <= self.median <= other.max


def summarize(samples: Sequence[float]) -> Summary:
    """Summarize one cell's samples; raises ``UsageError`` on no samples or non-finite ones."""
    values = _finite_samples(samples, "summarize")
    median = statistics.median(values)
    low, high = min(values), max(values)
    return Summary(
        n=len(values),
        median=median,
        min=low,
        max=high,
        mean=statistics.fmean(values),
        spread_pct=_relative_pct(high - low, median),
    )


def flag_spread(
    summary: Summary, threshold_pct: float = DEFAULT_SPREAD_THRESHOLD_PCT
) -> str | None:
    """A warning when a cell's spread exceeds the threshold (like pyperf's unstable warning).

    Returns None for a steady cell, so ``if (w := flag_spread(s)):`` reads naturally.
    """
    if not threshold_pct >= 0:
        raise UsageError(f"threshold_pct: {threshold_pct} must be >= 0")
    if summary.spread_pct <= threshold_pct:
        return None
    return (
        f"unstable: spread {summary.spread_pct:.1f}% > {threshold_pct:g}% over {summary.n} "
        f"samples ({summary.min:.4g}..{summary.max:.4g}); trust its median less"
    )


# --- percentiles --------------------------------------------------------------------------


def p50(samples: Sequence[float]) -> float:
    """The median latency."""
    return percentile(samples, 50.0)


# --- noise floor --------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseFloor:
    """The noise floor from duplicate control copies, and the two spreads it is made of.

    ``paired_pct``: the worst same-round spread between copies, (max - min) / mean of that
    round (|A - B| / mean(A, B) for two copies) - noise that interleaving cannot remove.
    ``pooled_pct``: (max - min) / median over every control sample - adds drift between
    rounds, which a cell measured in other rounds also suffers.
    ``floor_pct`` is the larger of the two. Both are worst cases, on purpose: a floor that
    is too low produces false positives (+3.2% "reproducible" against a 2.0% floor vanished
    once a fourth control raised the floor to 4.8%); a floor too high only costs rounds.
    """

    floor_pct: float
    paired_pct: float
    pooled_pct: float
    rounds: int
    copies: int

    def describe(self) -> str:
        return (
            f"noise floor ±{self.floor_pct:.1f}% (same-round copies {self.paired_pct:.1f}%, "
            f"all control samples {self.pooled_pct:.1f}%; {self.rounds} "
            f"round{'s' if self.rounds != 1 else ''} x {self.copies} copies)"
        )


def _round_spread_pct(values: list[float]) -> float:
    return _relative_pct(max(values) - min(values), statistics.fmean(values))


def noise_floor(control_by_round: Sequence[Sequence[float]]) -> NoiseFloor:
    """The noise floor from the control cell's samples grouped by round (2 or more copies).

    ``control_by_round[i]`` holds the control copies measured in round i, e.g.
    ``[[a0, b0], [a1, b1], ...]``. A round that lost a copy (a failed run) still counts
    toward the pooled spread; at least one round must have two copies.
    """
    rounds = [
        _finite_samples(r, f"noise_floor round {i}") for i, r in enumerate(control_by_round) if r
    ]
    paired = [_round_spread_pct(r) for r in rounds if len(r) >= 2]
    if not paired:
        raise UsageError(
            "noise_floor: no round has two control copies; the noise floor is the spread "
            "between duplicate controls, so run at least one round with the control twice"
        )
    pooled = summarize([v for r in rounds for v in r]).spread_pct
    return NoiseFloor(
        floor_pct=max(max(paired), pooled),
        paired_pct=max(paired),
        pooled_pct=pooled,
        rounds=len(rounds),
        copies=max(len(r) for r in rounds),
    )


# --- intervals: a percentile bootstrap over rounds ----------------------------------------

# Rounds -> the samples of that round (the control has two copies a round, a cell one).
ByRound = Mapping[int, Sequence[float]]
CONFIDENCE = 0.95
RESAMPLES = 2000
# Fewer rounds than this and a bootstrap only reshuffles two values: no interval is printed.
MIN_BOOTSTRAP_ROUNDS = 3
CI_METHOD = "percentile bootstrap over rounds"


@dataclass(frozen=True)
class ConfidenceInterval:
    """A ratio's 95% interval: ``low`` <= ``high``, from ``rounds`` rounds resampled."""

    low: float
    high: float
    rounds: int
    confidence: float = CONFIDENCE

    def text(self) -> str:
        """ "[1.04, 1.21]", each end to three significant digits ("[60.8, 67.2]")."""
        return f"[{ratio_text(self.low)}, {ratio_text(self.high)}]"


def ratio_text(value: float) -> str:
    """A ratio to three significant digits at most: 1.12, 30.2, 412 (0.05 stays 0.05)."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _percentiles(ratios: list[float], confidence: float, rounds: int) -> ConfidenceInterval | None:
    finite = sorted(r for r in ratios if math.isfinite(r))
    if len(finite) < len(ratios) / 2:  # the denominator was 0 in most resamples
        return None
    tail = (1.0 - confidence) / 2.0
    low = finite[math.floor(tail * len(finite))]
    high = finite[max(0, math.ceil((1.0 - tail) * len(finite)) - 1)]
    return ConfidenceInterval(low, high, rounds, confidence)


def medians_interval(
    groups: Sequence[Sequence[ByRound]],
    combine: Callable[[Sequence[float]], float],
    seed: str,
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> ConfidenceInterval | None:
    """The percentile-bootstrap interval of ``combine(medians)``, the medians of every cell
    of every group in order. A group's cells were measured in the same rounds (a campaign):
    whole rounds are resampled, its cells together (only the rounds all of them have a
    sample in), so drift shared by a round cancels as it does in the figure itself; groups
    are resampled independently. ``seed`` (the figure's name) makes the same records give
    the same interval. None when a group has fewer than ``MIN_BOOTSTRAP_ROUNDS`` rounds, or
    when ``combine`` is undefined (a median of 0 below a ratio) in most resamples.
    """
    rng = random.Random(seed)
    tables: list[list[list[list[float]]]] = []  # group -> cell -> round -> samples
    for group in groups:
        common = sorted(set.intersection(*(set(r for r in c if c[r]) for c in group)))
        if len(common) < MIN_BOOTSTRAP_ROUNDS:
            return None
        tables.append([[[float(v) for v in c[r]] for r in common] for c in group])
    values = []
    for _ in range(resamples):
        medians: list[float] = []
        for cells in tables:
            n = len(cells[0])
            chosen = [int(rng.random() * n) for _ in range(n)]
            medians += [_median([v for i in chosen for v in cell[i]]) for cell in cells]
        try:
            values.append(combine(medians))
        except ZeroDivisionError:
            values.append(math.nan)
    return _percentiles(values, confidence, min(len(t[0]) for t in tables))


def ratio_interval(
    num: ByRound | Sequence[float],
    den: ByRound | Sequence[float],
    seed: str,
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> ConfidenceInterval | None:
    """The percentile-bootstrap interval of median(num) / median(den) (``medians_interval``).

    Given by round (``{round: samples}``), the two are resampled by round together (the
    rounds both have a sample in); given as plain samples, each on its own (a sample is
    its own round).
    """
    if isinstance(num, Mapping) and isinstance(den, Mapping):
        groups: list[list[ByRound]] = [[num, den]]
    else:
        groups = [[_as_rounds(num)], [_as_rounds(den)]]
    return medians_interval(groups, _ratio_of, seed, resamples=resamples, confidence=confidence)


def _ratio_of(medians: Sequence[float]) -> float:
    return medians[0] / medians[1]


def _as_rounds(samples: ByRound | Sequence[float]) -> ByRound:
    return samples if isinstance(samples, Mapping) else {i: [v] for i, v in enumerate(samples)}


def _flat(samples: ByRound | Sequence[float]) -> list[float]:
    if isinstance(samples, Mapping):
        return [float(v) for r in sorted(samples) for v in samples[r]]
    return [float(v) for v in samples]


# --- the rule: a figure, its interval, a target range ---------------------------------------

# A figure on its bar is never decided by rounds; say "needs 50+" rather than infinity.
MAX_ROUNDS_TO_DECIDE = 50


def half_width_pct(spread_pct: float, rounds: int) -> float:
    """The interval around a median of ``rounds`` rounds at a per-round spread (max - min
    over a few samples, about two sigma) of ``spread_pct``: z x 1.2533 x sigma / sqrt(n),
    the sizing of ``repeats_needed`` (z = 2.8)."""
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


@dataclass(frozen=True)
class Figure:
    """A measured figure (a median, or a ratio of medians) with its noise.

    ``ci``: its bootstrap interval over rounds (None: fewer than 3 rounds, or not computed).
    ``spread_pct``: a per-round spread to judge it by when the rounds' own cannot be trusted
    (the duplicate control's floor, or the rounds' range; None: none). ``rounds``: how many
    rounds its median is taken over. Its interval is the wider of the two it has.
    """

    value: float
    spread_pct: float | None
    rounds: int
    ci: ConfidenceInterval | None = None

    @property
    def half_width_pct(self) -> float | None:
        """The spread's interval half-width in % of the figure (None: no spread)."""
        if self.spread_pct is None:
            return None
        return half_width_pct(self.spread_pct, self.rounds)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The bootstrap interval, widened to the spread's where that is wider (None:
        neither is known)."""
        ends = []
        half = self.half_width_pct
        if half is not None:
            # a median or a ratio of medians is never negative: the normal approximation's
            # lower end is cut at 0 (a wide one would print "[-0.01, 1.15]")
            low = self.value * (1 - half / 100)
            ends.append((max(0.0, low) if self.value >= 0 else low, self.value * (1 + half / 100)))
        if self.ci is not None:
            ends.append((self.ci.low, self.ci.high))
        if not ends:
            return None
        return min(e[0] for e in ends), max(e[1] for e in ends)

    @property
    def shown(self) -> ConfidenceInterval | None:
        """The interval printed beside the figure: ``interval`` once there is a bootstrap
        interval to widen (None with fewer than 3 rounds: the spread alone is printed as
        ``±half%``, not as a confidence interval)."""
        interval = self.interval
        if self.ci is None or interval is None:
            return None
        return ConfidenceInterval(interval[0], interval[1], self.ci.rounds, self.ci.confidence)


Decided = Literal["inside", "outside", "not decided"]


@dataclass(frozen=True)
class Decision:
    """What one figure says against its target range: ``inside`` it, decidedly ``outside``
    it (its whole interval), or ``not decided`` (outside, but its interval reaches the
    range: ``needs`` rounds would decide it; None: its noise is unknown)."""

    verdict: Decided
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
    """The one rule: a figure is ``outside`` its target range (low, high) only when its whole
    interval is; inside it, it holds (the range already is its tolerance); outside, with an
    interval reaching the range, it is ``not decided`` with the rounds that would narrow the
    interval (as 1 / sqrt(rounds)) enough to clear the range were the figure to stay put."""
    low, high = target
    value = figure.value
    if low <= value <= high:
        return Decision("inside")
    interval = figure.interval
    if interval is None or value == 0:
        return Decision("not decided")
    if interval[1] < low or interval[0] > high:
        return Decision("outside")
    edge, end = (low, interval[1]) if value < low else (high, interval[0])
    margin, width = abs(value - edge), abs(value - end)
    needs = math.ceil(figure.rounds * (width / margin) ** 2 - 1e-9) if margin > 0 else 0
    return Decision("not decided", min(MAX_ROUNDS_TO_DECIDE, max(needs, figure.rounds + 1)))


# --- verdicts: a candidate against the baseline -----------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """How a candidate compares with the baseline, honest about noise.

    ``change_pct`` is the change of the medians, (candidate - baseline) / baseline x 100,
    in the metric's own direction (for latency a negative change is faster). ``label``
    refers to speed whatever the metric. ``reason`` says why a result is within noise or
    not decided. ``ratio`` = candidate / baseline median, ``ci`` its bootstrap interval.
    """

    label: Label
    change_pct: float
    noise_floor_pct: float
    baseline: Summary
    candidate: Summary
    higher_is_better: bool
    reason: str = ""
    ratio: float = 1.0
    ci: ConfidenceInterval | None = None
    needs: int | None = None  # not decided: the rounds that would decide it

    @property
    def significant(self) -> bool:
        return self.label in ("faster", "slower")

    @property
    def decided(self) -> bool:
        return self.label != "not decided"

    def describe(self) -> str:
        """One phrase for a table cell; never a bare percentage for a result that is not
        decidedly faster or slower."""
        floor = f"±{self.noise_floor_pct:.1f}% floor"
        if not self.significant:
            why = f"{self.reason}; " if self.reason else ""
            return f"{self.label} ({why}{floor})"
        return f"{self.change_pct:+.1f}% {self.label} ({floor})"


def verdict(
    baseline_samples: ByRound | Sequence[float],
    candidate_samples: ByRound | Sequence[float],
    noise_floor_pct: float,
    higher_is_better: bool = True,
    seed: str = "candidate",
) -> Verdict:
    """Faster / slower only when the candidate / baseline ratio's 95% interval lies wholly
    beyond 1 +- the noise floor (``decide`` against that band); "within noise" when the
    ratio lies inside the band; else "not decided", with the rounds it would take.

    Samples by round (``{round: [...]}``) are resampled by whole rounds, both sides
    together; plain lists each on their own. With fewer than 3 rounds there is no bootstrap
    interval: the floor's own (two medians at the floor, over the rounds run) stands in.
    """
    if not (math.isfinite(noise_floor_pct) and noise_floor_pct >= 0):
        raise UsageError(f"noise_floor_pct: {noise_floor_pct} must be a finite number >= 0")
    base = summarize(_flat(baseline_samples))
    cand = summarize(_flat(candidate_samples))
    if base.median == 0:
        raise UsageError("verdict: the baseline median is 0, so a relative change is undefined")
    ratio = cand.median / base.median
    change = _relative_pct(cand.median - base.median, base.median)
    ci = ratio_interval(candidate_samples, baseline_samples, seed)
    rounds = ci.rounds if ci is not None else _rounds(baseline_samples, candidate_samples)
    spread = None if ci is not None else math.sqrt(2) * noise_floor_pct
    figure = Figure(ratio, spread, rounds, ci)
    band = (1 - noise_floor_pct / 100, 1 + noise_floor_pct / 100)
    decision = decide(figure, band)
    label, reason = _label(decision, ratio, higher_is_better, ci is None, rounds)
    return Verdict(
        label, change, noise_floor_pct, base, cand, higher_is_better, reason, ratio, ci,
        decision.needs,
    )  # fmt: skip


def _rounds(*sides: ByRound | Sequence[float]) -> int:
    """The rounds two sides share (by round), or the fewer samples of the two."""
    if all(isinstance(s, Mapping) for s in sides):
        keys = [set(s) for s in sides if isinstance(s, Mapping)]
        return max(1, len(set.intersection(*keys)))
    return max(1, min(len(_flat(s)) for s in sides))


def _label(
    decision: Decision, ratio: float, higher_is_better: bool, no_ci: bool, rounds: int
) -> tuple[Label, str]:
    if decision.verdict == "inside":
        return "within noise", "below the floor"
    if decision.verdict == "not decided":
        few = f"{rounds} round{'s' if rounds != 1 else ''}, no CI; " if no_ci else ""
        return "not decided", few + decision.rounds_text
    improved = ratio > 1 if higher_is_better else ratio < 1
    return ("faster" if improved else "slower"), ""


# --- how many rounds ----------------------------------------------------------------------


def relative_sigma_pct(variation: float | Sequence[float]) -> float:
    """Relative standard deviation in %, from samples or from a spread_pct (range) figure.

    Samples: stdev / |median|. A bare spread_pct: spread / 2, since a few rounds' range
    spans about two standard deviations - rough, and deliberately not optimistic.
    """
    if isinstance(variation, (int, float)):
        if not (math.isfinite(variation) and variation >= 0):
            raise UsageError(f"spread_pct: {variation} must be a finite number >= 0")
        return float(variation) / RANGE_TO_SIGMA
    values = _finite_samples(variation, "repeats_needed")
    if len(values) < 2:
        raise UsageError("repeats_needed: need at least 2 samples to see their spread")
    return _relative_pct(statistics.stdev(values), statistics.median(values))


def repeats_needed(
    variation: float | Sequence[float], target_effect_pct: float, z: float = DEFAULT_Z
) -> int:
    """Rounds per cell needed to resolve a change of ``target_effect_pct`` between two medians.

    Normal approximation: each median has standard error 1.2533 x sigma / sqrt(n); their
    difference sqrt(2) times that; resolving the effect needs effect >= z x SE, so
    n = 2 x (z x 1.2533 x sigma / effect)^2, with z = 2.8 (95% confidence, 80% power).
    Never below 3. This sizes the medians only: an effect below the noise floor is not
    resolved by more rounds (see ``too_few_rounds``).
    """
    if not (math.isfinite(target_effect_pct) and target_effect_pct > 0):
        raise UsageError(f"target_effect_pct: {target_effect_pct} must be a finite number > 0")
    sigma = relative_sigma_pct(variation)
    if not math.isfinite(sigma):
        raise UsageError("repeats_needed: the samples' median is 0, so their spread is undefined")
    n = 2.0 * (z * MEDIAN_SE_FACTOR * sigma / target_effect_pct) ** 2
    return max(MIN_ROUNDS, math.ceil(n - 1e-9))


def too_few_rounds(
    rounds_done: int,
    variation: float | Sequence[float],
    target_effect_pct: float,
    noise_floor_pct: float | None = None,
) -> str | None:
    """A warning when the rounds run cannot resolve the target effect, else None."""
    if noise_floor_pct is not None and target_effect_pct <= noise_floor_pct:
        return (
            f"a {target_effect_pct:g}% effect is not above the ±{noise_floor_pct:.1f}% noise "
            "floor; more rounds will not resolve it - quieten the machine to lower the floor"
        )
    needed = repeats_needed(variation, target_effect_pct)
    if rounds_done >= needed:
        return None
    return (
        f"only {rounds_done} rounds: resolving a {target_effect_pct:.1f}% effect at this spread "
        f"needs about {needed}"
    )
