"""kit.analysis.stats: summaries, noise floor, verdicts, rounds needed - pure, no IO."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kit.analysis.stats import (
    Summary,
    flag_spread,
    noise_floor,
    p50,
    repeats_needed,
    summarize,
    too_few_rounds,
    verdict,
)
from kit.errors import UsageError
from kit.quantile import percentile

finite = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)
samples = st.lists(finite, min_size=1, max_size=30)


# --- summarize ----------------------------------------------------------------------------


def test_summarize_known_values() -> None:
    s = summarize([9.0, 10.0, 11.0])
    assert s == Summary(n=3, median=10.0, min=9.0, max=11.0, mean=10.0, spread_pct=20.0)


def test_summarize_even_count_median_is_midpoint() -> None:
    assert summarize([1.0, 2.0, 3.0, 10.0]).median == 2.5


def test_summarize_all_zero_has_zero_spread() -> None:
    assert summarize([0.0, 0.0]).spread_pct == 0.0


def test_summarize_zero_median_with_range_is_infinite_spread() -> None:
    assert summarize([0.0, 0.0, 5.0]).spread_pct == math.inf


@pytest.mark.parametrize("bad", [[], [1.0, math.nan], [math.inf]])
def test_summarize_rejects_empty_and_non_finite(bad: list[float]) -> None:
    with pytest.raises(UsageError, match="summarize"):
        summarize(bad)


@given(samples)
def test_summary_invariants(values: list[float]) -> None:
    s = summarize(values)
    assert s.n == len(values)
    assert s.min <= s.median <= s.max
    assert s.min <= s.mean * (1 + 1e-12) and s.mean <= s.max * (1 + 1e-12)
    assert s.spread_pct >= 0


# --- spread flag --------------------------------------------------------------------------


def test_flag_spread_quiet_for_steady_cell() -> None:
    assert flag_spread(summarize([100.0, 104.0, 109.0])) is None


def test_flag_spread_warns_above_threshold() -> None:
    warning = flag_spread(summarize([90.0, 100.0, 112.0]))
    assert warning is not None
    assert "22.0%" in warning and "10%" in warning


def test_flag_spread_custom_threshold() -> None:
    assert flag_spread(summarize([100.0, 104.0]), threshold_pct=2.0) is not None


# --- percentiles --------------------------------------------------------------------------


def test_percentile_linear_interpolation() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 5.0
    assert percentile(values, 25) == 2.0
    assert percentile([10.0, 20.0], 99) == pytest.approx(19.9)


def test_p99_of_hundred_and_one_samples() -> None:
    values = [float(i) for i in range(101)]
    assert percentile(values, 99) == 99.0
    assert p50(values) == 50.0


def test_percentile_rejects_out_of_range() -> None:
    with pytest.raises(UsageError, match=r"outside 0\.\.100"):
        percentile([1.0], 101)


@given(samples)
def test_p50_is_the_median(values: list[float]) -> None:
    assert p50(values) == pytest.approx(statistics.median(values))


@given(samples, st.floats(0, 100), st.floats(0, 100))
def test_percentile_monotone_and_bounded(values: list[float], a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert min(values) <= percentile(values, lo) <= percentile(values, hi) <= max(values)


# --- noise floor --------------------------------------------------------------------------


def test_noise_floor_two_copies() -> None:
    # Paired: round 1 |102-98|/100 = 4%; pooled: (102-98)/100 = 4%.
    floor = noise_floor([[100.0, 101.0], [102.0, 98.0], [100.0, 100.0]])
    assert floor.paired_pct == pytest.approx(4.0)
    assert floor.pooled_pct == pytest.approx(4.0)
    assert floor.floor_pct == pytest.approx(4.0)
    assert (floor.rounds, floor.copies) == (3, 2)


def test_noise_floor_catches_drift_between_rounds() -> None:
    # The copies agree within each round, but the machine drifted 10% between rounds:
    # a cell measured in other rounds sees that drift, so the floor must too.
    floor = noise_floor([[100.0, 100.5], [110.0, 110.5]])
    assert floor.paired_pct < 1.0
    assert floor.floor_pct == pytest.approx(floor.pooled_pct)
    assert floor.floor_pct > 9.0


def test_noise_floor_more_copies_can_only_raise_it() -> None:
    two = noise_floor([[100.0, 102.0], [101.0, 100.0]])
    four = noise_floor([[100.0, 102.0, 96.0, 101.0], [101.0, 100.0, 100.0, 100.0]])
    assert four.floor_pct > two.floor_pct
    assert four.copies == 4


def test_noise_floor_tolerates_a_lost_copy() -> None:
    floor = noise_floor([[100.0, 102.0], [95.0]])
    assert floor.paired_pct == pytest.approx(2 / 101 * 100)
    assert floor.pooled_pct == pytest.approx(7 / 100 * 100)


def test_noise_floor_needs_a_duplicate() -> None:
    with pytest.raises(UsageError, match="two control copies"):
        noise_floor([[100.0], [101.0]])


def test_noise_floor_describe_names_both_parts() -> None:
    text = noise_floor([[100.0, 104.8]]).describe()
    assert "±4.7%" in text and "2 copies" in text


@given(st.lists(st.lists(finite, min_size=2, max_size=4), min_size=1, max_size=8))
def test_noise_floor_is_at_least_each_part(rounds: list[list[float]]) -> None:
    floor = noise_floor(rounds)
    assert floor.floor_pct >= floor.paired_pct >= 0
    assert floor.floor_pct >= floor.pooled_pct >= 0


# --- verdict ------------------------------------------------------------------------------


def test_verdict_faster_throughput() -> None:
    v = verdict([100.0, 101.0, 99.0], [130.0, 128.0, 131.0], noise_floor_pct=4.8)
    assert v.label == "faster"
    assert v.change_pct == pytest.approx(30.0)
    assert v.significant
    assert v.describe() == "+30.0% faster (±4.8% floor)"


def test_verdict_slower_throughput() -> None:
    v = verdict([100.0, 101.0, 99.0], [70.0, 72.0, 69.0], noise_floor_pct=2.0)
    assert v.label == "slower"
    assert v.describe().startswith("-30.0% slower")


def test_verdict_latency_lower_is_faster() -> None:
    v = verdict([10.0, 10.2, 9.9], [5.0, 5.1, 4.9], noise_floor_pct=3.0, higher_is_better=False)
    assert v.label == "faster"
    assert v.change_pct == pytest.approx(-50.0)


def test_verdict_latency_higher_is_slower() -> None:
    v = verdict([5.0, 5.1], [10.0, 10.2], noise_floor_pct=3.0, higher_is_better=False)
    assert v.label == "slower"


def test_verdict_below_floor_is_within_noise_without_a_number() -> None:
    # The reference false positive: +3.2% against a 4.8% floor.
    v = verdict([100.0, 100.2, 99.8], [103.2, 103.1, 103.3], noise_floor_pct=4.8)
    assert v.label == "within noise"
    assert not v.significant
    text = v.describe()
    assert text == "within noise (below the floor; ±4.8% floor)"
    assert "3.2" not in text


def test_verdict_change_equal_to_floor_is_within_noise() -> None:
    v = verdict([100.0], [105.0], noise_floor_pct=5.0)
    assert v.label == "within noise"


def test_verdict_with_an_interval_reaching_the_floor_is_not_decided() -> None:
    # Median +20% clears a 2% floor, but the baseline itself reached 125: the ratio's
    # interval reaches back into 1 +- 2%, so nothing is established yet.
    v = verdict([100.0, 98.0, 125.0], [120.0, 80.0, 130.0], noise_floor_pct=2.0)
    assert v.label == "not decided" and not v.significant and not v.decided
    assert v.ci is not None and v.ci.low < 1.02 < v.ratio
    assert v.needs is not None and v.needs > 3
    assert v.describe() == f"not decided (needs {v.needs} rounds; ±2.0% floor)"


def test_verdict_rejects_bad_floor_and_zero_baseline() -> None:
    with pytest.raises(UsageError, match="noise_floor_pct"):
        verdict([1.0], [2.0], noise_floor_pct=-1.0)
    with pytest.raises(UsageError, match="baseline median is 0"):
        verdict([0.0], [2.0], noise_floor_pct=1.0)


@given(samples, st.floats(0, 50), st.booleans())
def test_identical_distributions_are_within_noise(
    values: list[float], floor: float, higher_is_better: bool
) -> None:
    v = verdict(values, list(reversed(values)), floor, higher_is_better)
    assert v.label == "within noise"
    assert v.change_pct == 0.0


@given(samples, samples, st.floats(0, 50))
def test_verdict_label_agrees_with_direction(
    base: list[float], cand: list[float], floor: float
) -> None:
    up = verdict(base, cand, floor, higher_is_better=True)
    down = verdict(base, cand, floor, higher_is_better=False)
    assert up.significant == down.significant
    if up.significant:
        assert abs(up.change_pct) > floor
        assert {up.label, down.label} == {"faster", "slower"}
        assert (up.label == "faster") == (up.change_pct > 0)
    else:
        assert "%" not in up.describe().split("(")[0]


# --- rounds needed ------------------------------------------------------------------------


def test_repeats_needed_from_spread() -> None:
    # sigma = 10 / 2 = 5%; n = 2 * (2.8 * 1.2533 * 5 / 5)^2 = 24.6 -> 25.
    assert repeats_needed(10.0, 5.0) == 25


def test_repeats_needed_never_below_three() -> None:
    assert repeats_needed(0.0, 5.0) == 3
    assert repeats_needed(1.0, 50.0) == 3


def test_repeats_needed_from_samples_uses_their_stdev() -> None:
    values = [95.0, 100.0, 105.0]  # stdev 5 -> sigma 5%
    assert repeats_needed(values, 5.0) == repeats_needed(10.0, 5.0)


def test_repeats_needed_validates() -> None:
    with pytest.raises(UsageError, match="target_effect_pct"):
        repeats_needed(10.0, 0.0)
    with pytest.raises(UsageError, match="at least 2 samples"):
        repeats_needed([1.0], 5.0)
    with pytest.raises(UsageError, match="spread_pct"):
        repeats_needed(-1.0, 5.0)


@given(st.floats(0, 100), st.floats(0.5, 50), st.floats(0.5, 50))
def test_smaller_effects_need_at_least_as_many_rounds(spread: float, a: float, b: float) -> None:
    small, large = sorted((a, b))
    assert repeats_needed(spread, small) >= repeats_needed(spread, large) >= 3


def test_too_few_rounds_warns_and_clears() -> None:
    warning = too_few_rounds(5, 10.0, 5.0)
    assert warning is not None and "needs about 25" in warning
    assert too_few_rounds(25, 10.0, 5.0) is None


def test_too_few_rounds_effect_below_floor() -> None:
    warning = too_few_rounds(100, 1.0, 3.0, noise_floor_pct=4.8)
    assert warning is not None and "noise floor" in warning
