"""The standalone server's bounds: oversized requests are refused before anything is
allocated, the message cache stays bounded, and more streams than the old 60 all run."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import grpc
import pytest
from cli_support import kit_here

from kit._proto import throughput_pb2 as pb
from kit.clients.grpcio_client import DOWNLOAD, PING
from kit.plan.processes import ServerProcess
from kit.plan.trial import server_held_bytes
from servers import grpcio_server
from servers.grpcio_server import (
    _CHUNKS,
    CACHE_MAX_BYTES,
    MAX_DOWNLOAD_MESSAGE_BYTES,
    MAX_ECHO_BYTES,
    _HeldBytes,
    start_server,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def channel() -> Iterator[grpc.Channel]:
    server, port = start_server(ServerProcess())
    big = [("grpc.max_receive_message_length", 128 * 1024 * 1024)]
    ch = grpc.insecure_channel(f"127.0.0.1:{port}", options=big)
    try:
        yield ch
    finally:
        ch.close()
        server.stop(0).wait(5)


def _download(ch: grpc.Channel, count: int, size: int) -> list[bytes]:
    call = ch.unary_stream(DOWNLOAD, request_serializer=pb.DownloadRequest.SerializeToString)
    return list(call(pb.DownloadRequest(message_count=count, message_bytes=size), timeout=20))


def test_an_oversized_download_is_refused_before_allocating(channel: grpc.Channel) -> None:
    before = _CHUNKS.cached_bytes
    with pytest.raises(grpc.RpcError) as failed:
        _download(channel, 1, 300 * 1000 * 1000)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert str(MAX_DOWNLOAD_MESSAGE_BYTES) in (failed.value.details() or "")
    assert _CHUNKS.cached_bytes == before


def test_an_oversized_echo_is_refused(channel: grpc.Channel) -> None:
    ping = channel.unary_unary(PING, request_serializer=pb.PingRequest.SerializeToString)
    with pytest.raises(grpc.RpcError) as failed:
        ping(pb.PingRequest(payload=b"x" * (MAX_ECHO_BYTES + 1)), timeout=20)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert ping(pb.PingRequest(payload=b"ok"), timeout=20)


def test_the_message_cache_is_bounded(channel: grpc.Channel) -> None:
    for size in range(1, 12):  # eleven 4 MiB-ish messages: more than the cache keeps
        assert len(_download(channel, 1, size * 1024 + 4 * 1024 * 1024)) == 1
    assert _CHUNKS.cached_bytes <= CACHE_MAX_BYTES


def test_more_streams_than_sixty_all_run(tmp_path: object) -> None:
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "kit.cli", "run", "--rtt", "0", "--streams", "100"),
            *("--bytes", "1MiB", "--records", f"{tmp_path}/runs.jsonl", "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "RESOURCE_EXHAUSTED" not in proc.stdout


def test_calls_that_are_never_read_hold_at_most_the_servers_bound(
    channel: grpc.Channel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client opening calls it never reads cannot grow the server: past the bound on what
    the download calls hold together, a call fails at once, before it allocates."""
    bound = _HeldBytes(4 * server_held_bytes(256 * 1024))
    monkeypatch.setattr(grpcio_server, "_HELD", bound)
    call = channel.unary_stream(DOWNLOAD, request_serializer=pb.DownloadRequest.SerializeToString)
    held = [call(pb.DownloadRequest(message_count=0, message_bytes=256 * 1024)) for _ in range(4)]
    deadline = time.monotonic() + 10
    while bound.held < bound.max_bytes and time.monotonic() < deadline:
        time.sleep(0.01)
    assert bound.held == bound.max_bytes
    with pytest.raises(grpc.RpcError) as refused:
        _download(channel, 1, 256 * 1024)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "of its 1 MiB maximum" in (refused.value.details() or "")
    for never_read in held:
        never_read.cancel()
    while bound.held and time.monotonic() < deadline:  # every cancelled call gives its share back
        time.sleep(0.01)
    assert bound.held == 0
    assert len(_download(channel, 2, 256 * 1024)) == 2


def test_a_plan_whose_streams_would_exceed_the_servers_bound_is_refused() -> None:
    out = kit_here("run", "--streams", "8", "--message-size", "64MiB", "--bytes", "64MiB")
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("kit: error: --streams: 8 streams of 64 MiB messages would need")
    assert "it holds at most 256 MiB" in out.stderr
