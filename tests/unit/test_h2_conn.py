"""H2GrpcConnection against an h2 server state machine over a socketpair (no network, no grpc).

Asserts on what the peer sees: SETTINGS, WINDOW_UPDATE increments, PINGs, and on errors.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest

from kit.clients import h2_wire
from kit.clients.bdp import BDP_PING_DATA
from kit.clients.h2_conn import Call, ConnOptions, H2GrpcConnection
from kit.errors import MeasurementError

MS = 1_000_000
SettingCodes = h2.settings.SettingCodes


class Peer:
    """The server end: an h2 server connection on one half of a socketpair."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.initiate_connection()
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.h2.data_to_send())

    def events(self) -> list[h2.events.Event]:
        out: list[h2.events.Event] = []
        while select.select([self.sock], [], [], 0.05)[0]:
            data = self.sock.recv(1 << 20)
            if not data:
                break
            out += self.h2.receive_data(data)
        self.flush()
        return out

    def respond(self, stream_id: int) -> None:
        headers = [(b":status", b"200"), (b"content-type", b"application/grpc")]
        self.h2.send_headers(stream_id, headers)

    def trailers(self, stream_id: int, status: int = 0) -> None:
        self.h2.send_headers(stream_id, [(b"grpc-status", str(status).encode())], end_stream=True)


def pump(client: H2GrpcConnection, now_ns: int = 0) -> None:
    while select.select([client.sock], [], [], 0.05)[0]:
        client.read(now_ns)


def of_type(events: list[h2.events.Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


@pytest.fixture
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[H2GrpcConnection, Peer]]:
    options: ConnOptions = getattr(request, "param", ConnOptions(16_384, 1_048_576, 1_048_576))
    a, b = socket.socketpair()
    a.settimeout(2)
    b.settimeout(2)
    client = H2GrpcConnection(a, "test:1", options)
    peer = Peer(b)
    client.start()
    peer.events()
    pump(client)
    try:
        yield client, peer
    finally:
        a.close()
        b.close()


def open_call(client: H2GrpcConnection, peer: Peer) -> Call:
    call = client.start_call(h2_wire.DOWNLOAD_PATH, h2_wire.download_body(0, 1000), 0)
    client.flush()
    peer.events()
    peer.respond(call.stream_id)
    return call


def test_settings_and_connection_window_as_sent() -> None:
    a, b = socket.socketpair()
    with a, b:
        client = H2GrpcConnection(a, "test:1", ConnOptions(16_384, 1_048_576, 1_048_576))
        peer = Peer(b)
        client.start()
        events = peer.events()
    changed = of_type(events, h2.events.RemoteSettingsChanged)[0].changed_settings
    assert changed[SettingCodes.INITIAL_WINDOW_SIZE].new_value == 16_384
    assert changed[SettingCodes.MAX_FRAME_SIZE].new_value == 1_048_576
    assert changed[SettingCodes.ENABLE_PUSH].new_value == 0
    updates = of_type(events, h2.events.WindowUpdated)
    assert [(u.stream_id, u.delta) for u in updates] == [(0, 1_048_576 - 65_535)]
    assert peer.h2.outbound_flow_control_window == 1_048_576


def test_immediate_credit_is_the_flow_controlled_length_on_stream_and_connection(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, h2_wire.grpc_message(b"x" * 995), pad_length=10)
    peer.flush()
    pump(client)
    updates = of_type(peer.events(), h2.events.WindowUpdated)
    flow_controlled = 1000 + 10 + 1  # payload + padding + the pad-length byte
    assert sorted((u.stream_id, u.delta) for u in updates) == [
        (0, flow_controlled),
        (call.stream_id, flow_controlled),
    ]
    assert call.counter.messages == 1


def test_no_stream_credit_once_trailers_ended_the_stream(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, h2_wire.grpc_message(b"x" * 100))
    peer.trailers(call.stream_id)
    peer.flush()  # DATA and trailers reach the client in one read
    pump(client, 7 * MS)
    updates = of_type(peer.events(), h2.events.WindowUpdated)
    assert [(u.stream_id, u.delta) for u in updates] == [(0, 105)]
    assert call.done and call.ended_ns == 7 * MS and call.status == 0


@pytest.mark.parametrize("pair", [ConnOptions(16_384, 65_535, 16_384, "half")], indirect=True)
def test_half_credit_waits_for_half_of_each_window(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, b"y" * 8_000)
    peer.flush()
    pump(client)
    assert of_type(peer.events(), h2.events.WindowUpdated) == []
    peer.h2.send_data(call.stream_id, b"y" * 200)
    peer.flush()
    pump(client)
    updates = of_type(peer.events(), h2.events.WindowUpdated)
    assert [(u.stream_id, u.delta) for u in updates] == [(call.stream_id, 8_200)]


def test_non_zero_grpc_status_is_a_measurement_error(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.trailers(call.stream_id, status=12)
    peer.flush()
    with pytest.raises(MeasurementError, match="grpc-status 12"):
        pump(client)


def test_cancelled_status_after_our_cancel_is_fine(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.trailers(call.stream_id, status=h2_wire.GRPC_CANCELLED)
    client.cancel(call)
    peer.flush()
    pump(client)  # the stream is reset on our side: trailers are dropped, nothing raised
    assert call.cancelled


def test_server_reset_is_a_measurement_error(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.reset_stream(call.stream_id, 2)
    peer.flush()
    with pytest.raises(MeasurementError, match="reset"):
        pump(client)


@pytest.mark.parametrize("pair", [ConnOptions(65_535, 65_535, 16_384, dynamic=True)], indirect=True)
def test_dynamic_window_grows_by_settings_and_connection_update(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    client.start_bdp(0)
    call = open_call(client, peer)
    for _ in range(4):
        peer.h2.send_data(call.stream_id, b"z" * 15_000)
    peer.flush()
    pump(client, 1 * MS)  # the first DATA frame asks for a BDP PING
    events = peer.events()  # h2 acks the PING at once
    assert [p.ping_data for p in of_type(events, h2.events.PingReceived)] == [BDP_PING_DATA]
    pump(client, 11 * MS)  # ack after 10 ms; sample 60000 >= 0.66 x 65535
    events = peer.events()
    changed = of_type(events, h2.events.RemoteSettingsChanged)[0].changed_settings
    assert changed[SettingCodes.INITIAL_WINDOW_SIZE].new_value == 120_000
    conn_updates = [u.delta for u in of_type(events, h2.events.WindowUpdated) if u.stream_id == 0]
    assert conn_updates == [120_000 - 65_535]
    assert client.window_trace == [(0, 65_535), (11 * MS, 120_000)]
    assert client.ping_rtt_ns == [10 * MS]


def test_rtt_probe_one_at_a_time(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    assert client.probe_rtt(0)
    assert not client.probe_rtt(1 * MS)  # the first is still in flight
    client.flush()
    peer.events()
    pump(client, 3 * MS)
    assert client.ping_rtt_ns == [3 * MS]
    assert client.probe_rtt(4 * MS)
