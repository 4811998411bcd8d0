"""The jobs the kit hands its client and server programs (``protos/worker.proto``).

Pure: a validated ``ClientProcess`` / ``ServerProcess`` / ``ProxyConfig`` / ``ForwarderConfig``
-> its ``ClientJob`` / ``ServerJob`` / ``ProxyJob`` / ``ForwarderJob``,
holding only what a program acts on, every value already worked out (the timed phase, the
connection window, the upload call's deadline, the read pacing) and checked by the kit's
records, which are the one place ranges and defaults live. The jobs travel as protobuf's
canonical JSON with the .proto's field names (``job_text``); each program decodes them with
its own language's protobuf library.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable

from google.protobuf import json_format
from google.protobuf.message import Message

from kit._proto import worker_pb2 as pb
from kit.errors import UsageError
from kit.plan.grpc_args import window_options
from kit.plan.packet import ForwarderConfig, direction_queues
from kit.plan.processes import ClientProcess, ProxyConfig, ServerProcess
from kit.plan.stack_options import STACK_OPTIONS
from kit.plan.trial import (
    MAX_WORKLOAD_MESSAGE_BYTES,
    SERVER_HELD_MAX_BYTES,
    SERVER_SHARED_MESSAGE_MAX_BYTES,
    ClientConfig,
    Link,
    OptionValue,
    RateStep,
    ServerConfig,
    Trial,
    upload_call_timeout_s,
)
from kit.plan.units import MIB

# A slow reader's gaps are stretched by a uniform factor in [1 - J, 1 + J]; stream i (0-based)
# draws from Python's random.Random(READ_SEED + i).
READ_JITTER = 0.5
READ_SEED = 1
# What every server holds of cached download messages, and the largest echo it answers.
MESSAGE_CACHE_BYTES = 64 * MIB
MAX_ECHO_BYTES = MIB
# SETTINGS_MAX_CONCURRENT_STREAMS of every server: the most streams a workload opens, and
# room for the warm-up pings beside them.
SERVER_MAX_CONCURRENT_STREAMS = 1024 + 8


def client_job(process: ClientProcess) -> pb.ClientJob:
    """What a client program runs: ``process``'s trial, resolved for the program."""
    trial = process.trial
    workload = trial.workload
    job = pb.ClientJob(
        target_host=process.target_host.strip("[]"),
        target_port=process.target_port,
        connections=trial.client.connections,
        warmup=workload.warmup,
        timeout_s=workload.timeout_s,
        idle_s=workload.idle_s,
        message_bytes=workload.message_bytes,
    )
    _set_windows(job.windows, trial.client.window_bytes, trial.conn_window_bytes)
    job.options.extend(_options(trial.client.kind, "client", _client_options(trial.client)))
    _set_work(job, trial)
    if trial.client.kind == "h2":
        _set_h2(job.h2, trial)
    return job


def _set_work(job: pb.ClientJob, trial: Trial) -> None:
    workload = trial.workload
    timed_s = workload.timed_duration_s(trial.link.rtt_ms)
    fixed = workload.messages_per_stream() or 0
    if workload.kind == "unary":
        job.unary.calls = workload.calls
    elif workload.kind == "upload":
        job.upload.timed_s = timed_s
        job.upload.messages = fixed
        job.upload.call_timeout_s = upload_call_timeout_s(trial)
    else:
        job.download.streams = workload.streams
        job.download.timed_s = timed_s
        job.download.messages_per_stream = fixed
        job.download.slow_streams = workload.slow_streams
        if workload.read_rate_bytes_s is not None:
            pacing = job.download.pacing
            pacing.rate_bytes_s = workload.read_rate_bytes_s
            pacing.jitter = READ_JITTER
            pacing.seed = READ_SEED


def _set_h2(h2: pb.H2Receiver, trial: Trial) -> None:
    client = trial.client
    h2.policy = "grpc-go" if client.window_mode == "dynamic" else client.window_mode
    h2.credit = client.threshold_policy
    h2.conn_credit = client.conn_credit
    h2.max_frame_bytes = client.frame_bytes
    if client.window_mode == "pool":
        h2.pool_bytes = client.pool_size_bytes
    h2.prime_bytes = trial.workload.prime_bytes or 0


def _set_windows(windows: pb.Windows, stream: int | None, conn: int | None) -> None:
    if stream is not None:
        windows.static = True
        windows.stream_bytes = stream
        windows.conn_bytes = conn or 0


def _client_options(client: ClientConfig) -> tuple[tuple[str, OptionValue], ...]:
    if client.kind == "grpcio" and client.window_mode == "bdp-off":
        return (*window_options("bdp-off", None), *client.channel_options)
    return client.channel_options


def server_job(process: ServerProcess) -> pb.ServerJob:
    """What a server program runs: where it listens, its windows, its limits."""
    config = process.config
    job = pb.ServerJob(
        listen_host=process.listen_host.strip("[]"),
        listen_port=process.listen_port,
        download_budget_bytes=SERVER_HELD_MAX_BYTES,
        shared_message_max_bytes=SERVER_SHARED_MESSAGE_MAX_BYTES,
        message_cache_bytes=MESSAGE_CACHE_BYTES,
        max_message_bytes=MAX_WORKLOAD_MESSAGE_BYTES,
        max_echo_bytes=MAX_ECHO_BYTES,
        max_concurrent_streams=SERVER_MAX_CONCURRENT_STREAMS,
        workers=process.workers,
    )
    # A server's connection window follows its stream window (an upload is one stream).
    _set_windows(job.windows, config.window_bytes, config.window_bytes)
    job.options.extend(_options(config.kind, "server", _server_options(config)))
    return job


def _server_options(config: ServerConfig) -> tuple[tuple[str, OptionValue], ...]:
    if config.kind == "grpcio" and config.window_mode == "bdp-off":
        return (*window_options("bdp-off", None), *config.channel_options)
    return config.channel_options


def _options(stack: str, side: str, options: Iterable[tuple[str, OptionValue]]) -> list[pb.Option]:
    """Each option as the type its knob takes: a flag, a ratio, an integer or (grpcio's
    string channel arguments) text."""
    knobs = STACK_OPTIONS.get(stack, {}).get(side, {})  # type: ignore[call-overload]
    out = []
    for name, value in options:
        knob = knobs.get(name)
        kind = knob.kind if knob is not None else ("int" if isinstance(value, int) else "text")
        if kind == "bool":
            out.append(pb.Option(name=name, flag=value in (1, "true")))
        elif kind == "ratio":
            out.append(pb.Option(name=name, ratio=float(str(value))))
        elif kind == "int":
            out.append(pb.Option(name=name, int=int(value)))
        else:
            out.append(pb.Option(name=name, text=str(value)))
    return out


# The program that decodes a delay line's tap: appended to the job so a compiled line starts
# the same decoder the Python line does (this interpreter, this kit).
TAP_DECODER = (sys.executable, "-m", "kit.capture.decoder")


def proxy_job(config: ProxyConfig) -> pb.ProxyJob:
    """What a delay line program runs: ``config`` with every time in nanoseconds."""
    job = pb.ProxyJob(
        listen_host=config.listen_host.strip("[]"),
        listen_port=config.listen_port,
        upstream_host=config.upstream_host.strip("[]"),
        upstream_port=config.upstream_port,
        read_bytes=config.read_bytes,
        buffer_cap_bytes=config.buffer_cap_bytes,
        tap_path=config.tap_path or "",
        counter_path=config.counter_path or "",
        max_connections=config.max_connections,
        max_buffered_bytes=config.max_buffered_bytes,
    )
    if config.tap_path:
        job.tap_decoder.extend(TAP_DECODER)
    job.link.CopyFrom(link_job(config.link))
    return job


def link_job(link: Link) -> pb.LinkJob:
    """The stream link in the delay line's units: each time rounded to whole ns, once."""
    job = pb.LinkJob(
        delay_up_ns=ms_to_ns(link.delay_up_ms),
        delay_down_ns=ms_to_ns(link.delay_down_ms),
        jitter_ns=ms_to_ns(link.jitter_ms),
        seed=link.seed,
    )
    if link.rate_up_bits_s is not None:
        job.rate_up_bits_s = link.rate_up_bits_s
    if link.rate_down_bits_s is not None:
        job.rate_down_bits_s = link.rate_down_bits_s
    for step in link.rate_steps:
        job.rate_steps.add(rate_bits_s=step.rate_bits_s, duration_ns=ms_to_ns(step.duration_ms))
    return job


def forwarder_job(config: ForwarderConfig) -> pb.ForwarderJob:
    """What a packet-link forwarder runs: the link in ns, each direction's queue worked out."""
    link = config.link
    up, down = direction_queues(link)
    job = pb.ForwarderJob(
        loss=link.loss,
        loss_burst_len=link.loss_burst_len,
        queue_up_bytes=up,
        queue_down_bytes=down,
        mtu=link.mtu,
        congestion=link.congestion,
        tap_path=config.tap_path or "",
    )
    if config.tap_path:
        job.tap_decoder.extend(TAP_DECODER)
    job.link.CopyFrom(link_job(link))
    return job


def forwarder_config(job: pb.ForwarderJob) -> tuple[ForwarderConfig, tuple[int, int]]:
    """The Python forwarder's side: its job back as the kit's record (checked again there)
    and the (up, down) queues the job worked out."""
    link = dataclasses.replace(
        job_link(job.link),
        kind="packet",
        loss=job.loss,
        loss_burst_len=job.loss_burst_len,
        mtu=job.mtu,
        congestion=job.congestion,
    )
    config = ForwarderConfig(link=link, tap_path=job.tap_path or None)
    return config, (job.queue_up_bytes, job.queue_down_bytes)


def ms_to_ns(ms: float) -> int:
    return round(ms * 1e6)


def proxy_config(job: pb.ProxyJob) -> ProxyConfig:
    """The Python delay line's side: its job back as the kit's record (checked again there)."""
    return ProxyConfig(
        listen_host=job.listen_host,
        listen_port=job.listen_port,
        upstream_host=job.upstream_host,
        upstream_port=job.upstream_port,
        link=job_link(job.link),
        read_bytes=job.read_bytes,
        buffer_cap_bytes=job.buffer_cap_bytes,
        tap_path=job.tap_path or None,
        counter_path=job.counter_path or None,
        max_connections=job.max_connections,
        max_buffered_bytes=job.max_buffered_bytes,
    )


def job_link(job: pb.LinkJob) -> Link:
    """A ``LinkJob`` as the stream ``Link`` it came from (ns -> ms, exact for whole ns)."""
    return Link(
        delay_up_ms=job.delay_up_ns / 1e6,
        delay_down_ms=job.delay_down_ns / 1e6,
        rate_up_bits_s=job.rate_up_bits_s if job.HasField("rate_up_bits_s") else None,
        rate_down_bits_s=job.rate_down_bits_s if job.HasField("rate_down_bits_s") else None,
        jitter_ms=job.jitter_ns / 1e6,
        seed=job.seed,
        rate_steps=tuple(RateStep(s.rate_bits_s, s.duration_ns / 1e6) for s in job.rate_steps),
    )


def job_text(job: Message) -> str:
    """A job as one line of protobuf's canonical JSON, with the .proto's field names."""
    return json_format.MessageToJson(job, preserving_proto_field_name=True, indent=None)


def parse_job(text: str, job: Message, source: str) -> Message:
    """A program's side: one job from ``text`` (``--config``'s, or a worker's line), decoded
    by the protobuf library: an unknown field, a wrong type or text that is not UTF-8 JSON
    is a ``UsageError`` (exit 2) naming ``source``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{source}: not UTF-8") from None
    try:
        json_format.Parse(text, job)
    except (json_format.ParseError, RecursionError) as exc:
        raise UsageError(f"{source}: bad job: {' '.join(str(exc).split())}") from None
    return job
