"""Pure gRPC-over-HTTP/2 framing: request headers, length-prefixed messages, grpc-status.

No sockets, no h2 connection: bytes in, counts and values out.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterable

from kit._proto import throughput_pb2 as pb

SERVICE_PATH = "/kit.throughput.Throughput"
DOWNLOAD_PATH = SERVICE_PATH + "/Download"
PING_PATH = SERVICE_PATH + "/Ping"
PREFIX_BYTES = 5  # 1 byte compressed flag + 4 bytes big-endian length
GRPC_OK = 0
GRPC_CANCELLED = 1

Header = tuple[bytes, bytes]
_PREFIX = struct.Struct(">BI")


def grpc_message(payload: bytes) -> bytes:
    """One uncompressed length-prefixed gRPC message."""
    return _PREFIX.pack(0, len(payload)) + payload


def download_body(message_count: int, message_bytes: int) -> bytes:
    request = pb.DownloadRequest(message_count=message_count, message_bytes=message_bytes)
    return grpc_message(request.SerializeToString())


def download_response_bytes(message_count: int, message_bytes: int) -> int:
    """The DATA bytes a Download of ``message_count`` Chunks of ``message_bytes`` carries:
    each message is a 5-byte prefix and a Chunk (payload field tag and length, payload)."""
    chunk = pb.Chunk(payload=b"\x5a" * max(1, message_bytes)).ByteSize()
    return message_count * (PREFIX_BYTES + chunk)


def ping_body(payload: bytes = b"") -> bytes:
    return grpc_message(pb.PingRequest(payload=payload).SerializeToString())


def request_headers(path: str, authority: str) -> list[Header]:
    """The headers of a gRPC call; ``te: trailers`` is required by gRPC servers."""
    return [
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", path.encode()),
        (b":authority", authority.encode()),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
        (b"user-agent", b"kit-h2"),
    ]


def grpc_status(headers: Iterable[tuple[bytes | str, bytes | str]]) -> tuple[int | None, str]:
    """(grpc-status, grpc-message) from trailers (or a trailers-only response); None if absent."""
    status: int | None = None
    message = ""
    for name, value in headers:
        key = name if isinstance(name, bytes) else name.encode()
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if key == b"grpc-status":
            status = int(text) if text.strip().isdigit() else -1
        elif key == b"grpc-message":
            message = text
    return status, message


class MessageCounter:
    """Counts complete length-prefixed messages in a stream of DATA payloads, copying nothing.

    It only tracks how many payload bytes of the current message are still missing; a
    prefix split across DATA frames is the one thing it buffers (at most 5 bytes). With
    ``starts`` it also notes where each message's body begins (the stream offset just past
    its prefix) and its length, for a reader that asks for a message as it reaches it.
    """

    __slots__ = ("_fed", "_missing", "_prefix", "messages", "starts")

    def __init__(self, starts: deque[tuple[int, int]] | None = None) -> None:
        self.messages = 0
        self.starts = starts
        self._fed = 0
        self._missing = 0
        self._prefix = bytearray()

    @property
    def mid_message(self) -> bool:
        return bool(self._missing or self._prefix)

    def feed(self, data: bytes | memoryview) -> int:
        """Consume one DATA payload; return how many messages it completed."""
        end = len(data)
        pos = 0
        done = 0
        while pos < end:
            if self._missing:
                take = min(self._missing, end - pos)
                self._missing -= take
                pos += take
                done += self._missing == 0
                continue
            length, pos = self._read_prefix(data, pos, end)
            if length is None:
                break
            if self.starts is not None:
                self.starts.append((self._fed + pos, length))
            if length == 0:
                done += 1
            self._missing = length
        self.messages += done
        self._fed += end
        return done

    def _read_prefix(self, data: bytes | memoryview, pos: int, end: int) -> tuple[int | None, int]:
        if not self._prefix and end - pos >= PREFIX_BYTES:
            return _PREFIX.unpack_from(data, pos)[1], pos + PREFIX_BYTES
        take = min(PREFIX_BYTES - len(self._prefix), end - pos)
        self._prefix += data[pos : pos + take]
        if len(self._prefix) < PREFIX_BYTES:
            return None, pos + take
        length = _PREFIX.unpack_from(self._prefix)[1]
        self._prefix.clear()
        return length, pos + take
