"""The grpcio server the kit measures against (``python -m servers.grpcio_server``, ``kit serve``).

Responses are sent pre-serialized (bytes, no protobuf work per message) so the server
spends its CPU on HTTP/2, not on building 256 KiB messages.

Process contract with the orchestrator: ``python -m servers.grpcio_server --config '<json>'``
(a ``kit.plan.processes.ServerProcess``); once listening, print one JSON line
``{"ready": true, "port": N, "pid": P}``; on a start-up failure print
``{"ready": false, "error": "..."}`` and exit 2 (bad config) or 3 (cannot listen).
SIGTERM/SIGINT stop it with exit 0.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc

from kit._proto import throughput_pb2 as pb
from kit.errors import KitError, TopologyError, UsageError
from kit.plan.grpc_args import merge_options, window_options
from kit.plan.processes import ServerProcess
from kit.plan.trial import ServerConfig
from kit.results.codec import from_json, to_json

SERVICE = "kit.throughput.Throughput"
MAX_MESSAGE_BYTES = 128 * 1024 * 1024


@functools.lru_cache(maxsize=16)
def _chunk_bytes(message_bytes: int) -> bytes:
    return pb.Chunk(payload=b"\x5a" * message_bytes).SerializeToString()


def _download(request: pb.DownloadRequest, context: grpc.ServicerContext) -> Iterator[bytes]:
    chunk = _chunk_bytes(max(1, request.message_bytes))
    remaining = request.message_count or None
    while context.is_active() and (remaining is None or remaining > 0):
        yield chunk
        if remaining is not None:
            remaining -= 1


def _ping(request: pb.PingRequest, context: grpc.ServicerContext) -> bytes:
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


def start_server(process: ServerProcess) -> tuple[grpc.Server, int]:
    host, port, workers = process.listen_host, process.listen_port, process.workers
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers),
        options=server_options(process.config),
        maximum_concurrent_rpcs=workers - 4,
    )
    server.add_generic_rpc_handlers((_handler(),))
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError as exc:
        raise TopologyError(
            f"server: cannot listen on {host}:{port} ({exc}); is the port in use?"
        ) from None
    if bound == 0:
        raise TopologyError(f"server: cannot listen on {host}:{port}; is the port in use?")
    server.start()
    return server, bound


def serve_until_signal(process: ServerProcess, announce: Callable[[str], None] = print) -> None:
    """Run in the foreground until SIGINT/SIGTERM; announce the ready line first."""
    server, bound = start_server(process)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    announce(json.dumps({"ready": True, "port": bound, "pid": os.getpid()}))
    stop.wait()
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
