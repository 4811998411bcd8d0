"""Wake the delay line's writers at their chunks' due times, precisely and nearly CPU-free.

asyncio's selector rounds timeouts up to whole milliseconds (and can round twice), so
``asyncio.sleep`` alone runs ~0.5-1.4 ms late. On Linux one timerfd per
event loop (CLOCK_MONOTONIC, the clock behind ``time.monotonic_ns()``, armed with absolute
deadlines, ns precision from the kernel's hrtimers and no timer slack) is registered with
``loop.add_reader``: the loop sleeps in epoll until the earliest deadline, then wakes every
waiter that is due. Elsewhere the old way stays: sleep whole milliseconds, then spin
(``asyncio.sleep(0)`` + clock) the last ~1.5 ms, accurate but burning CPU near due times.

The timer itself is exact, but waking an idle process is not: on the 2-vCPU Firecracker VM
(cpuidle haltpoll, guest_halt_poll_ns=0) a timerfd + epoll wake-up landed 33 us late (p50)
after a 0.2 ms sleep, 123 us after 2.5 ms and 176 us after 10 ms, plus ~80 us for asyncio to
resume the task. So the timer is armed ``WakeLead`` early (the recent p90 of observed
lateness, at most 0.5 ms and at most a quarter of the wait), and the waiter yields with
``asyncio.sleep(0)`` for what remains: tens of microseconds per wake-up, not ~1.5 ms.

- ``DeadlineHeap`` is pure: (deadline, waiter) pairs, which are due at ``now``, and when the
  one-shot kernel timer must be re-armed. ``WakeLead`` is pure: how early to arm.
  Both are unit-tested with a fake clock.
- ``TimerfdSleeper`` is the IO shell (one fd, one reader callback); ``SpinSleeper`` the
  fallback. ``make_sleeper()`` picks one, once, when a proxy starts. Setting the environment
  variable ``KIT_DELAYLINE_TIMER=spin`` forces the fallback (for side-by-side measurements).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import heapq
import itertools
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from kit.errors import UsageError
from kit.quantile import percentile

T = TypeVar("T")

TIMER_ENV = "KIT_DELAYLINE_TIMER"  # "spin" forces the fallback; anything else: best available
SPIN_NS = 1_500_000  # fallback: spin (sleep(0) + clock) at least this long before a due time
LEAD_INITIAL_NS = 150_000  # until measured: a typical wake-up latency here (see above)
LEAD_MAX_NS = 500_000  # never yield-spin longer than this per wake-up
LEAD_QUANTILE = 0.9
LEAD_WINDOW = 64  # wake-ups remembered
LEAD_EVERY = 8  # recompute the lead after this many new observations
_CLOCK_MONOTONIC = 1  # Linux's clockid_t for CLOCK_MONOTONIC
_TFD_TIMER_ABSTIME = 1
_NS = 1_000_000_000


class _Entry(Generic[T]):
    """One waiter in a DeadlineHeap; ordered by (due time, insertion order)."""

    __slots__ = ("due_ns", "item", "live", "seq")

    def __init__(self, due_ns: int, seq: int, item: T) -> None:
        self.due_ns, self.seq, self.item, self.live = due_ns, seq, item, True

    def __lt__(self, other: _Entry[T]) -> bool:
        return (self.due_ns, self.seq) < (other.due_ns, other.seq)


class DeadlineHeap(Generic[T]):
    """Pure: waiters keyed by due time, and the arm time of a one-shot timer serving them.

    The timer is modelled like a Linux timerfd: armed at one absolute time, it fires once and
    is then disarmed. ``arm_change()`` says when the real timer must be set again so that it
    is always armed at the earliest live deadline (or disarmed when there is none).
    Discarded entries (cancelled waiters) are dropped lazily but never cause a wake-up.
    """

    def __init__(self) -> None:
        self._heap: list[_Entry[T]] = []
        self._seq = itertools.count()
        self._live = 0
        self._armed_ns: int | None = None

    def push(self, due_ns: int, item: T) -> _Entry[T]:
        entry = _Entry(due_ns, next(self._seq), item)
        heapq.heappush(self._heap, entry)
        self._live += 1
        return entry

    def discard(self, entry: _Entry[T]) -> None:
        """Forget a waiter (cancelled); harmless if it was already popped or discarded."""
        if entry.live:
            entry.live = False
            self._live -= 1
            self._prune()

    def pop_due(self, now_ns: int) -> list[T]:
        """Every live waiter due at ``now_ns``, earliest first; a timer armed <= now fired."""
        if self._armed_ns is not None and self._armed_ns <= now_ns:
            self._armed_ns = None
        out: list[T] = []
        heap = self._heap
        while heap and heap[0].due_ns <= now_ns:
            entry = heapq.heappop(heap)
            if entry.live:
                entry.live = False
                self._live -= 1
                out.append(entry.item)
        self._prune()
        return out

    def next_due_ns(self) -> int | None:
        return self._heap[0].due_ns if self._heap else None

    def arm_change(self) -> tuple[bool, int | None]:
        """(must re-set the timer, to what: a deadline or None = disarm); records the change."""
        want = self.next_due_ns()
        if want == self._armed_ns:
            return False, want
        self._armed_ns = want
        return True, want

    def __len__(self) -> int:
        return self._live

    def _prune(self) -> None:
        heap = self._heap
        while heap and not heap[0].live:
            heapq.heappop(heap)
        if len(heap) > 64 and self._live < len(heap) // 2:  # many cancelled: compact
            self._heap = [e for e in heap if e.live]
            heapq.heapify(self._heap)


class WakeLead:
    """Pure: how early to arm the timer so that the (late) wake-up lands just before due.

    ``observe(late_ns)`` records how late a waiter resumed after its arm time; the lead is
    the ``quantile`` of the last ``window`` of them (the kit's one percentile rule,
    ``kit.quantile.percentile``; ~12 us per recompute, once every 8 wake-ups), capped
    at ``max_ns``. A waiter is armed at most a quarter of its wait early: short sleeps wake
    up faster (the vCPU is not descheduled as deeply) and must not turn into a spin.
    """

    def __init__(
        self,
        initial_ns: int = LEAD_INITIAL_NS,
        max_ns: int = LEAD_MAX_NS,
        quantile: float = LEAD_QUANTILE,
        window: int = LEAD_WINDOW,
    ) -> None:
        if not 0.0 <= quantile <= 1.0:
            raise UsageError(f"quantile: {quantile} is outside 0..1")
        if window < 1:
            raise UsageError(f"window: {window} must be at least 1")
        self.max_ns, self.quantile = max_ns, quantile
        self.lead_ns = min(initial_ns, max_ns)
        self._late: deque[int] = deque(maxlen=window)
        self._fresh = 0

    def wake_at_ns(self, due_ns: int, now_ns: int) -> int:
        """When to arm the timer for a waiter due at ``due_ns``."""
        return due_ns - min(self.lead_ns, max(due_ns - now_ns, 0) // 4)

    def observe(self, late_ns: int) -> None:
        self._late.append(max(late_ns, 0))
        self._fresh += 1
        if self._fresh >= LEAD_EVERY:
            self._fresh = 0
            lead_ns = round(percentile(self._late, self.quantile * 100.0))
            self.lead_ns = min(lead_ns, self.max_ns)


class Sleeper(Protocol):
    name: str

    async def sleep_until(self, due_ns: int) -> None:
        """Return once ``time.monotonic_ns() >= due_ns``."""

    def close(self) -> None: ...


class SpinSleeper:
    """The fallback: sleep whole milliseconds, then spin the rest (CPU near due times)."""

    name = "spin"

    async def sleep_until(self, due_ns: int) -> None:
        clock = time.monotonic_ns
        while (wait_ns := due_ns - clock()) > 0:
            await asyncio.sleep(coarse_sleep_s(wait_ns))  # 0.0: yield once, then re-check

    def close(self) -> None:
        pass


def coarse_sleep_s(wait_ns: int) -> float:
    """Whole milliseconds to sleep before spinning the rest; 0.0 means spin now.

    asyncio rounds the selector timeout up to whole ms, and a fractional request can be
    rounded up twice: an 8.5 ms sleep woke 1.8 ms late on a 2-vCPU VM. Whole-ms requests woke
    0.2-0.8 ms late, inside the spin margin (which grows a little with longer waits).
    """
    whole_ms = (wait_ns - SPIN_NS - wait_ns // 32) // 1_000_000
    return whole_ms / 1000 if whole_ms >= 1 else 0.0


class TimerfdSleeper:
    """One timerfd for every waiter of one event loop; the loop's reader callback wakes them."""

    name = "timerfd"

    def __init__(
        self, loop: asyncio.AbstractEventLoop, timer: _TimerFd, lead: WakeLead | None = None
    ) -> None:
        self._loop, self._timer = loop, timer
        self.lead = WakeLead() if lead is None else lead
        self._heap: DeadlineHeap[asyncio.Future[None]] = DeadlineHeap()
        self._closed = False
        loop.add_reader(timer.fd, self._on_fire)

    async def sleep_until(self, due_ns: int) -> None:
        if self._closed:  # a straggler after the proxy closed: correct, if costly
            await SpinSleeper().sleep_until(due_ns)
            return
        clock = time.monotonic_ns
        now_ns = clock()
        wake_ns = self.lead.wake_at_ns(due_ns, now_ns)
        if wake_ns > now_ns:
            await self._wait_for_timer(wake_ns)
            now_ns = clock()
            self.lead.observe(now_ns - wake_ns)
        while now_ns < due_ns:  # the last tens of us: the wake-up latency the lead absorbs
            await asyncio.sleep(0)
            now_ns = clock()

    async def _wait_for_timer(self, wake_ns: int) -> None:
        future: asyncio.Future[None] = self._loop.create_future()
        entry = self._heap.push(wake_ns, future)
        self._rearm()
        try:
            await future
        except asyncio.CancelledError:
            self._heap.discard(entry)  # e.g. a pump cancelled at shutdown
            if not self._closed:
                self._rearm()
            raise

    def _on_fire(self) -> None:
        self._timer.drain()
        for future in self._heap.pop_due(time.monotonic_ns()):
            if not future.done():
                future.set_result(None)
        self._rearm()

    def _rearm(self) -> None:
        changed, due_ns = self._heap.arm_change()
        if changed:
            self._timer.set_abs_ns(due_ns)

    def close(self) -> None:
        """Stop the timer; waiters still sleeping are cancelled (their tasks see it)."""
        if self._closed:
            return
        self._closed = True
        self._loop.remove_reader(self._timer.fd)
        self._timer.close()
        for future in self._heap.pop_due(2**63):
            future.cancel()


# -- the timerfd itself: os.timerfd_* on Python >= 3.13, else ctypes on libc ---------------


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class _TimerFd:
    """A non-blocking CLOCK_MONOTONIC timerfd armed with absolute, one-shot deadlines."""

    def __init__(self, fd: int, settime_abs: Callable[[int], None]) -> None:
        self.fd = fd
        self._settime_abs = settime_abs  # absolute CLOCK_MONOTONIC ns; 0 disarms

    def set_abs_ns(self, due_ns: int | None) -> None:
        # A deadline already past fires at once; 0 would mean "disarm", so clamp to 1 ns.
        self._settime_abs(0 if due_ns is None else max(due_ns, 1))

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError, InterruptedError):
            os.read(self.fd, 8)  # the expiration count; reading clears readiness

    def close(self) -> None:
        os.close(self.fd)


def _open_with_os() -> _TimerFd:
    # getattr: typeshed for Python 3.11 (which mypy checks against) has no os.timerfd_*.
    create, settime = getattr(os, "timerfd_create"), getattr(os, "timerfd_settime_ns")  # noqa: B009
    nonblock, cloexec, abstime = (
        getattr(os, name) for name in ("TFD_NONBLOCK", "TFD_CLOEXEC", "TFD_TIMER_ABSTIME")
    )
    fd: int = create(time.CLOCK_MONOTONIC, flags=nonblock | cloexec)

    def settime_abs(value_ns: int) -> None:
        settime(fd, flags=abstime, initial=value_ns)

    return _TimerFd(fd, settime_abs)


def _open_with_ctypes() -> _TimerFd:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    create, settime_c = libc.timerfd_create, libc.timerfd_settime
    create.argtypes, create.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settime_c.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_Itimerspec), ctypes.c_void_p]
    settime_c.restype = ctypes.c_int
    # TFD_NONBLOCK / TFD_CLOEXEC are defined as O_NONBLOCK / O_CLOEXEC on every Linux arch.
    fd = create(_CLOCK_MONOTONIC, os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "timerfd_create failed")
    spec = _Itimerspec()  # reused: the interval stays 0 (one-shot)
    spec_ref = ctypes.byref(spec)

    def settime_abs(value_ns: int) -> None:
        spec.it_value.tv_sec, spec.it_value.tv_nsec = divmod(value_ns, _NS)
        if settime_c(fd, _TFD_TIMER_ABSTIME, spec_ref, None) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"timerfd_settime failed: {os.strerror(errno)}")

    return _TimerFd(fd, settime_abs)


def open_timerfd() -> _TimerFd:
    """A timerfd, or OSError/AttributeError where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        raise OSError("timerfd is Linux-only")
    if hasattr(os, "timerfd_create"):
        return _open_with_os()
    return _open_with_ctypes()


def make_sleeper(loop: asyncio.AbstractEventLoop | None = None) -> Sleeper:
    """The best sleeper for this loop: a timerfd where possible, else the spin fallback."""
    if os.environ.get(TIMER_ENV, "").strip().lower() == "spin":
        return SpinSleeper()
    loop = loop or asyncio.get_running_loop()
    try:
        timer = open_timerfd()
    except (OSError, AttributeError):
        return SpinSleeper()
    try:
        return TimerfdSleeper(loop, timer)
    except (NotImplementedError, OSError, RuntimeError):  # a loop without add_reader
        timer.close()
        return SpinSleeper()
