"""The schedule's rules, tested once: the vectors both delay lines pass (``tests/vectors/
schedule.json``, replayed here through ``kit.delayline.schedule``; ``linkd/tests/vectors.rs``
replays them through the Rust schedule), then properties of random schedules that hold for
any input (hypothesis), so the vectors are not the only check of the reference."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from schedule_vectors import VECTORS, build, hash_seed_vectors, replay

from kit.delayline.schedule import Bottleneck, DelayQueue, RateSteps, chunk_bytes, hash_seed

SPEC = json.loads(VECTORS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", SPEC["cases"], ids=lambda c: c["name"][:60])
def test_the_python_schedule_gives_each_cases_outcomes(case: dict[str, Any]) -> None:
    inputs = {k: v for k, v in case.items() if k != "expect"}
    assert replay(inputs) == case["expect"]


def test_the_file_is_what_the_cases_write() -> None:
    """A rule changed on purpose is a regenerated file (``python tests/unit/schedule_vectors.py``)."""
    assert json.loads(json.dumps(build())) == SPEC


def test_jitter_draws_and_seeds_are_the_vectors() -> None:
    for v in SPEC["prng"]:
        rng = random.Random(int(v["seed"]))
        j = v["jitter_ns"]
        assert [rng.randint(-j, j) for _ in range(20)] == v["draws"]
    assert hash_seed_vectors() == SPEC["hash_seed"]
    for v in SPEC["chunk_bytes"]:
        assert chunk_bytes(v["rate_bits_s"]) == v["chunk_bytes"]


# --- properties of any schedule ---------------------------------------------------------------

arrivals = st.lists(
    st.tuples(st.integers(0, 3_000_000), st.integers(1, 70_000)), min_size=1, max_size=40
)


def _run(
    queue: DelayQueue, steps: list[tuple[int, int]], pop_every_ns: int = 250_000
) -> list[tuple[int, int, int]]:
    """Push each (gap, size) in turn, popping on a grid meanwhile and at the end: each
    released chunk as (arrival, release time, size)."""
    out: list[tuple[int, int, int]] = []
    pending: list[tuple[int, int]] = []  # (arrival, size) in push order, for matching
    t, next_pop = 0, 0
    for gap, size in steps:
        t += gap
        while next_pop <= t:
            _pop(queue, next_pop, pending, out)
            next_pop += pop_every_ns
        queue.push(b"\x00" * size, t)
        pending.append((t, size))
    queue.push_eof(t)
    _pop(queue, 2**62, pending, out)
    return out


def _pop(
    queue: DelayQueue, now: int, pending: list[tuple[int, int]], out: list[tuple[int, int, int]]
) -> None:
    for chunk in queue.pop_due(now):
        left = len(chunk)
        while left:  # pieces of a split read belong to its arrival
            arrival, size = pending[0]
            take = min(left, size)
            out.append((arrival, now, take))
            left -= take
            if take == size:
                pending.pop(0)
            else:
                pending[0] = (arrival, size - take)


@given(arrivals, st.integers(0, 20_000_000), st.integers(0, 10_000_000), st.integers(0, 2**63))
def test_fifo_never_early_and_conserving(
    steps: list[tuple[int, int]], delay_ns: int, jitter_ns: int, seed: int
) -> None:
    queue = DelayQueue(delay_ns, jitter_ns=jitter_ns, seed=seed)
    dues = []
    original_push = queue.push

    def push(chunk: bytes, arrival_ns: int) -> None:
        original_push(chunk, arrival_ns)
        dues.append(queue._entries[-1][0])

    queue.push = push  # type: ignore[method-assign]
    released = _run(queue, steps)
    assert dues == sorted(dues)  # due times never decrease: never reordered
    assert sum(n for *_, n in released) == sum(n for _, n in steps)  # nothing lost
    for (arrival, _), due in zip(_arrivals(steps), dues, strict=True):
        assert due >= arrival + max(0, delay_ns - jitter_ns)  # never sooner than the draw allows
        if jitter_ns == 0:
            assert due == arrival + delay_ns  # times only grow: exactly the delay
    assert queue.eof_released and queue.buffered_bytes == 0


def _arrivals(steps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    t, out = 0, []
    for gap, size in steps:
        t += gap
        out.append((t, size))
    return out


@given(arrivals, st.sampled_from([1e6, 8e6, 123e6, 1e9, 10e9]), st.integers(0, 5_000_000))
def test_a_rate_serialises_every_byte_in_order(
    steps: list[tuple[int, int]], rate: float, delay_ns: int
) -> None:
    """What leaves by any time t is at most what the rate serialised since the first arrival
    (plus one chunk, released whole), and each byte waits at least its serialisation."""
    bottleneck = Bottleneck(rate)
    queue = DelayQueue(delay_ns, bottleneck=bottleneck)
    released = _run(queue, steps, pop_every_ns=100_000)
    first = _arrivals(steps)[0][0]
    ns_per_byte = 8e9 / rate
    total = 0
    for arrival, at, size in released:
        total += size
        assert at >= arrival + delay_ns + size * ns_per_byte - 1
        assert total <= (at - first - delay_ns) / ns_per_byte + bottleneck.chunk_bytes + 1


@given(
    st.lists(st.tuples(st.sampled_from([0.0, 1e6, 8e6, 50e6]), st.integers(1, 3_000_000)),
             min_size=1, max_size=6).filter(lambda s: any(r for r, _ in s)),
    st.integers(1, 200_000), st.floats(0, 1e9),
)  # fmt: skip
def test_rate_steps_loop_and_take_as_long_as_their_bytes(
    steps: list[tuple[float, int]], n_bytes: int, start: float
) -> None:
    """Serialising n bytes ends when the steps' capacity from the start reaches n; an outage
    carries none; the steps loop (a period's capacity is the same from any phase)."""
    rate = RateSteps(steps)
    end = rate.finish_ns(start, n_bytes)
    assert end >= start
    assert rate.capacity_bytes(start, end) == pytest.approx(n_bytes, rel=1e-6, abs=1e-3)
    for shift in (0.0, 1234.5, rate.period_ns / 3):
        capacity = rate.capacity_bytes(start + shift, start + shift + rate.period_ns)
        assert capacity == pytest.approx(rate.period_bytes, rel=1e-9)


@given(st.lists(st.integers(1, 9000), min_size=1, max_size=30), st.integers(2048, 40_000))
def test_the_cap_pauses_at_the_cap_and_resumes_below_half(sizes: list[int], cap: int) -> None:
    queue = DelayQueue(1_000, cap_bytes=cap)
    for i, size in enumerate(sizes):
        queue.push(b"\x00" * size, i)
        assert queue.should_pause_reading == (queue.peak_buffered_bytes >= cap)
    while queue.buffered_bytes:
        was_paused = queue.should_pause_reading
        due = queue.next_due_ns()
        assert due is not None
        queue.pop_due(due)
        if was_paused:
            assert queue.should_pause_reading == (queue.buffered_bytes >= cap // 2)
    assert not queue.should_pause_reading


def test_seeds_differ_per_connection_and_direction() -> None:
    seeds = {hash_seed(7, conn, d) for conn in range(1, 50) for d in ("up", "down")}
    assert len(seeds) == 98
