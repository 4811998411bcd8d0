"""A quick run's single round: a check decides only what its noise lets it decide."""

from __future__ import annotations

from kit.analysis.tables.checks import MAX_ROUNDS_TO_DECIDE, Bar, rounds_to_decide, settled
from kit.report.tables.checks import failed_line, render_bars


def test_a_failure_far_beyond_the_noise_still_fails_in_one_round() -> None:
    bar = settled(Bar("unary", False, "-40.0% (limit ±5.0%)"), 35.0, 4.0, rounds=1)
    assert bar.holds is False
    assert (
        failed_line([bar]) == "1 check(s) against the reference FAIL: unary (see the checks above)"
    )


def test_a_pass_far_from_the_bar_holds_in_one_round() -> None:
    bar = settled(Bar("ratio", True, "20.0x"), 150.0, 6.0, rounds=1)
    assert bar.holds is True and failed_line([bar]) is None


def test_a_figure_within_the_noise_of_its_bar_is_not_decided() -> None:
    """-5.1% against a 5% limit at a 6% floor: noise alone flips it."""
    bar = settled(Bar("unary", False, "-5.1% (limit ±5.0%)"), 0.1, 6.0, rounds=1)
    assert bar.holds is None and bar.undecided
    needed = rounds_to_decide(0.1, 6.0)
    assert needed == MAX_ROUNDS_TO_DECIDE
    assert "1 round; needs 50+" in bar.detail
    assert render_bars([bar]).endswith(
        "- not decided: unary (-5.1% (limit ±5.0%); 1 round; needs 50+)"
    )
    assert failed_line([bar]) is None


def test_rounds_needed_shrink_with_the_margin_and_grow_with_the_spread() -> None:
    assert rounds_to_decide(5.0, 6.0) > rounds_to_decide(10.0, 6.0) > 1
    assert rounds_to_decide(5.0, 12.0) > rounds_to_decide(5.0, 6.0)
    assert rounds_to_decide(5.0, 0.0) == 1
    # 3 rounds decide a 5% margin at a 3% floor: 2 x (2.8 x 1.2533 x 1.5 / 5)^2 = 2.2
    assert rounds_to_decide(5.0, 3.0) == 3
