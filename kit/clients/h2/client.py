"""Our gRPC client on h2: exact windows, a credit policy, N streams over M connections.

``run_h2(job)`` (a ``ClientJob`` of ``protos/worker.proto``) opens the connections, warms
each one up (SETTINGS exchange, one Ping call), primes and idles them when the job says so,
then runs the timed phase: a download (timed, or fixed-size), sequential unary Ping calls or
one upload.

This is the thin IO shell around the sans-IO ``H2GrpcConnection``: it only moves bytes.
One thread drives every socket through a selector; each read is fed to its connection at
once and what the connection queued (credit included) is sent in the same pass, so the
client adds no scheduling delay of its own. Socket and h2 errors become
``MeasurementError`` in one place, ``_errors_mapped`` (an unreachable target too: the
process protocol's exit code 4).
"""

from __future__ import annotations

import contextlib
import errno
import selectors
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import h2.exceptions

from kit._proto import worker_pb2 as pb
from kit.clients.h2 import policies, pool, wire
from kit.clients.h2.bdp import INITIAL_BDP_BYTES
from kit.clients.h2.connection import DEFAULT_WINDOW_BYTES, Call, ConnOptions, H2GrpcConnection
from kit.clients.h2.upload_shell import run_upload
from kit.clients.pacing import ReadPacer, slow_streams_text
from kit.errors import KitError, MeasurementError, UsageError
from kit.plan.units import HTTP2_MAX_WINDOW_BYTES, MIB, format_bytes
from kit.results.client import ClientResult, now_ns

# A single-threaded reader pauses to parse what it read; a kernel buffer of a few MiB lets
# the sender keep writing meanwhile (measured: the relay's partial-write path went away).
KERNEL_RECV_BUFFER_BYTES = 4 * MIB
# One user-space buffer serves every socket: reads are handled one at a time, and h2
# copies what it is given into its own frame buffer before ``receive`` returns.
READ_BUFFER_BYTES = 4 * MIB
CONNECT_TIMEOUT_S = 10.0
FEED_SLICE_BYTES = 64 * 1024  # four default frames: threshold credit leaves between slices
PROBE_INTERVAL_NS = 50_000_000  # RTT probes during a static-window transfer
NS_PER_S = 1_000_000_000


def run_h2(job: pb.ClientJob) -> ClientResult:
    """Run one job against its target and return what it measured."""
    work = _WORKLOADS[job.WhichOneof("work") or "download"]
    host, port = job.target_host, job.target_port
    with _errors_mapped(f"{host}:{port}"):
        session = Session(job, now_ns() + int(job.timeout_s * NS_PER_S))
        try:
            session.connect(host, port)
            if job.warmup:
                session.warm_up()
            if job.h2.prime_bytes:
                session.prime(job.h2.prime_bytes)
            session.idle(job.idle_s)
            return work(session)
        finally:
            session.close()


@contextlib.contextmanager
def _errors_mapped(target: str) -> Iterator[None]:
    """The one place where outside errors become the kit's own."""
    try:
        yield
    except KitError:
        raise
    except ConnectionRefusedError:
        raise MeasurementError(
            f"h2 client: connection to {target} refused; is the server running?"
        ) from None
    except socket.gaierror as exc:
        raise MeasurementError(f"h2 client: cannot resolve {target} ({exc})") from None
    except TimeoutError:
        raise MeasurementError(f"h2 client: socket timeout talking to {target}") from None
    except OSError as exc:
        if exc.errno == errno.EMFILE:
            raise MeasurementError(
                f"h2 client: too many open files (EMFILE) connecting to {target}: raise "
                "ulimit -n or open fewer connections"
            ) from None
        raise MeasurementError(f"h2 client: socket error talking to {target}: {exc}") from None
    except h2.exceptions.H2Error as exc:
        raise MeasurementError(f"h2 client: HTTP/2 protocol error with {target}: {exc!r}") from None


def conn_options(job: pb.ClientJob) -> ConnOptions:
    """Windows per connection, by the job's receive policy: static from the job, grpc-go's
    65535 start, a model's own start (``kit.clients.h2.policies``), or, for the pool, one
    buffer per stream to start and a connection window of 2^31-1. A policy, credit rule or
    frame size it does not have is a bad job (``ConnOptions`` and ``policies`` say so)."""
    policy, windows = job.h2.policy, job.windows
    if not policy:
        raise UsageError("h2 client: bad job: h2 (the receive policy) is not set")
    pool_bytes = None
    model = None
    if policy == "pool":
        stream_window, conn_window = pool.UNIT_BYTES, HTTP2_MAX_WINDOW_BYTES
        pool_bytes = job.h2.pool_bytes
    elif policy == "grpc-go":
        stream_window = conn_window = INITIAL_BDP_BYTES
    elif policy == "static":
        if not windows.static:
            raise UsageError("h2 client: bad job: the static policy needs static windows")
        stream_window = windows.stream_bytes
        conn_window = windows.conn_bytes or stream_window
    else:
        stream_window, conn_window = policies.initial_windows(policy)
        model = policy
    return ConnOptions(
        stream_window_bytes=stream_window,
        conn_window_bytes=max(conn_window, DEFAULT_WINDOW_BYTES),
        max_frame_bytes=job.h2.max_frame_bytes,
        credit_policy=job.h2.credit,  # type: ignore[arg-type]  # ConnOptions checks it
        dynamic=policy == "grpc-go",
        conn_credit=job.h2.conn_credit,  # type: ignore[arg-type]
        pool_bytes=pool_bytes,
        model=model,
    )


def expected_bytes(message_count: int, message_bytes: int) -> int:
    """The response DATA a download of ``message_count`` messages carries (gRPC framing)."""
    return wire.download_response_bytes(message_count, message_bytes)


@dataclass(frozen=True)
class _Endpoint:
    """One TCP connection: the socket and the sans-IO connection it feeds."""

    sock: socket.socket
    conn: H2GrpcConnection

    def send_pending(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)
            self.conn.sent(now_ns())

    def close(self) -> None:
        """GOAWAY, best effort (the measurement is already taken), then the socket."""
        try:
            self.conn.close()
            with contextlib.suppress(OSError):
                self.send_pending()
        finally:
            self.sock.close()


class Session:
    """The connections of one trial and the loop that drives them until a condition holds."""

    def __init__(self, job: pb.ClientJob, hard_deadline_ns: int) -> None:
        self.job = job
        self.options = conn_options(job)
        self.hard_deadline_ns = hard_deadline_ns
        self.conns: list[H2GrpcConnection] = []
        self.probing = False
        self._endpoints: list[_Endpoint] = []
        self._selector = selectors.DefaultSelector()
        self._buffer = bytearray(READ_BUFFER_BYTES)
        self._view = memoryview(self._buffer)
        self._next_probe_ns = 0

    def connect(self, host: str, port: int) -> None:
        """Open every connection and send its preface, SETTINGS and connection window."""
        for _ in range(self.job.connections):
            sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
            endpoint = _Endpoint(sock, H2GrpcConnection(f"{host}:{port}", self.options))
            self._endpoints.append(endpoint)
            self.conns.append(endpoint.conn)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, KERNEL_RECV_BUFFER_BYTES)
            sock.settimeout(max(1.0, self.job.timeout_s))
            self._selector.register(sock, selectors.EVENT_READ, endpoint)
            endpoint.conn.initiate()
            endpoint.conn.start_policy(now_ns())
            endpoint.send_pending()

    def send_pending(self) -> None:
        """Send what every connection has queued (calls started, cancels, probes)."""
        for endpoint in self._endpoints:
            endpoint.send_pending()

    def close(self) -> None:
        try:
            for endpoint in self._endpoints:
                endpoint.close()
        finally:
            self._selector.close()

    def warm_up(self) -> None:
        """Settle SETTINGS, then one Ping call on every connection (``kit.plan.trial.WARMUP``)."""
        self.drive(lambda: all(c.settings_acked for c in self.conns))
        self.call_all(wire.PING_PATH, wire.ping_body(b"warm"))

    def prime(self, size: int) -> None:
        """A download of ``size`` bytes on every connection: with the idle gap after it, the
        timed phase starts on connections whose TCP grew its congestion window and then sat
        idle (the kernel's slow start after idle, ``tcp_slow_start_after_idle``)."""
        message = self.job.message_bytes
        count = max(1, -(-size // message))
        self.call_all(wire.DOWNLOAD_PATH, wire.download_body(count, message),
                      expected_bytes(count, message))  # fmt: skip

    def idle(self, idle_s: float) -> None:
        """``idle_s`` with no call in flight, the connections open; what arrives meanwhile
        (a peer's PINGs, SETTINGS, a GOAWAY) is read and answered."""
        if idle_s <= 0:
            return
        if now_ns() + int(idle_s * NS_PER_S) >= self.hard_deadline_ns:
            raise MeasurementError(
                f"h2 client: the {idle_s:g} s idle gap does not fit the "
                f"{self.job.timeout_s:g} s timeout"
            )
        self.drive(lambda: False, now_ns() + int(idle_s * NS_PER_S))

    def call_all(self, path: str, body: bytes, expected: int | None = None) -> None:
        """One call on every connection at once; wait for all of them."""
        calls = [c.start_call(path, body, now_ns(), expected_bytes=expected) for c in self.conns]
        self.send_pending()
        self.drive(lambda: all(call.finished for call in calls))

    def drive(self, until: Callable[[], bool], stop_ns: int | None = None) -> int:
        """Read and handle events until ``until()`` or ``stop_ns``; return the time it stopped."""
        now = now_ns()
        while not until():
            if stop_ns is not None and now >= stop_ns:
                break
            if now >= self.hard_deadline_ns:
                raise MeasurementError(
                    f"h2 client: no result within the {self.job.timeout_s:g} s timeout"
                )
            for key, _ in self._selector.select(self._wait_s(now, stop_ns)):
                self._read(key.data, now_ns())
            now = now_ns()
            if self.probing and now >= self._next_probe_ns:
                self._probe(now)
            self._advance_readers(now)
        return now

    def poll(self) -> None:
        """Read whatever is ready now, without waiting (an upload interleaves it with sends)."""
        for key, _ in self._selector.select(0):
            self._read(key.data, now_ns())

    def _advance_readers(self, now: int) -> None:
        """Paced application reads whose time has come; the credit they free goes out."""
        for endpoint in self._endpoints:
            due = endpoint.conn.next_read_ns()
            if due is not None and due <= now:
                endpoint.conn.advance(now)
                endpoint.send_pending()

    def _read(self, endpoint: _Endpoint, now: int) -> None:
        """One recv, fed to the connection and its reply sent: whole (one credit batch) for
        immediate credit, else in slices, so a threshold's WINDOW_UPDATE leaves as soon as
        the frame that crossed it is parsed, as a frame-by-frame reader (grpc-go) sends it,
        not after the rest of a multi-MiB read."""
        n = endpoint.sock.recv_into(self._buffer)
        if n == 0:
            raise MeasurementError(f"h2 client: {endpoint.conn.authority} closed the connection")
        step = n if self.options.batches_credit else FEED_SLICE_BYTES
        for start in range(0, n, step):
            end = min(n, start + step)
            endpoint.conn.receive(self._view[start:end], now_ns(), read_end=end == n)
            endpoint.send_pending()

    def _wait_s(self, now: int, stop_ns: int | None) -> float:
        wake = self.hard_deadline_ns
        if stop_ns is not None:
            wake = min(wake, stop_ns)
        if self.probing:
            wake = min(wake, self._next_probe_ns)
        for conn in self.conns:
            due = conn.next_read_ns()
            if due is not None:
                wake = min(wake, due)
        return max(0.0, (wake - now) / NS_PER_S)

    def start_probing(self, now: int) -> None:
        self.probing = True
        self._next_probe_ns = now

    def _probe(self, now: int) -> None:
        self._next_probe_ns = now + PROBE_INTERVAL_NS
        for endpoint in self._endpoints:
            if endpoint.conn.probe_rtt(now):
                endpoint.send_pending()

    def cancel_open(self) -> None:
        """RST_STREAM(CANCEL) every unfinished stream: the timed phase is over."""
        for endpoint in self._endpoints:
            for call in endpoint.conn.calls.values():
                endpoint.conn.cancel(call)
            with contextlib.suppress(OSError):  # the result no longer depends on the server
                endpoint.send_pending()


def _run_download(session: Session) -> ClientResult:
    download = session.job.download
    count = download.messages_per_stream
    body = wire.download_body(count, session.job.message_bytes)
    t_start = now_ns()
    cpu_start = time.process_time()
    for conn in session.conns:
        conn.start_timing(t_start)
    session.start_probing(t_start)
    calls = _start_streams(session, body, t_start)
    duration_ns = int(download.timed_s * NS_PER_S)
    stop_ns = None if count else t_start + duration_ns
    # With slow readers, a fixed-size run ends when the full-speed streams are done.
    awaited = calls[download.slow_streams :] or calls
    t_end = session.drive(lambda: all(call.finished for call in awaited), stop_ns)
    cpu_s = time.process_time() - cpu_start
    session.cancel_open()
    if count:
        _check_counts(calls, count)
    return _download_result(session, calls, t_start, t_end, cpu_s)


def _start_streams(session: Session, body: bytes, t_start: int) -> list[Call]:
    """Open every stream, round-robin over the connections, then send all requests at once.

    The first ``slow_streams`` are read by a paced reader (stream i seeded ``seed + i``).
    """
    conns = session.conns
    download = session.job.download
    count = download.messages_per_stream
    expected = expected_bytes(count, session.job.message_bytes) if count else None
    pacing = download.pacing
    calls = []
    for i in range(download.streams):
        reader = None
        if i < download.slow_streams:
            reader = ReadPacer(
                pacing.rate_bytes_s, t_start, seed=pacing.seed + i, jitter=pacing.jitter
            )
        conn = conns[i % len(conns)]
        calls.append(conn.start_call(wire.DOWNLOAD_PATH, body, t_start, reader, expected))
    session.send_pending()
    return calls


def _check_counts(calls: list[Call], expected: int) -> None:
    for i, call in enumerate(calls):
        if call.finished and call.counter.messages != expected:
            raise MeasurementError(
                f"h2 client: stream {i} received {call.counter.messages} of {expected} messages"
            )


def _download_result(
    session: Session, calls: list[Call], t_start: int, t_end: int, cpu_s: float
) -> ClientResult:
    message_bytes = session.job.message_bytes
    elapsed_s = (t_end - t_start) / NS_PER_S
    finish = tuple((min(c.finished_ns or t_end, t_end) - t_start) / NS_PER_S for c in calls)
    fixed = session.job.download.messages_per_stream > 0
    # A timed phase is cut mid-message: counting whole messages only would under-count by up
    # to one message per stream (8% of a 1 s run at 64 KiB / 20 ms). Count the DATA bytes
    # the application read instead (gRPC framing adds 9 bytes per 256 KiB message, 0.003%).
    per_stream = tuple(
        c.counter.messages * message_bytes if fixed and c.finished else c.read_bytes for c in calls
    )
    return ClientResult(
        client="h2",
        bytes=sum(per_stream),
        messages=sum(c.counter.messages for c in calls),
        elapsed_s=elapsed_s,
        t_start_ns=t_start,
        t_end_ns=t_end,
        stream_bytes=per_stream,
        stream_finish_s=finish,
        cpu_s=cpu_s,
        ping_rtt_ms=_ping_rtts_ms(session),
        window_trace=_window_trace(session, t_start),
        notes=_notes(session),
        slow_streams=session.job.download.slow_streams,
        stream_peak_unread_bytes=tuple(c.peak_unread_bytes for c in calls),
        stream_window_bytes=tuple(c.peak_window_bytes for c in calls),
        peak_unread_bytes=max(c.peak_unread_bytes for c in session.conns),
    )


def _run_unary(session: Session) -> ClientResult:
    conn = session.conns[0]
    body = wire.ping_body()
    latencies: list[float] = []
    t_start = now_ns()
    cpu_start = time.process_time()
    for _ in range(session.job.unary.calls):
        latencies.append(_unary_call_ms(session, conn, body))
    t_end = now_ns()
    return ClientResult(
        client="h2",
        messages=len(latencies),
        elapsed_s=(t_end - t_start) / NS_PER_S,
        t_start_ns=t_start,
        t_end_ns=t_end,
        cpu_s=time.process_time() - cpu_start,
        latencies_ms=tuple(latencies),
        notes=_notes(session),
    )


def _unary_call_ms(session: Session, conn: H2GrpcConnection, body: bytes) -> float:
    """One Ping call, from sending its request to its trailers, in ms."""
    sent = now_ns()
    call = conn.start_call(wire.PING_PATH, body, sent)
    session.send_pending()
    session.drive(lambda: call.done)
    return ((call.ended_ns or now_ns()) - sent) / 1e6


_WORKLOADS: dict[str, Callable[[Session], ClientResult]] = {
    "download": _run_download,
    "unary": _run_unary,
    "upload": run_upload,  # kit.clients.h2.upload_shell
}


def _ping_rtts_ms(session: Session) -> tuple[float, ...]:
    return tuple(ns / 1e6 for conn in session.conns for ns in conn.ping_rtt_ns)


def _window_trace(session: Session, t_start: int) -> tuple[tuple[float, int], ...]:
    """Every connection's window steps, (ms since the timed start, window bytes), by time."""
    points = sorted((t, w) for conn in session.conns for t, w in conn.window_trace)
    return tuple(((t - t_start) / 1e6, w) for t, w in points)


def _notes(session: Session) -> tuple[str, ...]:
    notes = [f"largest DATA frame {max(c.max_data_frame_bytes for c in session.conns)} B"]
    download = session.job.download
    if download.slow_streams:
        notes.append(
            f"{slow_streams_text(download.slow_streams)} read at "
            f"{download.pacing.rate_bytes_s * 8 / 1e6:g} Mbit/s"
            + (
                "; the run ends when the full-speed streams finish (slow ones cancelled then)"
                if download.messages_per_stream and download.slow_streams < download.streams
                else ""
            )
        )
    if session.options.pool_bytes is not None:
        notes.append(
            f"receive pool {format_bytes(session.options.pool_bytes)} per connection, "
            f"shared by the receiving streams"
        )
    wanted = session.job.windows.conn_bytes
    if wanted and wanted < DEFAULT_WINDOW_BYTES:
        notes.append(
            f"connection window {wanted} B is below HTTP/2's initial {DEFAULT_WINDOW_BYTES} B, "
            f"which cannot shrink: it stays {DEFAULT_WINDOW_BYTES} B"
        )
    return tuple(notes)
