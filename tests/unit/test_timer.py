"""The delay line's timer: DeadlineHeap and WakeLead with a fake clock; the timerfd shell live."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest

from kit.delayline.timer import (
    LEAD_EVERY,
    TIMER_ENV,
    DeadlineHeap,
    SpinSleeper,
    TimerfdSleeper,
    WakeLead,
    coarse_sleep_s,
    make_sleeper,
)
from kit.errors import UsageError
from kit.quantile import percentile

US = 1_000
MS = 1_000_000

# -- DeadlineHeap: which waiters are due, when the one-shot timer must be re-armed ----------


def test_pops_every_waiter_due_earliest_first_ties_in_arrival_order() -> None:
    heap: DeadlineHeap[str] = DeadlineHeap()
    for due, name in [(30, "c"), (10, "a"), (20, "b1"), (20, "b2"), (40, "d")]:
        heap.push(due, name)
    assert heap.pop_due(9) == []
    assert heap.pop_due(20) == ["a", "b1", "b2"]
    assert heap.pop_due(100) == ["c", "d"]
    assert len(heap) == 0 and heap.next_due_ns() is None


def test_arms_at_the_earliest_deadline_only_when_it_changes() -> None:
    heap: DeadlineHeap[str] = DeadlineHeap()
    heap.push(50, "a")
    assert heap.arm_change() == (True, 50)
    heap.push(70, "later")  # the earliest deadline did not move: no syscall
    assert heap.arm_change() == (False, 50)
    heap.push(30, "earlier")
    assert heap.arm_change() == (True, 30)


def test_after_firing_rearms_for_the_next_deadline_then_disarms() -> None:
    heap: DeadlineHeap[str] = DeadlineHeap()
    heap.push(10, "a")
    heap.push(20, "b")
    assert heap.arm_change() == (True, 10)
    assert heap.pop_due(12) == ["a"]  # the timer fired at 10: it is one-shot, so disarmed
    assert heap.arm_change() == (True, 20)
    assert heap.pop_due(20) == ["b"]
    assert heap.arm_change() == (False, None)  # fired and nothing left: already disarmed


def test_early_spurious_wakeup_keeps_the_timer_armed() -> None:
    heap: DeadlineHeap[str] = DeadlineHeap()
    heap.push(10, "a")
    heap.arm_change()
    assert heap.pop_due(5) == []  # readable without being due (e.g. a stale expiration)
    assert heap.arm_change() == (False, 10)


def test_cancelled_waiter_is_never_returned_nor_waited_for() -> None:
    heap: DeadlineHeap[str] = DeadlineHeap()
    first = heap.push(10, "cancelled")
    heap.push(20, "b")
    assert heap.arm_change() == (True, 10)
    heap.discard(first)
    assert len(heap) == 1
    assert heap.arm_change() == (True, 20)  # no wake-up for the cancelled one
    heap.discard(first)  # twice is harmless
    assert heap.pop_due(100) == ["b"]
    assert heap.arm_change() == (False, None)  # the one-shot timer fired at 20: disarmed


def test_discarding_a_waiter_already_popped_is_harmless() -> None:
    heap: DeadlineHeap[str] = DeadlineHeap()
    entry = heap.push(10, "a")
    assert heap.pop_due(10) == ["a"]
    heap.discard(entry)
    assert len(heap) == 0


def test_discarding_the_only_waiter_disarms() -> None:
    heap: DeadlineHeap[str] = DeadlineHeap()
    entry = heap.push(10, "a")
    heap.arm_change()
    heap.discard(entry)
    assert heap.arm_change() == (True, None)


def test_many_cancelled_waiters_are_compacted_away() -> None:
    heap: DeadlineHeap[int] = DeadlineHeap()
    entries = [heap.push(1000 - i, i) for i in range(500)]
    for entry in entries[:-10]:
        heap.discard(entry)
    assert len(heap) == 10
    assert len(heap._heap) < 100  # not 500 dead entries kept forever
    assert heap.pop_due(10**6) == list(range(499, 489, -1))


# -- WakeLead: how early to arm ----------------------------------------------------------


def test_lead_is_capped_by_a_quarter_of_the_wait() -> None:
    lead = WakeLead(initial_ns=150 * US)
    assert lead.wake_at_ns(due_ns=10 * MS, now_ns=0) == 10 * MS - 150 * US
    assert lead.wake_at_ns(due_ns=200 * US, now_ns=0) == 150 * US  # 50 us early, not 150
    assert lead.wake_at_ns(due_ns=5, now_ns=10) == 5  # already due: no lead


def test_lead_follows_the_high_quantile_of_observed_lateness() -> None:
    lead = WakeLead(initial_ns=150 * US, quantile=0.9, window=64)
    for i in range(64):
        lead.observe((i % 32) * 10 * US)  # 0..310 us, evenly
    assert 270 * US <= lead.lead_ns <= 290 * US
    for _ in range(64):
        lead.observe(20 * US)  # the process stays busy: wake-ups come quickly
    assert lead.lead_ns == 20 * US


def test_lead_uses_the_kits_one_percentile_rule() -> None:
    lead = WakeLead(initial_ns=150 * US, quantile=0.5, window=LEAD_EVERY)
    observed = [0, 0, 0, 10 * US, 20 * US, 30 * US, 100 * US, 100 * US][:LEAD_EVERY]
    for late_ns in observed:
        lead.observe(late_ns)
    assert lead.lead_ns == round(percentile(observed, 50.0))  # interpolated, not an index


@pytest.mark.parametrize(("quantile", "window"), [(1.5, 64), (-0.1, 64), (0.9, 0)])
def test_lead_parameters_are_checked_when_built(quantile: float, window: int) -> None:
    with pytest.raises(UsageError, match=r"quantile|window"):
        WakeLead(quantile=quantile, window=window)


def test_lead_is_capped_and_never_negative() -> None:
    lead = WakeLead(initial_ns=10 * MS, max_ns=500 * US)
    assert lead.lead_ns == 500 * US
    for _ in range(LEAD_EVERY):
        lead.observe(5 * MS)  # a stalled loop must not turn into a 5 ms spin
    assert lead.lead_ns == 500 * US
    for _ in range(64):
        lead.observe(-3)
    assert lead.lead_ns == 0


def test_fallback_sleeps_whole_ms_and_spins_the_last_1_5_ms() -> None:
    assert coarse_sleep_s(1 * MS) == 0.0
    assert coarse_sleep_s(2 * MS) == 0.0
    assert coarse_sleep_s(10 * MS) == 0.008


# -- the shells, live (short waits) ------------------------------------------------------

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="timerfd")


async def _lateness_ns(sleeper_waits: list[int]) -> list[int]:
    sleeper = make_sleeper()
    try:
        assert isinstance(sleeper, TimerfdSleeper)
        start = time.monotonic_ns()
        dues = [start + w for w in sleeper_waits]

        async def one(due: int) -> int:
            await sleeper.sleep_until(due)
            return time.monotonic_ns() - due

        return list(await asyncio.gather(*(one(d) for d in dues)))
    finally:
        sleeper.close()


@linux_only
def test_timerfd_wakes_every_waiter_never_early() -> None:
    waits = [3 * MS, 1 * MS, 2 * MS, 1 * MS, 5 * MS, 0, -MS]
    late = asyncio.run(_lateness_ns(waits))
    assert min(late) >= 0
    assert max(late) < 200 * MS  # bounded; accuracy is the integration test's job


@linux_only
def test_cancelled_sleeper_leaves_others_on_time() -> None:
    async def main() -> tuple[bool, int]:
        sleeper = make_sleeper()
        try:
            now = time.monotonic_ns()
            doomed = asyncio.create_task(sleeper.sleep_until(now + 2 * MS))
            survivor = asyncio.create_task(sleeper.sleep_until(now + 4 * MS))
            await asyncio.sleep(0)
            doomed.cancel()
            await asyncio.gather(doomed, return_exceptions=True)
            await asyncio.wait_for(survivor, 5)
            assert isinstance(sleeper, TimerfdSleeper)
            return doomed.cancelled(), len(sleeper._heap)
        finally:
            sleeper.close()

    assert asyncio.run(main()) == (True, 0)


@linux_only
def test_close_cancels_waiters_and_releases_the_fd() -> None:
    async def main() -> bool:
        sleeper = make_sleeper()
        assert isinstance(sleeper, TimerfdSleeper)
        fd = sleeper._timer.fd
        waiter = asyncio.create_task(sleeper.sleep_until(time.monotonic_ns() + 10 * MS))
        await asyncio.sleep(0)
        sleeper.close()
        with pytest.raises(OSError):
            os.fstat(fd)  # checked at once, before anything can reuse the number
        await asyncio.gather(waiter, return_exceptions=True)
        await sleeper.sleep_until(time.monotonic_ns() + MS)  # a straggler still works
        return waiter.cancelled()

    assert asyncio.run(main())


def test_env_forces_the_spin_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMER_ENV, "spin")

    async def main() -> str:
        sleeper = make_sleeper()
        await sleeper.sleep_until(time.monotonic_ns() + MS)
        sleeper.close()
        return sleeper.name

    assert asyncio.run(main()) == SpinSleeper.name


def test_python_3_13_os_timerfd_api_is_called_with_absolute_monotonic_deadlines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kit.delayline import timer

    calls: list[tuple[str, object, dict[str, int]]] = []
    r, w = os.pipe()  # a stand-in fd
    os.close(w)
    monkeypatch.setattr(os, "TFD_NONBLOCK", 0o4000, raising=False)
    monkeypatch.setattr(os, "TFD_CLOEXEC", 0o2000000, raising=False)
    monkeypatch.setattr(os, "TFD_TIMER_ABSTIME", 1, raising=False)
    monkeypatch.setattr(
        os,
        "timerfd_create",
        lambda clock, **kw: calls.append(("create", clock, kw)) or r,
        raising=False,
    )
    monkeypatch.setattr(
        os, "timerfd_settime_ns", lambda fd, **kw: calls.append(("set", fd, kw)), raising=False
    )
    tfd = timer.open_timerfd()
    tfd.set_abs_ns(123)
    tfd.set_abs_ns(None)
    tfd.close()
    assert calls == [
        ("create", time.CLOCK_MONOTONIC, {"flags": 0o4000 | 0o2000000}),
        ("set", r, {"flags": 1, "initial": 123}),
        ("set", r, {"flags": 1, "initial": 0}),
    ]
