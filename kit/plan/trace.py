"""Rates that change over time, parsed at the edge into a link's ``RateStep``s.

- ``--rate-steps 100Mbit:5s,10Mbit:5s``: each step a rate and how long it lasts, looped.
- ``--trace FILE``: mahimahi's trace format: one line per 1500-byte delivery opportunity,
  its time in ms (non-decreasing); the trace loops at its last timestamp. It is turned into
  steps of equal length: 1 ms each, or longer for a long trace so that there are at most
  ``MAX_RATE_STEPS`` (a link travels to its processes on their command line).
"""

from __future__ import annotations

import array
import io
import itertools
from collections.abc import Iterator
from typing import IO

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
    """A mahimahi trace file -> its steps, read a line at a time with bounded memory: at most
    ``MAX_TRACE_LINES`` deliveries of at most ``MAX_LINE_BYTES`` each (a file that is not a
    trace, such as /dev/zero, is refused at its first overlong line, not read whole)."""
    try:
        with open(path, "rb") as trace:
            return trace_steps(trace, option)
    except OSError as exc:
        raise UsageError(f"{option}: cannot read {path}: {exc.strerror or exc}") from None


MAX_TRACE_LINES = 10_000_000
MAX_LINE_BYTES = 64


def _lines(source: str | IO[bytes], option: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, bounded in length and count."""
    if isinstance(source, str):
        source = io.BytesIO(source.encode())
    for number in itertools.count(1):
        raw = source.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise UsageError(
                f"{option}: line {number} is longer than {MAX_LINE_BYTES} bytes: not a trace "
                "(one delivery time in ms per line)"
            )
        if number > MAX_TRACE_LINES:
            raise UsageError(f"{option}: more than {MAX_TRACE_LINES:,} lines; give a shorter trace")
        try:
            yield number, raw.decode("ascii").strip()
        except UnicodeDecodeError:
            raise UsageError(f"{option}: line {number} is not text") from None


def trace_steps(source: str | IO[bytes], option: str = "--trace") -> tuple[RateStep, ...]:
    """A mahimahi trace (its text, or a binary file) -> equal steps of the rate it delivers."""
    stamps = array.array("q")
    for number, line in _lines(source, option):
        if not line:
            continue
        try:
            stamp = int(line)
        except ValueError:
            raise UsageError(f"{option}: line {number}: {line!r} is not a whole ms") from None
        if stamp < 0 or (stamps and stamp < stamps[-1]):
            raise UsageError(f"{option}: the times must not decrease")
        stamps.append(stamp)
    if not stamps or stamps[-1] <= 0:
        raise UsageError(f"{option}: a trace needs delivery times up to a last one above 0 ms")
    period_ms = stamps[-1]
    step_ms = max(1, -(-period_ms // MAX_RATE_STEPS))
    counts = [0] * (-(-period_ms // step_ms))
    for stamp in stamps:
        counts[min(len(counts) - 1, max(0, stamp - 1) // step_ms)] += 1
    return tuple(
        RateStep(n * MAHIMAHI_PACKET_BYTES * 8 / (step_ms / 1000), step_ms) for n in counts
    )
