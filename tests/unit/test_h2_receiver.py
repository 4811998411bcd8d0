"""The receive side of H2GrpcConnection, sans-IO: grpc-go's credit rules, paced readers,
connection credit on read, the pool. An h2 server state machine in memory; time passed in.

Memory is asserted as the protocol bounds it: the bytes held unread never exceed what the
policy let the sender send (stream windows + grants, the connection window on read
credit, or the pool).
"""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
import pytest

from kit.clients.h2 import wire
from kit.clients.h2.connection import Call, ConnOptions, H2GrpcConnection
from kit.clients.pacing import ReadPacer
from kit.plan.units import KIB, MIB

MS = 1_000_000
FRAME = 16_384


class Server:
    """The server end: sends as much as its windows allow, frame by frame."""

    def __init__(self) -> None:
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.initiate_connection()
        self.left: dict[int, int] = {}
        self.updates: list[tuple[int, int]] = []

    def hear(self, client: H2GrpcConnection) -> list[h2.events.Event]:
        events = self.h2.receive_data(client.data_to_send())
        for event in events:
            if isinstance(event, h2.events.WindowUpdated):
                self.updates.append((event.stream_id or 0, event.delta or 0))
        return events

    def open(self, client: H2GrpcConnection, *sizes: int, readers: int = 0) -> list[Call]:
        """Open a batch of calls (the first ``readers`` paced at 1 MB/s), as the client does:
        all started, then sent at once."""
        calls = [
            client.start_call(
                wire.DOWNLOAD_PATH,
                wire.download_body(0, 1),
                0,
                ReadPacer(1_000_000, 0, seed=i + 1) if i < readers else None,
                expected_bytes=size,
            )
            for i, size in enumerate(sizes)
        ]
        self.hear(client)
        for call, size in zip(calls, sizes, strict=True):
            self.h2.send_headers(call.stream_id, [(b":status", b"200")])
            self.left[call.stream_id] = size
        return calls

    def push(self, client: H2GrpcConnection, now_ns: int) -> int:
        """Send what the windows allow (one read on the client's side); bytes sent."""
        sent = 0
        for stream_id, left in self.left.items():
            while left > 0:
                room = min(self.h2.local_flow_control_window(stream_id), FRAME, left)
                if room <= 0:
                    break
                self.h2.send_data(stream_id, b"\x5a" * room)
                left -= room
                sent += room
            self.left[stream_id] = left
            if left == 0 and stream_id in self.h2.streams and self.h2.streams[stream_id].open:
                self.h2.send_headers(stream_id, [(b"grpc-status", b"0")], end_stream=True)
        client.receive(self.h2.data_to_send(), now_ns)
        self.hear(client)
        return sent


def connect(options: ConnOptions) -> tuple[H2GrpcConnection, Server]:
    client = H2GrpcConnection("test:1", options)
    server = Server()
    client.initiate()
    server.hear(client)
    client.receive(server.h2.data_to_send(), 0)
    server.hear(client)
    server.updates.clear()
    return client, server


def run(client: H2GrpcConnection, server: Server, rounds: int, step_ns: int = MS) -> int:
    """Alternate server sends and paced reads; the peak bytes held unread."""
    peak = 0
    for i in range(rounds):  # bounded
        now = i * step_ns
        server.push(client, now)
        client.advance(now)
        server.hear(client)
        peak = max(peak, client.unread_bytes)
    return peak


GRPC_GO = ConnOptions(65_535, 65_535, FRAME, credit_policy="quarter", dynamic=True)


def test_grpc_go_connection_credit_goes_back_a_quarter_at_a_time() -> None:
    client, server = connect(GRPC_GO)
    server.open(client, 10 * FRAME)
    server.push(client, 0)
    conn = [d for s, d in server.updates if s == 0]
    # Every 16 KiB frame takes the unacked bytes past 65535 // 4: one update per frame (the
    # last frame the 65535 window allows is 16383 B, just enough).
    assert conn == [FRAME, FRAME, FRAME, 65_535 - 3 * FRAME]


def test_grpc_go_grants_a_message_larger_than_the_window_when_reading_starts() -> None:
    client, server = connect(GRPC_GO)
    (call,) = server.open(client, 300 * KIB)
    message = wire.grpc_message(b"\x5a" * (256 * KIB))
    server.h2.send_data(call.stream_id, message[:FRAME])
    client.receive(server.h2.data_to_send(), 0)
    server.hear(client)
    grants = [d for s, d in server.updates if s == call.stream_id]
    assert grants[0] == 256 * KIB  # the whole message, as inFlow.maybeAdjust
    assert call.flow is not None and call.flow.delta == 256 * KIB - (FRAME - 5)  # repaid by reads


def test_a_slow_reader_holds_only_its_stream_window_under_receipt_credit() -> None:
    window = 256 * KIB
    options = ConnOptions(window, 4 * MIB, FRAME)  # conn credit on receipt (default)
    client, server = connect(options)
    slow, fast = server.open(client, 8 * MIB, 2 * MIB, readers=1)
    peak = run(client, server, 400)
    assert fast.finished and not slow.finished
    assert peak <= window  # the slow stream's window; the fast one reads at once
    assert slow.peak_unread_bytes == peak and fast.peak_unread_bytes == 0


def test_read_credit_lets_a_slow_reader_take_the_connection_window() -> None:
    window, conn = 4 * MIB, MIB
    options = ConnOptions(window, conn, FRAME, conn_credit="read")
    client, server = connect(options)
    (slow,) = server.open(client, 8 * MIB, readers=1)
    server.push(client, 0)  # the slow stream alone first: it fills the connection window
    (fast,) = server.open(client, 2 * MIB)
    peak = run(client, server, 200)  # 200 ms of reads at 1 MB/s free ~200 kB
    assert peak <= conn  # read credit: the connection window bounds the memory
    assert not fast.finished and fast.data_bytes < 400 * KIB  # head-of-line blocked
    assert slow.unread_bytes > 0


def test_the_pool_shares_evenly_and_never_holds_more_than_the_pool() -> None:
    pool_bytes = 1_600_000
    options = ConnOptions(FRAME, 2**31 - 1, FRAME, pool_bytes=pool_bytes)
    client, server = connect(options)
    calls = server.open(client, *[4 * MIB] * 8, readers=8)
    share = pool_bytes // FRAME // 8 * FRAME
    assert client.share_bytes == share
    peak = run(client, server, 300)
    assert peak <= pool_bytes
    assert all(c.peak_window_bytes == share for c in calls)
    assert all(c.peak_unread_bytes <= share for c in calls)


def test_pool_windows_grow_when_streams_finish_and_stop_at_the_expected_end() -> None:
    options = ConnOptions(FRAME, 2**31 - 1, FRAME, pool_bytes=64 * FRAME)
    client, server = connect(options)
    short, long = server.open(client, 10 * FRAME, 300 * FRAME)
    assert client.share_bytes == 32 * FRAME
    # The short stream never gets past its 10 frames: its window stops at the end.
    assert short.advertised_bytes == 10 * FRAME
    run(client, server, 20)
    assert short.finished and long.finished
    assert long.peak_window_bytes == 64 * FRAME  # the whole pool once it was alone


def test_a_cancelled_slow_stream_drops_what_it_had_not_read() -> None:
    options = ConnOptions(256 * KIB, MIB, FRAME)
    client, server = connect(options)
    (slow,) = server.open(client, MIB, readers=1)
    server.push(client, 0)
    assert client.unread_bytes == 256 * KIB
    client.cancel(slow)
    assert client.unread_bytes == 0 and slow.cancelled
    assert any(isinstance(e, h2.events.StreamReset) for e in server.hear(client))


@pytest.mark.parametrize("policy", ["immediate", "half", "quarter"])
def test_connection_credit_is_never_lost_across_bdp_pings(policy: str) -> None:
    """Every byte received goes back (or is still pending), plus every growth."""
    options = ConnOptions(65_535, 65_535, FRAME, credit_policy=policy, dynamic=True)  # type: ignore[arg-type]
    client, server = connect(options)
    client.start_bdp()
    client.start_timing(0)
    (call,) = server.open(client, 2 * MIB)
    run(client, server, 60, step_ns=5 * MS)
    assert call.finished
    returned = sum(d for s, d in server.updates if s == 0)
    pending = client._conn_flow.pending
    assert returned + pending == call.data_bytes + client.conn_window_bytes - 65_535
