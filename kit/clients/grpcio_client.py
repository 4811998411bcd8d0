"""The grpcio client: channel options in one function; warm-up; download, unary, upload loops.

Responses are taken as raw bytes (no protobuf parsing per message): the client should
spend its CPU on HTTP/2, as the server does.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import grpc

from kit._proto import throughput_pb2 as pb
from kit.clients.pacing import ReadPacer, slow_streams_text
from kit.clients.process import client_main
from kit.errors import MeasurementError
from kit.plan.grpc_args import STATIC_WINDOW_NOTE, merge_options, server_notes, window_options
from kit.plan.trial import ClientConfig, Trial, upload_call_timeout_s
from kit.plan.units import MIB
from kit.results.client import ClientResult, now_ns

DOWNLOAD = "/kit.throughput.Throughput/Download"
PING = "/kit.throughput.Throughput/Ping"
UPLOAD = "/kit.throughput.Throughput/Upload"
MAX_MESSAGE_BYTES = 128 * MIB
CONNECT_TIMEOUT_S = 10.0


def channel_options(config: ClientConfig, index: int = 0) -> list[tuple[str, Any]]:
    """Every channel argument the kit sets, in one place.

    A local subchannel pool and a per-channel dummy argument keep each channel on its own
    TCP connection (same-target channels in one process may otherwise share one).
    """
    base: list[tuple[str, Any]] = [
        ("grpc.use_local_subchannel_pool", 1),
        ("kit.channel_index", index),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    base += window_options(config.window_mode, config.window_bytes)
    return merge_options(base, config.channel_options)


@dataclass
class _Channel:
    channel: grpc.Channel
    download: Any
    ping: Any
    upload: Any


def _open_channel(target: str, config: ClientConfig, index: int, timeout_s: float) -> _Channel:
    channel = grpc.insecure_channel(target, options=channel_options(config, index))
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


def _download(channels: list[_Channel], trial: Trial) -> ClientResult:
    workload = trial.workload
    fixed = workload.messages_per_stream()
    duration_s = workload.timeout_s if fixed else workload.timed_duration_s(trial.link.rtt_ms)
    cpu0, start = time.process_time(), now_ns()
    run = _DownloadRun(start + int(duration_s * 1e9), start, fixed or 0, workload.message_bytes)
    threads = []
    rate = workload.read_rate_bytes_s
    for i in range(workload.streams):
        tally = _StreamTally()
        if rate is not None and i < workload.slow_streams:
            tally.pacer = ReadPacer(rate, start, seed=i + 1, chunk_bytes=workload.message_bytes)
        run.tallies.append(tally)
        args = (channels[i % len(channels)], tally, workload.timeout_s)
        threads.append(threading.Thread(target=run.stream, args=args, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=workload.timeout_s + 5)
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
        bytes=messages * workload.message_bytes,
        messages=messages,
        elapsed_s=elapsed_s,
        t_start_ns=start,
        t_end_ns=end,
        stream_bytes=tuple(t.messages * workload.message_bytes for t in run.tallies),
        stream_finish_s=tuple(t.finish_s for t in run.tallies),
        cpu_s=time.process_time() - cpu0,
        notes=_notes(trial) + _slow_notes(trial),
        slow_streams=workload.slow_streams,
    )


def _slow_notes(trial: Trial) -> tuple[str, ...]:
    workload = trial.workload
    if not workload.slow_streams or workload.read_rate_bits_s is None:
        return ()
    return (
        f"{slow_streams_text(workload.slow_streams)} read one message per "
        f"{workload.message_bytes * 8 / workload.read_rate_bits_s * 1000:.0f} ms "
        f"({workload.read_rate_bits_s / 1e6:g} Mbit/s); C-core buffers what they have not read "
        "(not counted here)",
    )


def _unary(ch: _Channel, trial: Trial) -> ClientResult:
    request = pb.PingRequest(payload=b"x" * 16)
    latencies = []
    cpu0, start = time.process_time(), now_ns()
    for _ in range(trial.workload.calls):
        t0 = now_ns()
        ch.ping(request, timeout=trial.workload.timeout_s)
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
        notes=_notes(trial),
    )


def _upload(ch: _Channel, trial: Trial) -> ClientResult:
    """One client-streaming call: send until the deadline (or ``--bytes``), then half-close;
    the server's summary says how much it received, and its arrival ends the timed phase."""
    workload = trial.workload
    chunk = pb.Chunk(payload=b"\x5a" * workload.message_bytes).SerializeToString()
    limit = workload.messages_per_stream()
    duration_s = workload.timed_duration_s(trial.link.rtt_ms)
    cpu0, start = time.process_time(), now_ns()
    deadline = start + int(duration_s * 1e9)

    sent = [0]

    def chunks() -> Iterator[bytes]:
        while (limit is None and now_ns() < deadline) or (limit is not None and sent[0] < limit):
            sent[0] += 1
            yield chunk

    summary = ch.upload(chunks(), timeout=upload_call_timeout_s(trial))
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
        notes=_notes(trial),
        sent_bytes=sent[0] * workload.message_bytes,
    )


def _notes(trial: Trial) -> tuple[str, ...]:
    if trial.workload.kind == "upload":  # the server receives: its window and credit count
        return server_notes(trial.server)
    return (STATIC_WINDOW_NOTE,) if trial.client.window_mode == "static" else ()


def run_grpcio(host: str, port: int, trial: Trial) -> ClientResult:
    """Open the channels, warm them, run the workload; grpc errors become KitErrors here."""
    target = f"{host}:{port}"
    count = min(trial.client.connections, trial.workload.streams)
    channels: list[_Channel] = []
    # One deadline for the whole client: connecting, warming and the workload share the
    # --timeout (each used to get all of it, so a silent server cost it several times).
    deadline = time.monotonic() + trial.workload.timeout_s

    def left_s() -> float:
        return max(0.05, deadline - time.monotonic())

    try:
        for index in range(count):
            channels.append(_open_channel(target, trial.client, index, left_s()))
        if trial.workload.warmup:
            for ch in channels:
                _warm(ch, left_s())
        # The workload gets what is left (the plan's floor for a timeout is 1 s).
        remaining = replace(trial.workload, timeout_s=max(1.0, left_s()))
        trial = replace(trial, workload=remaining)
        if trial.workload.kind == "unary":
            return _unary(channels[0], trial)
        if trial.workload.kind == "upload":
            return _upload(channels[0], trial)
        return _download(channels, trial)
    except grpc.RpcError as exc:
        if trial.workload.kind == "upload" and exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise MeasurementError(
                "grpcio client: the server stopped taking the upload (no summary within "
                f"{upload_call_timeout_s(trial):g} s)"
            ) from None
        raise MeasurementError(f"grpcio client: {exc.code().name}: {exc.details()}") from None
    finally:
        for ch in channels:
            ch.channel.close()


if __name__ == "__main__":  # python -m kit.clients.grpcio_client --config '<json>'
    sys.exit(client_main(run_grpcio, "grpcio", grpc.__version__))
