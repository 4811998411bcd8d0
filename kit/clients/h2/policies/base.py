"""Pure: what a receive-window policy is told and what it answers, nothing else.

A policy decides how a receiver sizes and refills its HTTP/2 windows. The connection
(``kit.clients.h2.connection``) keeps the protocol state and the ledger (what each stream
was granted and received); the policy is told what happens, with ``now`` passed in:

- ``opened`` / ``ended`` / ``finished`` / ``cancelled``: a stream's life (for policies that
  share a pool between the streams that receive);
- ``data``: a DATA frame's flow-controlled length arrived (``stream_id`` None when the frame
  is for a stream nobody reads any more), with the padding in it;
- ``read``: the application read ``n`` bytes of a stream (padding is read on arrival);
- ``message_started``: the application starts reading a gRPC message of ``n`` bytes;
- ``ping_written`` / ``ping_acked``: the policy's own PING left the process / came back;
- ``read_done``: every frame of one socket read was handled, however the shell sliced it
  (a stack that notices a PING's ack only after the frames read with it closes its sample
  here).

It answers with an ``Answer``: WINDOW_UPDATEs to queue (stream 0 = the connection), whether
to send its PING now, and a new window when it grew one. A policy never touches h2 or a
socket, so each is a small module a unit test drives with numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.clients.h2.credit import StreamFlow

Grant = tuple[int, int]  # (stream id, increment); stream 0 is the connection


@dataclass(frozen=True, slots=True)
class Answer:
    """What the connection does next, in this order: queue ``grants`` one WINDOW_UPDATE
    each (0 = connection), then, when ``ping``, flush owed connection credit and send the
    policy's PING; ``stream_window`` is a new stream window (the largest, for a policy
    that sizes streams one by one), announced as SETTINGS_INITIAL_WINDOW_SIZE when
    ``settings`` (the peer grows every open stream by the difference); ``conn_window``
    is the connection window's new size (its increment is among ``grants``)."""

    grants: tuple[Grant, ...] = ()
    ping: bool = False
    stream_window: int | None = None
    conn_window: int | None = None
    settings: bool = False


NOTHING = Answer()


def grants(*pairs: Grant) -> Answer:
    """An answer of WINDOW_UPDATEs only, dropping the zero increments."""
    kept = tuple(p for p in pairs if p[1] > 0)
    return Answer(kept) if kept else NOTHING


class WindowPolicy:
    """The hooks every policy may answer; the defaults do nothing (a static window that
    never refills: subclasses return credit their own way)."""

    name = "base"
    # The PING payload this policy sends (grpc-go's BDP payload for the BDP estimators,
    # so a capture tells them from RTT probes).
    ping_data = bytes([2, 4, 16, 16, 9, 14, 7, 7])
    # The receiver reads each message's length prefix before it reads the message
    # (grpc-go grants whole messages): only then does ``message_started`` get called.
    grants_messages = False

    def __init__(self, stream_window_bytes: int, conn_window_bytes: int) -> None:
        self.stream_window_bytes = stream_window_bytes
        self.conn_window_bytes = conn_window_bytes
        self.ping_sent_ns = 0
        self.ping_outstanding = False

    @property
    def pings(self) -> bool:
        """Whether the policy's PINGs are running now (they measure RTT: no probes then)."""
        return False

    @property
    def dirty(self) -> bool:
        """Whether ``refresh`` has something to re-advertise (the receiving streams changed)."""
        return False

    def stream_flow(self, stream_id: int) -> StreamFlow | None:
        """The stream's threshold credit state, for policies that keep one (tests read it)."""
        return None

    def start(self, now_ns: int) -> Answer:
        """The connection sent its preface and windows; policies that estimate start here."""
        return NOTHING

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        return NOTHING

    def ended(self, stream_id: int) -> None:
        """The stream's trailers arrived (it may still hold unread bytes)."""

    def finished(self, stream_id: int) -> None:
        """The stream was read to its end: it receives no more."""

    def cancelled(self, stream_id: int) -> None:
        """We reset the stream; what it held unread was dropped."""

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        return NOTHING

    def read(self, stream_id: int, n: int, now_ns: int) -> Answer:
        return NOTHING

    def message_started(self, stream_id: int, message_bytes: int) -> Answer:
        return NOTHING

    def refresh(self) -> Answer:
        return NOTHING

    def ping_written(self, now_ns: int) -> None:
        """The PING asked for left the process now: its round trip counts from here."""
        if self.ping_outstanding:
            self.ping_sent_ns = now_ns

    def ping_acked(self, now_ns: int) -> Answer:
        self.ping_outstanding = False
        return NOTHING

    def read_done(self, now_ns: int) -> Answer:
        """Every frame of one socket read (all stamped ``now_ns``) was handled."""
        return NOTHING
