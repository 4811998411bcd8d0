"""Our gRPC client on h2: exact windows, a credit policy, N streams over M connections.

``run_h2(host, port, trial)`` opens the connections, warms each one up (SETTINGS
exchange, one Ping call, a 2-message download), then runs the timed phase: a download
(timed, or fixed-size when ``bytes_per_stream`` is set) or sequential unary Ping calls.

This is the thin IO shell around the sans-IO ``H2GrpcConnection``: it only moves bytes.
One thread drives every socket through a selector; each read is fed to its connection at
once and what the connection queued (credit included) is sent in the same pass, so the
client adds no scheduling delay of its own. Socket and h2 errors become
``MeasurementError`` in one place, ``_errors_mapped`` (an unreachable target too: the
process protocol's exit code 4).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import h2.exceptions

from kit.clients.h2 import policies, pool, wire
from kit.clients.h2.bdp import INITIAL_BDP_BYTES
from kit.clients.h2.connection import DEFAULT_WINDOW_BYTES, Call, ConnOptions, H2GrpcConnection
from kit.clients.h2.upload_shell import run_upload
from kit.clients.pacing import ReadPacer, slow_streams_text
from kit.errors import KitError, MeasurementError
from kit.plan.trial import Trial
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


def run_h2(host: str, port: int, trial: Trial) -> ClientResult:
    """Run one trial's client side against ``host:port`` and return what it measured."""
    with _errors_mapped(f"{host}:{port}"):
        session = Session(trial, now_ns() + int(trial.workload.timeout_s * NS_PER_S))
        try:
            session.connect(host, port)
            if trial.workload.warmup:
                session.warm_up()
            if trial.workload.prime_bytes is not None:
                session.prime(trial.workload.prime_bytes, trial.workload.idle_s)
            workload = _WORKLOADS.get(trial.workload.kind)
            if workload is None:
                raise MeasurementError(
                    f"h2 client: workload {trial.workload.kind!r} is not supported"
                )
            return workload(session)
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
        raise MeasurementError(f"h2 client: socket error talking to {target}: {exc}") from None
    except h2.exceptions.H2Error as exc:
        raise MeasurementError(f"h2 client: HTTP/2 protocol error with {target}: {exc!r}") from None


def conn_options(trial: Trial) -> ConnOptions:
    """Windows per connection: static from the trial, grpc-go's 65535 start when dynamic,
    a model's own start (``kit.clients.h2.policies``), or, for the pool, one buffer per
    stream to start and a connection window of 2^31-1."""
    client = trial.client
    pool_bytes = None
    if client.window_mode == "pool":
        stream_window, conn_window = pool.UNIT_BYTES, HTTP2_MAX_WINDOW_BYTES
        pool_bytes = client.pool_size_bytes
    elif client.is_model():
        stream_window, conn_window = policies.initial_windows(client.window_mode)
    elif client.window_mode == "dynamic" or client.window_bytes is None:
        stream_window = conn_window = INITIAL_BDP_BYTES
    else:
        stream_window = client.window_bytes
        conn_window = trial.conn_window_bytes or stream_window
    return ConnOptions(
        stream_window_bytes=stream_window,
        conn_window_bytes=max(conn_window, DEFAULT_WINDOW_BYTES),
        max_frame_bytes=client.frame_bytes,
        credit_policy=client.threshold_policy,
        dynamic=client.window_mode == "dynamic",
        conn_credit=client.conn_credit,
        pool_bytes=pool_bytes,
        model=client.window_mode if client.is_model() else None,
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

    def __init__(self, trial: Trial, hard_deadline_ns: int) -> None:
        self.trial = trial
        self.options = conn_options(trial)
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
        for _ in range(self.trial.client.connections):
            sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
            endpoint = _Endpoint(sock, H2GrpcConnection(f"{host}:{port}", self.options))
            self._endpoints.append(endpoint)
            self.conns.append(endpoint.conn)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, KERNEL_RECV_BUFFER_BYTES)
            sock.settimeout(max(1.0, self.trial.workload.timeout_s))
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

    def prime(self, size: int, idle_s: float) -> None:
        """A download of ``size`` bytes on every connection, then ``idle_s`` with nothing in
        flight: the timed phase starts on connections whose TCP grew its congestion window and
        then sat idle (the kernel's slow start after idle, ``tcp_slow_start_after_idle``)."""
        message = self.trial.workload.message_bytes
        count = max(1, -(-size // message))
        self.call_all(wire.DOWNLOAD_PATH, wire.download_body(count, message),
                      expected_bytes(count, message))  # fmt: skip
        if idle_s > 0:
            if now_ns() + int(idle_s * NS_PER_S) >= self.hard_deadline_ns:
                raise MeasurementError(
                    f"h2 client: the {idle_s:g} s idle gap does not fit the "
                    f"{self.trial.workload.timeout_s:g} s timeout"
                )
            time.sleep(idle_s)

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
                    f"h2 client: no result within the {self.trial.workload.timeout_s:g} s timeout"
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
    trial = session.trial
    workload = trial.workload
    count = workload.messages_per_stream()
    body = wire.download_body(count or 0, workload.message_bytes)
    t_start = now_ns()
    cpu_start = time.process_time()
    for conn in session.conns:
        conn.start_timing(t_start)
    session.start_probing(t_start)
    calls = _start_streams(session, body, t_start)
    duration_ns = int(workload.timed_duration_s(trial.link.rtt_ms) * NS_PER_S)
    stop_ns = None if count else t_start + duration_ns
    # With slow readers, a fixed-size run ends when the full-speed streams are done.
    awaited = calls[workload.slow_streams :] or calls
    t_end = session.drive(lambda: all(call.finished for call in awaited), stop_ns)
    cpu_s = time.process_time() - cpu_start
    session.cancel_open()
    if count:
        _check_counts(calls, count)
    return _download_result(session, calls, t_start, t_end, cpu_s)


def _start_streams(session: Session, body: bytes, t_start: int) -> list[Call]:
    """Open every stream, round-robin over the connections, then send all requests at once.

    The first ``slow_streams`` are read by a paced reader (seeded by the stream's index).
    """
    conns = session.conns
    workload = session.trial.workload
    count = workload.messages_per_stream()
    expected = None if count is None else expected_bytes(count, workload.message_bytes)
    rate = workload.read_rate_bytes_s
    calls = []
    for i in range(workload.streams):
        reader = None
        if rate is not None and i < workload.slow_streams:
            reader = ReadPacer(rate, t_start, seed=i + 1)
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
    message_bytes = session.trial.workload.message_bytes
    elapsed_s = (t_end - t_start) / NS_PER_S
    finish = tuple((min(c.finished_ns or t_end, t_end) - t_start) / NS_PER_S for c in calls)
    fixed = session.trial.workload.bytes_per_stream is not None
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
        slow_streams=session.trial.workload.slow_streams,
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
    for _ in range(session.trial.workload.calls):
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
    workload = session.trial.workload
    if workload.slow_streams and workload.read_rate_bits_s is not None:
        notes.append(
            f"{slow_streams_text(workload.slow_streams)} read at {workload.read_rate_bits_s / 1e6:g} Mbit/s"
            + (
                "; the run ends when the full-speed streams finish (slow ones cancelled then)"
                if workload.bytes_per_stream is not None
                and workload.slow_streams < workload.streams
                else ""
            )
        )
    if session.options.pool_bytes is not None:
        notes.append(
            f"receive pool {format_bytes(session.options.pool_bytes)} per connection, "
            f"shared by the receiving streams"
        )
    wanted = session.trial.conn_window_bytes
    if wanted is not None and wanted < DEFAULT_WINDOW_BYTES:
        notes.append(
            f"connection window {wanted} B is below HTTP/2's initial {DEFAULT_WINDOW_BYTES} B, "
            f"which cannot shrink: it stays {DEFAULT_WINDOW_BYTES} B"
        )
    return tuple(notes)
