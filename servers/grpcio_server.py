"""The grpcio server the kit measures against (``python -m servers.grpcio_server``).

Responses are sent pre-serialized (bytes, no protobuf work per message) so the server
spends its CPU on HTTP/2, not on building 256 KiB messages.

Bounded, by its job's limits (``ServerJob`` of ``protos/worker.proto``; every server of the
kit keeps the same ones): a download asking for messages above ``max_message_bytes`` and a
ping above ``max_echo_bytes`` fail with INVALID_ARGUMENT before anything is allocated;
serialized messages up to ``shared_message_max_bytes`` are built once per size and shared,
cached up to ``message_cache_bytes`` in total (larger ones are built per call); requests
above ``MAX_MESSAGE_BYTES`` are refused by grpc from their length prefix. What the download
calls hold together (each its message in C-core, and its own copy when built for it) stays
within ``download_budget_bytes``: a call that would go beyond fails at once with
RESOURCE_EXHAUSTED, before it allocates, so no client can make the server grow without bound
by opening calls it never reads. One worker thread per concurrent call, up to ``workers``
(threads start only when needed); SETTINGS_MAX_CONCURRENT_STREAMS is the job's.

A process of the kit's process protocol (``kit.protocol``, ``docs/process-protocol.md``):
``python -m servers.grpcio_server --config '<ServerJob as JSON>'`` prints its ready line
once listening; SIGTERM/SIGINT stop it, and it prints its result line (a ``ServerResult``)
and exits 0. A bad job exits 2, a port it cannot listen on 3, each with one error line.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc

from kit._proto import throughput_pb2 as pb
from kit._proto import worker_pb2 as jobs
from kit.errors import TopologyError
from kit.plan.grpc_args import merge_options, option_values, window_options
from kit.plan.units import MIB, format_bytes
from kit.protocol import child_main
from kit.results.server import ServerResult

SERVICE = "kit.throughput.Throughput"
MAX_MESSAGE_BYTES = 128 * MIB
SPARE_RPCS = 4  # room for warm-up pings beside a full set of streams
STOP_POLL_S = 0.1


class _ChunkCache:
    """Serialized download messages by size, least recently used first out, bounded in bytes;
    only messages up to ``shared_max_bytes`` are kept (a larger one is built per call)."""

    def __init__(self, max_bytes: int, shared_max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.shared_max_bytes = shared_max_bytes
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
        if message_bytes <= self.shared_max_bytes:
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


class _Counter:
    """A count kept by many handler threads at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self._lock:
            self.value += 1


class Service:
    """The Throughput service under one job's limits, and what it served."""

    def __init__(self, job: jobs.ServerJob) -> None:
        self.job = job
        self.chunks = _ChunkCache(job.message_cache_bytes, job.shared_message_max_bytes)
        self.budget = _HeldBytes(job.download_budget_bytes)
        self.rpcs = _Counter()
        self.refused = _Counter()

    def held_bytes(self, message_bytes: int) -> int:
        """What one download call holds: the message C-core is sending, plus its own
        serialized copy when it is too large to be shared."""
        own = message_bytes if message_bytes > self.job.shared_message_max_bytes else 0
        return message_bytes + own

    def download(
        self, request: pb.DownloadRequest, context: grpc.ServicerContext
    ) -> Iterator[bytes]:
        self.rpcs.add()
        largest = self.job.max_message_bytes
        if request.message_bytes > largest:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"message_bytes {request.message_bytes} is above this server's maximum {largest}",
            )
        size = max(1, request.message_bytes)
        held, budget = self.held_bytes(size), self.budget
        if not budget.take(held):
            self.refused.add()
            context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this download would hold {format_bytes(held)}; the server's calls already "
                f"hold {format_bytes(budget.held)} of its {format_bytes(budget.max_bytes)} maximum",
            )
        once = threading.Lock()

        def release() -> None:  # from the call's end callback or the generator's close: once
            if once.acquire(blocking=False):
                budget.give_back(held)

        context.add_callback(release)  # the call ended, however: cancelled, failed, done
        try:
            yield from _messages(self.chunks.get(size), request.message_count or None, context)
        finally:
            release()

    def ping(self, request: pb.PingRequest, context: grpc.ServicerContext) -> bytes:
        self.rpcs.add()
        if len(request.payload) > self.job.max_echo_bytes:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"ping payload of {len(request.payload)} bytes is above the echo maximum "
                f"{self.job.max_echo_bytes}",
            )
        return pb.PingReply(payload=request.payload).SerializeToString()

    def upload(self, requests: Iterator[pb.Chunk], context: grpc.ServicerContext) -> bytes:
        self.rpcs.add()
        messages = payload = 0
        for chunk in requests:
            messages += 1
            payload += len(chunk.payload)
        return pb.UploadSummary(messages=messages, payload_bytes=payload).SerializeToString()

    def handler(self) -> grpc.GenericRpcHandler:
        methods = {
            "Download": grpc.unary_stream_rpc_method_handler(
                self.download, request_deserializer=pb.DownloadRequest.FromString
            ),
            "Ping": grpc.unary_unary_rpc_method_handler(
                self.ping, request_deserializer=pb.PingRequest.FromString
            ),
            "Upload": grpc.stream_unary_rpc_method_handler(
                self.upload, request_deserializer=pb.Chunk.FromString
            ),
        }
        return grpc.method_handlers_generic_handler(SERVICE, methods)

    def result(self) -> ServerResult:
        return ServerResult(rpcs=self.rpcs.value, refused=self.refused.value)


def _messages(
    chunk: bytes, remaining: int | None, context: grpc.ServicerContext
) -> Iterator[bytes]:
    while context.is_active() and (remaining is None or remaining > 0):
        yield chunk
        if remaining is not None:
            remaining -= 1


def server_options(job: jobs.ServerJob) -> list[tuple[str, Any]]:
    base: list[tuple[str, Any]] = [
        ("grpc.so_reuseport", 0),  # otherwise a port in use binds "successfully"
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_concurrent_streams", job.max_concurrent_streams),
    ]
    if job.windows.static:
        base += window_options("static", job.windows.stream_bytes)
    return merge_options(base, option_values(job.options, "grpcio server"))


def start_server(job: jobs.ServerJob) -> tuple[grpc.Server, int, Service]:
    host, port = job.listen_host, job.listen_port
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    hint = "; is the port in use?" if port else ""
    service = Service(job)
    workers = max(job.workers, SPARE_RPCS + 1)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers),
        options=server_options(job),
        maximum_concurrent_rpcs=workers - SPARE_RPCS,
    )
    server.add_generic_rpc_handlers((service.handler(),))
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise TopologyError(f"grpcio server: cannot listen on {address} ({exc}){hint}") from None
    if bound == 0:
        raise TopologyError(f"grpcio server: cannot listen on {address}{hint}")
    server.start()
    return server, bound, service


def serve_until_signal(job: jobs.ServerJob, on_ready: Callable[[int], None]) -> ServerResult:
    """Run until SIGINT/SIGTERM; ``on_ready(port)`` once listening.

    The signal handler only sets a flag (nothing that takes a lock: a handler that set a
    ``threading.Event`` could deadlock against the main thread waiting on that Event's lock);
    the main thread polls it."""
    server, bound, service = start_server(job)
    stopped: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, _frame: stopped.append(signum))
    try:
        on_ready(bound)
        while not stopped:
            time.sleep(STOP_POLL_S)
    finally:
        server.stop(grace=0.5).wait(2.0)
    return service.result()


def main() -> int:
    return child_main(
        jobs.ServerJob, serve_until_signal, "grpcio", grpc.__version__, who="grpcio server"
    )


if __name__ == "__main__":
    sys.exit(main())
