"""Pure: the send side of a client-streaming upload, within the server's windows.

``UploadSender`` decides what one upload stream may queue now. It never touches a socket
and never reads a clock: the shell passes ``now_ns`` and an ``Outbound`` (the connection,
``H2GrpcConnection``) that says how much the peer's stream *and* connection windows allow
and queues DATA frames. The sender never asks for more than that (h2 would raise
``FlowControlError``), so the server's receive window alone paces the upload.

The messages are one pre-built gRPC message (length prefix + ``Chunk``) repeated. A stop
(the timed phase is over) takes effect at the next message boundary: END_STREAM in the
middle of a message would make the server fail the call, and its summary is what counts.

While the sender has bytes to send and the windows allow none, it is *waiting for credit*;
``waited_ns`` sums those intervals (from the pump that found no credit to the pump that
found some: the shell pumps after every read, so the error is one read's handling time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kit._proto import throughput_pb2 as pb
from kit.clients.h2 import wire
from kit.errors import MeasurementError

UPLOAD_PATH = wire.SERVICE_PATH + "/Upload"


class Outbound(Protocol):
    """What the sender needs of a connection (``H2GrpcConnection`` provides it)."""

    @property
    def max_outbound_frame_bytes(self) -> int: ...

    def send_window(self, stream_id: int) -> int: ...

    def send_data(self, stream_id: int, data: bytes | memoryview, end_stream: bool) -> None: ...


def upload_message(message_bytes: int) -> bytes:
    """One framed gRPC message carrying a ``Chunk`` of ``message_bytes`` payload bytes."""
    return wire.grpc_message(pb.Chunk(payload=b"\x5a" * message_bytes).SerializeToString())


@dataclass(frozen=True)
class UploadSummary:
    """What the server confirmed it received (its reply to the upload)."""

    messages: int
    payload_bytes: int


def parse_summary(body: bytes) -> UploadSummary:
    """The server's reply body (one length-prefixed ``UploadSummary``) -> its counts."""
    if len(body) < wire.PREFIX_BYTES:
        raise MeasurementError("h2 client: the upload ended without the server's summary")
    length = int.from_bytes(body[1 : wire.PREFIX_BYTES], "big")
    payload = body[wire.PREFIX_BYTES : wire.PREFIX_BYTES + length]
    if len(payload) != length:
        raise MeasurementError("h2 client: the server's upload summary is truncated")
    summary = pb.UploadSummary.FromString(payload)
    return UploadSummary(int(summary.messages), int(summary.payload_bytes))


class UploadSender:
    """One upload stream: repeat ``message`` until ``limit_messages`` or a stop, then end."""

    def __init__(self, stream_id: int, message: bytes, limit_messages: int | None) -> None:
        self.stream_id = stream_id
        self._message = memoryview(message)
        self.limit_messages = limit_messages
        self.messages_started = 0
        self.sent_bytes = 0  # DATA bytes queued (what was written, not what was confirmed)
        self.waited_ns = 0
        self.stalls = 0
        self.ended = False
        self._offset = 0  # bytes of the current message already queued; 0 = at a boundary
        self._stopping = False
        self._blocked_since: int | None = None

    @property
    def stopping(self) -> bool:
        return self._stopping

    def stop(self) -> None:
        """End at the next message boundary (the timed phase is over)."""
        self._stopping = True

    def pump(self, out: Outbound, now_ns: int, budget_bytes: int) -> int:
        """Queue DATA within the windows (at most ``budget_bytes``); return the bytes queued.

        Ends the stream (an empty DATA frame with END_STREAM, which needs no credit) once
        the last message is out.
        """
        queued = 0
        while not self.ended and queued < budget_bytes:
            if self._offset == 0 and self._no_more_messages():
                out.send_data(self.stream_id, b"", True)
                self.ended = True
                break
            allowed = out.send_window(self.stream_id)
            if allowed <= 0:
                self._block(now_ns)
                break
            self._unblock(now_ns)
            queued += self._send_frame(out, min(allowed, budget_bytes - queued))
        if self.ended:
            self._unblock(now_ns)
        return queued

    def _no_more_messages(self) -> bool:
        if self._stopping:
            return True
        return self.limit_messages is not None and self.messages_started >= self.limit_messages

    def _send_frame(self, out: Outbound, allowed: int) -> int:
        if self._offset == 0:
            self.messages_started += 1
        size = min(allowed, out.max_outbound_frame_bytes, len(self._message) - self._offset)
        out.send_data(self.stream_id, self._message[self._offset : self._offset + size], False)
        self._offset = (self._offset + size) % len(self._message)
        self.sent_bytes += size
        return size

    def _block(self, now_ns: int) -> None:
        if self._blocked_since is None:
            self._blocked_since = now_ns

    def _unblock(self, now_ns: int) -> None:
        if self._blocked_since is not None:
            self.waited_ns += max(0, now_ns - self._blocked_since)
            self.stalls += 1
            self._blocked_since = None

    def finish(self, now_ns: int) -> None:
        """Close an open wait (the call ended while the sender was blocked)."""
        self._unblock(now_ns)
