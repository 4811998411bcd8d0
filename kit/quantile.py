"""The kit's one percentile rule, at the bottom of the layers.

Pure and dependency-free, so every layer that summarizes samples (the delay line's timer,
the tap's PING RTTs, the analysis, the bench tools) uses the same rule without importing
the statistics of ``kit.analysis``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kit.errors import UsageError


def percentile(samples: Sequence[float], pct: float) -> float:
    """The pct-th percentile by linear interpolation between closest ranks.

    Same rule as numpy's default, so ``percentile(x, 50) == statistics.median(x)``. With
    fewer than 100 samples p99 is close to the maximum: report the sample count with it.
    ``UsageError`` (naming ``percentile``) on no samples, a non-finite one, or ``pct``
    outside 0..100: they come from records the user chose.
    """
    if not 0.0 <= pct <= 100.0:
        raise UsageError(f"percentile: {pct} is outside 0..100")
    values = [float(s) for s in samples]
    if not values:
        raise UsageError("percentile: no samples (did every run of this cell fail?)")
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"percentile: samples must be finite numbers, got {values!r}")
    values.sort()
    rank = (len(values) - 1) * pct / 100.0
    lower = math.floor(rank)
    upper = min(lower + 1, len(values) - 1)
    return values[lower] + (values[upper] - values[lower]) * (rank - lower)
