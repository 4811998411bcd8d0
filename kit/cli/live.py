"""``kit run --interval``: throughput per interval printed while the client runs.

A thread wakes once per interval and reads the delay line's live byte counter
(``Topology.delivered_bytes``: one 8-byte file read, nothing sent to the relay) and prints
the bytes delivered since its last wake-up. It starts with the timed phase's first bytes
(the server's start-up and the discarded warm-up run are not shown) and stops when the
client has its result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kit.report.intervals import interval_header, interval_line
from kit.topology.topology import Topology

TIMED_PHASE = "the timed phase"


@contextmanager
def live_intervals(
    topo: Topology, interval_ms: float, unit: str, echo: Callable[[str], None]
) -> Iterator[None]:
    """Print an interval line per ``interval_ms`` while the block runs."""
    done = threading.Event()
    thread = threading.Thread(
        target=_print_intervals, args=(topo, interval_ms / 1000, unit, echo, done), daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=2.0)


def _print_intervals(
    topo: Topology, step_s: float, unit: str, echo: Callable[[str], None], done: threading.Event
) -> None:
    origin: float | None = None  # when the first interval with bytes began
    last_count, last_t = 0, time.monotonic()
    next_t = last_t + step_s
    while not done.wait(max(0.0, next_t - time.monotonic())):
        now = time.monotonic()
        next_t += step_s
        count = topo.delivered_bytes()
        if topo.phase[0] != TIMED_PHASE or count is None:
            last_count, last_t = count or 0, now
            continue
        moved = count - last_count
        if origin is None and moved > 0:
            origin = last_t
            echo(interval_header(unit))
        if origin is not None:
            echo(interval_line(last_t - origin, now - origin, moved, unit))
        last_count, last_t = count, now
