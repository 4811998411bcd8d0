"""The grpcio client: channel options in one function; warm-up; download, unary, upload loops.

Responses are taken as raw bytes (no protobuf parsing per message): the client should
spend its CPU on HTTP/2, as the server does.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from kit._proto import throughput_pb2 as pb
from kit._proto import worker_pb2 as jobs
from kit.clients.pacing import ReadPacer, slow_streams_text
from kit.clients.process import client_main
from kit.errors import MeasurementError
from kit.plan.grpc_args import STATIC_WINDOW_NOTE, merge_options, option_values, window_options
from kit.plan.units import MIB
from kit.results.client import ClientResult, now_ns

DOWNLOAD = "/kit.throughput.Throughput/Download"
PING = "/kit.throughput.Throughput/Ping"
UPLOAD = "/kit.throughput.Throughput/Upload"
MAX_MESSAGE_BYTES = 128 * MIB
CONNECT_TIMEOUT_S = 10.0


def channel_options(job: jobs.ClientJob, index: int = 0) -> list[tuple[str, Any]]:
    """Every channel argument the client sets, in one place: the job's static window as
    C-core's (``kit.plan.grpc_args``), then the job's options (channel arguments).

    A local subchannel pool and a per-channel dummy argument keep each channel on its own
    TCP connection (same-target channels in one process may otherwise share one).
    """
    base: list[tuple[str, Any]] = [
        ("grpc.use_local_subchannel_pool", 1),
        ("kit.channel_index", index),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    if job.windows.static:
        base += window_options("static", job.windows.stream_bytes)
    return merge_options(base, option_values(job.options, "grpcio client"))


@dataclass
class _Channel:
    channel: grpc.Channel
    download: Any
    ping: Any
    upload: Any


def _open_channel(target: str, job: jobs.ClientJob, index: int, timeout_s: float) -> _Channel:
    channel = grpc.insecure_channel(target, options=channel_options(job, index))
    wait_s = min(CONNECT_TIMEOUT_S, timeout_s)
    try:
        grpc.channel_ready_future(channel).result(timeout=wait_s)
    except grpc.FutureTimeoutError:
        channel.close()
        raise MeasurementError(
            f"grpcio client: cannot reach {target} within {wait_s:g} s"
        ) from None
    return _Channel(
        channel=channel,
        download=channel.unary_stream(
            DOWNLOAD, request_serializer=pb.DownloadRequest.SerializeToString
        ),
        ping=channel.unary_unary(PING, request_serializer=pb.PingRequest.SerializeToString),
        # Requests go out pre-serialized (one Chunk's bytes, built once): the serializer only
        # passes them through. Without one grpcio fails inside its request thread (a
        # ``KeyError: None`` on stderr) and the call sits silent until its deadline.
        upload=channel.stream_unary(
            UPLOAD,
            request_serializer=_as_bytes,
            response_deserializer=pb.UploadSummary.FromString,
        ),
    )


def _as_bytes(message: bytes) -> bytes:
    return message


def _warm(ch: _Channel, timeout_s: float) -> None:
    """One Ping call (``kit.plan.trial.WARMUP``): the channel connected, SETTINGS exchanged."""
    ch.ping(pb.PingRequest(payload=b"warm"), timeout=timeout_s)


@dataclass
class _StreamTally:
    messages: int = 0
    finish_s: float = 0.0
    error: str = ""
    pacer: ReadPacer | None = None  # a slow reader: one message per due time
    done: bool = False


@dataclass
class _DownloadRun:
    deadline_ns: int
    start_ns: int
    message_count: int
    message_bytes: int
    tallies: list[_StreamTally] = field(default_factory=list)
    # Set when every full-speed stream is done: slow readers stop there (fixed-size runs).
    stop: threading.Event = field(default_factory=threading.Event)

    def stream(self, ch: _Channel, tally: _StreamTally, timeout_s: float) -> None:
        request = pb.DownloadRequest(
            message_count=self.message_count, message_bytes=self.message_bytes
        )
        call = ch.download(request, timeout=timeout_s)
        try:
            for _ in call:
                tally.messages += 1
                if now_ns() >= self.deadline_ns or self._paced_stop(tally):
                    break
            tally.finish_s = (now_ns() - self.start_ns) / 1e9
        except grpc.RpcError as exc:
            tally.error = f"{exc.code().name}: {exc.details()}"
        finally:
            tally.done = True
            if tally.pacer is None and all(t.done for t in self.tallies if t.pacer is None):
                self.stop.set()
            call.cancel()

    def _paced_stop(self, tally: _StreamTally) -> bool:
        """A slow reader waits for its next read (C-core buffers what arrives meanwhile);
        True when the full-speed streams are done and it should stop."""
        if tally.pacer is None:
            return False
        wait_ns = tally.pacer.due_ns - now_ns()
        if wait_ns > 0 and self.stop.wait(wait_ns / 1e9):
            return True
        tally.pacer.take(max(now_ns(), tally.pacer.due_ns), self.message_bytes)
        return self.stop.is_set()


def _download(channels: list[_Channel], job: jobs.ClientJob, timeout_s: float) -> ClientResult:
    download, message_bytes = job.download, job.message_bytes
    fixed = download.messages_per_stream
    duration_s = timeout_s if fixed else download.timed_s
    cpu0, start = time.process_time(), now_ns()
    run = _DownloadRun(start + int(duration_s * 1e9), start, fixed, message_bytes)
    threads = []
    pacing = download.pacing
    for i in range(download.streams):
        tally = _StreamTally()
        if i < download.slow_streams:
            tally.pacer = ReadPacer(
                pacing.rate_bytes_s,
                start,
                seed=pacing.seed + i,
                chunk_bytes=message_bytes,
                jitter=pacing.jitter,
            )
        run.tallies.append(tally)
        args = (channels[i % len(channels)], tally, timeout_s)
        threads.append(threading.Thread(target=run.stream, args=args, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout_s + 5)
    errors = [t.error for t in run.tallies if t.error]
    if errors or any(t.is_alive() for t in threads):
        raise MeasurementError(f"grpcio download failed: {errors[0] if errors else 'timed out'}")
    messages = sum(t.messages for t in run.tallies)
    # The last stream's last message ends the timed phase (not the join/cancel after it);
    # with slow readers in a fixed-size run, the last full-speed stream's.
    fast = [t for t in run.tallies if t.pacer is None] or run.tallies
    elapsed_s = max(t.finish_s for t in (fast if fixed else run.tallies))
    end = start + int(elapsed_s * 1e9)
    return ClientResult(
        client="grpcio",
        bytes=messages * message_bytes,
        messages=messages,
        elapsed_s=elapsed_s,
        t_start_ns=start,
        t_end_ns=end,
        stream_bytes=tuple(t.messages * message_bytes for t in run.tallies),
        stream_finish_s=tuple(t.finish_s for t in run.tallies),
        cpu_s=time.process_time() - cpu0,
        notes=_notes(job) + _slow_notes(job),
        slow_streams=download.slow_streams,
    )


def _slow_notes(job: jobs.ClientJob) -> tuple[str, ...]:
    download = job.download
    if not download.slow_streams:
        return ()
    rate_bits_s = download.pacing.rate_bytes_s * 8
    return (
        f"{slow_streams_text(download.slow_streams)} read one message per "
        f"{job.message_bytes * 8 / rate_bits_s * 1000:.0f} ms "
        f"({rate_bits_s / 1e6:g} Mbit/s); C-core buffers what they have not read "
        "(not counted here)",
    )


def _unary(ch: _Channel, job: jobs.ClientJob, timeout_s: float) -> ClientResult:
    request = pb.PingRequest(payload=b"x" * 16)
    latencies = []
    cpu0, start = time.process_time(), now_ns()
    for _ in range(job.unary.calls):
        t0 = now_ns()
        ch.ping(request, timeout=timeout_s)
        latencies.append((now_ns() - t0) / 1e6)
    end = now_ns()
    return ClientResult(
        client="grpcio",
        messages=len(latencies),
        elapsed_s=(end - start) / 1e9,
        t_start_ns=start,
        t_end_ns=end,
        cpu_s=time.process_time() - cpu0,
        latencies_ms=tuple(latencies),
        notes=_notes(job),
    )


def _upload(ch: _Channel, job: jobs.ClientJob) -> ClientResult:
    """One client-streaming call: send until the deadline (or ``--bytes``), then half-close;
    the server's summary says how much it received, and its arrival ends the timed phase."""
    upload = job.upload
    chunk = pb.Chunk(payload=b"\x5a" * job.message_bytes).SerializeToString()
    limit = upload.messages
    cpu0, start = time.process_time(), now_ns()
    deadline = start + int(upload.timed_s * 1e9)

    sent = [0]

    def chunks() -> Iterator[bytes]:
        while (not limit and now_ns() < deadline) or (limit and sent[0] < limit):
            sent[0] += 1
            yield chunk

    summary = ch.upload(chunks(), timeout=upload.call_timeout_s)
    end = now_ns()
    return ClientResult(
        client="grpcio",
        bytes=int(summary.payload_bytes),
        messages=int(summary.messages),
        elapsed_s=(end - start) / 1e9,
        t_start_ns=start,
        t_end_ns=end,
        stream_bytes=(int(summary.payload_bytes),),
        stream_finish_s=((end - start) / 1e9,),
        cpu_s=time.process_time() - cpu0,
        notes=_notes(job),
        sent_bytes=sent[0] * job.message_bytes,
    )


def _notes(job: jobs.ClientJob) -> tuple[str, ...]:
    if job.WhichOneof("work") == "upload":  # the server receives: the kit describes it
        return ()
    return (STATIC_WINDOW_NOTE,) if job.windows.static else ()


def run_grpcio(job: jobs.ClientJob) -> ClientResult:
    """Open the channels, warm them, idle, run the work; grpc errors become KitErrors here."""
    work = job.WhichOneof("work") or "download"
    host = f"[{job.target_host}]" if ":" in job.target_host else job.target_host
    target = f"{host}:{job.target_port}"
    streams = job.download.streams if work == "download" else 1
    count = max(1, min(job.connections, streams))
    option_values(job.options, "grpcio client")  # a bad option is a bad job, before connecting
    channels: list[_Channel] = []
    # One deadline for the whole client: connecting, warming, idling and the work share the
    # timeout (each used to get all of it, so a silent server cost it several times).
    deadline = time.monotonic() + job.timeout_s

    def left_s() -> float:
        return max(0.05, deadline - time.monotonic())

    try:
        for index in range(count):
            channels.append(_open_channel(target, job, index, left_s()))
        if job.warmup:
            for ch in channels:
                _warm(ch, left_s())
        _idle(job.idle_s, left_s())
        # The work gets what is left (the plan's floor for a timeout is 1 s).
        remaining_s = max(1.0, left_s())
        if work == "unary":
            return _unary(channels[0], job, remaining_s)
        if work == "upload":
            return _upload(channels[0], job)
        return _download(channels, job, remaining_s)
    except grpc.RpcError as exc:
        if work == "upload" and exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise MeasurementError(
                "grpcio client: the server stopped taking the upload (no summary within "
                f"{job.upload.call_timeout_s:g} s)"
            ) from None
        raise MeasurementError(f"grpcio client: {exc.code().name}: {exc.details()}") from None
    finally:
        for ch in channels:
            ch.channel.close()


def _idle(idle_s: float, left_s: float) -> None:
    """The connections open with no call on them (C-core answers PINGs meanwhile)."""
    if idle_s <= 0:
        return
    if idle_s >= left_s:
        raise MeasurementError(
            f"grpcio client: the {idle_s:g} s idle gap does not fit what is left of the timeout"
        )
    time.sleep(idle_s)


if __name__ == "__main__":  # python -m kit.clients.grpcio_client --config '<ClientJob JSON>'
    sys.exit(client_main(run_grpcio, "grpcio", grpc.__version__))
