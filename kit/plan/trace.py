"""Rates that change over time, parsed at the edge into a link's ``RateStep``s.

- ``--rate-steps 100Mbit:5s,10Mbit:5s``: each step a rate and how long it lasts, looped.
- ``--trace FILE``: mahimahi's trace format: one line per 1500-byte delivery opportunity,
  its time in ms (non-decreasing); the trace loops at its last timestamp. It is turned into
  steps of equal length: 1 ms each, or longer for a long trace so that there are at most
  ``MAX_RATE_STEPS`` (a link travels to its processes on their command line).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from kit.errors import UsageError
from kit.plan.trial import MAX_RATE_STEPS, RateStep
from kit.plan.units import parse_duration_ms, parse_rate_bits_s

MAHIMAHI_PACKET_BYTES = 1500


def parse_rate_steps(text: str, option: str = "--rate-steps") -> tuple[RateStep, ...]:
    """ "100Mbit:5s,10Mbit:5s" -> its steps (a rate of 0 is an outage)."""
    steps = []
    for item in text.split(","):
        rate, sep, duration = item.strip().partition(":")
        if not sep:
            raise UsageError(f"{option}: {item.strip()!r} is not RATE:DURATION (e.g. 10Mbit:5s)")
        bits_s = 0.0 if rate.strip() == "0" else parse_rate_bits_s(rate, option=option)
        steps.append(RateStep(bits_s, parse_duration_ms(duration, option=option)))
    return tuple(steps)


def read_trace(path: str, option: str = "--trace") -> tuple[RateStep, ...]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{option}: cannot read {path}: {getattr(exc, 'strerror', exc)}") from None
    return trace_steps(text, option)


def trace_steps(text: str, option: str = "--trace") -> tuple[RateStep, ...]:
    """A mahimahi trace's text -> equal steps of the rate it delivers."""
    stamps = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            stamps.append(int(line.strip()))
        except ValueError:
            raise UsageError(
                f"{option}: line {number}: {line.strip()!r} is not a whole ms"
            ) from None
    if not stamps or stamps[-1] <= 0:
        raise UsageError(f"{option}: a trace needs delivery times up to a last one above 0 ms")
    if any(b < a for a, b in itertools.pairwise(stamps)) or stamps[0] < 0:
        raise UsageError(f"{option}: the times must not decrease")
    period_ms = stamps[-1]
    step_ms = max(1, -(-period_ms // MAX_RATE_STEPS))
    counts = [0] * (-(-period_ms // step_ms))
    for stamp in stamps:
        counts[min(len(counts) - 1, max(0, stamp - 1) // step_ms)] += 1
    return tuple(
        RateStep(n * MAHIMAHI_PACKET_BYTES * 8 / (step_ms / 1000), step_ms) for n in counts
    )
