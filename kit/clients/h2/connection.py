"""One HTTP/2 connection carrying gRPC calls, sans-IO: bytes and ``now`` in, bytes and events out.

Like h2 itself, ``H2GrpcConnection`` never touches a socket: the shell
(``kit.clients.h2.client``) feeds it what it read (``receive``) and sends what it queued
(``data_to_send``). The connection owns its windows: it advertises the stream window
(SETTINGS) and raises the connection window (stream-0 WINDOW_UPDATE) itself, returns credit
by its policy (``kit.clients.h2.credit``), grows both windows from the BDP estimator in
dynamic mode (``kit.clients.h2.bdp``) and measures PING round trips. It never decides when
a measurement starts or ends; the shell does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings

import kit.clients.h2.speedups  # noqa: F401  (installs the O(1) DATA repr, once)
from kit.clients.h2 import wire
from kit.clients.h2.bdp import BDP_PING_DATA, INITIAL_BDP_BYTES, BdpEstimator
from kit.clients.h2.credit import Credit
from kit.clients.h2.events import (
    CallEnded,
    Event,
    RttMeasured,
    ServerWentAway,
    SettingsAcknowledged,
    WindowsGrew,
)
from kit.errors import MeasurementError, UsageError
from kit.plan.trial import CREDIT_POLICIES, H2_MAX_FRAME_BYTES, H2_MIN_FRAME_BYTES, CreditPolicy
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


@dataclass
class Call:
    """One gRPC call on the connection; message bytes are counted, never kept."""

    stream_id: int
    path: str
    started_ns: int
    counter: wire.MessageCounter = field(default_factory=wire.MessageCounter)
    credit: Credit | None = None
    data_bytes: int = 0
    ended_ns: int | None = None
    status: int | None = None
    status_message: str = ""
    cancelled: bool = False
    body: bytearray | None = None  # the response's DATA, kept only when asked (uploads)

    @property
    def done(self) -> bool:
        return self.ended_ns is not None


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
    ``max_data_frame_bytes``, each ``Call``); ``receive`` also reports them as events.
    """

    def __init__(self, authority: str, options: ConnOptions) -> None:
        self.authority = authority
        self.options = options
        self.calls: dict[int, Call] = {}
        self.settings_acked = False
        self.max_data_frame_bytes = 0
        self.ping_rtt_ns: list[int] = []
        self.window_trace: list[tuple[int, int]] = []  # (monotonic ns, window bytes)
        self.bdp: BdpEstimator | None = None
        self._stream_window = options.stream_window_bytes
        self._conn_window = DEFAULT_WINDOW_BYTES
        self._conn_credit = Credit(DEFAULT_WINDOW_BYTES, options.credit_policy)
        self._owed_conn = 0
        self._owed_streams: dict[int, int] = {}
        self._probe_sent: dict[bytes, int] = {}
        self._probe_count = 0
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
            self._conn_credit.window_bytes = target_bytes

    def start_call(self, path: str, body: bytes, now_ns: int) -> Call:
        """Queue one call's headers and whole request body (our requests are one message)."""
        stream_id = self._h2.get_next_available_stream_id()
        self._h2.send_headers(stream_id, wire.request_headers(path, self.authority))
        self._h2.send_data(stream_id, body, end_stream=True)
        credit = Credit(self._stream_window, self.options.credit_policy)
        call = Call(stream_id, path, now_ns, credit=credit)
        self.calls[stream_id] = call
        return call

    # -- the send side of client-streaming calls (kit.clients.h2.upload drives these) ----

    def start_stream(self, path: str, now_ns: int) -> Call:
        """Queue a call's headers only: its body follows as flow control allows
        (``send_data``); the response body is kept for the caller to parse."""
        stream_id = self._h2.get_next_available_stream_id()
        self._h2.send_headers(stream_id, wire.request_headers(path, self.authority))
        credit = Credit(self._stream_window, self.options.credit_policy)
        call = Call(stream_id, path, now_ns, credit=credit, body=bytearray())
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
        if not call.done and not call.cancelled:
            call.cancelled = True
            self._h2.reset_stream(call.stream_id, h2.errors.ErrorCodes.CANCEL)

    def start_bdp(self, now_ns: int) -> None:
        """Dynamic windows: start estimating (at the timed phase, from grpc-go's 65535)."""
        self.bdp = BdpEstimator(initial_bytes=INITIAL_BDP_BYTES)
        self.window_trace.append((now_ns, self._stream_window))

    def probe_rtt(self, now_ns: int) -> bool:
        """Queue an RTT-probe PING; True if queued.

        Not while a probe is in flight, nor while BDP PINGs (which measure RTT too) run.
        """
        busy = self._probe_sent or (self.bdp is not None and not self.bdp.capped)
        if busy or len(self.ping_rtt_ns) >= MAX_RTT_SAMPLES:
            return False
        self._probe_count += 1
        data = PROBE_TAG + self._probe_count.to_bytes(6, "big")
        self._probe_sent[data] = now_ns
        self._h2.ping(data)
        return True

    def close(self) -> None:
        """Queue a GOAWAY (h2 accepts one in every state, even after the server's GOAWAY);
        the shell sends it, best effort, and closes the socket."""
        self._h2.close_connection()

    def data_to_send(self) -> bytes:
        """Every byte queued so far (b"" if none); the caller must send them in order."""
        return self._h2.data_to_send()

    # -- what the server sent ------------------------------------------------------------

    def receive(self, data: bytes | memoryview, now_ns: int) -> list[Event]:
        """Handle one read's bytes, all stamped ``now_ns``; queue credit once for all of them.

        Raises ``MeasurementError`` when the server fails a call or the connection, and
        h2's ``ProtocolError`` on a protocol violation (the shell maps it).
        """
        out: list[Event] = []
        for event in self._h2.receive_data(data):
            if type(event) is h2.events.DataReceived:
                self._on_data(event, now_ns)
            else:
                self._on_event(event, now_ns, out)
        self._send_credit()
        return out

    def _on_data(self, event: h2.events.DataReceived, now_ns: int) -> None:
        size = event.flow_controlled_length
        if size > self.max_data_frame_bytes:
            self.max_data_frame_bytes = size
        call = self.calls.get(event.stream_id)
        if call is not None and event.data:
            call.data_bytes += len(event.data)
            call.counter.feed(event.data)
            if call.body is not None:
                call.body += event.data
        self._return_credit(call, size, ended=event.stream_ended is not None)
        if self.bdp is not None and self.bdp.on_data(size, now_ns):
            self._h2.ping(BDP_PING_DATA)

    def _return_credit(self, call: Call | None, size: int, ended: bool) -> None:
        """Work out the credit owed; ``_send_credit`` queues it once per ``receive``.

        One WINDOW_UPDATE per read instead of per DATA frame: the bytes go out in the same
        send either way (one send per read), so the timing is the same at a fraction of
        the CPU (per-frame increments were ~19% of the client's CPU at 1.5 GiB/s).
        """
        if size <= 0:
            return
        self._owed_conn += self._conn_credit.consumed(size)
        if call is None or call.credit is None or ended or call.cancelled:
            return
        stream_due = call.credit.consumed(size)
        if stream_due:
            self._owed_streams[call.stream_id] = (
                self._owed_streams.get(call.stream_id, 0) + stream_due
            )

    def _send_credit(self) -> None:
        if self._owed_conn:
            self._h2.increment_flow_control_window(self._owed_conn)
            self._owed_conn = 0
        for stream_id, due in self._owed_streams.items():
            # A stream that has ended or that we reset needs no more credit. h2 hands us
            # the events of a whole read at once, so trailers later in that read may
            # already have closed the stream: ask h2, not the event.
            stream = self._h2.streams.get(stream_id)
            call = self.calls.get(stream_id)
            if stream is None or stream.closed or call is None or call.cancelled:
                continue
            self._h2.increment_flow_control_window(due, stream_id=stream_id)
        self._owed_streams.clear()

    def _on_event(self, event: h2.events.Event, now_ns: int, out: list[Event]) -> None:
        if isinstance(event, h2.events.PingAckReceived):
            self._on_ping_ack(event.ping_data or b"", now_ns, out)
        elif isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
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
        sent_ns = self._probe_sent.pop(data, None)
        if sent_ns is not None:
            self.ping_rtt_ns.append(now_ns - sent_ns)
            out.append(RttMeasured(now_ns - sent_ns, "probe"))
            return
        if data != BDP_PING_DATA or self.bdp is None:
            return
        sent_ns = self.bdp.ping_sent_ns
        grew = self.bdp.on_ping_ack(now_ns)
        if len(self.ping_rtt_ns) < MAX_RTT_SAMPLES:
            self.ping_rtt_ns.append(now_ns - sent_ns)
            out.append(RttMeasured(now_ns - sent_ns, "bdp"))
        if grew is not None:
            self._grow_windows(grew.window_bytes, now_ns)
            out.append(WindowsGrew(grew.window_bytes, now_ns))

    def _grow_windows(self, window_bytes: int, now_ns: int) -> None:
        """Apply a new BDP as grpc-go does.

        Streams get it through SETTINGS_INITIAL_WINDOW_SIZE (the peer applies the delta to
        every open stream), the connection through a stream-0 WINDOW_UPDATE.
        """
        self._h2.update_settings({SettingCodes.INITIAL_WINDOW_SIZE: window_bytes})
        self._stream_window = window_bytes
        for call in self.calls.values():
            if call.credit is not None:
                call.credit.window_bytes = window_bytes
        self._set_conn_window(window_bytes)
        self.window_trace.append((now_ns, window_bytes))
