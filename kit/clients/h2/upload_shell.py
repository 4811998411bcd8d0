"""The socket side of an h2 upload: pump the sans-IO ``UploadSender``, send, read credit.

One loop on the session's single thread: while the server's windows allow bytes, queue a
budget of DATA, send it, and read whatever arrived (WINDOW_UPDATEs, PINGs) without
waiting; when they allow none, block in the session's selector until a read opens them.
The timed phase ends at the next message boundary after the deadline; the server's
summary (its reply) is what the result reports, and its arrival ends the timed phase.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from kit._proto import worker_pb2 as pb
from kit.clients.h2.connection import Call, H2GrpcConnection
from kit.clients.h2.upload import UPLOAD_PATH, UploadSender, parse_summary, upload_message
from kit.errors import MeasurementError
from kit.plan.units import format_bytes
from kit.results.client import ClientResult, now_ns

# Bytes queued per pass before reading again: small enough that credit and PINGs are read
# promptly, large enough that a pass is not dominated by the select call.
PUMP_BUDGET_BYTES = 256 * 1024
NS_PER_S = 1_000_000_000


class Session(Protocol):
    """What an upload needs of the client's session (``kit.clients.h2.client.Session``)."""

    job: pb.ClientJob
    conns: list[H2GrpcConnection]
    hard_deadline_ns: int

    def start_probing(self, now: int) -> None: ...

    def send_pending(self) -> None: ...

    def poll(self) -> None: ...

    def drive(self, until: Callable[[], bool], stop_ns: int | None = None) -> int: ...


def run_upload(session: Session) -> ClientResult:
    """One client-streaming Upload call on the first connection, as fast as credit allows."""
    job, conn = session.job, session.conns[0]
    upload = job.upload
    t_start = now_ns()
    cpu_start = time.process_time()
    deadline_ns = t_start + int(upload.call_timeout_s * NS_PER_S)
    session.hard_deadline_ns = min(session.hard_deadline_ns, deadline_ns)
    fixed = upload.messages or None
    stop_ns = None if fixed else t_start + int(upload.timed_s * NS_PER_S)
    call = conn.start_stream(UPLOAD_PATH, t_start)
    sender = UploadSender(call.stream_id, upload_message(job.message_bytes), fixed)
    session.start_probing(t_start)
    try:
        _send_all(session, conn, call, sender, stop_ns)
        session.drive(lambda: call.done)
    except MeasurementError:
        if now_ns() >= session.hard_deadline_ns:  # the session's own message names --timeout
            raise MeasurementError(_stalled(sender.sent_bytes)) from None
        raise
    t_end = call.ended_ns or now_ns()
    cpu_s = time.process_time() - cpu_start
    summary = parse_summary(bytes(call.body or b""))
    if summary.messages != sender.messages_started:
        raise MeasurementError(
            f"h2 client: the server confirmed {summary.messages} of "
            f"{sender.messages_started} upload messages"
        )
    elapsed_s = (t_end - t_start) / NS_PER_S
    return ClientResult(
        client="h2",
        bytes=summary.payload_bytes,
        messages=summary.messages,
        elapsed_s=elapsed_s,
        t_start_ns=t_start,
        t_end_ns=t_end,
        stream_bytes=(summary.payload_bytes,),
        stream_finish_s=(elapsed_s,),
        cpu_s=cpu_s,
        ping_rtt_ms=tuple(ns / 1e6 for ns in conn.ping_rtt_ns),
        notes=(
            f"waited for the server's credit {sender.waited_ns / 1e9:.2f} s of {elapsed_s:.2f} s "
            f"({sender.stalls} stalls); DATA frames up to the server's MAX_FRAME_SIZE "
            f"{conn.max_outbound_frame_bytes} B",
        ),
        sent_bytes=sender.messages_started * job.message_bytes,
        credit_wait_s=sender.waited_ns / 1e9,
    )


def _send_all(
    session: Session, conn: H2GrpcConnection, call: Call, sender: UploadSender, stop_ns: int | None
) -> None:
    """Send within the windows until the last message is out (or the call ended early)."""
    while not sender.ended and not call.done:
        now = now_ns()
        if stop_ns is not None and now >= stop_ns:
            sender.stop()
        if now >= session.hard_deadline_ns:
            raise MeasurementError(_stalled(sender.sent_bytes))
        queued = sender.pump(conn, now, PUMP_BUDGET_BYTES)
        session.send_pending()
        if queued:
            session.poll()
        elif not sender.ended:
            wake = None if sender.stopping else stop_ns
            session.drive(lambda: call.done or conn.send_window(call.stream_id) > 0, wake)
    sender.finish(now_ns())


def _stalled(sent_bytes: int) -> str:
    return (
        f"h2 client: the server stopped taking the upload ({format_bytes(sent_bytes)} sent, "
        "no summary before the deadline)"
    )
