"""The delay line: a TCP relay that delays each direction by a fixed time, never accumulating,
optionally through a bottleneck of a set rate and with seeded jitter that never reorders.

``schedule`` is the pure FIFO of (due time, chunk) and the bottleneck; ``timer`` wakes the
writers at due times; ``relay`` is the asyncio shell; ``python -m kit.delayline --config
'<json>'`` runs it as a process of the kit's process protocol (``kit.protocol``).
"""

from __future__ import annotations

from kit.delayline.relay import (
    DelayLine,
    ProxyStats,
    serve_proxy,
)
from kit.delayline.schedule import DelayQueue

__all__ = [
    "DelayLine",
    "DelayQueue",
    "ProxyStats",
    "serve_proxy",
]
