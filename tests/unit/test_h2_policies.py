"""The window-policy models, each against its source's own test cases where it has them,
and every policy against the credit it may grant (a property test over random runs).

quic-go: ``flow_controller_stream_test.go`` (TestStreamWindowUpdate,
TestStreamWindowAutoTuning); QUICHE: ``quic_flow_controller_test.cc`` (ReceivingBytes,
ReceivingBytesFastIncreasesFlowWindow, ReceivingBytesNormalStableFlowWindow); grpc-java:
``NettyHandlerTestBase.java`` (bdpPingLimitOutstanding, windowShouldNotExceedMaxWindowSize,
dataSizeSincePingAccumulates). hyper's ping.rs and .NET's window manager ship no unit tests
of these rules: their cases here follow the rules as written, and hyper's PONG case a frame
sequence of real tonic's.
"""

from __future__ import annotations

import h2.connection
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_h2_receiver import FRAME, Server, connect, run

from kit.clients.h2 import policies
from kit.clients.h2.connection import ConnOptions, H2GrpcConnection
from kit.clients.h2.events import WindowsGrew
from kit.clients.h2.policies import dotnet, grpc_java, hyper, linux, quiche
from kit.clients.h2.policies.model import Window
from kit.clients.h2.policies.quic_go import QuicGoPolicy
from kit.plan.trial import MODEL_POLICIES
from kit.plan.units import HTTP2_MAX_WINDOW_BYTES, KIB, MIB

MS = 1_000_000
S = 1_000_000_000


# -- quic-go ----------------------------------------------------------------------------------


def quic_go(stream_window: int, conn_window: int, stream_max: int, conn_max: int) -> QuicGoPolicy:
    policy = QuicGoPolicy(stream_window, conn_window)
    policy.conn_ctl.max_size = conn_max
    policy.opened(1, None, 0)
    policy.ctls[1].max_size = stream_max
    return policy


def test_quic_go_updates_once_a_quarter_is_read() -> None:
    """TestStreamWindowUpdate: offset 125 after 25 of 100 read, 150 after 50."""
    policy = quic_go(100, HTTP2_MAX_WINDOW_BYTES, 100, HTTP2_MAX_WINDOW_BYTES)
    policy.data(1, 100, 0, 0)
    assert policy.read(1, 24, 0).grants == ()
    assert (1, 25) in policy.read(1, 1, 0).grants and policy.streams[1].limit == 125
    assert policy.read(1, 24, 0).grants == ()
    policy.read(1, 1, 0)
    assert policy.streams[1].limit == 150


def test_quic_go_auto_tuning_doubles_fast_windows_and_drags_the_connection() -> None:
    """TestStreamWindowAutoTuning, number for number (RTT 1 s)."""
    policy = quic_go(100, 150, 399, 350)
    policy.rtt.smoothed_ns = S
    policy.data(1, 100, 0, 0)
    policy.read(1, 51, 2_500 * MS)  # too slow: no growth
    assert (policy.streams[1].limit, policy.conn.limit) == (51 + 100, 51 + 150)
    policy.read(1, 51, 4_500 * MS)  # fast enough: 200, and the connection 1.5 x 200
    assert (policy.streams[1].limit, policy.conn.limit) == (102 + 200, 102 + 300)
    policy.read(1, 101, 6_500 * MS)  # both bump into their maxima
    assert (policy.streams[1].limit, policy.conn.limit) == (203 + 399, 203 + 350)


# -- QUICHE -----------------------------------------------------------------------------------

WINDOW = 65_536  # QUICHE's kInitialSessionFlowControlWindowForTest is 1.5 MiB; any works
RTT_NS = 100 * MS  # its kRtt


def tuner() -> tuple[quiche.Tuner, Window]:
    window = Window(WINDOW)
    return quiche.Tuner(window, quiche.STREAM_LIMIT_BYTES), window


def test_quiche_refills_once_half_is_consumed() -> None:
    """ReceivingBytes (no auto-tuning: no RTT): one update restores the whole window."""
    t, w = tuner()
    w.received = 1 + WINDOW // 2
    assert w.limit - w.received == WINDOW // 2 - 1
    w.consumed = 1 + WINDOW // 2
    assert t.maybe_update(0, 1 * MS) > 0
    assert w.limit - w.received == WINDOW


def test_quiche_doubles_when_updates_come_within_two_rtts() -> None:
    """ReceivingBytesFastIncreasesFlowWindow: the first update doubles (the initial window
    counts as an update), a second within 2 RTTs doubles again."""
    t, w = tuner()
    threshold = WINDOW // 2
    w.received = w.consumed = threshold + 1
    t.maybe_update(RTT_NS, 1 * MS)
    assert w.limit - w.received == 2 * WINDOW
    w.received = w.consumed = 2 * (threshold + 1)
    t.maybe_update(RTT_NS, 1 * MS + 2 * RTT_NS - MS)
    assert w.size // 2 > threshold


def test_quiche_keeps_a_window_updated_slower_than_two_rtts() -> None:
    """ReceivingBytesNormalStableFlowWindow: after > 2 RTTs the threshold stays 2 x."""
    t, w = tuner()
    threshold = WINDOW // 2
    w.received = w.consumed = threshold + 1
    t.maybe_update(RTT_NS, 1 * MS)
    w.received = w.consumed = 2 * (threshold + 1) + WINDOW // 2  # past the new threshold
    t.maybe_update(RTT_NS, 1 * MS + 2 * RTT_NS + MS)
    assert w.size // 2 == 2 * threshold


def test_quiche_session_is_not_dragged_by_a_stream_below_its_cap() -> None:
    """EnsureWindowAtLeast compares the session's cap, not its window, with 1.5 x stream."""
    policy = quiche.QuichePolicy()
    size = policy.conn.size
    policy.ensure_session_at_least(3 * MIB, 0)
    assert policy.conn.size == size


# -- grpc-java --------------------------------------------------------------------------------


def java(window: int = 64 * KIB) -> grpc_java.GrpcJavaPolicy:
    policy = grpc_java.GrpcJavaPolicy(window, window)
    policy.opened(3, None, 0)
    return policy


def read_copies(policy: grpc_java.GrpcJavaPolicy, copies: int, kib: int, now: int) -> int:
    """NettyHandlerTestBase.readXCopies: each gRPC frame (data + 5 B) read and consumed;
    the PINGs it asked for."""
    pings = 0
    for _ in range(copies):
        size = kib * KIB + 5
        pings += policy.data(3, size, 0, now).ping
        policy.read(3, size, now)
    return pings


def test_grpc_java_limits_outstanding_bdp_pings() -> None:
    """bdpPingLimitOutstanding."""
    policy = java()
    assert read_copies(policy, 1, 1, 0) == 1  # should initiate a ping
    assert read_copies(policy, 1, 40, 0) == 0  # no ping, already active
    policy.ping_acked(20 * MS)
    assert read_copies(policy, 4, 40, 20 * MS) == 1  # initiate ping
    policy.ping_acked(21 * MS)
    assert read_copies(policy, 1, 1, 21 * MS) == 1  # 160K since the last PING started
    policy.ping_acked(22 * MS)
    assert read_copies(policy, 1, 1, 23 * MS) == 0  # too little data
    assert policy.pings_sent == 3


def test_grpc_java_counts_data_since_the_ping_and_caps_the_window() -> None:
    """dataSizeSincePingAccumulates; windowShouldNotExceedMaxWindowSize."""
    policy = java()
    for _ in range(3):
        policy.data(3, 8, 0, 0)
    assert policy.data_since_ping == 24
    policy.data_since_ping = grpc_java.MAX_WINDOW_BYTES  # setDataSizeAndSincePing(max)
    policy.ping_sent_ns, policy.ping_outstanding = 10 * S, True
    answer = policy.ping_acked(11 * S)
    assert answer.settings and answer.stream_window == grpc_java.MAX_WINDOW_BYTES
    assert policy.conn.size == grpc_java.MAX_WINDOW_BYTES


def test_grpc_java_sends_no_more_pings_on_small_frames() -> None:
    """bdpPingAvoidsTooManyPingsOnSpecialServers: one PING over three small frames."""
    policy = java(MIB)
    assert policy.data(3, 100, 0, 0).ping
    policy.ping_acked(1 * MS)
    assert not policy.data(3, 100, 0, 2 * MS).ping
    policy.ping_acked(3 * MS)
    assert not policy.data(3, 100, 0, 4 * MS).ping
    assert policy.pings_sent == 1


def test_grpc_java_ping_limiter_allows_two_pings_between_writes() -> None:
    """PingCountingFrameWriter: fewer than 2 PINGs since our last HEADERS, DATA or
    WINDOW_UPDATE."""
    policy = java(MIB)
    policy.limited_pings = 2
    assert not policy.data(3, 100, 0, 0).ping
    policy.answer(((3, 1),), False)  # a WINDOW_UPDATE written: the count starts again
    assert policy.data(3, 100, 0, 0).ping


def test_grpc_java_refills_the_connection_window_on_receipt() -> None:
    """NettyClientHandler builds ``DefaultHttp2LocalFlowController(connection, 0.5, true)``:
    ``AutoRefillState.receiveFlowControlledFrame`` consumes each frame as it arrives, so
    half a window received (none of it read) brings the connection's WINDOW_UPDATE; the
    stream's credit waits for the application."""
    policy = java(MIB)
    assert policy.data(3, MIB // 2 - 1, 0, 0).grants == ()
    assert policy.data(3, 1, 0, 0).grants == ((0, MIB // 2),)
    assert policy.read(3, MIB // 2, 0).grants == ((3, MIB // 2),)  # stream credit only
    assert policy.conn.limit == MIB + MIB // 2


def test_grpc_java_slow_reader_does_not_block_the_other_stream() -> None:
    """Two streams on one connection, the first read at 1 MB/s. With connection credit on
    consumption (the model before 2026-12-03) the slow stream's unread MiB held the whole
    1 MiB connection window and the fast stream got 0 bytes in 400 ms; with Netty's
    auto-refill it finishes in a few ms and the slow stream holds only its stream window."""
    client, server = connect(ConnOptions(MIB, MIB, FRAME, model="grpc-java"))
    client.start_policy(0)
    slow, fast = server.open(client, 8 * MIB, 2 * MIB, readers=1)
    run(client, server, 50)
    assert fast.finished and fast.data_bytes == 2 * MIB
    assert not slow.finished
    assert isinstance(client.policy, grpc_java.GrpcJavaPolicy)
    assert slow.peak_unread_bytes <= client.policy.largest_stream_window()


# -- hyper ------------------------------------------------------------------------------------


def test_hyper_bdp_grows_on_two_thirds_and_backs_its_pings_off() -> None:
    bdp = hyper.Bdp(65_535)
    assert bdp.calculate(60_000, 0.01) == 120_000  # >= 2/3 x 65535: 2 x sample
    assert bdp.ping_delay_ns == hyper.INITIAL_PING_DELAY_NS // 2
    assert bdp.calculate(60_000, 0.01) is None  # < 2/3 x 120000: stable, once
    assert bdp.calculate(60_000, 0.01) is None  # twice: the delay quadruples
    assert bdp.ping_delay_ns == 2 * hyper.INITIAL_PING_DELAY_NS
    assert bdp.calculate(20 * MIB, 0.01) == hyper.BDP_LIMIT_BYTES


def test_hyper_ping_delay_quadruples_while_under_ten_seconds_up_to_25_6() -> None:
    """ping.rs stabilize_delay: x4 after two stable samples while the delay is < 10 s, so
    100 ms -> 400 ms -> 1.6 s -> 6.4 s -> 25.6 s, and no further."""
    bdp = hyper.Bdp(hyper.BDP_LIMIT_BYTES)  # at the cap every sample is stable
    delays = []
    for _ in range(12):
        bdp.calculate(1000, 0.02)
        delays.append(bdp.ping_delay_ns)
    assert delays[1::2] == [400 * MS, 1_600 * MS, 6_400 * MS, 25_600 * MS, 25_600 * MS,
                            25_600 * MS]  # fmt: skip


def test_hyper_first_ping_goes_with_the_first_data_read_then_waits_ping_delay() -> None:
    """channel(): next_bdp_at = now, so the first DATA read PINGs at once; after the PONG
    no byte counts and no PING goes until next_bdp_at = pong + ping_delay."""
    policy = hyper.HyperPolicy()
    policy.opened(1, None, 0)
    policy.data(1, 1000, 0, 0)
    assert policy.read(1, 1000, 0).ping  # the first read
    policy.ping_acked(20 * MS)
    policy.read_done(20 * MS)  # a stable first sample: the delay stays 100 ms
    delay = policy.bdp.ping_delay_ns
    assert delay == hyper.INITIAL_PING_DELAY_NS
    policy.data(1, 1000, 0, 21 * MS)
    assert not policy.read(1, 1000, 21 * MS).ping and policy.sample_bytes == 0
    policy.data(1, 1000, 0, 20 * MS + delay)
    assert policy.read(1, 1000, 20 * MS + delay).ping and policy.sample_bytes == 1000


def test_hyper_releases_at_half_of_the_window_left() -> None:
    w = Window(65_535)
    w.received = w.consumed = 20_000  # released 20000 < (65535 - 20000) / 2
    assert hyper.h2_release(w) == 0
    w.received = w.consumed = 22_000  # 22000 >= 43535 // 2
    assert hyper.h2_release(w) == 22_000 and w.limit == 65_535 + 22_000


@pytest.mark.parametrize("slices", [1, 3])
def test_hyper_counts_the_data_read_with_its_pong(slices: int) -> None:
    """Real tonic on the wire (4 MiB at 20 ms, adaptive window): a 65535-byte burst, the BDP
    PING sent on its first frame, then the PONG arriving in one read with 49152 bytes of
    DATA, and SETTINGS_INITIAL_WINDOW_SIZE 229374 = 2 x (65535 + 49152): hyper's Ponger
    sees the PONG at its next poll, after h2 has handed over every frame read with it (the
    shell may feed one read in slices: the sample closes at the read's end)."""
    client, server = connect(ConnOptions(65_535, 65_535, FRAME, model="hyper"))
    client.start_policy(0)
    (call,) = server.open(client, 4 * MIB)
    server.push(client, 0)  # 65535 in one read: a PING goes out with the first frame
    acked = server.h2.data_to_send()  # the server read the PING: its PONG goes first
    for _ in range(3):
        server.h2.send_data(call.stream_id, b"\x5a" * FRAME)
    read = acked + server.h2.data_to_send()
    cut = [len(read) * i // slices for i in range(slices + 1)]
    events = []
    for i in range(slices):  # bounded: at most 3 slices
        part = read[cut[i] : cut[i + 1]]
        events += client.receive(part, 20 * MS, read_end=i == slices - 1)
    grew = [e.window_bytes for e in events if isinstance(e, WindowsGrew)]
    assert grew == [2 * (65_535 + 3 * FRAME)]  # 229374, as tonic sent
    assert client.window_trace[-1][1] == 229_374


# -- .NET -------------------------------------------------------------------------------------


def test_dotnet_doubles_a_window_that_fills_within_an_rtt() -> None:
    policy = dotnet.DotnetPolicy()
    policy.opened(1, None, 0)
    policy.min_rtt_ns = 10 * MS
    eighth = 65_535 // 8 + 1
    policy.data(1, eighth, 0, 0)
    grants = dict(policy.read(1, eighth, 1 * MS).grants)  # 1/8 in 1 ms << RTT: double
    assert grants[1] == eighth + 65_535 and policy.streams[1].size == 2 * 65_535
    policy.data(1, 2 * eighth, 0, 1 * MS)
    grants = dict(policy.read(1, 2 * eighth, 1 * S).grants)  # slow: no growth
    assert grants[1] == 2 * eighth and policy.streams[1].size == 2 * 65_535


def test_dotnet_pings_a_burst_of_four_then_every_two_seconds_after_credit() -> None:
    """RttEstimator (Http2StreamWindowManager.cs @32eab2c9590e): InitialBurstCount 4, then
    more than PingIntervalInSeconds = 2 s apart, each after a forced connection
    WINDOW_UPDATE (the model before followed 03d70ca7: a burst of 2, then one a second)."""
    policy = dotnet.DotnetPolicy()
    policy.opened(1, None, 0)
    sent, forced = [], []
    for t in range(0, 5_000, 10):  # a 100-byte frame every 10 ms, each PING acked in 1 ms
        now = t * MS
        answer = policy.data(1, 100, 0, now)
        if answer.ping:
            sent.append(t)
            forced.append(dict(answer.grants).get(0, 0))
            policy.ping_acked(now + MS)
    assert sent == [0, 10, 20, 30, 2040, 4050]
    assert forced == [100, 100, 100, 100, 201 * 100, 201 * 100]  # pending credit, then PING


def test_dotnet_pings_after_the_burst_only_with_credit_to_send() -> None:
    """ForceSendConnectionWindowUpdate returns false with nothing pending: no PING then
    (after the burst), and the next DATA frame tries again."""
    policy = dotnet.DotnetPolicy()
    policy.opened(1, None, 0)
    policy.initial_burst = 0
    policy.conn_pending = 0
    assert not policy.data(1, 0, 0, 3 * S).ping  # an empty frame: no credit, no PING
    answer = policy.data(1, 100, 0, 3 * S)
    assert answer.ping and answer.grants == ((0, 100),)


def test_dotnet_returns_connection_credit_on_receipt_every_eight_mib() -> None:
    """ProcessDataFrame -> ExtendWindow(frameData.Length): 8 MiB received, none read,
    sends the connection's WINDOW_UPDATE; reads return stream credit only."""
    policy = dotnet.DotnetPolicy()
    policy.opened(1, None, 0)
    policy.initial_burst = 0
    policy.ping_sent_ns = 0
    frame = 16 * KIB
    updates = [dict(policy.data(1, frame, 0, MS).grants).get(0, 0) for _ in range(512)]
    assert updates[:-1] == [0] * 511 and updates[-1] == 8 * MIB
    assert all(g[0] != 0 for g in policy.read(1, 8 * MIB, 2 * MS).grants)


# -- Linux (6.18) -----------------------------------------------------------------------------


def linux_stream(window: int = 65_535) -> tuple[linux.LinuxPolicy, Window]:
    policy = linux.LinuxPolicy(window, window)
    policy.opened(1, None, 0)
    policy.rtt.smoothed_ns = 10 * MS
    return policy, policy.streams[1]


def test_linux_grows_to_twice_copied_plus_slow_start_room() -> None:
    """tcp_rcvbuf_grow (6.18): rcvwin = 2 x copied, + 2 x rcvwin x (copied - old) / old;
    kernels up to 6.15 added 16 x advmss first (646336 here)."""
    assert linux.rcvbuf_grow(65_535, 150_000, 100_000) == 600_000
    assert linux.rcvbuf_grow(65_535, 40 * MIB, 100_000) == linux.WINDOW_CAP_BYTES
    assert linux.rcvbuf_grow(900_000, 150_000, 100_000) == 900_000  # never shrinks


def test_linux_subtracts_the_unread_queue_from_copied() -> None:
    """tcp_rcv_space_adjust since 6.16: copied -= inq, so bytes read but matched by a
    backlog count for nothing (6.15 and older grew on all 60000: to 9.5 x more)."""
    policy, w = linux_stream()
    space = policy.spaces[1]
    space.adjust(10 * MS, 0)  # the first read starts the measurement
    w.received, w.consumed = 100_000, 60_000  # 60000 read in one RTT, 40000 waiting
    space.adjust(10 * MS, 10 * MS)
    assert space.space == 20_000  # copied = 60000 - 40000
    assert w.size == 40_000 + 2 * (40_000 * (20_000 - linux.INITIAL_SPACE_BYTES) // 14_480)


def test_linux_receiver_rtt_seeks_the_minimum_and_skips_big_samples_behind_a_queue() -> None:
    """tcp_rcv_rtt_update (b879dcb1aeec, a00f135cd986): smaller samples at once, larger
    ones by 1/8 and only with an empty receive queue (the model before: RFC 9002's EWMA)."""
    rtt = linux.ReceiverRtt()
    rtt.update(20 * MS, queue_empty=False)
    rtt.update(100 * MS, queue_empty=False)  # a slow reader's queue: skipped
    assert rtt.smoothed_ns == 20 * MS
    rtt.update(100 * MS, queue_empty=True)
    assert rtt.smoothed_ns == 30 * MS
    rtt.update(10 * MS, queue_empty=False)
    assert rtt.smoothed_ns == 10 * MS


def test_linux_read_opens_the_window_at_once_only_when_it_doubles_it() -> None:
    """__tcp_cleanup_rbuf: a read that at least doubles the window the sender has sends a
    window update at once; a smaller one rides on the next ACK (the next DATA frame)."""
    policy, w = linux_stream()
    policy.data(1, 40_000, 0, 0)  # the sender has 25535 left
    assert policy.read(1, 10_000, 0).grants == ()  # 35535 < 2 x 25535: wait for the ACK
    answer = policy.data(1, 1_000, 0, 0)
    assert (1, 10_000) in answer.grants and w.available == 65_535 - 31_000
    policy.data(1, 30_000, 0, 0)  # the sender has 4535 left
    assert (1, 20_000) in policy.read(1, 20_000, 0).grants  # 24535 >= 2 x 4535: at once


# -- every policy: credit is conserved --------------------------------------------------------

POLICIES = ["static", "grpc-go", "pool", *MODEL_POLICIES]


def options_for(name: str) -> ConnOptions:
    if name == "static":
        return ConnOptions(256 * KIB, MIB, 16_384)
    if name == "grpc-go":
        return ConnOptions(65_535, 65_535, 16_384, credit_policy="quarter", dynamic=True)
    if name == "pool":
        return ConnOptions(16_384, HTTP2_MAX_WINDOW_BYTES, 16_384, pool_bytes=64 * 16_384)
    stream, conn = policies.initial_windows(name)
    return ConnOptions(stream, max(conn, 65_535), 16_384, model=name)


def server_windows(server: Server) -> tuple[int, dict[int, int]]:
    conn: h2.connection.H2Connection = server.h2
    streams = {sid: s.outbound_flow_control_window for sid, s in conn.streams.items()}
    return conn.outbound_flow_control_window, streams


def check_credit(client: H2GrpcConnection, server: Server) -> None:
    """What we granted minus what arrived is what the sender sees, >= 0, <= 2^31-1."""
    conn_window, streams = server_windows(server)
    assert 0 <= conn_window <= HTTP2_MAX_WINDOW_BYTES
    for sid, call in client.calls.items():
        if sid in streams and not call.done and not call.cancelled:
            ours = call.advertised_bytes - call.data_bytes - call.pad_bytes
            assert ours == streams[sid]
            assert 0 <= ours <= HTTP2_MAX_WINDOW_BYTES


STEPS = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 40)), min_size=1, max_size=60
)  # (what happens, ms that pass)


@pytest.mark.parametrize("name", POLICIES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, slow=st.booleans())
def test_every_policy_conserves_credit(name: str, steps: list[tuple[int, int]], slow: bool) -> None:
    client, server = connect(options_for(name))
    client.start_policy(0)
    client.start_timing(0)
    server.open(client, 3 * MIB, 2 * MIB, readers=1 if slow else 0)
    now = 0
    for action, ms in steps:  # bounded: at most 60 steps
        now += ms * MS
        if action <= 1:
            server.push(client, now)  # DATA as far as the windows allow
        elif action == 2:
            client.advance(now)  # paced reads
        else:
            client.receive(server.h2.data_to_send(), now)  # PING ACKs and the rest
        server.hear(client)
        check_credit(client, server)
