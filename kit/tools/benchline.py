"""One line of ``make bench``: a figure, the bar it is held to, and whether it met it (None:
reported, no bar). Every part of the bench returns these; ``kit.tools.bench`` prints them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchLine:
    name: str
    value: str
    bar: str
    ok: bool | None
