"""Pure credit, pool and pacing rules: numbers in, numbers out (no connection, no sockets)."""

from __future__ import annotations

import pytest

from kit.clients.h2.credit import ConnFlow, StreamFlow
from kit.clients.h2.pool import (
    UNIT_BYTES,
    PoolCounts,
    share_bytes,
    update_floor,
    window_increment,
)
from kit.clients.pacing import ReadPacer

# -- connection credit (grpc-go's trInFlow, three thresholds) -------------------------------


def test_immediate_credit_returns_every_byte_at_once() -> None:
    flow = ConnFlow(65_536, "immediate")
    assert flow.returnable(100) == 100
    assert flow.returnable(16_393) == 16_393  # padding included: flow-controlled length
    assert flow.returnable(0) == 0


def test_half_credit_waits_for_half_the_window() -> None:
    flow = ConnFlow(65_536, "half")
    assert flow.returnable(30_000) == 0
    assert flow.returnable(2_767) == 0
    assert flow.returnable(1) == 32_768
    assert flow.pending == 0


def test_quarter_credit_is_grpc_go_s_limit_over_4() -> None:
    flow = ConnFlow(65_535, "quarter")
    assert flow.returnable(16_382) == 0  # below 65535 // 4 = 16383
    assert flow.returnable(1) == 16_383
    assert [flow.returnable(16_384) for _ in range(3)] == [16_384] * 3  # each frame crosses


def test_flush_returns_what_is_pending_as_before_a_bdp_ping() -> None:
    flow = ConnFlow(65_535, "quarter")
    flow.returnable(5_000)
    assert flow.flush() == 5_000
    assert flow.flush() == 0


def test_a_grown_limit_moves_the_threshold_and_is_announced_as_its_difference() -> None:
    flow = ConnFlow(65_535, "quarter")
    assert flow.new_limit(262_144) == 262_144 - 65_535
    assert flow.returnable(20_000) == 0  # 20000 < 262144 / 4
    assert flow.returnable(45_536) == 65_536
    assert flow.new_limit(1000) == 0  # never shrinks


# -- stream credit (grpc-go's inFlow): on read, with whole-message grants -------------------


def test_stream_credit_follows_reads_not_receipt() -> None:
    flow = StreamFlow(65_535, "quarter")
    flow.received(40_000)
    assert flow.unread == 40_000
    assert flow.read(10_000) == 0
    assert flow.read(6_383) == 16_383
    assert flow.read(100_000) == 23_617  # reads never exceed what arrived


def test_a_message_larger_than_the_window_is_granted_whole() -> None:
    flow = StreamFlow(65_535, "quarter")
    flow.received(5)
    flow.read(5)  # the 5-byte prefix
    assert flow.message_started(262_144) == 262_144
    assert flow.allowed_bytes == 65_535 + 262_144
    flow.received(200_000)
    assert flow.read(200_000) == 0  # repays the grant: no credit owed yet
    assert flow.delta == 62_144
    flow.received(80_000)
    assert flow.read(80_000) == 5 + 17_856  # the prefix, and what is left after repaying


def test_a_message_that_fits_what_the_sender_may_send_gets_no_grant() -> None:
    flow = StreamFlow(65_535, "quarter")
    assert flow.message_started(60_000) == 0
    flow.received(60_000)
    assert flow.message_started(300_000) == 300_000  # 240000 untransmitted > 5535 left


def test_immediate_and_half_streams_never_grant() -> None:
    for policy in ("immediate", "half"):
        flow = StreamFlow(65_536, policy)  # type: ignore[arg-type]
        assert flow.message_started(10 * 65_536) == 0


# -- the pool (HAProxy's share arithmetic) --------------------------------------------------


@pytest.mark.parametrize(("receiving", "buffers"), [(1, 97), (2, 48), (8, 12)])
def test_the_pool_is_divided_evenly_in_whole_buffers(receiving: int, buffers: int) -> None:
    assert share_bytes(1_600_000, PoolCounts(receiving)) == buffers * UNIT_BYTES


def test_non_receiving_streams_keep_a_buffer_and_new_ones_one_per_8() -> None:
    # HAProxy's numbers: 100 buffers, 8 receiving, 92 streams could still open ->
    # 12 kept back, 88 shared: 11 buffers (~180 kB) each.
    assert share_bytes(100 * UNIT_BYTES, PoolCounts(8, could_open=92)) == 11 * UNIT_BYTES
    assert share_bytes(100 * UNIT_BYTES, PoolCounts(2, not_receiving=4)) == 48 * UNIT_BYTES


def test_a_stream_always_gets_one_buffer() -> None:
    assert share_bytes(UNIT_BYTES, PoolCounts(50)) == UNIT_BYTES
    assert share_bytes(10 * UNIT_BYTES, PoolCounts(0)) == UNIT_BYTES


def test_window_updates_respect_the_floor_and_the_expected_end() -> None:
    floor = update_floor(200_000)
    assert floor == UNIT_BYTES
    assert window_increment(0, 16_384, 200_000, None, floor) == 183_616
    assert window_increment(10_000, 200_000, 200_000, None, floor) == 0  # 10000 < floor
    assert window_increment(20_000, 200_000, 200_000, None, floor) == 20_000
    # never past the bytes the stream still expects, however small the last update
    assert window_increment(95_000, 100_000, 200_000, 100_100, floor) == 100


# -- the paced reader -------------------------------------------------------------------------


def test_a_paced_reader_keeps_its_rate_and_never_saves_up() -> None:
    pacer = ReadPacer(1_000_000, start_ns=0, seed=7, chunk_bytes=10_000)
    read, now = 0, 0
    for _ in range(100_000):  # bounded
        if now >= 2_000_000_000:
            break
        now = pacer.due_ns
        read += pacer.take(now, 1 << 30)
    assert read == pytest.approx(2_000_000, rel=0.05)
    idle = ReadPacer(1_000_000, start_ns=0, seed=7, chunk_bytes=10_000)
    assert idle.take(idle.due_ns, 3) == 3  # takes what waits, the rest of the chunk is lost
    assert idle.take(idle.due_ns + 10**9, 1 << 30) == 10_000  # one chunk late, not many
    assert idle.take(idle.due_ns, 1 << 30) == 10_000


def test_the_pacing_is_seeded() -> None:
    def dues(seed: int) -> list[int]:
        pacer = ReadPacer(1e6, 0, seed)
        return [pacer.due_ns if pacer.take(pacer.due_ns, 1) else 0 for _ in range(5)]

    assert dues(1) == dues(1)
    assert dues(1) != dues(2)
