"""The upload sender, sans-IO, against an h2 server state machine: no sockets, time passed in.

The server's h2 is the judge: it would raise FlowControlError on any DATA past the windows
it granted, so every test that delivers the client's bytes to it also checks the bound.
"""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest

from kit._proto import throughput_pb2 as pb
from kit.clients.h2 import wire
from kit.clients.h2.connection import ConnOptions, H2GrpcConnection
from kit.clients.h2.upload import (
    UPLOAD_PATH,
    UploadSender,
    parse_summary,
    upload_message,
)
from kit.errors import MeasurementError
from kit.plan.units import KIB

MS = 1_000_000
SettingCodes = h2.settings.SettingCodes
MESSAGE_BYTES = 40 * KIB
OPTIONS = ConnOptions(64 * KIB, 64 * KIB, 1_048_576)


class Server:
    """An h2 server with a chosen receive window that counts what it received."""

    def __init__(self, window: int) -> None:
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.local_settings = h2.settings.Settings(
            client=False, initial_values={SettingCodes.INITIAL_WINDOW_SIZE: window}
        )
        self.h2.initiate_connection()
        self.received = 0
        self.ended = False

    def hear(self, client: H2GrpcConnection) -> None:
        for event in self.h2.receive_data(client.data_to_send()):
            if isinstance(event, h2.events.DataReceived):
                self.received += event.flow_controlled_length
            if isinstance(event, h2.events.StreamEnded):
                self.ended = True

    def credit(self, stream_id: int, amount: int) -> None:
        self.h2.increment_flow_control_window(amount)
        self.h2.increment_flow_control_window(amount, stream_id=stream_id)

    def say(self, client: H2GrpcConnection, now_ns: int) -> None:
        client.receive(self.h2.data_to_send(), now_ns)


def connected(window: int) -> tuple[H2GrpcConnection, Server]:
    client = H2GrpcConnection("test:1", OPTIONS)
    server = Server(window)
    client.initiate()
    server.hear(client)
    server.say(client, 0)
    server.hear(client)
    return client, server


def test_sends_exactly_the_stream_window_then_waits_for_credit() -> None:
    client, server = connected(window=16 * KIB)
    call = client.start_stream(UPLOAD_PATH, 0)
    sender = UploadSender(call.stream_id, upload_message(MESSAGE_BYTES), limit_messages=None)
    assert sender.pump(client, 1 * MS, budget_bytes=10**9) == 16 * KIB
    server.hear(client)  # the server's h2 raises FlowControlError past its window
    assert server.received == 16 * KIB
    assert sender.pump(client, 2 * MS, budget_bytes=10**9) == 0  # no credit: blocked
    server.credit(call.stream_id, 8 * KIB)
    server.say(client, 12 * MS)
    assert sender.pump(client, 12 * MS, budget_bytes=10**9) == 8 * KIB
    # Blocked from the pump that used the window up (1 ms) to the one that found credit.
    assert sender.waited_ns == 11 * MS and sender.stalls == 1


def test_the_connection_window_binds_too() -> None:
    """Stream window 1 MiB, connection window 65535 (h2's default): 65535 bytes go out."""
    client, server = connected(window=1024 * KIB)
    call = client.start_stream(UPLOAD_PATH, 0)
    sender = UploadSender(call.stream_id, upload_message(MESSAGE_BYTES), limit_messages=None)
    assert sender.pump(client, 0, budget_bytes=10**9) == 65_535
    server.hear(client)
    assert server.received == 65_535


def test_frames_never_exceed_the_servers_max_frame_size() -> None:
    client, server = connected(window=64 * KIB)
    call = client.start_stream(UPLOAD_PATH, 0)
    sender = UploadSender(call.stream_id, upload_message(MESSAGE_BYTES), limit_messages=None)
    sender.pump(client, 0, budget_bytes=10**9)
    sizes = []
    for event in server.h2.receive_data(client.data_to_send()):
        if isinstance(event, h2.events.DataReceived):
            sizes.append(event.flow_controlled_length)
    assert sizes and max(sizes) <= 16_384  # the server kept h2's default MAX_FRAME_SIZE


def test_a_stop_ends_at_the_next_message_boundary_and_counts_whole_messages() -> None:
    framed = len(upload_message(MESSAGE_BYTES))
    client, server = connected(window=2**31 - 1)
    server.h2.increment_flow_control_window(2**30)
    server.say(client, 0)
    call = client.start_stream(UPLOAD_PATH, 0)
    sender = UploadSender(call.stream_id, upload_message(MESSAGE_BYTES), limit_messages=None)
    sender.pump(client, 0, budget_bytes=framed + 100)  # 1 message and a bit of the next
    sender.stop()
    while not sender.ended:
        sender.pump(client, 0, budget_bytes=4 * KIB)
    server.hear(client)
    assert server.ended and sender.messages_started == 2
    assert server.received == 2 * framed


def test_a_message_limit_ends_the_stream() -> None:
    client, server = connected(window=2**31 - 1)
    server.h2.increment_flow_control_window(2**30)
    server.say(client, 0)
    call = client.start_stream(UPLOAD_PATH, 0)
    sender = UploadSender(call.stream_id, upload_message(MESSAGE_BYTES), limit_messages=3)
    for _ in range(100):  # bounded
        if sender.ended:
            break
        sender.pump(client, 0, budget_bytes=64 * KIB)
    server.hear(client)
    assert sender.ended and server.ended and sender.messages_started == 3


def test_summary_parsing() -> None:
    body = wire.grpc_message(pb.UploadSummary(messages=3, payload_bytes=12).SerializeToString())
    summary = parse_summary(body)
    assert (summary.messages, summary.payload_bytes) == (3, 12)
    with pytest.raises(MeasurementError, match="without the server's summary"):
        parse_summary(b"")
    with pytest.raises(MeasurementError, match="truncated"):
        parse_summary(body[:-1])
