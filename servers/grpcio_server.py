"""The grpcio server the kit measures against (``python -m servers.grpcio_server``, ``kit serve``).

Responses are sent pre-serialized (bytes, no protobuf work per message) so the server
spends its CPU on HTTP/2, not on building 256 KiB messages.

Bounded: a download asking for messages above ``MAX_DOWNLOAD_MESSAGE_BYTES`` (the largest
the kit's workloads use) and a ping above ``MAX_ECHO_BYTES`` fail with INVALID_ARGUMENT
before anything is allocated; serialized messages are cached up to ``CACHE_MAX_BYTES`` in
total (those above ``SERVER_SHARED_MESSAGE_MAX_BYTES`` are built per call); requests above
``MAX_MESSAGE_BYTES`` are refused by grpc from their length prefix. What the download calls
hold together (each its message in C-core, and its own copy when built for it:
``server_held_bytes``) stays within ``SERVER_HELD_MAX_BYTES``: a call that would go beyond
fails at once with RESOURCE_EXHAUSTED, before it allocates, so no client can make the
server grow without bound by opening calls it never reads. One worker thread per
concurrent call, enough for the largest ``--streams`` (threads start only when needed).

A process of the kit's process protocol (``kit.topology.protocol``, ``docs/process-protocol.md``):
``python -m servers.grpcio_server --config '<ServerProcess as JSON>'`` prints its ready line
once listening; SIGTERM/SIGINT stop it, and it prints its result line (a ``ServerResult``)
and exits 0. A bad config exits 2, a port it cannot listen on 3, each with one error line.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc

from kit._proto import throughput_pb2 as pb
from kit.errors import TopologyError
from kit.plan.grpc_args import merge_options, window_options
from kit.plan.processes import ServerProcess
from kit.plan.trial import (
    MAX_WORKLOAD_MESSAGE_BYTES,
    SERVER_HELD_MAX_BYTES,
    SERVER_SHARED_MESSAGE_MAX_BYTES,
    ServerConfig,
    server_held_bytes,
)
from kit.plan.units import MIB, format_bytes
from kit.results.server import ServerResult
from kit.topology.protocol import child_main

SERVICE = "kit.throughput.Throughput"
MAX_MESSAGE_BYTES = 128 * MIB
MAX_DOWNLOAD_MESSAGE_BYTES = MAX_WORKLOAD_MESSAGE_BYTES
MAX_ECHO_BYTES = MIB
CACHE_MAX_BYTES = 64 * MIB
SPARE_RPCS = 4  # room for warm-up pings beside a full set of streams


class _ChunkCache:
    """Serialized download messages by size, least recently used first out, bounded in bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._chunks: OrderedDict[int, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, message_bytes: int) -> bytes:
        with self._lock:
            chunk = self._chunks.get(message_bytes)
            if chunk is not None:
                self._chunks.move_to_end(message_bytes)
                return chunk
        chunk = pb.Chunk(payload=b"\x5a" * message_bytes).SerializeToString()
        if message_bytes <= SERVER_SHARED_MESSAGE_MAX_BYTES:  # a huge one is per call
            with self._lock:
                if message_bytes not in self._chunks:
                    self._chunks[message_bytes] = chunk
                    self._bytes += len(chunk)
                while self._bytes > self.max_bytes:
                    _size, old = self._chunks.popitem(last=False)
                    self._bytes -= len(old)
        return chunk

    @property
    def cached_bytes(self) -> int:
        return self._bytes


_CHUNKS = _ChunkCache(CACHE_MAX_BYTES)


class _HeldBytes:
    """The bytes the download calls hold together, bounded: a call takes its share before it
    allocates anything and gives it back when it ends, however it ends."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.held = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.held + n > self.max_bytes:
                return False
            self.held += n
            return True

    def give_back(self, n: int) -> None:
        with self._lock:
            self.held -= n


_HELD = _HeldBytes(SERVER_HELD_MAX_BYTES)


class _Counter:
    """Calls served, for the result line (the handlers run on many threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self._lock:
            self.value += 1


_RPCS = _Counter()


def _download(request: pb.DownloadRequest, context: grpc.ServicerContext) -> Iterator[bytes]:
    _RPCS.add()
    if request.message_bytes > MAX_DOWNLOAD_MESSAGE_BYTES:
        context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"message_bytes {request.message_bytes} is above this server's maximum "
            f"{MAX_DOWNLOAD_MESSAGE_BYTES}",
        )
    size = max(1, request.message_bytes)
    held, budget = server_held_bytes(size), _HELD
    if not budget.take(held):
        context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"this download would hold {format_bytes(held)}; the server's calls already hold "
            f"{format_bytes(budget.held)} of its {format_bytes(budget.max_bytes)} maximum",
        )
    once = threading.Lock()

    def release() -> None:  # from the call's end callback or the generator's close: once
        if once.acquire(blocking=False):
            budget.give_back(held)

    context.add_callback(release)  # the call ended, however: cancelled, failed, done
    try:
        yield from _messages(_CHUNKS.get(size), request.message_count or None, context)
    finally:
        release()


def _messages(
    chunk: bytes, remaining: int | None, context: grpc.ServicerContext
) -> Iterator[bytes]:
    while context.is_active() and (remaining is None or remaining > 0):
        yield chunk
        if remaining is not None:
            remaining -= 1


def _ping(request: pb.PingRequest, context: grpc.ServicerContext) -> bytes:
    _RPCS.add()
    if len(request.payload) > MAX_ECHO_BYTES:
        context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"ping payload of {len(request.payload)} bytes is above the echo maximum "
            f"{MAX_ECHO_BYTES}",
        )
    return pb.PingReply(payload=request.payload).SerializeToString()


def _upload(requests: Iterator[pb.Chunk], context: grpc.ServicerContext) -> bytes:
    _RPCS.add()
    messages = payload = 0
    for chunk in requests:
        messages += 1
        payload += len(chunk.payload)
    return pb.UploadSummary(messages=messages, payload_bytes=payload).SerializeToString()


def _handler() -> grpc.GenericRpcHandler:
    methods = {
        "Download": grpc.unary_stream_rpc_method_handler(
            _download, request_deserializer=pb.DownloadRequest.FromString
        ),
        "Ping": grpc.unary_unary_rpc_method_handler(
            _ping, request_deserializer=pb.PingRequest.FromString
        ),
        "Upload": grpc.stream_unary_rpc_method_handler(
            _upload, request_deserializer=pb.Chunk.FromString
        ),
    }
    return grpc.method_handlers_generic_handler(SERVICE, methods)


def server_options(config: ServerConfig) -> list[tuple[str, Any]]:
    base: list[tuple[str, Any]] = [
        ("grpc.so_reuseport", 0),  # otherwise a port in use binds "successfully"
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    base += window_options(config.window_mode, config.window_bytes)
    return merge_options(base, config.channel_options)


def startup_warnings(process: ServerProcess) -> list[str]:
    """The same warning the delay line gives when it listens beyond this machine."""
    if process.is_loopback:
        return []
    return [
        f"WARNING: the server listens on {process.listen_host}, which is NOT a loopback "
        "address: anyone who can reach this host can connect to it."
    ]


def start_server(process: ServerProcess) -> tuple[grpc.Server, int]:
    host, port, workers = process.listen_host, process.listen_port, process.workers
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    hint = "; is the port in use?" if port else ""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers),
        options=server_options(process.config),
        maximum_concurrent_rpcs=workers - SPARE_RPCS,
    )
    server.add_generic_rpc_handlers((_handler(),))
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise TopologyError(f"server: cannot listen on {address} ({exc}){hint}") from None
    if bound == 0:
        raise TopologyError(f"server: cannot listen on {address}{hint}")
    server.start()
    return server, bound


def serve_until_signal(process: ServerProcess, on_ready: Callable[[int], None]) -> ServerResult:
    """Run in the foreground until SIGINT/SIGTERM; ``on_ready(port)`` once listening."""
    server, bound = start_server(process)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        on_ready(bound)
        while not stop.wait(0.2):  # short waits: the signal handler runs between them, whatever
            pass  # the load (a signal arriving inside one long wait was seen to go unhandled)
    finally:
        server.stop(grace=0.5).wait(2.0)
    return ServerResult(rpcs=_RPCS.value)


def main() -> int:
    return child_main(ServerProcess, serve_until_signal, "grpcio", grpc.__version__)


if __name__ == "__main__":
    sys.exit(main())
