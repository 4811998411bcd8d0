"""What a server process reports when it stops (its result line in the process protocol)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerResult:
    """``rpcs``: the calls it served, of every method, warm-ups included; ``refused``: the
    Download calls it refused for its memory budget (RESOURCE_EXHAUSTED)."""

    rpcs: int = 0
    refused: int = 0
