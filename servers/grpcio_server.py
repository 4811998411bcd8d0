"""The grpcio server the kit measures against (``python -m servers.grpcio_server``, ``kit serve``).

Responses are sent pre-serialized (bytes, no protobuf work per message) so the server
spends its CPU on HTTP/2, not on building 256 KiB messages.

Bounded: a download asking for messages above ``MAX_DOWNLOAD_MESSAGE_BYTES`` (the largest
the kit's workloads use) and a ping above ``MAX_ECHO_BYTES`` fail with INVALID_ARGUMENT
before anything is allocated; serialized messages are cached up to ``CACHE_MAX_BYTES`` in
total (larger ones are built per call); requests above ``MAX_MESSAGE_BYTES`` are refused by
grpc from their length prefix. One worker thread per concurrent call, enough for the
largest ``--streams`` (threads start only when needed).

Process contract with the orchestrator: ``python -m servers.grpcio_server --config '<json>'``
(a ``kit.plan.processes.ServerProcess``); once listening, print one JSON line
``{"ready": true, "port": N, "pid": P}``; on a start-up failure print
``{"ready": false, "error": "..."}`` and exit 2 (bad config) or 3 (cannot listen).
SIGTERM/SIGINT stop it with exit 0.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc

from kit._proto import throughput_pb2 as pb
from kit.errors import KitError, TopologyError, UsageError
from kit.plan.grpc_args import merge_options, window_options
from kit.plan.processes import ServerProcess
from kit.plan.trial import MAX_WORKLOAD_MESSAGE_BYTES, ServerConfig
from kit.plan.units import MIB
from kit.results.codec import from_json, to_json

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
        if len(chunk) <= self.max_bytes // 4:  # a huge one is built per call, never kept
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


def _download(request: pb.DownloadRequest, context: grpc.ServicerContext) -> Iterator[bytes]:
    if request.message_bytes > MAX_DOWNLOAD_MESSAGE_BYTES:
        context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"message_bytes {request.message_bytes} is above this server's maximum "
            f"{MAX_DOWNLOAD_MESSAGE_BYTES}",
        )
    chunk = _CHUNKS.get(max(1, request.message_bytes))
    remaining = request.message_count or None
    while context.is_active() and (remaining is None or remaining > 0):
        yield chunk
        if remaining is not None:
            remaining -= 1


def _ping(request: pb.PingRequest, context: grpc.ServicerContext) -> bytes:
    if len(request.payload) > MAX_ECHO_BYTES:
        context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"ping payload of {len(request.payload)} bytes is above the echo maximum "
            f"{MAX_ECHO_BYTES}",
        )
    return pb.PingReply(payload=request.payload).SerializeToString()


def _upload(requests: Iterator[pb.Chunk], context: grpc.ServicerContext) -> bytes:
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


def serve_until_signal(process: ServerProcess, announce: Callable[[str], None] = print) -> None:
    """Run in the foreground until SIGINT/SIGTERM; announce the ready line first."""
    server, bound = start_server(process)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    announce(json.dumps({"ready": True, "port": bound, "pid": os.getpid()}))
    while not stop.wait(0.2):  # short waits: the signal handler runs between them, whatever
        pass  # the load (a signal arriving inside one long wait was seen to go unhandled)
    server.stop(grace=0.5).wait(2.0)


def child_args(process: ServerProcess) -> list[str]:
    """The ``python -m`` arguments that start this server with ``process`` (the one place)."""
    return ["servers.grpcio_server", "--config", json.dumps(to_json(process))]


def _parse_args(argv: list[str] | None) -> ServerProcess:
    parser = argparse.ArgumentParser(prog="python -m servers.grpcio_server")
    parser.add_argument("--config", required=True, help="a ServerProcess as JSON")
    args = parser.parse_args(argv)
    try:
        data = json.loads(args.config)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--config: not JSON ({exc.msg})") from None
    return from_json(ServerProcess, data, "server config")


def main(argv: list[str] | None = None) -> int:
    try:
        process = _parse_args(argv)
        serve_until_signal(process, announce=_announce)
    except KitError as exc:
        _announce(json.dumps({"ready": False, "error": str(exc)}))
        return exc.exit_code
    return 0


def _announce(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
