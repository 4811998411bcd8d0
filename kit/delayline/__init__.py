"""The delay line: a TCP relay that delays each direction by a fixed time, never accumulating.

``schedule`` is the pure FIFO of (due time, chunk); ``relay`` is the asyncio shell;
``python -m kit.delayline`` runs it as a process for the orchestrator.
"""

from __future__ import annotations

from kit.delayline.relay import (
    DelayLine,
    ProxyConfig,
    ProxyStats,
    run_proxy_blocking,
    serve_proxy,
)
from kit.delayline.schedule import DelayQueue

__all__ = [
    "DelayLine",
    "DelayQueue",
    "ProxyConfig",
    "ProxyStats",
    "run_proxy_blocking",
    "serve_proxy",
]
