"""Pure statistics for interleaved benchmark rounds: summaries, noise floor, verdicts.

The methodology follows what made published window-tuning numbers trustworthy: every
round runs every cell once plus duplicate copies of a control cell (``kit.plan.schedule``); the
spread between those copies is the *noise floor*; a cell is compared with the baseline by
the median over rounds, and a change is only called "faster"/"slower" when it clears the
floor *and* the two sets of rounds do not overlap. Otherwise the verdict is "within noise"
and no percentage is printed (a bare "+3.2%" against a 4.8% floor is the classic false
positive). Nothing here does IO or reads a clock.

Invalid arguments (no samples, NaN, a negative floor) raise ``UsageError`` naming the
argument: they come from records the user chose, so they must not become tracebacks.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from kit.errors import UsageError
from kit.quantile import percentile

Label = Literal["faster", "slower", "within noise"]

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
            f"all control samples {self.pooled_pct:.1f}%; {self.rounds} rounds x "
            f"{self.copies} copies)"
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


# --- verdicts -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """How a candidate compares with the baseline, honest about noise.

    ``change_pct`` is the change of the medians, (candidate - baseline) / baseline x 100,
    in the metric's own direction (for latency a negative change is faster). ``label``
    refers to speed whatever the metric. ``reason`` says why a result is within noise.
    """

    label: Label
    change_pct: float
    noise_floor_pct: float
    baseline: Summary
    candidate: Summary
    higher_is_better: bool
    reason: str = ""

    @property
    def significant(self) -> bool:
        return self.label != "within noise"

    def describe(self) -> str:
        """One phrase for a table cell; never a bare percentage for a within-noise result."""
        floor = f"±{self.noise_floor_pct:.1f}% floor"
        if not self.significant:
            why = f"{self.reason}; " if self.reason else ""
            return f"within noise ({why}{floor})"
        return f"{self.change_pct:+.1f}% {self.label} ({floor})"


def verdict(
    baseline_samples: Sequence[float],
    candidate_samples: Sequence[float],
    noise_floor_pct: float,
    higher_is_better: bool = True,
) -> Verdict:
    """Compare medians; "faster"/"slower" only when the change is clearly real.

    The rule (both must hold, otherwise "within noise"):
    1. |change of medians| > noise floor (a change equal to the floor is not above it);
    2. the rounds do not overlap heavily: neither median lies inside the other's
       [min, max] range - if the baseline itself produced values as good as the
       candidate's median, the difference is not established, whatever the floor says.
    """
    if not (math.isfinite(noise_floor_pct) and noise_floor_pct >= 0):
        raise UsageError(f"noise_floor_pct: {noise_floor_pct} must be a finite number >= 0")
    base = summarize(baseline_samples)
    cand = summarize(candidate_samples)
    if base.median == 0:
        raise UsageError("verdict: the baseline median is 0, so a relative change is undefined")
    change = _relative_pct(cand.median - base.median, base.median)
    label, reason = _label(change, noise_floor_pct, base, cand, higher_is_better)
    return Verdict(label, change, noise_floor_pct, base, cand, higher_is_better, reason)


def _label(
    change_pct: float, floor_pct: float, base: Summary, cand: Summary, higher_is_better: bool
) -> tuple[Label, str]:
    if abs(change_pct) <= floor_pct:
        return "within noise", "below the floor"
    if base.overlaps(cand):
        return "within noise", "rounds overlap"
    improved = change_pct > 0 if higher_is_better else change_pct < 0
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
