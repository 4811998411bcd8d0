"""H2GrpcConnection, sans-IO, against an h2 server state machine: bytes in memory, no sockets.

Asserts on what the peer sees (SETTINGS, WINDOW_UPDATE increments, PINGs), on the events
the connection reports, and on the errors it raises. Time is passed in, never read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import pytest

from kit.clients.h2 import wire
from kit.clients.h2.bdp import BDP_PING_DATA
from kit.clients.h2.connection import Call, ConnOptions, H2GrpcConnection
from kit.clients.h2.events import (
    CallEnded,
    Event,
    RttMeasured,
    ServerWentAway,
    SettingsAcknowledged,
    WindowsGrew,
)
from kit.errors import MeasurementError, UsageError
from kit.plan.units import KIB, MIB

MS = 1_000_000
SettingCodes = h2.settings.SettingCodes
DEFAULT_OPTIONS = ConnOptions(16_384, 1_048_576, 1_048_576)


class Peer:
    """The server end: an h2 server connection; bytes move only when a test says so."""

    def __init__(self) -> None:
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.initiate_connection()

    def hear(self, client: H2GrpcConnection) -> list[h2.events.Event]:
        """Everything the client queued, as the server's h2 sees it."""
        return self.h2.receive_data(client.data_to_send())

    def say(self, client: H2GrpcConnection, now_ns: int = 0) -> list[Event]:
        """Everything the server queued, delivered to the client in one read."""
        return client.receive(self.h2.data_to_send(), now_ns)

    def respond(self, stream_id: int) -> None:
        headers = [(b":status", b"200"), (b"content-type", b"application/grpc")]
        self.h2.send_headers(stream_id, headers)

    def trailers(self, stream_id: int, status: int = 0) -> None:
        self.h2.send_headers(stream_id, [(b"grpc-status", str(status).encode())], end_stream=True)


def of_type(events: list[Any], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def updates(events: list[h2.events.Event]) -> list[tuple[int, int]]:
    return sorted((u.stream_id, u.delta) for u in of_type(events, h2.events.WindowUpdated))


def handshake(options: ConnOptions) -> tuple[H2GrpcConnection, Peer, list[Event]]:
    client = H2GrpcConnection("test:1", options)
    peer = Peer()
    client.initiate()
    peer.hear(client)
    events = peer.say(client)
    peer.hear(client)  # the client's ack of the server's SETTINGS
    return client, peer, events


@pytest.fixture
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[H2GrpcConnection, Peer]]:
    client, peer, _ = handshake(getattr(request, "param", DEFAULT_OPTIONS))
    yield client, peer


def open_call(client: H2GrpcConnection, peer: Peer) -> Call:
    call = client.start_call(wire.DOWNLOAD_PATH, wire.download_body(0, 1000), 0)
    peer.hear(client)
    peer.respond(call.stream_id)
    return call


# -- what the client sends first --------------------------------------------------------------


def test_settings_and_connection_window_as_sent() -> None:
    client = H2GrpcConnection("test:1", DEFAULT_OPTIONS)
    peer = Peer()
    client.initiate()
    events = peer.hear(client)
    changed = of_type(events, h2.events.RemoteSettingsChanged)[0].changed_settings
    assert changed[SettingCodes.INITIAL_WINDOW_SIZE].new_value == 16_384
    assert changed[SettingCodes.MAX_FRAME_SIZE].new_value == 1_048_576
    assert changed[SettingCodes.ENABLE_PUSH].new_value == 0
    assert updates(events) == [(0, 1_048_576 - 65_535)]
    assert peer.h2.outbound_flow_control_window == 1_048_576


def test_settings_we_send_are_what_h2_holds() -> None:
    client = H2GrpcConnection("x:1", ConnOptions(16 * KIB, 3 * MIB, 256 * KIB))
    client.initiate()
    assert client._h2.local_settings.initial_window_size == 16 * KIB
    assert client._h2.local_settings.max_frame_size == 256 * KIB
    assert client._h2.max_inbound_frame_size == 256 * KIB
    assert client._h2.inbound_flow_control_window == 3 * MIB
    assert client.conn_window_bytes == 3 * MIB


def test_a_connection_window_below_65535_stays_65535() -> None:
    client = H2GrpcConnection("x:1", ConnOptions(KIB, KIB, 16_384))
    peer = Peer()
    client.initiate()
    assert updates(peer.hear(client)) == []  # HTTP/2 windows cannot shrink
    assert client.conn_window_bytes == 65_535


def test_the_handshake_reports_settings_acknowledged() -> None:
    client, _, events = handshake(DEFAULT_OPTIONS)
    assert events == [SettingsAcknowledged()]
    assert client.settings_acked


def test_nothing_queued_means_no_bytes(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, _ = pair
    assert client.data_to_send() == b""


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"stream_window_bytes": 0}, "stream_window_bytes"),
        ({"conn_window_bytes": 2**31}, "conn_window_bytes"),
        ({"max_frame_bytes": 1000}, "max_frame_bytes"),
        ({"credit_policy": "never"}, "credit_policy"),
    ],
)
def test_invalid_options_name_their_field(options: dict[str, Any], field: str) -> None:
    values: dict[str, Any] = {
        "stream_window_bytes": 65_535,
        "conn_window_bytes": 65_535,
        "max_frame_bytes": 16_384,
    }
    with pytest.raises(UsageError, match=field):
        ConnOptions(**(values | options))


# -- credit ---------------------------------------------------------------------------------


def test_immediate_credit_is_the_flow_controlled_length_on_stream_and_connection(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, wire.grpc_message(b"x" * 995), pad_length=10)
    assert peer.say(client) == []  # DATA is counted into its call, not reported
    flow_controlled = 1000 + 10 + 1  # payload + padding + the pad-length byte
    assert updates(peer.hear(client)) == [(0, flow_controlled), (call.stream_id, flow_controlled)]
    assert call.counter.messages == 1
    assert call.data_bytes == 1000
    assert client.max_data_frame_bytes == flow_controlled


def test_credit_goes_out_once_per_receive_however_many_frames(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    call = open_call(client, peer)
    for _ in range(3):
        peer.h2.send_data(call.stream_id, b"a" * 1000)
    peer.say(client)  # three DATA frames, one read
    assert updates(peer.hear(client)) == [(0, 3000), (call.stream_id, 3000)]
    for _ in range(2):
        peer.h2.send_data(call.stream_id, b"b" * 500)
    wire_bytes = peer.h2.data_to_send()
    half = len(wire_bytes) // 2 + 3  # inside the second frame: one frame per read
    client.receive(wire_bytes[:half], 0)
    client.receive(wire_bytes[half:], 0)
    events = peer.hear(client)
    assert sorted(u.delta for u in of_type(events, h2.events.WindowUpdated)) == [500] * 4


def test_received_bytes_are_copied_so_the_read_buffer_can_be_reused(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, wire.grpc_message(b"m" * 3000))
    data = peer.h2.data_to_send()
    buffer = bytearray(len(data))
    view = memoryview(buffer)
    cut = len(data) - 100  # the DATA frame is split across two reads of one buffer
    buffer[:cut] = data[:cut]
    client.receive(view[:cut], 0)
    buffer[:] = b"\xff" * len(buffer)  # the shell's next recv_into overwrites it
    buffer[: len(data) - cut] = data[cut:]
    client.receive(view[: len(data) - cut], 0)
    assert call.counter.messages == 1 and not call.counter.mid_message
    assert call.data_bytes == 3005


def test_no_stream_credit_once_trailers_ended_the_stream(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, wire.grpc_message(b"x" * 100))
    peer.trailers(call.stream_id)
    events = peer.say(client, 7 * MS)  # DATA and trailers reach the client in one read
    assert updates(peer.hear(client)) == [(0, 105)]
    assert call.done and call.ended_ns == 7 * MS and call.status == 0
    assert events == [CallEnded(call.stream_id, wire.DOWNLOAD_PATH, 0, 7 * MS)]


@pytest.mark.parametrize("pair", [ConnOptions(16_384, 65_535, 16_384, "half")], indirect=True)
def test_half_credit_waits_for_half_of_each_window(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, b"y" * 8_000)
    peer.say(client)
    assert updates(peer.hear(client)) == []
    peer.h2.send_data(call.stream_id, b"y" * 200)
    peer.say(client)
    assert updates(peer.hear(client)) == [(call.stream_id, 8_200)]


# -- how calls end ----------------------------------------------------------------------------


def test_non_zero_grpc_status_is_a_measurement_error(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.trailers(call.stream_id, status=12)
    with pytest.raises(MeasurementError, match="grpc-status 12"):
        peer.say(client)


def test_cancelled_status_after_our_cancel_is_fine(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.trailers(call.stream_id, status=wire.GRPC_CANCELLED)
    client.cancel(call)
    # the stream is reset on our side: trailers are dropped, nothing raised or reported
    assert peer.say(client) == []
    assert call.cancelled and not call.done


def test_cancel_queues_rst_stream_cancel_once(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    client.cancel(call)
    client.cancel(call)
    peer.h2.send_data(call.stream_id, b"late")  # in flight before the server sees the reset
    resets = of_type(peer.hear(client), h2.events.StreamReset)
    assert [(r.stream_id, r.error_code) for r in resets] == [(call.stream_id, 8)]  # CANCEL
    assert peer.say(client) == []
    assert call.data_bytes == 0
    # No credit from us: h2 drops DATA on a stream we reset and returns its connection
    # credit itself, by its own (half-window) rule.
    assert updates(peer.hear(client)) == []


def test_server_reset_is_a_measurement_error(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    call = open_call(client, peer)
    peer.h2.reset_stream(call.stream_id, 2)
    with pytest.raises(MeasurementError, match="reset"):
        peer.say(client)


def test_goaway_with_a_call_open_is_a_measurement_error(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    open_call(client, peer)
    peer.h2.close_connection()
    with pytest.raises(MeasurementError, match="GOAWAY"):
        peer.say(client)


def test_graceful_goaway_is_reported_and_close_still_works(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    peer.h2.close_connection(additional_data=b"bye")
    assert peer.say(client) == [ServerWentAway(b"bye")]
    client.close()  # no error: the shell closes every connection, however it ended
    assert client.data_to_send() != b""


def test_close_queues_a_goaway(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    client.close()
    assert [e.error_code for e in of_type(peer.hear(client), h2.events.ConnectionTerminated)] == [0]


def test_protocol_violations_are_h2s_own_errors() -> None:
    client = H2GrpcConnection("x:1", DEFAULT_OPTIONS)
    client.initiate()
    with pytest.raises(h2.exceptions.ProtocolError):
        client.receive(b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x", 0)  # DATA on stream 0


# -- windows and round trips ------------------------------------------------------------------


@pytest.mark.parametrize("pair", [ConnOptions(65_535, 65_535, 16_384, dynamic=True)], indirect=True)
def test_dynamic_window_grows_by_settings_and_connection_update(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    client, peer = pair
    client.start_bdp()
    client.start_timing(0)
    call = open_call(client, peer)
    for _ in range(4):
        peer.h2.send_data(call.stream_id, b"z" * 15_000)
    peer.say(client, 1 * MS)  # the first DATA frame asks for a BDP PING
    events = peer.hear(client)  # h2 acks the PING at once
    assert [p.ping_data for p in of_type(events, h2.events.PingReceived)] == [BDP_PING_DATA]
    ours = peer.say(client, 11 * MS)  # ack after 10 ms; sample 60000 >= 0.66 x 65535
    assert ours == [RttMeasured(10 * MS, "bdp"), WindowsGrew(120_000, 11 * MS)]
    events = peer.hear(client)
    changed = of_type(events, h2.events.RemoteSettingsChanged)[0].changed_settings
    assert changed[SettingCodes.INITIAL_WINDOW_SIZE].new_value == 120_000
    assert [d for s, d in updates(events) if s == 0] == [120_000 - 65_535]
    assert client.window_trace == [(0, 65_535), (11 * MS, 120_000)]
    assert client.ping_rtt_ns == [10 * MS]
    assert client.stream_window_bytes == client.conn_window_bytes == 120_000
    assert call.flow is not None and call.flow.limit == 120_000


def test_rtt_probe_one_at_a_time(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, peer = pair
    assert client.probe_rtt(0)
    assert not client.probe_rtt(1 * MS)  # the first is still in flight
    pings = of_type(peer.hear(client), h2.events.PingReceived)
    assert len(pings) == 1 and pings[0].ping_data.startswith(b"kr")
    assert peer.say(client, 3 * MS) == [RttMeasured(3 * MS, "probe")]
    assert client.ping_rtt_ns == [3 * MS]
    open_call(client, peer)
    peer.say(client, 3 * MS)  # HEADERS: the server's ping clock starts again
    assert client.probe_rtt(4 * MS)


def test_no_rtt_probe_until_the_server_sent_data_after_the_last_ack(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    """C-core and grpc-go count a PING with no DATA or HEADERS sent since the last one as a
    strike (GOAWAY too_many_pings after two): a stalled slow reader must stop probing."""
    client, peer = pair
    call = open_call(client, peer)
    peer.say(client, 0)
    assert client.probe_rtt(1 * MS)
    peer.h2.send_data(call.stream_id, b"x" * 100)  # sent before the PING's ACK: not enough
    peer.hear(client)  # the server acks the PING
    assert of_type(peer.say(client, 3 * MS), RttMeasured) == [RttMeasured(2 * MS, "probe")]
    for t in range(4, 40):  # no data moves: however long it waits, no PING goes out
        assert not client.probe_rtt(t * MS)
    assert not of_type(peer.hear(client), h2.events.PingReceived)
    peer.h2.send_data(call.stream_id, b"y" * 100)  # DATA after the ack: a PING may follow
    peer.say(client, 41 * MS)
    assert client.probe_rtt(42 * MS)
    assert len(of_type(peer.hear(client), h2.events.PingReceived)) == 1


def test_no_rtt_probe_while_bdp_pings_measure_rtt(pair: tuple[H2GrpcConnection, Peer]) -> None:
    client, _ = pair
    client.start_bdp()
    client.start_timing(0)
    assert not client.probe_rtt(0)


@pytest.mark.parametrize("pair", [ConnOptions(65_535, 65_535, 16_384, dynamic=True)], indirect=True)
def test_bdp_rtt_counts_from_when_the_ping_was_written(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    """grpc-go's timesnap: the RTT clock starts at the write, not at the DATA that asked."""
    client, peer = pair
    client.start_bdp()
    call = open_call(client, peer)
    for _ in range(4):
        peer.h2.send_data(call.stream_id, b"z" * 15_000)
    peer.say(client, 1 * MS)  # the first DATA frame asks for a BDP PING ...
    client.sent(3 * MS)  # ... which the shell writes 2 ms later
    peer.hear(client)
    ours = peer.say(client, 13 * MS)
    assert ours[0] == RttMeasured(10 * MS, "bdp")


@pytest.mark.parametrize("pair", [ConnOptions(65_535, 65_535, 16_384, dynamic=True)], indirect=True)
def test_bdp_runs_from_the_connection_start_as_grpc_go(
    pair: tuple[H2GrpcConnection, Peer],
) -> None:
    """A small reply before the timed phase (the warm-up) already sends a BDP PING and
    flushes the connection credit it used, as grpc-go's first WINDOW_UPDATE shows."""
    client, peer = pair
    client.start_bdp()
    call = open_call(client, peer)
    peer.h2.send_data(call.stream_id, b"w" * 11)
    peer.say(client, 1 * MS)
    events = peer.hear(client)
    assert [p.ping_data for p in of_type(events, h2.events.PingReceived)] == [BDP_PING_DATA]
    assert [d for s, d in updates(events) if s == 0] == [11]
    assert client.bdp is not None and client.bdp.sample_count == 1
