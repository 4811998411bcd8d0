"""The delay line's limits: a total buffer budget, quiet logs, enough file descriptors.

- ``Budget``: bytes held in every delay queue of the proxy together. At the cap, every
  reader whose queue holds bytes pauses (the bytes stay in the kernel, TCP holds the
  senders back) until its writer or the proxy's total makes room; nothing is dropped. A
  direction with an empty queue may still read one chunk, so the cap can be passed by at
  most one read per direction, and light traffic never stalls behind peers that stopped
  reading. The per-direction cap still applies.
- ``QuietLog``: at most one line per interval for a repeated condition (fd exhaustion,
  refused connections); what it held back is counted in the next line it lets through.
- ``ensure_fd_room``: raises the soft RLIMIT_NOFILE towards what ``max_connections`` needs
  (two descriptors per connection) and says when it cannot.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import time
from collections.abc import Callable

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

FDS_PER_CONNECTION = 2
FDS_SPARE = 16  # listener, tap file and decoder pipes, timerfd, stdio, epoll ...
OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class Budget:
    """Total buffered bytes of a proxy against its cap; ``room`` is set while below it."""

    def __init__(self, cap_bytes: int) -> None:
        self.cap_bytes = cap_bytes
        self.used_bytes = 0
        self.peak_bytes = 0
        self.pauses = 0  # how often the cap made the readers wait
        self.room = asyncio.Event()
        self.room.set()
        self.waiting: set[asyncio.Event] = set()  # paused readers, woken when room returns

    def add(self, n_bytes: int) -> None:
        self.used_bytes += n_bytes
        if self.used_bytes > self.peak_bytes:
            self.peak_bytes = self.used_bytes
        if self.used_bytes >= self.cap_bytes and self.room.is_set():
            self.pauses += 1
            self.room.clear()

    def release(self, n_bytes: int) -> None:
        self.used_bytes -= n_bytes
        if self.used_bytes < self.cap_bytes and not self.room.is_set():
            self.room.set()
            for event in self.waiting:
                event.set()

    @property
    def full(self) -> bool:
        return not self.room.is_set()


class QuietLog:
    """One line per ``interval_s`` at most; later lines say how many were held back.

    ``flush`` (at shutdown) reports what is still held back, with the newest message, so the
    last line's running count matches the totals."""

    def __init__(
        self,
        emit: Callable[[str], None],
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.emit, self.interval_s, self.clock = emit, interval_s, clock
        self._last = -float("inf")
        self.held = 0
        self._newest = ""

    def __call__(self, message: str) -> None:
        now = self.clock()
        if now - self._last < self.interval_s:
            self.held += 1
            self._newest = message
            return
        if self.held:
            message += f" ({self.held} more like it since the last report)"
        self.emit(message)
        self._last, self.held = now, 0

    def flush(self) -> None:
        """Emit the newest held-back message (and how many were held), if any."""
        if self.held:
            self.emit(f"{self._newest} ({self.held} more like it since the last report)")
            self.held = 0


def fd_limits() -> tuple[int, int] | None:
    if resource is None:  # pragma: no cover
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft, hard


def ensure_fd_room(max_connections: int) -> str | None:
    """Raise the soft fd limit to fit ``max_connections``; a warning when it cannot."""
    limits = fd_limits()
    if limits is None:  # pragma: no cover
        return None
    soft, hard = limits
    need = max_connections * FDS_PER_CONNECTION + FDS_SPARE
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    if soft != resource.RLIM_INFINITY and soft < need:
        fits = max(0, (soft - FDS_SPARE) // FDS_PER_CONNECTION)
        return (
            f"WARNING: only {soft} file descriptors (ulimit -n): about {fits} connections fit, "
            f"fewer than --max-connections {max_connections}; more wait in the listen backlog"
        )
    return None


def is_out_of_resources(exc: BaseException | None) -> bool:
    return isinstance(exc, OSError) and exc.errno in OUT_OF_RESOURCES
