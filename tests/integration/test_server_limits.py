"""The standalone server's bounds: oversized requests are refused before anything is
allocated, the message cache stays bounded, and more streams than the old 60 all run."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator

import grpc
import pytest
from cli_support import kit_here

from kit._proto import throughput_pb2 as pb
from kit._proto import worker_pb2 as jobs
from kit.clients.grpcio_client import DOWNLOAD, PING
from kit.plan.jobs import server_job
from kit.plan.processes import ServerProcess
from kit.plan.trial import server_held_bytes
from servers.grpcio_server import Service, start_server

pytestmark = pytest.mark.integration
JOB = server_job(ServerProcess())


@contextlib.contextmanager
def serving(job: jobs.ServerJob) -> Iterator[tuple[grpc.Channel, Service]]:
    server, port, service = start_server(job)
    big = [("grpc.max_receive_message_length", 128 * 1024 * 1024)]
    ch = grpc.insecure_channel(f"127.0.0.1:{port}", options=big)
    try:
        yield ch, service
    finally:
        ch.close()
        server.stop(0).wait(5)


@pytest.fixture
def served() -> Iterator[tuple[grpc.Channel, Service]]:
    with serving(JOB) as both:
        yield both


@pytest.fixture
def channel(served: tuple[grpc.Channel, Service]) -> grpc.Channel:
    return served[0]


def _download(ch: grpc.Channel, count: int, size: int) -> list[bytes]:
    call = ch.unary_stream(DOWNLOAD, request_serializer=pb.DownloadRequest.SerializeToString)
    return list(call(pb.DownloadRequest(message_count=count, message_bytes=size), timeout=20))


def test_an_oversized_download_is_refused_before_allocating(
    served: tuple[grpc.Channel, Service],
) -> None:
    channel, service = served
    before = service.chunks.cached_bytes
    with pytest.raises(grpc.RpcError) as failed:
        _download(channel, 1, 300 * 1000 * 1000)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert str(JOB.max_message_bytes) in (failed.value.details() or "")
    assert service.chunks.cached_bytes == before


def test_an_oversized_echo_is_refused(channel: grpc.Channel) -> None:
    ping = channel.unary_unary(PING, request_serializer=pb.PingRequest.SerializeToString)
    with pytest.raises(grpc.RpcError) as failed:
        ping(pb.PingRequest(payload=b"x" * (JOB.max_echo_bytes + 1)), timeout=20)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert ping(pb.PingRequest(payload=b"ok"), timeout=20)


def test_the_message_cache_is_bounded(served: tuple[grpc.Channel, Service]) -> None:
    channel, service = served
    for size in range(1, 20):  # nineteen 4 MiB-ish messages: more than the cache keeps
        assert len(_download(channel, 1, size * 1024 + 4 * 1024 * 1024)) == 1
    assert 0 < service.chunks.cached_bytes <= JOB.message_cache_bytes


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


def test_calls_that_are_never_read_hold_at_most_the_servers_bound() -> None:
    """A client opening calls it never reads cannot grow the server: past the bound on what
    the download calls hold together, a call fails at once, before it allocates."""
    job = jobs.ServerJob()
    job.CopyFrom(JOB)
    job.download_budget_bytes = 4 * server_held_bytes(256 * 1024)
    with serving(job) as (channel, service):
        _never_read_calls_are_bounded(channel, service)


def _never_read_calls_are_bounded(channel: grpc.Channel, service: Service) -> None:
    bound = service.budget
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
    assert service.result().refused == 1


def test_a_plan_whose_streams_would_exceed_the_servers_bound_is_refused() -> None:
    out = kit_here("run", "--streams", "8", "--message-size", "64MiB", "--bytes", "64MiB")
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("kit: error: --streams: 8 streams of 64 MiB messages would need")
    assert "it holds at most 256 MiB" in out.stderr
