"""What a command cut short by Ctrl-C (or SIGTERM) prints: what it measured so far, where
its records are, and for a campaign the command that finishes it.

``kit run``: the delay line's live count since the timed phase began (``TimedSoFar``: not a
result, a run is timed to its end) and where the interrupted record went. ``kit compare``
and ``kit knee``: the table of the rounds run so far, marked partial (the CLI renders it
from the records on disk), and the exact ``--resume`` command (``resume_command``).
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kit.cli.live import TIMED_PHASE
from kit.plan.units import MIB
from kit.report.format import fmt_rate
from kit.results.records import Measurement
from kit.topology.topology import Topology

POLL_S = 0.02  # a client takes longer than this to start sending


class TimedSoFar:
    """What the delay line delivered since the timed phase began: a thread notes the live
    count when the phase begins, ``delivered`` reads it again."""

    def __init__(self, topo: Topology) -> None:
        self._topo = topo
        self._start: tuple[int, float] | None = None  # (count, monotonic s) at the phase

    def watch(self, done: threading.Event) -> None:
        while not done.wait(POLL_S):
            phase, since = self._topo.phase
            count = self._topo.delivered_bytes()
            if phase == TIMED_PHASE and count is not None:
                self._start = (count, since)
                return

    def delivered(self) -> tuple[int, float] | None:
        """(bytes, seconds) since the timed phase began; None before it, or uncounted."""
        count = self._topo.delivered_bytes()
        if self._start is None or count is None or self._topo.phase[0] != TIMED_PHASE:
            return None
        return count - self._start[0], time.monotonic() - self._start[1]


@contextmanager
def timed_so_far(topo: Topology) -> Iterator[TimedSoFar]:
    """A ``TimedSoFar`` watching ``topo`` while the block runs."""
    so_far = TimedSoFar(topo)
    done = threading.Event()
    thread = threading.Thread(target=so_far.watch, args=(done,), daemon=True)
    thread.start()
    try:
        yield so_far
    finally:
        done.set()
        thread.join(timeout=2.0)


def run_lines(
    record: Measurement, delivered: tuple[int, float] | None, kept: bool, unit: str
) -> list[str]:
    """``kit run`` cut short: what the delay line delivered in the timed phase so far (the
    record, appended next, says where it goes; ``kept`` False: none is kept)."""
    where = record.error.split(" during ", 1)[-1]
    if delivered is None or delivered[1] <= 0:
        lines = [f"kit run: interrupted during {where}: nothing measured yet"]
    else:
        n_bytes, seconds = delivered
        rate = fmt_rate(n_bytes / MIB / seconds, unit)
        lines = [
            f"kit run: interrupted {seconds:.2f} s into the timed phase; so far the delay line "
            f"delivered {n_bytes / MIB:.2f} MiB:",
            f"  {rate} {unit} (not a result: a run is timed to its end)",
        ]
    return lines if kept else [*lines, "kit run: no record kept (--no-records)"]


# --- campaigns ------------------------------------------------------------------------------

# Options whose value names the records file: dropped, then given again with the path.
_RECORDS = "--records"
_RESUME = "--resume"


def resume_command(command: str, argv: Sequence[str], records: Path) -> str:
    """The command that finishes a campaign cut short: ``command`` (``kit compare``) with
    the arguments typed, ``--resume`` and the records file it was writing (a ``--resume``
    and any ``--records`` given are replaced, never doubled)."""
    args: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == _RECORDS:
            skip = True
            continue
        if arg == _RESUME or arg.startswith(_RECORDS + "="):
            continue
        args.append(arg)
    return shlex.join([*command.split(), *args, _RESUME, _RECORDS, str(records)])


def partial_header(runs_done: int, runs_planned: int, signal_name: str) -> str:
    """The line above a campaign's partial table."""
    return (
        f"PARTIAL: interrupted by {signal_name} after {runs_done} of {runs_planned} runs; "
        "each cell with the rounds it has so far:"
    )


def shell_lines(command: str, width: int = 100, indent: str = "  ") -> str:
    """A shell command broken into lines of at most ``width`` columns (each but the last
    ending in a continuation backslash), so it is copied and pasted as one command."""
    lines: list[str] = []
    current = indent
    for word in shlex.split(command):
        token = shlex.quote(word)
        if current.strip() and len(current) + 1 + len(token) + 2 > width:
            lines.append(current + " \\")
            current = indent + "  " + token
        else:
            current = (current + " " + token) if current.strip() else indent + token
    return "\n".join([*lines, current])


def typed_args(ctx: Any) -> list[str]:
    """The options and arguments given on the command line (a typer/click context), as they
    would be typed again: each option by its long name, a flag bare, a repeated option once
    per value."""
    out: list[str] = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name)
        if source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        value = ctx.params.get(param.name)
        if param.param_type_name != "option":
            out.append(str(value))
            continue
        name = max(param.opts, key=len)
        if getattr(param, "is_flag", False):
            if value:
                out.append(name)
            elif param.secondary_opts:
                out.append(max(param.secondary_opts, key=len))
        elif getattr(param, "multiple", False):
            for item in value or ():
                out += [name, str(item)]
        else:
            out += [name, str(value)]
    return out
