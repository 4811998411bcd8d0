from __future__ import annotations

import pytest

from kit.cpu import cpu_fraction


def test_cpu_fraction_interpolates_between_samples() -> None:
    samples = [(0, 0.0), (1_000_000_000, 0.5), (2_000_000_000, 1.5)]
    assert cpu_fraction(samples, 0, 2_000_000_000) == pytest.approx(0.75)
    assert cpu_fraction(samples, 1_000_000_000, 2_000_000_000) == pytest.approx(1.0)
    assert cpu_fraction(samples, 500_000_000, 1_500_000_000) == pytest.approx(0.75)


def test_cpu_fraction_needs_two_samples_and_a_window() -> None:
    assert cpu_fraction([(0, 0.0)], 0, 10) is None
    assert cpu_fraction([(0, 0.0), (10, 1.0)], 5, 5) is None
