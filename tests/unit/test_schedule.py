"""DelayQueue with a fake clock: release times, order, EOF, backpressure, no accumulation."""

from __future__ import annotations

import pytest

from kit.delayline.schedule import DelayQueue
from kit.errors import UsageError
from kit.plan.processes import DEFAULT_BUFFER_CAP_BYTES

MS = 1_000_000


def test_chunk_is_released_exactly_delay_after_arrival() -> None:
    q = DelayQueue(10 * MS)
    q.push(b"abc", arrival_ns=5 * MS)
    assert q.next_due_ns() == 15 * MS
    assert q.pop_due(15 * MS - 1) == []
    assert q.pop_due(15 * MS) == [b"abc"]
    assert q.next_due_ns() is None


def test_releases_everything_due_in_order_never_reordered() -> None:
    q = DelayQueue(10 * MS)
    for i in range(5):
        q.push(bytes([i]), arrival_ns=i * MS)
    assert q.pop_due(12 * MS) == [b"\x00", b"\x01", b"\x02"]
    assert q.pop_due(100 * MS) == [b"\x03", b"\x04"]


def test_stale_arrival_time_cannot_jump_the_queue() -> None:
    q = DelayQueue(5 * MS)
    q.push(b"first", arrival_ns=10 * MS)
    q.push(b"second", arrival_ns=9 * MS)  # a clock read out of order must not reorder
    assert q.pop_due(14 * MS) == []
    assert q.pop_due(15 * MS) == [b"first", b"second"]


def test_delays_do_not_accumulate_when_the_writer_is_late() -> None:
    q = DelayQueue(10 * MS)
    q.push(b"a", 0)
    q.push(b"b", 1 * MS)
    # The writer wakes 50 ms late: both are released now; the next chunk still gets 10 ms.
    assert q.pop_due(50 * MS) == [b"a", b"b"]
    q.push(b"c", 50 * MS)
    assert q.next_due_ns() == 60 * MS


def test_eof_is_delivered_after_all_data_and_delayed_like_data() -> None:
    q = DelayQueue(10 * MS)
    q.push(b"x", 0)
    q.push_eof(2 * MS)
    assert q.pop_due(10 * MS) == [b"x"]
    assert not q.eof_released
    assert q.pop_due(12 * MS) == []
    assert q.eof_released
    assert len(q) == 0


def test_push_after_eof_is_a_bug() -> None:
    q = DelayQueue(0)
    q.push_eof(0)
    with pytest.raises(ValueError):
        q.push(b"late", 1)


def test_zero_delay_releases_immediately_and_empty_chunks_are_ignored() -> None:
    q = DelayQueue(0)
    q.push(b"", 7)
    assert len(q) == 0
    q.push(b"now", 7)
    assert q.pop_due(7) == [b"now"]


def test_buffered_and_peak_bytes() -> None:
    q = DelayQueue(10 * MS)
    q.push(b"x" * 100, 0)
    q.push(b"y" * 50, 1)
    assert q.buffered_bytes == 150
    q.pop_due(10 * MS)
    assert q.buffered_bytes == 50
    assert q.peak_buffered_bytes == 150
    assert q.released_bytes == 100


def test_backpressure_has_hysteresis() -> None:
    q = DelayQueue(10 * MS, cap_bytes=100)
    q.push(b"a" * 30, 0)
    q.push(b"b" * 30, 1)
    assert not q.should_pause_reading
    q.push(b"c" * 40, 2)
    assert q.should_pause_reading  # reached the cap
    q.pop_due(10 * MS)  # 70 left: below the cap but not below cap/2
    assert q.should_pause_reading
    q.pop_due(10 * MS + 1)  # 40 left, below cap/2
    assert not q.should_pause_reading


@pytest.mark.parametrize(("delay_ns", "cap"), [(-1, 10), (0, 0)])
def test_invalid_parameters_name_the_field(delay_ns: int, cap: int) -> None:
    with pytest.raises(UsageError, match=r"delay_ns|cap_bytes"):
        DelayQueue(delay_ns, cap)


def test_default_cap_is_the_proxy_configs_default() -> None:
    assert DelayQueue(0).cap_bytes == DEFAULT_BUFFER_CAP_BYTES
