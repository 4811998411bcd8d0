"""The bottleneck queue with a fake clock: serialisation, chunking, jitter, order, backlog."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit.delayline.schedule import (
    MAX_CHUNK_BYTES,
    MIN_CHUNK_BYTES,
    Bottleneck,
    DelayQueue,
    DeliveryTrace,
    chunk_bytes,
    queue_for,
)
from kit.errors import UsageError
from kit.plan.processes import ProxyConfig
from kit.plan.trial import Link

MS = 1_000_000
MBIT = 1e6


def _drain(q: DelayQueue, step_ns: int = 100_000, limit_ns: int = 10**12) -> list[tuple[int, int]]:
    """(release time, bytes) of every chunk, popping at each due time (bounded)."""
    out: list[tuple[int, int]] = []
    for _ in range(1_000_000):
        due = q.next_due_ns()
        if due is None or due > limit_ns:
            break
        out += [(due, len(c)) for c in q.pop_due(due)]
        if q.eof_released:
            break
    return out


def test_a_chunk_is_serialised_then_delayed() -> None:
    q = DelayQueue(10 * MS, bottleneck=Bottleneck(8 * MBIT))  # 1 byte per microsecond
    q.push(b"x" * 1000, arrival_ns=0)  # 1000 B take 1 ms at the bottleneck
    assert q.next_due_ns() == 11 * MS


def test_back_to_back_chunks_queue_at_the_bottleneck() -> None:
    q = DelayQueue(10 * MS, bottleneck=Bottleneck(8 * MBIT))
    q.push(b"a" * 1000, 0)
    q.push(b"b" * 1000, 0)  # waits for the first: exit 2 ms
    assert [t for t, _ in _drain(q)] == [11 * MS, 12 * MS]


def test_an_idle_link_starts_serialising_at_arrival() -> None:
    q = DelayQueue(0, bottleneck=Bottleneck(8 * MBIT))
    q.push(b"a" * 1000, 0)
    q.push(b"b" * 1000, 50 * MS)  # the link was idle since 1 ms
    assert [t for t, _ in _drain(q)] == [1 * MS, 51 * MS]


def test_a_large_read_is_split_into_one_millisecond_chunks() -> None:
    rate = 100 * MBIT  # 12.5 kB per ms
    q = DelayQueue(5 * MS, bottleneck=Bottleneck(rate))
    q.push(b"z" * (1024 * 1024), 0)
    released = _drain(q)
    assert len(released) == -(-1024 * 1024 // chunk_bytes(rate))
    assert {n for _, n in released[:-1]} == {12_500}
    gaps = {b[0] - a[0] for a, b in itertools.pairwise(released)}
    assert max(gaps) <= MS + 1  # a steady stream, not one burst after 84 ms
    assert released[-1][0] == pytest.approx(5 * MS + 1024 * 1024 * 8 / rate * 1e9, abs=2)


def test_chunk_size_is_one_millisecond_of_the_link_within_bounds() -> None:
    assert chunk_bytes(100 * MBIT) == 12_500
    assert chunk_bytes(1e9) == 125_000
    assert chunk_bytes(1_000) == MIN_CHUNK_BYTES
    assert chunk_bytes(1e12) == MAX_CHUNK_BYTES


def test_pieces_are_views_of_the_read_and_reassemble_exactly() -> None:
    data = bytes(range(256)) * 400
    q = DelayQueue(0, bottleneck=Bottleneck(8 * MBIT))
    q.push(data, 0)
    out = []
    for _ in range(1000):
        due = q.next_due_ns()
        if due is None:
            break
        out += q.pop_due(due)
    assert b"".join(out) == data


def test_the_bottleneck_is_shared_by_connections() -> None:
    link = Bottleneck(8 * MBIT)
    a, b = DelayQueue(0, bottleneck=link), DelayQueue(0, bottleneck=link)
    a.push(b"a" * 1000, 0)
    b.push(b"b" * 1000, 0)  # the same link: behind a's chunk
    assert a.next_due_ns() == 1 * MS
    assert b.next_due_ns() == 2 * MS


def test_peak_queued_bytes_is_the_backlog_at_the_bottleneck() -> None:
    q = DelayQueue(50 * MS, bottleneck=Bottleneck(8 * MBIT))
    for _ in range(10):
        q.push(b"x" * 1000, 0)
    assert q.peak_queued_bytes == 10_000
    assert q.bottleneck is not None and q.bottleneck.queued_bytes(5 * MS) == 5000
    assert DelayQueue(5 * MS).peak_queued_bytes == 0  # unlimited: nothing queues


def test_eof_leaves_after_the_last_serialised_byte() -> None:
    q = DelayQueue(10 * MS, bottleneck=Bottleneck(8 * MBIT))
    q.push(b"x" * 5000, 0)
    q.push_eof(0)
    _drain(q)
    assert q.eof_released
    assert q.released_bytes == 5000


def test_jitter_is_uniform_around_the_delay_and_seeded() -> None:
    def delays(seed: int) -> list[int]:
        q = DelayQueue(10 * MS, jitter_ns=2 * MS, seed=seed)
        out = []
        for i in range(2000):  # one chunk at a time, like a ping-pong
            q.push(b"p", i * 100 * MS)
            out.append(q.next_due_ns() - i * 100 * MS)  # type: ignore[operator]
            q.pop_due(10**15)
        return out

    first = delays(7)
    assert first == delays(7)
    assert first != delays(8)
    assert min(first) >= 8 * MS and max(first) <= 12 * MS
    assert max(first) - min(first) > 3.9 * MS
    assert sorted(first)[1000] == pytest.approx(10 * MS, abs=0.2 * MS)


def test_jitter_above_the_delay_clamps_at_zero() -> None:
    q = DelayQueue(1 * MS, jitter_ns=5 * MS, seed=3)
    for i in range(200):
        q.push(b"p", i * 100 * MS)
        assert q.next_due_ns() >= i * 100 * MS  # type: ignore[operator]
        q.pop_due(10**15)


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 300_000), min_size=1, max_size=30),
    gaps_us=st.lists(st.integers(0, 20_000), min_size=30, max_size=30),
    rate_mbit=st.sampled_from([None, 1.0, 10.0, 100.0, 1000.0]),
    jitter_us=st.integers(0, 50_000),
    delay_us=st.integers(0, 20_000),
    seed=st.integers(0, 2**32),
)
def test_never_reorders_conserves_bytes_and_rate(
    sizes: list[int],
    gaps_us: list[int],
    rate_mbit: float | None,
    jitter_us: int,
    delay_us: int,
    seed: int,
) -> None:
    bottleneck = None if rate_mbit is None else Bottleneck(rate_mbit * MBIT)
    q = DelayQueue(delay_us * 1000, bottleneck=bottleneck, jitter_ns=jitter_us * 1000, seed=seed)
    t, sent = 0, []
    for i, n in enumerate(sizes):
        t += gaps_us[i] * 1000
        data = bytes([i % 256]) * n
        sent.append(data)
        q.push(data, t)
    q.push_eof(t)
    out: list[bytes] = []
    times: list[int] = []
    for _ in range(100_000):
        due = q.next_due_ns()
        if due is None:
            break
        chunks = q.pop_due(due)
        out += [bytes(c) for c in chunks]
        times += [due] * len(chunks)
        if q.eof_released:
            break
    assert q.eof_released
    assert b"".join(out) == b"".join(sent)  # nothing lost, duplicated or reordered
    assert times == sorted(times)
    assert q.buffered_bytes == 0
    if bottleneck is not None:
        # Rate conservation: the link never delivered faster than its rate (plus one chunk).
        total = sum(sizes)
        span_ns = times[-1] - 0
        serialise_ns = total * 8e9 / bottleneck.rate_bits_s
        assert span_ns >= serialise_ns - 1 - bottleneck.chunk_bytes * bottleneck.ns_per_byte


def test_backpressure_stays_bounded_with_a_rate() -> None:
    q = DelayQueue(10 * MS, cap_bytes=100_000, bottleneck=Bottleneck(8 * MBIT))
    for i in range(5):
        q.push(b"x" * 25_000, i)
    assert q.should_pause_reading
    q.pop_due(10 * MS + 60 * MS)  # 60 kB left the link (1 B/us): 65 kB still above cap/2
    assert q.should_pause_reading
    q.pop_due(10 * MS + 80 * MS)  # 45 kB left: below cap/2
    assert not q.should_pause_reading


def test_delivery_trace_counts_bytes_per_bucket() -> None:
    trace = DeliveryTrace(bucket_ns=2 * MS, max_buckets=3)
    trace.add(100, 10 * MS)
    trace.add(50, 11 * MS)
    trace.add(7, 14 * MS)
    trace.add(9, 99 * MS)  # beyond the bound: not traced
    assert trace.origin_ns == 10 * MS
    assert trace.buckets == [150, 0, 7]


def test_queue_for_seeds_per_connection_and_direction() -> None:
    config = ProxyConfig(upstream_port=1, link=Link(delay_up_ms=5, jitter_ms=2.0, seed=9))
    a, b = queue_for(config, "up", None, 1), queue_for(config, "down", None, 1)
    c = queue_for(config, "up", None, 1)
    draws = [[q._delay_ns() for _ in range(5)] for q in (a, b, c)]
    assert draws[0] == draws[2] and draws[0] != draws[1]


@pytest.mark.parametrize("rate", [0.0, -1.0])
def test_a_bottleneck_needs_a_positive_rate(rate: float) -> None:
    with pytest.raises(UsageError, match="rate"):
        Bottleneck(rate)


def test_negative_jitter_is_refused() -> None:
    with pytest.raises(UsageError, match="jitter"):
        DelayQueue(0, jitter_ns=-1)


def test_a_closed_connections_backlog_leaves_the_shared_link() -> None:
    link = Bottleneck(8 * MBIT)  # 1 byte per microsecond
    old, new = DelayQueue(0, bottleneck=link), DelayQueue(0, bottleneck=link)
    old.push(b"x" * 100_000, 0)  # 100 ms of backlog
    assert old.discard(10 * MS) == 100_000  # closed at 10 ms: 90 kB never serialised
    assert link.queued_bytes(10 * MS) == 0
    new.push(b"y" * 1000, 10 * MS)
    assert new.next_due_ns() == 11 * MS  # not behind the dead connection's 90 ms
    assert old.buffered_bytes == 0 and old.next_due_ns() is None
