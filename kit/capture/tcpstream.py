"""Pure TCP reassembly for the packet link's frame tap: IPv4 packets in, byte streams out.

The packet link's forwarder sees IP packets, not the HTTP/2 byte stream the frame tap
decodes. It hands every packet it *delivers* (what the receiver's kernel gets, after the
link's losses) to ``TcpStreams.packet``, which rebuilds each connection direction's bytes
in sequence order, as the receiving kernel does: a retransmitted range already delivered
is cut off, a segment beyond a hole waits (bounded by ``MAX_OUT_OF_ORDER_BYTES``) until the
hole is filled. A connection is known from its SYN; packets of others are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_OUT_OF_ORDER_BYTES = 8 * 1024 * 1024
_SYN, _FIN, _RST, _ACK = 0x02, 0x01, 0x04, 0x10
_MOD = 1 << 32


@dataclass(frozen=True)
class Segment:
    """What one IPv4/TCP packet carries (ports, sequence number, flags, payload)."""

    src_port: int
    dst_port: int
    seq: int
    flags: int
    payload: bytes


def parse_segment(packet: bytes) -> Segment | None:
    """The TCP segment of an IPv4 packet; None for anything else (or a truncated one)."""
    if len(packet) < 40 or packet[0] >> 4 != 4 or packet[9] != 6:
        return None
    ihl = (packet[0] & 0x0F) * 4
    total = int.from_bytes(packet[2:4], "big")
    if total > len(packet) or total < ihl + 20:
        return None
    tcp = packet[ihl:total]
    offset = (tcp[12] >> 4) * 4
    if offset < 20 or offset > len(tcp):
        return None
    return Segment(
        int.from_bytes(tcp[0:2], "big"),
        int.from_bytes(tcp[2:4], "big"),
        int.from_bytes(tcp[4:8], "big"),
        tcp[13],
        bytes(tcp[offset:]),
    )


@dataclass
class _Direction:
    next_seq: int | None = None  # None until this direction's SYN
    waiting: dict[int, bytes] = field(default_factory=dict)  # out of order, by seq
    waiting_bytes: int = 0
    fin_seq: int | None = None
    ended: bool = False


@dataclass
class StreamEvent:
    """``kind``: "open", "bytes" (``data`` in order), "end" (a direction's FIN reached in
    order) or "close" (both ended, or a reset)."""

    kind: str
    conn: int
    direction: int  # 0 up (client to server), 1 down
    data: bytes = b""


@dataclass
class _Conn:
    conn: int
    sides: tuple[_Direction, _Direction] = field(
        default_factory=lambda: (_Direction(), _Direction())
    )


class TcpStreams:
    """Every connection's two byte streams, keyed by (client port, server port)."""

    def __init__(self) -> None:
        self._conns: dict[tuple[int, int], _Conn] = {}
        self._next_conn = 1

    def packet(self, direction: int, packet: bytes) -> list[StreamEvent]:
        """Events for one delivered packet travelling ``direction`` (0 up, 1 down)."""
        seg = parse_segment(packet)
        if seg is None:
            return []
        key = (seg.src_port, seg.dst_port) if direction == 0 else (seg.dst_port, seg.src_port)
        conn = self._conns.get(key)
        events: list[StreamEvent] = []
        if conn is None:
            if direction != 0 or seg.flags & (_SYN | _ACK) != _SYN:
                return []
            conn = self._conns[key] = _Conn(self._next_conn)
            self._next_conn += 1
            events.append(StreamEvent("open", conn.conn, 0))
        if seg.flags & _RST:
            del self._conns[key]
            return [*events, StreamEvent("close", conn.conn, direction)]
        events += _advance(conn, direction, seg)
        if all(side.ended for side in conn.sides):
            del self._conns[key]
            events.append(StreamEvent("close", conn.conn, direction))
        return events

    def open_connections(self) -> list[int]:
        return sorted(c.conn for c in self._conns.values())


def _advance(conn: _Conn, direction: int, seg: Segment) -> list[StreamEvent]:
    side = conn.sides[direction]
    seq = seg.seq
    if seg.flags & _SYN:
        if side.next_seq is None:
            side.next_seq = (seq + 1) % _MOD
        seq = (seq + 1) % _MOD
    if side.next_seq is None or side.ended:
        return []
    if seg.flags & _FIN:
        side.fin_seq = (seq + len(seg.payload)) % _MOD
    if seg.payload:
        _hold(side, seq, seg.payload)
    return _drain(conn.conn, direction, side)


def _hold(side: _Direction, seq: int, payload: bytes) -> None:
    assert side.next_seq is not None
    ahead = (seq - side.next_seq) % _MOD
    if ahead >= _MOD // 2:  # starts before what was delivered: keep only the new part
        behind = _MOD - ahead
        if behind >= len(payload):
            return
        payload, seq = payload[behind:], side.next_seq
    known = side.waiting.get(seq)
    if known is not None and len(known) >= len(payload):
        return
    if side.waiting_bytes + len(payload) > MAX_OUT_OF_ORDER_BYTES:
        return  # the receiver's window would not hold it either
    side.waiting_bytes += len(payload) - (len(known) if known else 0)
    side.waiting[seq] = payload


def _drain(conn: int, direction: int, side: _Direction) -> list[StreamEvent]:
    assert side.next_seq is not None
    events = []
    while side.next_seq in side.waiting:
        payload = side.waiting.pop(side.next_seq)
        side.waiting_bytes -= len(payload)
        side.next_seq = (side.next_seq + len(payload)) % _MOD
        events.append(StreamEvent("bytes", conn, direction, payload))
    if events and side.waiting:  # a hole filled: a segment may now straddle next_seq
        _drop_covered(side)
    if events and side.next_seq in side.waiting:
        return events + _drain(conn, direction, side)
    if side.fin_seq is not None and side.next_seq == side.fin_seq and not side.ended:
        side.ended = True
        events.append(StreamEvent("end", conn, direction))
    return events


def _drop_covered(side: _Direction) -> None:
    """Waiting segments now wholly or partly behind ``next_seq``: trim them to the rest."""
    assert side.next_seq is not None
    for seq in [s for s in side.waiting if (s - side.next_seq) % _MOD >= _MOD // 2]:
        payload = side.waiting.pop(seq)
        side.waiting_bytes -= len(payload)
        behind = (side.next_seq - seq) % _MOD
        if behind < len(payload):
            rest = payload[behind:]
            if side.next_seq not in side.waiting:
                side.waiting[side.next_seq] = rest
                side.waiting_bytes += len(rest)
