"""The delay line: a TCP relay that delays each direction by a fixed time, never accumulating,
optionally through a bottleneck of a set rate and with seeded jitter that never reorders.

``schedule`` is the pure FIFO of (due time, chunk) and the bottleneck; ``timer`` wakes the
writers at due times; ``relay`` is the asyncio shell; ``python -m kit.delayline --config
'<json>'`` runs it as a process for the orchestrator, started with ``child_args(config)``.
"""

from __future__ import annotations

import json

from kit.delayline.relay import (
    DelayLine,
    ProxyStats,
    run_proxy_blocking,
    serve_proxy,
)
from kit.delayline.schedule import DelayQueue
from kit.plan.processes import ProxyConfig
from kit.results.codec import to_json

__all__ = [
    "DelayLine",
    "DelayQueue",
    "ProxyStats",
    "child_args",
    "run_proxy_blocking",
    "serve_proxy",
]


def child_args(config: ProxyConfig) -> list[str]:
    """The ``python -m`` arguments that run ``config`` as a child process (ready line on
    stdout; see ``kit.delayline.__main__``)."""
    return ["kit.delayline", "--config", json.dumps(to_json(config))]
