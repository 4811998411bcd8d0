"""The delay line's frame decoder: a process of its own, fed through a shared ring.

``python -m kit.capture.decoder RING_FD BELL_FD TAP_FD`` (started by
``kit.capture.channel``): it takes the relay's tap records from the ring (``kit.capture.ring``),
feeds one ``FrameTap`` per connection direction, and appends the tap file's lines
(``kit.capture.tapfile``) to TAP_FD: a ``TapConnection`` when the relay says a connection
closed, and the lines the relay hands over verbatim (its ``ProxyTotals``). It decodes on
its own core, so however slow decoding gets, forwarding never waits for it. It exits once
the relay closes the doorbell (or dies) and the ring is drained.

``TapDecoder`` is the pure part: records in, tap-file lines out.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import select
import signal
import sys
from collections.abc import Callable, Sequence
from typing import cast

from kit.capture.frametap import FrameTap
from kit.capture.ring import (
    DIRECTIONS,
    KIND_BYTES,
    KIND_CONN_DONE,
    KIND_EOF,
    KIND_GAP,
    KIND_LINE,
    KIND_SCANNED,
    Record,
    RingReader,
)
from kit.capture.scanner import feed_scanned, scanned_length
from kit.capture.tapfile import encode_tap_line
from kit.results.records import DirectionSummary, TapConnection

POLL_S = 0.05
DECODER_NICE = 0  # also read the ring this often without a doorbell (a dropped bell byte)


class TapDecoder:
    """Records in (in ring order), whole tap-file lines out (JSON text, no newline)."""

    def __init__(self) -> None:
        self._taps: dict[tuple[int, int], FrameTap] = {}

    def _tap(self, conn: int, direction: int) -> FrameTap:
        key = (conn, direction)
        tap = self._taps.get(key)
        if tap is None:
            tap = self._taps[key] = FrameTap("up" if direction == 0 else "down")
        return tap

    def handle(self, record: Record, hurried: bool = False) -> str | None:
        """Feed one record; the tap-file line it completes, if any. ``hurried`` (the relay is
        shutting down): bytes are only counted, as not decoded, so the backlog drains fast."""
        kind = record.kind
        if kind == KIND_BYTES:
            tap = self._tap(record.conn, record.direction)
            if hurried:
                tap.lose(len(record.payload))
            else:
                tap.feed(record.payload, record.t_ns)
        elif kind == KIND_SCANNED:
            tap = self._tap(record.conn, record.direction)
            if hurried:
                tap.lose(scanned_length(record.payload))
            else:
                feed_scanned(tap, record.payload, record.t_ns)
        elif kind == KIND_EOF:
            missing = int.from_bytes(record.payload, "little") if len(record.payload) else 0
            self._tap(record.conn, record.direction).end(missing)
        elif kind == KIND_GAP:
            lost = int.from_bytes(record.payload, "little")
            self._tap(record.conn, record.direction).lose(lost)
        elif kind == KIND_CONN_DONE:
            return self._conn_line(record)
        elif kind == KIND_LINE:
            return bytes(record.payload).decode("utf-8")
        return None

    def _conn_line(self, record: Record) -> str:
        sides = [self._taps.pop((record.conn, d), None) for d in range(len(DIRECTIONS))]
        summaries = [t.summary() if t is not None else DirectionSummary() for t in sides]
        line = TapConnection(
            conn=record.conn,
            opened_ns=int.from_bytes(record.payload, "little"),
            closed_ns=record.t_ns,
            up=summaries[0],
            down=summaries[1],
        )
        return json.dumps(encode_tap_line(line), separators=(",", ":"))


PARENT_ENV = "KIT_TAP_PARENT_PID"  # the relay that started it (set by kit.capture.channel)
_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    with contextlib.suppress(OSError, AttributeError):
        return cast(Callable[..., int], ctypes.CDLL(None, use_errno=True).prctl)
    return None


# Looked up once, in the relay: the child calls it between fork and exec, where loading a
# library could deadlock.
_PRCTL = _prctl()


def die_with_parent() -> None:
    """SIGKILL this process when the relay dies, even while it is stopped (SIGSTOP, which
    holds SIGTERM back): a decoder is of no use without its relay. Run in the child before
    exec (``preexec_fn``), so no signal can stop it before it is asked."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _relay_alive() -> bool:
    """False when the relay died before ``die_with_parent`` took effect (we were adopted)."""
    parent = os.environ.get(PARENT_ENV, "")
    return not parent.isdigit() or os.getppid() == int(parent)


def run(ring_fd: int, bell_fd: int, tap_fd: int) -> int:
    if not _relay_alive():
        return 0
    # Never above normal priority, even when the relay runs boosted: on a busy machine the
    # decoder waits (and skips, counted), the forwarding does not. (Lowering one's own
    # priority is always allowed; nice 5 measured too low: it starved on a busy machine.)
    with contextlib.suppress(OSError, AttributeError):
        current = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, max(current, DECODER_NICE))
    buf = mmap.mmap(ring_fd, 0)
    reader, decoder = RingReader(buf), TapDecoder()
    out = os.fdopen(tap_fd, "a", encoding="utf-8")
    closed = False
    while not closed:
        if not reader.set_waiting(True):
            readable, _, _ = select.select([bell_fd], [], [], POLL_S)
            if readable:
                closed = not os.read(bell_fd, 65536)
        reader.set_waiting(False)
        lines = []
        for record in reader.records():
            line = decoder.handle(record, reader.hurried)
            if line is not None:
                lines.append(line)
        if lines:
            out.write("".join(line + "\n" for line in lines))
            out.flush()
    out.close()
    reader.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3 or not all(a.isdigit() for a in args):
        print("usage: python -m kit.capture.decoder RING_FD BELL_FD TAP_FD", file=sys.stderr)
        return 2
    return run(*(int(a) for a in args))


if __name__ == "__main__":
    sys.exit(main())
