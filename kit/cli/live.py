"""``kit run --interval``: throughput per interval shown on stderr while the client runs.

A thread wakes once per interval and reads the delay line's live byte counter
(``Topology.delivered_bytes``: one 8-byte file read, nothing sent to the relay) and shows
the bytes delivered since its last wake-up: on a terminal as one line redrawn in place (and
gone when the run ends), elsewhere as lines marked live. It starts with the timed phase's
first bytes (the server's start-up and the discarded warm-up run are not shown) and stops
when the client has its result. These are progress: its ticks are not the timed phase's,
and its last one falls after the phase ends, so the intervals the run reports (its lines on
stdout and the table's summary of them) are the record's, printed once the run is done
(``kit.report.intervals``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.live import Live
from rich.text import Text

from kit.report.intervals import interval_header, interval_line
from kit.topology.topology import Topology

TIMED_PHASE = "the timed phase"


LIVE = "live"  # marks a line printed while the run goes on (off a terminal)


@contextmanager
def live_intervals(
    topo: Topology, interval_ms: float, unit: str, terminal: bool, echo: Callable[[str], None]
) -> Iterator[None]:
    """Show an interval line per ``interval_ms`` on stderr while the block runs: redrawn in
    place on a ``terminal`` (gone at the end), else each line through ``echo``."""
    if terminal:
        with Live(console=Console(stderr=True), transient=True, auto_refresh=False) as live:

            def draw(line: str) -> None:
                live.update(Text(f"{LIVE} {line}", no_wrap=True), refresh=True)

            with _ticking(topo, interval_ms, unit, draw, header=False):
                yield
        return
    with _ticking(topo, interval_ms, unit, lambda line: echo(f"{LIVE} {line}"), header=True):
        yield


@contextmanager
def _ticking(
    topo: Topology, interval_ms: float, unit: str, echo: Callable[[str], None], header: bool
) -> Iterator[None]:
    done = threading.Event()
    thread = threading.Thread(
        target=_print_intervals,
        args=(topo, interval_ms / 1000, unit, echo, done, header),
        daemon=True,
    )
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=2.0)


def _print_intervals(
    topo: Topology,
    step_s: float,
    unit: str,
    echo: Callable[[str], None],
    done: threading.Event,
    header: bool,
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
            if header:
                echo(interval_header(unit))
        if origin is not None:
            echo(interval_line(last_t - origin, now - origin, moved, unit))
        last_count, last_t = count, now
