"""The grpc-go style BDP estimator with synthetic links: growth, cap, never shrinking, one PING."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kit.clients.h2.bdp import BDP_LIMIT_BYTES, INITIAL_BDP_BYTES, BdpEstimator, WindowGrew
from kit.plan.units import MIB

MS = 1_000_000
FRAME = 16_384


def ping_cycle(
    est: BdpEstimator, start_ns: int, sample_bytes: int, rtt_ns: int
) -> WindowGrew | None:
    """One round trip: the first frame asks for the PING, the rest arrive before its ack."""
    assert est.on_data(min(FRAME, sample_bytes), start_ns)
    left = sample_bytes - min(FRAME, sample_bytes)
    while left > 0:
        assert not est.on_data(min(FRAME, left), start_ns + rtt_ns // 2)
        left -= FRAME
    return est.on_ping_ack(start_ns + rtt_ns)


def window_limited_link(
    est: BdpEstimator, rtt_ns: int, link_bdp_bytes: int, rounds: int
) -> list[int]:
    """A sender that delivers min(window, link BDP) per round trip; the windows seen."""
    windows = [est.bdp_bytes]
    for i in range(rounds):
        if est.capped:
            break
        ping_cycle(est, i * rtt_ns, min(est.bdp_bytes, link_bdp_bytes), rtt_ns)
        windows.append(est.bdp_bytes)
    return windows


def test_starts_at_grpc_go_default_and_asks_for_a_ping_on_first_data() -> None:
    est = BdpEstimator()
    assert est.bdp_bytes == INITIAL_BDP_BYTES == 65_535
    assert est.on_data(100, 0) is True
    assert est.ping_outstanding


def test_no_second_ping_while_one_is_outstanding() -> None:
    est = BdpEstimator()
    assert est.on_data(100, 0)
    assert [est.on_data(100, i * MS) for i in range(1, 50)] == [False] * 49
    est.on_ping_ack(60 * MS)
    assert est.on_data(100, 61 * MS) is True


def test_sample_counts_bytes_from_the_triggering_frame_until_the_ack() -> None:
    est = BdpEstimator()
    est.on_data(1000, 0)
    est.on_data(2000, MS)
    est.on_data(3000, 2 * MS)
    assert est.sample_bytes == 6000


def test_window_roughly_doubles_per_round_trip_when_window_limited() -> None:
    est = BdpEstimator()
    windows = window_limited_link(est, 20 * MS, link_bdp_bytes=10**12, rounds=6)
    assert windows == [65_535 * 2**k for k in range(7)]


def test_growth_caps_at_16_mib_then_pings_stop() -> None:
    est = BdpEstimator()
    windows = window_limited_link(est, 5 * MS, link_bdp_bytes=10**12, rounds=100)
    assert windows[-1] == BDP_LIMIT_BYTES == 16 * MIB
    assert len(windows) < 15  # about log2(16 MiB / 64 KiB) + 1 round trips
    assert est.capped
    assert est.on_data(FRAME, 10**12) is False


def test_settles_near_twice_the_link_bdp() -> None:
    est = BdpEstimator()
    link_bdp = MIB
    windows = window_limited_link(est, 20 * MS, link_bdp_bytes=link_bdp, rounds=40)
    # 65535-based doubling lands just under 1 MiB first, so the last step is 2 x 1048560.
    assert 0.99 * 2 * link_bdp <= windows[-1] <= 2 * link_bdp
    assert windows[-1] == windows[-10]  # stable: samples stay under 0.66 x the estimate


def test_no_growth_when_bandwidth_is_not_a_new_maximum() -> None:
    est = BdpEstimator()
    grew = ping_cycle(est, 0, 60_000, 10 * MS)
    assert grew == WindowGrew(window_bytes=120_000, sample_bytes=60_000, rtt_s=0.01)
    # Same bytes over a much longer round trip: big enough, but slower than the best seen.
    assert ping_cycle(est, 20 * MS, 80_000, 1000 * MS) is None
    assert est.bdp_bytes == 120_000


def test_no_growth_when_sample_is_below_two_thirds_of_the_estimate() -> None:
    est = BdpEstimator()
    assert ping_cycle(est, 0, int(0.6 * INITIAL_BDP_BYTES), 1 * MS) is None
    assert est.bdp_bytes == INITIAL_BDP_BYTES


def test_rtt_is_a_running_mean_then_an_ewma() -> None:
    est = BdpEstimator()
    for i in range(9):
        ping_cycle(est, i * 100 * MS, 100, (i + 1) * MS)  # samples 1..9 ms
    assert abs(est.rtt_s - 0.005) < 1e-12  # mean of 1..9 ms
    ping_cycle(est, 10_000 * MS, 100, 15 * MS)  # tenth sample: EWMA, alpha 0.9
    assert abs(est.rtt_s - (0.005 + 0.9 * (0.015 - 0.005))) < 1e-12


def test_ack_without_outstanding_ping_is_ignored() -> None:
    est = BdpEstimator()
    assert est.on_ping_ack(5 * MS) is None
    assert est.sample_count == 0


@given(
    st.lists(
        st.tuples(st.integers(1, 64 * MIB), st.integers(1, 500 * MS)),
        min_size=1,
        max_size=60,
    )
)
def test_never_shrinks_and_never_exceeds_the_cap(cycles: list[tuple[int, int]]) -> None:
    est = BdpEstimator()
    previous = est.bdp_bytes
    t = 0
    for sample, rtt in cycles:
        if est.capped:
            assert not est.on_data(sample, t)
            continue
        grew = ping_cycle(est, t, sample, rtt)
        t += rtt + MS
        assert previous <= est.bdp_bytes <= BDP_LIMIT_BYTES
        if grew is not None:
            assert grew.window_bytes == est.bdp_bytes > previous
        previous = est.bdp_bytes
