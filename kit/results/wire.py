"""The results as programs send them: the worker contract's messages (``protos/worker.proto``)
<-> the kit's typed records, in one place each way.

A program prints its answer with its own protobuf library; the kit reads it with Python's
(``json_format``, strict) and turns it into the record it keeps, whose own checks then apply
(a negative count is a malformed result). Pure.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from kit._proto import worker_pb2 as pb
from kit.errors import UsageError
from kit.results.client import ClientResult
from kit.results.server import ServerResult


def client_result_message(result: ClientResult) -> pb.ClientResult:
    message = pb.ClientResult(
        client=result.client,
        bytes=result.bytes,
        messages=result.messages,
        elapsed_s=result.elapsed_s,
        t_start_ns=result.t_start_ns,
        t_end_ns=result.t_end_ns,
        stream_bytes=result.stream_bytes,
        stream_finish_s=result.stream_finish_s,
        cpu_s=result.cpu_s,
        ping_rtt_ms=result.ping_rtt_ms,
        latencies_ms=result.latencies_ms,
        window_trace=[pb.WindowStep(at_ms=t, window_bytes=w) for t, w in result.window_trace],
        notes=result.notes,
        sent_bytes=result.sent_bytes,
        slow_streams=result.slow_streams,
        stream_peak_unread_bytes=result.stream_peak_unread_bytes,
        stream_window_bytes=result.stream_window_bytes,
    )
    if result.credit_wait_s is not None:
        message.credit_wait_s = result.credit_wait_s
    if result.peak_unread_bytes is not None:
        message.peak_unread_bytes = result.peak_unread_bytes
    return message


def client_result_record(message: pb.ClientResult) -> ClientResult:
    return ClientResult(
        client=message.client,
        bytes=message.bytes,
        messages=message.messages,
        elapsed_s=message.elapsed_s,
        t_start_ns=message.t_start_ns,
        t_end_ns=message.t_end_ns,
        stream_bytes=tuple(message.stream_bytes),
        stream_finish_s=tuple(message.stream_finish_s),
        cpu_s=message.cpu_s,
        ping_rtt_ms=tuple(message.ping_rtt_ms),
        latencies_ms=tuple(message.latencies_ms),
        window_trace=tuple((s.at_ms, s.window_bytes) for s in message.window_trace),
        notes=tuple(message.notes),
        sent_bytes=message.sent_bytes,
        credit_wait_s=message.credit_wait_s if message.HasField("credit_wait_s") else None,
        slow_streams=message.slow_streams,
        stream_peak_unread_bytes=tuple(message.stream_peak_unread_bytes),
        stream_window_bytes=tuple(message.stream_window_bytes),
        peak_unread_bytes=(
            message.peak_unread_bytes if message.HasField("peak_unread_bytes") else None
        ),
    )


def server_result_message(result: ServerResult) -> pb.ServerResult:
    return pb.ServerResult(rpcs=result.rpcs, refused=result.refused)


def server_result_record(message: pb.ServerResult) -> ServerResult:
    return ServerResult(rpcs=message.rpcs, refused=message.refused)


def result_json(result: ClientResult | ServerResult) -> dict[str, Any]:
    """A record as its message's canonical JSON (the .proto's field names)."""
    message = (
        client_result_message(result)
        if isinstance(result, ClientResult)
        else server_result_message(result)
    )
    data: dict[str, Any] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return data


def result_record(cls: type[Any], data: Any, where: str) -> Any:
    """A program's result (its message's JSON) as the kit's ``cls`` record; ``UsageError``
    naming ``where`` when it does not decode."""
    message: Any = pb.ClientResult() if cls is ClientResult else pb.ServerResult()
    try:
        json_format.ParseDict(data, message)
    except (json_format.ParseError, RecursionError, TypeError) as exc:
        raise UsageError(f"{where}: {' '.join(str(exc).split())}") from None
    if cls is ClientResult:
        return client_result_record(message)
    return server_result_record(message)


WIRE_RESULTS: tuple[type[Any], ...] = (ClientResult, ServerResult)
