"""Pure model: Linux TCP receive-buffer auto-tuning (``tcp_rcv_space_adjust``), applied to
each HTTP/2 stream and to the connection, driven by the application's reads.

Source: torvalds/linux ``net/ipv4/tcp_input.c`` ``tcp_rcv_space_adjust`` and
``tcp_init_buffer_space``, and the ``tcp_rmem`` defaults in ``net/ipv4/tcp.c`` (6.x).

- A window starts at 65535 with a measured space of 10 segments (``TCP_INIT_CWND`` x
  advmss 1448 B); the cap is ``tcp_rmem[2]`` (6 MiB), taken as a window (Linux turns its
  buffer into a window by a scaling ratio, about half: the real window cap is lower).
- Credit as TCP advertises it: every byte the application reads frees its room at once.
- Once per receiver RTT, on a read: copied = bytes the application read in that RTT; when
  copied > the last measured space: window = 2 x copied + 16 x advmss, plus growth room
  2 x window x (copied - space) / space (the sender may be in slow start), capped, never
  shrinking; space = copied.
- The receiver RTT: Linux measures it from timestamps (an EWMA of 1/8); here a PING on
  DATA when none is in flight.
"""

from __future__ import annotations

from kit.clients.h2.policies.base import Answer
from kit.clients.h2.policies.model import ModelPolicy, SmoothedRtt, Window
from kit.plan.units import MIB

INITIAL_WINDOW_BYTES = 65_535
ADVMSS_BYTES = 1448
INITIAL_SPACE_BYTES = 10 * ADVMSS_BYTES  # TCP_INIT_CWND x advmss
RMEM_MAX_BYTES = 6 * MIB  # tcp_rmem[2]
RTT_PING = b"linux\x00\x00\x01"


class Space:
    """``tp->rcvq_space`` of one window: what was copied by when, and its space."""

    __slots__ = ("seq", "space", "time_ns", "window")

    def __init__(self, window: Window) -> None:
        self.window = window
        self.space = INITIAL_SPACE_BYTES
        self.seq = 0
        self.time_ns: int | None = None

    def adjust(self, rtt_ns: int, now_ns: int) -> None:
        """``tcp_rcv_space_adjust``: called on each read."""
        if self.time_ns is None:
            self.time_ns, self.seq = now_ns, self.window.consumed
            return
        if rtt_ns == 0 or now_ns - self.time_ns < rtt_ns:
            return
        copied = self.window.consumed - self.seq
        if copied > self.space:
            rcvwin = 2 * copied + 16 * ADVMSS_BYTES
            rcvwin += 2 * (rcvwin * (copied - self.space) // self.space)
            self.window.size = max(self.window.size, min(rcvwin, RMEM_MAX_BYTES))
            self.space = copied
        self.seq, self.time_ns = self.window.consumed, now_ns


class LinuxPolicy(ModelPolicy):
    """Linux's receive auto-tuning on every stream and on the connection."""

    name = "linux"
    ping_data = RTT_PING

    def __init__(
        self,
        stream_window_bytes: int = INITIAL_WINDOW_BYTES,
        conn_window_bytes: int = INITIAL_WINDOW_BYTES,
    ) -> None:
        super().__init__(stream_window_bytes, conn_window_bytes)
        self.rtt = SmoothedRtt()
        self.conn_space = Space(self.conn)
        self.spaces: dict[int, Space] = {}

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        answer = super().opened(stream_id, expected_bytes, now_ns)
        self.spaces[stream_id] = Space(self.streams[stream_id])
        return answer

    def forget(self, stream_id: int) -> None:
        super().forget(stream_id)
        self.spaces.pop(stream_id, None)

    def stream_update(self, stream_id: int, stream: Window, now_ns: int) -> int:
        space = self.spaces.get(stream_id)
        if space is not None:
            space.adjust(self.rtt.smoothed_ns, now_ns)
        return stream.extend_to(stream.consumed + stream.size)

    def conn_update(self, now_ns: int) -> int:
        self.conn_space.adjust(self.rtt.smoothed_ns, now_ns)
        return self.conn.extend_to(self.conn.consumed + self.conn.size)

    def on_data(self, size: int, now_ns: int) -> bool:
        return self.start_ping(now_ns)

    def ping_acked(self, now_ns: int) -> Answer:
        super().ping_acked(now_ns)
        self.rtt.update(now_ns - self.ping_sent_ns)
        return Answer()
