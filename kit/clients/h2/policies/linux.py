"""Pure model: Linux TCP receive-buffer auto-tuning (dynamic right-sizing, DRS) of the kernel
this kit runs on (6.18), applied to each HTTP/2 stream and to the connection, driven by the
application's reads.

Sources: torvalds/linux ``net/ipv4/tcp_input.c`` (``tcp_rcv_space_adjust``,
``tcp_rcvbuf_grow``, ``tcp_rcv_rtt_update``, ``tcp_init_buffer_space``), ``net/ipv4/tcp.c``
(``__tcp_cleanup_rbuf``, the ``tcp_rmem`` defaults) as in the 6.18 kernel here (6.18.44):
the 6.16 merge 2da35e4b4df9 "tcp-receive-side-improvements" (65c5287892e9 fix sk_rcvbuf
overshoot, ea33537d8292 receive queue awareness in tcp_rcv_space_adjust, b879dcb1aeec
always seek for minimal rtt, a00f135cd986 skip big rtt sample if receive queue is not
empty, 572be9bf9d0d tcp_rmem[2] to 32 MB), then "tcp: fix too slow tcp_rcvbuf_grow()
action" (netdev, 2025-10-24): this kernel's BTF has ``tcp_rcvbuf_grow(struct sock *sk, u32
newval)``, which that series introduced, and no ``tcp_rcvbuf_low_rtt`` sysctl (a later
kernel's). ``kit.tools.kernelcheck`` measures this kernel beside the model on the packet
link; its windows grew with the slow-start room below (5.8 MB on 100 Mbit/s x 20 ms, where
2 x copied alone would stop near 2.4 MB).

- A window starts at 65535 with a measured space of 10 segments (``TCP_INIT_CWND`` x
  advmss 1448 B).
- Once per receiver RTT, on a read (``tcp_rcv_space_adjust``): copied = bytes the
  application read in that RTT **minus the bytes still unread** (``copied -= inq``, since
  6.16: a reader that falls behind stops the growth). When copied > the last space
  (``tcp_rcvbuf_grow(sk, copied)``): window = 2 x copied ("DRS is always one RTT late")
  plus the slow-start room 2 x window x (copied - old space) / old space, never shrinking,
  capped by ``tcp_rmem[2]`` (32 MiB since 6.16, 6 MiB before) turned into a window by the
  socket's scaling ratio (about half until measured: the model takes 16 MiB); space =
  copied.
- Credit as TCP advertises it: a read frees window only on the **next ACK** (the next
  DATA frame received, here), unless the window the read opens at least doubles the one
  the sender has now and that one is at most half the window (``__tcp_cleanup_rbuf``:
  ``new_window >= 2 * rcv_window_now``): then the update goes at once.
- The receiver RTT: Linux measures it from timestamps (``tcp_rcv_rtt_measure_ts``); here
  a PING on DATA when none is in flight. ``tcp_rcv_rtt_update``: a smaller sample is taken
  at once (it seeks the minimum), a larger one moves the estimate by 1/8, and only while
  the receive queue is empty (here: nothing received and unread on the connection), so a
  slow reader keeps its RTT, and its window, small.
- Not modelled: ``rcv_ssthresh`` (the advertised window grows towards the clamp by
  ``tcp_grow_window`` as segments arrive), the out-of-order queue's room, and the window
  the kernel starts from once it has measured its scaling ratio (``tcp_rmem[1]`` 131072 x
  skb len / truesize: 80-100 KiB on the packet link, against the model's 65535; with an
  8 Mbit/s reader the kernel then never grew, the model grew once, to 192-226 KiB, on a
  burst of paced reads its shorter unread queue let through).

Kernels up to 6.15 (the model before 2026-12-03): window = 2 x copied + 16 x advmss, copied
not reduced by the unread queue, cap ``tcp_rmem[2]`` 6 MiB.
"""

from __future__ import annotations

from kit.clients.h2.policies.base import Answer, Grant
from kit.clients.h2.policies.model import ModelPolicy, Window
from kit.plan.units import MIB

KERNEL = "6.18"
INITIAL_WINDOW_BYTES = 65_535
ADVMSS_BYTES = 1448
INITIAL_SPACE_BYTES = 10 * ADVMSS_BYTES  # TCP_INIT_CWND x advmss
RMEM_MAX_BYTES = 32 * MIB  # tcp_rmem[2] since 6.16 (33554432)
SCALING_RATIO = 0.5  # TCP_DEFAULT_SCALING_RATIO: window = space x ratio until measured
WINDOW_CAP_BYTES = int(RMEM_MAX_BYTES * SCALING_RATIO)
RTT_PING = b"linux\x00\x00\x01"


def rcvbuf_grow(window: int, copied: int, old_space: int) -> int:
    """``tcp_rcvbuf_grow``'s window for ``copied`` > ``old_space``, capped, never smaller
    than ``window``."""
    rcvwin = 2 * copied
    rcvwin += 2 * (rcvwin * (copied - old_space) // max(1, old_space))
    return max(window, min(rcvwin, WINDOW_CAP_BYTES))


class ReceiverRtt:
    """``tp->rcv_rtt_est`` (``tcp_rcv_rtt_update`` since 6.16): seeks the minimum; a larger
    sample counts 1/8, and only while the receive queue is empty."""

    __slots__ = ("smoothed_ns",)

    def __init__(self) -> None:
        self.smoothed_ns = 0

    def update(self, sample_ns: int, queue_empty: bool) -> None:
        if sample_ns <= 0:
            return
        if self.smoothed_ns == 0 or sample_ns < self.smoothed_ns:
            self.smoothed_ns = sample_ns
        elif queue_empty:
            self.smoothed_ns += (sample_ns - self.smoothed_ns) // 8


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
        unread = self.window.received - self.window.consumed  # inq
        copied = self.window.consumed - self.seq - unread
        if copied > self.space:
            self.window.size = rcvbuf_grow(self.window.size, copied, self.space)
            self.space = copied
        self.seq, self.time_ns = self.window.consumed, now_ns


def window_update(window: Window) -> int:
    """``__tcp_cleanup_rbuf``: after a read, the window-opening update due now (0: the
    freed room waits for the next ACK)."""
    now = window.available  # tcp_receive_window: what the sender may still send
    if 2 * now > window.size:
        return 0
    new = window.consumed + window.size - window.received
    if new <= 0 or new < 2 * now:
        return 0
    return window.extend_to(window.consumed + window.size)


def ack_update(window: Window) -> int:
    """An ACK goes out (a segment arrived): it carries the whole free window."""
    return window.extend_to(window.consumed + window.size)


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
        self.rtt = ReceiverRtt()
        self.conn_space = Space(self.conn)
        self.spaces: dict[int, Space] = {}

    def opened(self, stream_id: int, expected_bytes: int | None, now_ns: int) -> Answer:
        answer = super().opened(stream_id, expected_bytes, now_ns)
        self.spaces[stream_id] = Space(self.streams[stream_id])
        return answer

    def forget(self, stream_id: int) -> None:
        super().forget(stream_id)
        self.spaces.pop(stream_id, None)

    def data(self, stream_id: int | None, size: int, padding: int, now_ns: int) -> Answer:
        """A frame arrived: the ACK it draws carries the room earlier reads freed."""
        self.conn.received += size
        stream = self.streams.get(stream_id) if stream_id is not None else None
        if stream is not None:
            stream.received += size
        at_once = size if stream is None else padding  # dead streams, padding: read now
        if at_once:
            self.conn.consumed += at_once
            if stream is not None:
                stream.consumed += at_once
        out: list[Grant] = [(0, ack_update(self.conn))]
        if stream is not None and stream_id is not None:
            out.append((stream_id, ack_update(stream)))
        grants = tuple(g for g in out if g[1] > 0)
        return self.answer(grants, self.on_data(size, now_ns))

    def stream_update(self, stream_id: int, stream: Window, now_ns: int) -> int:
        space = self.spaces.get(stream_id)
        if space is not None:
            space.adjust(self.rtt.smoothed_ns, now_ns)
        return window_update(stream)

    def conn_update(self, now_ns: int) -> int:
        self.conn_space.adjust(self.rtt.smoothed_ns, now_ns)
        return window_update(self.conn)

    def on_data(self, size: int, now_ns: int) -> bool:
        return self.start_ping(now_ns)

    def ping_acked(self, now_ns: int) -> Answer:
        super().ping_acked(now_ns)
        self.rtt.update(now_ns - self.ping_sent_ns, self.conn.received == self.conn.consumed)
        return Answer()
