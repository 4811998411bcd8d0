"""One HTTP/2 connection carrying gRPC calls, sans-IO: bytes and ``now`` in, bytes and events out.

Like h2 itself, ``H2GrpcConnection`` never touches a socket: the shell
(``kit.clients.h2.client``) feeds it what it read (``receive``) and sends what it queued
(``data_to_send``). The connection owns its windows: it advertises the stream window
(SETTINGS) and raises the connection window (stream-0 WINDOW_UPDATE) itself, and keeps the
ledger of what each stream was granted and received. *How* the windows are sized and
refilled is the window policy's (``kit.clients.h2.policies``: static, grpc-go's BDP
estimator, the shared pool, the models of other stacks): the connection tells it what
arrived, what the application read and when its PINGs came back, and does what it answers.
It also measures PING round trips. It never decides when a measurement starts or ends;
the shell does.

The application's reads are modelled too: a call either reads what arrives at once or is
paced (``kit.clients.pacing``, driven by ``advance(now)``); bytes received and not yet read
are counted (never kept) per call and per connection, with their peaks. Stream credit
follows reads; connection credit follows receipt or reads (``ConnOptions.conn_credit``).
The dynamic mode is grpc-go's receiver (``kit.clients.h2.policies.grpc_go``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings

import kit.clients.h2.speedups  # noqa: F401  (installs the O(1) DATA repr, once)
from kit.clients.h2 import policies, pool, wire
from kit.clients.h2.bdp import BdpEstimator
from kit.clients.h2.credit import ConnFlow, StreamFlow
from kit.clients.h2.events import (
    CallEnded,
    Event,
    RttMeasured,
    ServerWentAway,
    SettingsAcknowledged,
    WindowsGrew,
)
from kit.clients.h2.policies.base import Answer, WindowPolicy
from kit.clients.h2.policies.grpc_go import GrpcGoPolicy
from kit.clients.h2.policies.pool import PoolPolicy
from kit.clients.h2.policies.static import StaticPolicy
from kit.clients.pacing import ReadPacer
from kit.errors import MeasurementError, UsageError
from kit.plan.trial import (
    CONN_CREDITS,
    CREDIT_POLICIES,
    H2_MAX_FRAME_BYTES,
    H2_MIN_FRAME_BYTES,
    ConnCredit,
    CreditPolicy,
)
from kit.plan.units import HTTP2_MAX_WINDOW_BYTES
from kit.results.client import RTT_PROBE_PING_TAG

DEFAULT_WINDOW_BYTES = 65_535  # RFC 9113: every window starts here
MAX_RTT_SAMPLES = 1_000  # per connection; loopback BDP pings would otherwise record thousands
# RTT probe PINGs: tag + 6-byte counter (the tap counts them apart); BDP PINGs use grpc-go's.
PROBE_TAG = RTT_PROBE_PING_TAG
SettingCodes = h2.settings.SettingCodes


@dataclass(frozen=True)
class ConnOptions:
    """How this connection sets and refills its receive windows."""

    stream_window_bytes: int
    conn_window_bytes: int
    max_frame_bytes: int
    credit_policy: CreditPolicy = "immediate"
    dynamic: bool = False
    conn_credit: ConnCredit = "receipt"
    pool_bytes: int | None = None  # set: the pool policy (stream windows are pool shares)
    model: str | None = None  # set: that stack's window policy (``kit.clients.h2.policies``)

    def __post_init__(self) -> None:
        for name in ("stream_window_bytes", "conn_window_bytes"):
            value = getattr(self, name)
            if not 1 <= value <= HTTP2_MAX_WINDOW_BYTES:
                raise UsageError(f"{name}: {value} is outside 1..{HTTP2_MAX_WINDOW_BYTES}")
        if not H2_MIN_FRAME_BYTES <= self.max_frame_bytes <= H2_MAX_FRAME_BYTES:
            raise UsageError(
                f"max_frame_bytes: {self.max_frame_bytes} is outside "
                f"{H2_MIN_FRAME_BYTES}..{H2_MAX_FRAME_BYTES}"
            )
        if self.credit_policy not in CREDIT_POLICIES:
            raise UsageError(
                f"credit_policy: {self.credit_policy!r} is not one of {', '.join(CREDIT_POLICIES)}"
            )
        if self.conn_credit not in CONN_CREDITS:
            raise UsageError(
                f"conn_credit: {self.conn_credit!r} is not one of {', '.join(CONN_CREDITS)}"
            )
        if self.pool_bytes is not None and (self.dynamic or self.pool_bytes < pool.UNIT_BYTES):
            raise UsageError(
                f"pool_bytes: {self.pool_bytes} needs a static start and at least "
                f"{pool.UNIT_BYTES} B"
            )

        if self.model is not None and (self.dynamic or self.pool_bytes is not None):
            raise UsageError(f"model: {self.model!r} is a window policy of its own")

    @property
    def policy_name(self) -> str:
        """The window policy these options choose (``kit.clients.h2.policies.create``)."""
        if self.pool_bytes is not None:
            return "pool"
        if self.dynamic:
            return "grpc-go"
        return self.model or "static"

    @property
    def batches_credit(self) -> bool:
        """Immediate credit is summed per read (one WINDOW_UPDATE per read, not per frame:
        the bytes go out in the same send either way, at a fraction of the CPU); threshold
        policies, and the models of other stacks, send each update as it falls due, as
        grpc-go does."""
        return self.credit_policy == "immediate" and self.model is None

    def settings(self) -> policies.PolicySettings:
        return policies.PolicySettings(
            stream_window_bytes=self.stream_window_bytes,
            conn_window_bytes=self.conn_window_bytes,
            credit_policy=self.credit_policy,
            conn_credit=self.conn_credit,
            pool_bytes=self.pool_bytes,
        )


@dataclass
class Call:
    """One gRPC call on the connection; message bytes are counted, never kept.

    ``data_bytes`` arrived, ``read_bytes`` of them the application has read (at once, or
    paced by ``reader``); ``expected_bytes`` is what the request asked for, when known.
    """

    stream_id: int
    path: str
    started_ns: int
    counter: wire.MessageCounter = field(default_factory=wire.MessageCounter)
    flow: StreamFlow | None = None
    reader: ReadPacer | None = None
    expected_bytes: int | None = None
    data_bytes: int = 0
    read_bytes: int = 0
    pad_bytes: int = 0
    peak_unread_bytes: int = 0
    advertised_bytes: int = 0  # pool: the stream offset the sender may send up to
    peak_window_bytes: int = 0  # the largest window the sender had after one of our updates
    ended_ns: int | None = None
    finished_ns: int | None = None
    status: int | None = None
    status_message: str = ""
    cancelled: bool = False
    body: bytearray | None = None  # the response's DATA, kept only when asked (uploads)

    @property
    def done(self) -> bool:
        return self.ended_ns is not None

    @property
    def unread_bytes(self) -> int:
        return self.data_bytes - self.read_bytes

    @property
    def finished(self) -> bool:
        """Ended and read to the end (what the application waits for)."""
        return self.finished_ns is not None

    @property
    def receiving(self) -> bool:
        return not self.cancelled and not self.finished


def local_settings(options: ConnOptions) -> h2.settings.Settings:
    """Our SETTINGS. Replacing h2's local_settings drops its defaults, so restate them."""
    return h2.settings.Settings(
        client=True,
        initial_values={
            SettingCodes.ENABLE_PUSH: 0,
            SettingCodes.INITIAL_WINDOW_SIZE: options.stream_window_bytes,
            SettingCodes.MAX_FRAME_SIZE: options.max_frame_bytes,
            SettingCodes.MAX_CONCURRENT_STREAMS: 100,
            SettingCodes.MAX_HEADER_LIST_SIZE: 65_536,
        },
    )


class H2GrpcConnection:
    """A client connection: open calls, feed it received bytes, send what it queues.

    Measurements accumulate on the object (``ping_rtt_ns``, ``window_trace``,
    ``max_data_frame_bytes``, ``peak_unread_bytes``, each ``Call``); ``receive`` also
    reports them as events.
    """

    def __init__(self, authority: str, options: ConnOptions) -> None:
        self.authority = authority
        self.options = options
        self.calls: dict[int, Call] = {}
        self.settings_acked = False
        self.max_data_frame_bytes = 0
        self.ping_rtt_ns: list[int] = []
        self.window_trace: list[tuple[int, int]] = []  # (monotonic ns, window bytes)
        self.policy: WindowPolicy = policies.create(options.policy_name, options.settings())
        self.unread_bytes = 0
        self.peak_unread_bytes = 0
        self._stream_window = options.stream_window_bytes
        self._conn_window = DEFAULT_WINDOW_BYTES
        self._owed_conn = 0
        self._owed_streams: dict[int, int] = {}
        self._tracing = False
        self._paced: list[Call] = []  # calls a paced reader reads (the loop asks them often)
        self._probe_sent: dict[bytes, int] = {}
        self._probe_count = 0
        self._bdp_ping_unsent = False  # a BDP PING is queued, not yet written
        self._pings_unacked = 0  # our PINGs (probes and BDP) the server has not acked yet
        self._server_sent_since_ack = True  # see ``may_ping``
        self._h2 = self._new_h2()

    def _new_h2(self) -> h2.connection.H2Connection:
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        conn = h2.connection.H2Connection(config=config)
        conn.local_settings = local_settings(self.options)
        # h2 checks inbound frames against this, not against the SETTINGS it sent.
        conn.max_inbound_frame_size = self.options.max_frame_bytes
        return conn

    @property
    def conn_window_bytes(self) -> int:
        return self._conn_window

    @property
    def stream_window_bytes(self) -> int:
        return self._stream_window

    @property
    def share_bytes(self) -> int:
        """The pool share each receiving stream is given now (pool policy)."""
        return self.policy.share_bytes if isinstance(self.policy, PoolPolicy) else pool.UNIT_BYTES

    @property
    def bdp(self) -> BdpEstimator | None:
        """grpc-go's estimator, when that is the policy and it has started."""
        return self.policy.bdp if isinstance(self.policy, GrpcGoPolicy) else None

    @property
    def _conn_flow(self) -> ConnFlow | None:
        return self.policy.conn if isinstance(self.policy, StaticPolicy) else None

    # -- what the caller asks for (each queues bytes for data_to_send) -----------------

    def initiate(self) -> None:
        """Queue the preface and SETTINGS, and raise the connection window to its target."""
        self._h2.initiate_connection()
        self._set_conn_window(self.options.conn_window_bytes)

    def _set_conn_window(self, target_bytes: int) -> None:
        # The connection window starts at 65535 whatever INITIAL_WINDOW_SIZE says; it can
        # only grow, by a stream-0 WINDOW_UPDATE.
        delta = target_bytes - self._conn_window
        if delta > 0:
            self._h2.increment_flow_control_window(delta)
            self._conn_window = target_bytes

    def start_call(
        self,
        path: str,
        body: bytes,
        now_ns: int,
        reader: ReadPacer | None = None,
        expected_bytes: int | None = None,
    ) -> Call:
        """Queue one call's headers and whole request body (our requests are one message).

        ``reader`` paces the application's reads of this call (None: it reads at once);
        ``expected_bytes``, the response bytes the request asks for, caps a pool share.
        """
        stream_id = self._h2.get_next_available_stream_id()
        self._h2.send_headers(stream_id, wire.request_headers(path, self.authority))
        self._h2.send_data(stream_id, body, end_stream=True)
        self._apply(self.policy.opened(stream_id, expected_bytes, now_ns))
        starts: deque[tuple[int, int]] | None = deque() if self.policy.grants_messages else None
        call = Call(
            stream_id,
            path,
            now_ns,
            counter=wire.MessageCounter(starts),
            flow=self.policy.stream_flow(stream_id),
            reader=reader,
            expected_bytes=expected_bytes,
            advertised_bytes=self._stream_window,
            peak_window_bytes=self._stream_window,
        )
        self.calls[stream_id] = call
        if reader is not None:
            self._paced.append(call)
        return call

    # -- the send side of client-streaming calls (kit.clients.h2.upload drives these) ----

    def start_stream(self, path: str, now_ns: int) -> Call:
        """Queue a call's headers only: its body follows as flow control allows
        (``send_data``); the response body is kept for the caller to parse."""
        stream_id = self._h2.get_next_available_stream_id()
        self._h2.send_headers(stream_id, wire.request_headers(path, self.authority))
        self._apply(self.policy.opened(stream_id, None, now_ns))
        call = Call(
            stream_id,
            path,
            now_ns,
            flow=self.policy.stream_flow(stream_id),
            advertised_bytes=self._stream_window,
            peak_window_bytes=self._stream_window,
            body=bytearray(),
        )
        self.calls[stream_id] = call
        return call

    @property
    def max_outbound_frame_bytes(self) -> int:
        """The largest DATA frame the server accepts (its SETTINGS_MAX_FRAME_SIZE)."""
        return int(self._h2.max_outbound_frame_size)

    def send_window(self, stream_id: int) -> int:
        """Bytes the server's stream and connection windows both allow on ``stream_id`` now."""
        return int(self._h2.local_flow_control_window(stream_id))

    def send_data(self, stream_id: int, data: bytes | memoryview, end_stream: bool) -> None:
        """Queue one DATA frame; h2 refuses (FlowControlError) anything past the windows."""
        self._h2.send_data(stream_id, data, end_stream=end_stream)

    def cancel(self, call: Call) -> None:
        """Queue RST_STREAM(CANCEL) for an unfinished call; later frames on it are dropped."""
        if call.cancelled or call.finished:
            return
        call.cancelled = True
        self.unread_bytes -= call.unread_bytes  # what it had not read is dropped
        if not call.done:
            self._h2.reset_stream(call.stream_id, h2.errors.ErrorCodes.CANCEL)
        self.policy.cancelled(call.stream_id)

    def start_policy(self, now_ns: int) -> None:
        """Start the window policy's own clock, right after ``initiate``: an estimator runs
        from the connection's start (grpc-go's does: the warm-up call's reply triggers the
        first BDP PING, the first RTT sample, and flushes the connection credit it used)."""
        self._tracing = self.policy.name != "static" and self.policy.name != "pool"
        self._apply(self.policy.start(now_ns))

    def start_bdp(self) -> None:
        """grpc-go's estimator on this connection (its policy unless it is grpc-go's
        already), started from grpc-go's 65535."""
        if not isinstance(self.policy, GrpcGoPolicy):
            settings = self.options.settings()
            self.policy = GrpcGoPolicy(
                self._stream_window,
                settings.conn_window_bytes,
                settings.credit_policy,
                settings.conn_credit,
            )
        self.start_policy(0)

    def start_timing(self, now_ns: int) -> None:
        """The timed phase starts: the window trace starts here, and the PING RTTs kept are
        the ones measured during the transfer (the warm-up's policy PINGs are not)."""
        if not self._tracing:
            return
        self.window_trace.append((now_ns, self._stream_window))
        self.ping_rtt_ns.clear()

    def sent(self, now_ns: int) -> None:
        """The shell wrote everything ``data_to_send`` returned, at ``now_ns``: a policy
        PING among it starts its RTT clock now (grpc-go stamps it as its writer sends it)."""
        if self._bdp_ping_unsent:
            self.policy.ping_written(now_ns)
        self._bdp_ping_unsent = False

    def probe_rtt(self, now_ns: int) -> bool:
        """Queue an RTT-probe PING; True if queued.

        Not while a probe is in flight, nor while BDP PINGs (which measure RTT too) run.
        """
        busy = self._probe_sent or self.policy.pings
        if busy or not self.may_ping or len(self.ping_rtt_ns) >= MAX_RTT_SAMPLES:
            return False
        self._probe_count += 1
        data = PROBE_TAG + self._probe_count.to_bytes(6, "big")
        self._probe_sent[data] = now_ns
        self._ping(data)
        return True

    @property
    def may_ping(self) -> bool:
        """Whether a PING now keeps to the servers' ping rules (C-core's and grpc-go's): a
        PING received before the server has sent DATA or HEADERS since the one before counts
        as a strike, and a few strikes close the connection (GOAWAY ``too_many_pings``). The
        server must have sent them after it acked our last PING: frames received after that
        ACK were (one TCP stream, in order), frames received before it may not have been."""
        return self._pings_unacked == 0 and self._server_sent_since_ack

    def _ping(self, data: bytes) -> None:
        self._pings_unacked += 1
        self._server_sent_since_ack = False
        self._h2.ping(data)

    def _server_sent(self) -> None:
        """DATA or HEADERS arrived: after our last PING's ACK, the server's ping clock is reset."""
        if self._pings_unacked == 0:
            self._server_sent_since_ack = True

    def close(self) -> None:
        """Queue a GOAWAY (h2 accepts one in every state, even after the server's GOAWAY);
        the shell sends it, best effort, and closes the socket."""
        self._h2.close_connection()

    def data_to_send(self) -> bytes:
        """Every byte queued so far (b"" if none); the caller must send them in order."""
        if self.policy.dirty:
            self._apply(self.policy.refresh())
            self._send_credit()
        return self._h2.data_to_send()

    # -- the application's paced reads ---------------------------------------------------

    def next_read_ns(self) -> int | None:
        """When a paced reader reads next (None: no paced reader left)."""
        self._paced = [c for c in self._paced if c.receiving]
        due = [c.reader.due_ns for c in self._paced if c.reader is not None]
        return min(due) if due else None

    def advance(self, now_ns: int) -> None:
        """Let every paced reader whose time has come read; queue the credit that frees."""
        for call in self._paced:
            if call.reader is not None and call.receiving and now_ns >= call.reader.due_ns:
                self._consume(call, call.reader.take(now_ns, call.unread_bytes), now_ns)
        self._send_credit()

    # -- what the server sent ------------------------------------------------------------

    def receive(self, data: bytes | memoryview, now_ns: int, read_end: bool = True) -> list[Event]:
        """Handle one read's bytes (or one slice of it: ``read_end`` False for all but the
        last), all stamped ``now_ns``; queue credit once for all of them.

        Raises ``MeasurementError`` when the server fails a call or the connection, and
        h2's ``ProtocolError`` on a protocol violation (the shell maps it).
        """
        out: list[Event] = []
        for event in self._h2.receive_data(data):
            if type(event) is h2.events.DataReceived:
                self._on_data(event, now_ns)
            else:
                self._on_event(event, now_ns, out)
        if read_end:
            self._policy_answer(self.policy.read_done(now_ns), now_ns, out)
        self._send_credit()
        return out

    def _on_data(self, event: h2.events.DataReceived, now_ns: int) -> None:
        size = event.flow_controlled_length
        if size > self.max_data_frame_bytes:
            self.max_data_frame_bytes = size
        self._server_sent()
        call = self.calls.get(event.stream_id)
        data = event.data or b""
        live = call is not None and not call.cancelled and not call.finished
        padding = size - len(data)
        if call is not None and live:
            call.pad_bytes += padding
        answer = self.policy.data(event.stream_id if live else None, size, padding, now_ns)
        self._apply(answer, now_ns)
        if call is None or not live:
            return
        call.data_bytes += len(data)
        self.unread_bytes += len(data)
        call.counter.feed(data)
        if call.body is not None:
            call.body += data
        if call.reader is None:
            self._consume(call, len(data), now_ns)
            return
        if call.unread_bytes > call.peak_unread_bytes:
            call.peak_unread_bytes = call.unread_bytes
        if self.unread_bytes > self.peak_unread_bytes:
            self.peak_unread_bytes = self.unread_bytes

    def _consume(self, call: Call, n: int, now_ns: int) -> None:
        """The application reads ``n`` bytes of ``call``: message by message, so a message
        it starts reading can be granted whole first (grpc-go's quarter policy)."""
        end = call.read_bytes + max(0, min(n, call.unread_bytes))
        starts = call.counter.starts
        while starts and starts[0][0] <= end:
            body_at, length = starts.popleft()
            if body_at > call.read_bytes:
                self._read(call, body_at - call.read_bytes, now_ns)
            self._apply(self.policy.message_started(call.stream_id, length), now_ns)
        if end > call.read_bytes:
            self._read(call, end - call.read_bytes, now_ns)
        if call.done and call.unread_bytes == 0 and call.finished_ns is None:
            call.finished_ns = max(now_ns, call.ended_ns or now_ns)
            self.policy.finished(call.stream_id)

    def _read(self, call: Call, n: int, now_ns: int) -> None:
        call.read_bytes += n
        self.unread_bytes -= n
        self._apply(self.policy.read(call.stream_id, n, now_ns), now_ns)

    # -- credit ----------------------------------------------------------------------------

    def _apply(self, answer: Answer, now_ns: int = 0) -> Answer:
        """Do what the policy answered, in its order (see ``policies.base.Answer``)."""
        for stream_id, increment in answer.grants:
            if stream_id == 0:
                self._conn_queue(increment)
            else:
                call = self.calls.get(stream_id)
                if call is not None:
                    self._stream_due(call, increment)
        if answer.ping:
            # grpc-go flushes connection credit before each BDP PING, so a proxy does not
            # count PINGs without data moving (and the sample is not credit-starved).
            self._conn_flush()
            self._ping(self.policy.ping_data)
            self._bdp_ping_unsent = True
        if answer.conn_window is not None:
            self._conn_window = max(self._conn_window, answer.conn_window)
        if answer.stream_window is not None:
            self._grew(answer, now_ns)
        return answer

    def _conn_flush(self) -> None:
        """Send every byte of connection credit owed now, ahead of what is queued next."""
        due, self._owed_conn = self._owed_conn, 0
        if due > 0:
            self._h2.increment_flow_control_window(due)

    def _conn_queue(self, increment: int) -> None:
        if increment <= 0:
            return
        if self.options.batches_credit:
            self._owed_conn += increment
        else:
            self._h2.increment_flow_control_window(increment)

    def _stream_due(self, call: Call, increment: int) -> None:
        if increment <= 0:
            return
        window = call.advertised_bytes + increment - call.data_bytes - call.pad_bytes
        call.advertised_bytes += increment
        if window > call.peak_window_bytes:
            call.peak_window_bytes = window
        if self.options.batches_credit:
            owed = self._owed_streams
            owed[call.stream_id] = owed.get(call.stream_id, 0) + increment
        elif self._stream_open(call):
            self._h2.increment_flow_control_window(increment, stream_id=call.stream_id)

    def _stream_open(self, call: Call) -> bool:
        # A stream that has ended or that we reset needs no more credit. h2 hands us the
        # events of a whole read at once, so trailers later in that read may already have
        # closed the stream: ask h2, not the event.
        stream = self._h2.streams.get(call.stream_id)
        return stream is not None and not stream.closed and not call.cancelled

    def _send_credit(self) -> None:
        if self._owed_conn:
            self._h2.increment_flow_control_window(self._owed_conn)
            self._owed_conn = 0
        for stream_id, due in self._owed_streams.items():
            call = self.calls.get(stream_id)
            if call is not None and self._stream_open(call):
                self._h2.increment_flow_control_window(due, stream_id=stream_id)
        self._owed_streams.clear()

    # -- other frames --------------------------------------------------------------------

    def _on_event(self, event: h2.events.Event, now_ns: int, out: list[Event]) -> None:
        if isinstance(event, h2.events.PingAckReceived):
            self._on_ping_ack(event.ping_data or b"", now_ns, out)
        elif isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
            self._server_sent()
            self._on_headers(event.stream_id, event.headers or [])
        elif isinstance(event, h2.events.StreamEnded):
            self._on_stream_end(event.stream_id, now_ns, out)
        elif isinstance(event, h2.events.StreamReset):
            self._on_reset(event)
        elif isinstance(event, h2.events.SettingsAcknowledged):
            self.settings_acked = True
            out.append(SettingsAcknowledged())
        elif isinstance(event, h2.events.ConnectionTerminated):
            self._on_goaway(event, out)

    def _on_headers(self, stream_id: int | None, headers: list[tuple[bytes, bytes]]) -> None:
        call = self.calls.get(stream_id or 0)
        status, message = wire.grpc_status(headers)
        if call is not None and status is not None:
            call.status, call.status_message = status, message

    def _on_stream_end(self, stream_id: int | None, now_ns: int, out: list[Event]) -> None:
        call = self.calls.get(stream_id or 0)
        if call is None:
            return
        call.ended_ns = now_ns
        self.policy.ended(call.stream_id)
        if call.unread_bytes == 0 and not call.cancelled:
            call.finished_ns = now_ns
            self.policy.finished(call.stream_id)
        ok = call.status == wire.GRPC_OK
        if ok or (call.cancelled and call.status == wire.GRPC_CANCELLED):  # we cancelled it
            out.append(CallEnded(call.stream_id, call.path, call.status or 0, now_ns))
            return
        raise MeasurementError(
            f"h2 client: {call.path} ended with grpc-status {call.status}"
            + (f" ({call.status_message})" if call.status_message else "")
        )

    def _on_reset(self, event: h2.events.StreamReset) -> None:
        call = self.calls.get(event.stream_id or 0)
        if call is None or call.cancelled:
            return
        raise MeasurementError(
            f"h2 client: the server reset {call.path} "
            f"(stream {call.stream_id}, error {event.error_code})"
        )

    def _on_goaway(self, event: h2.events.ConnectionTerminated, out: list[Event]) -> None:
        if event.error_code or any(not c.done and not c.cancelled for c in self.calls.values()):
            raise MeasurementError(
                f"h2 client: the server sent GOAWAY (error {event.error_code}, "
                f"{event.additional_data!r})"
            )
        out.append(ServerWentAway(event.additional_data or b""))

    def _on_ping_ack(self, data: bytes, now_ns: int, out: list[Event]) -> None:
        self._pings_unacked = max(0, self._pings_unacked - 1)
        sent_ns = self._probe_sent.pop(data, None)
        if sent_ns is not None:
            self.ping_rtt_ns.append(now_ns - sent_ns)
            out.append(RttMeasured(now_ns - sent_ns, "probe"))
            return
        if data != self.policy.ping_data:
            return
        sent_ns = self.policy.ping_sent_ns
        answer = self.policy.ping_acked(now_ns)
        if len(self.ping_rtt_ns) < MAX_RTT_SAMPLES:
            self.ping_rtt_ns.append(now_ns - sent_ns)
            out.append(RttMeasured(now_ns - sent_ns, "bdp"))
        self._policy_answer(answer, now_ns, out)

    def _policy_answer(self, answer: Answer, now_ns: int, out: list[Event]) -> None:
        """Do what the policy answered to an ack or a read's end; say when a window grew."""
        self._apply(answer, now_ns)
        if answer.stream_window is not None:
            out.append(WindowsGrew(answer.stream_window, now_ns))

    def _grew(self, answer: Answer, now_ns: int) -> None:
        """A policy's window grew. Announced by SETTINGS as grpc-go's ``updateFlowControl``
        does: the connection window first (its WINDOW_UPDATE is among the grants), then
        every stream through SETTINGS_INITIAL_WINDOW_SIZE (the peer applies the delta to
        every open stream). A policy that sizes streams one by one granted them already."""
        window_bytes = answer.stream_window or 0
        self.window_trace.append((now_ns, window_bytes))
        if not answer.settings:
            return
        self._send_credit()
        self._h2.update_settings({SettingCodes.INITIAL_WINDOW_SIZE: window_bytes})
        delta = window_bytes - self._stream_window
        self._stream_window = window_bytes
        for call in self.calls.values():
            call.advertised_bytes += max(0, delta)
            window = call.advertised_bytes - call.data_bytes - call.pad_bytes
            call.peak_window_bytes = max(call.peak_window_bytes, window)
