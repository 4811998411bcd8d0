//! Pure TCP reassembly for the packet link's frame tap: IPv4 packets in, byte streams out.
//!
//! A line-for-line port of `kit/capture/tcpstream.py` (its docstring gives the rules): each
//! delivered packet rebuilds its connection direction's bytes in sequence order, as the
//! receiving kernel does: a range already delivered is cut off, a segment beyond a hole waits
//! (at most `MAX_OUT_OF_ORDER_BYTES`) until the hole is filled. A connection is known from
//! its SYN (client to server, without ACK); packets of others are ignored.

use std::collections::HashMap;

pub const MAX_OUT_OF_ORDER_BYTES: usize = 8 * 1024 * 1024;
const SYN: u8 = 0x02;
const FIN: u8 = 0x01;
const RST: u8 = 0x04;
const ACK: u8 = 0x10;
const HALF: u32 = 1 << 31;

/// What a packet did: `Open`, `Bytes` (in order), `End` (a direction's FIN reached in
/// order) or `Close` (both ended, or a reset); each with its connection and direction.
#[derive(Debug, PartialEq, Eq)]
pub enum StreamEvent {
    Open(u32),
    Bytes(u32, u8, Vec<u8>),
    End(u32, u8),
    Close(u32, u8),
}

struct Segment<'a> {
    src_port: u16,
    dst_port: u16,
    seq: u32,
    flags: u8,
    payload: &'a [u8],
}

/// The TCP segment of an IPv4 packet; `None` for anything else (or a truncated one).
fn parse_segment(packet: &[u8]) -> Option<Segment<'_>> {
    if packet.len() < 40 || packet[0] >> 4 != 4 || packet[9] != 6 {
        return None;
    }
    let ihl = usize::from(packet[0] & 0x0F) * 4;
    let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
    if total > packet.len() || total < ihl + 20 {
        return None;
    }
    let tcp = &packet[ihl..total];
    let offset = usize::from(tcp[12] >> 4) * 4;
    if offset < 20 || offset > tcp.len() {
        return None;
    }
    Some(Segment {
        src_port: u16::from_be_bytes([tcp[0], tcp[1]]),
        dst_port: u16::from_be_bytes([tcp[2], tcp[3]]),
        seq: u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]),
        flags: tcp[13],
        payload: &tcp[offset..],
    })
}

#[derive(Default)]
struct Direction {
    next_seq: Option<u32>, // None until this direction's SYN
    waiting: HashMap<u32, Vec<u8>>,
    waiting_bytes: usize,
    fin_seq: Option<u32>,
    ended: bool,
}

struct Conn {
    conn: u32,
    sides: [Direction; 2],
}

/// Every connection's two byte streams, keyed by (client port, server port).
#[derive(Default)]
pub struct TcpStreams {
    conns: HashMap<(u16, u16), Conn>,
    next_conn: u32,
}

impl TcpStreams {
    pub fn new() -> Self {
        TcpStreams {
            conns: HashMap::new(),
            next_conn: 1,
        }
    }

    /// Events for one delivered packet travelling `direction` (0 up, 1 down).
    pub fn packet(&mut self, direction: u8, packet: &[u8], events: &mut Vec<StreamEvent>) {
        let Some(seg) = parse_segment(packet) else {
            return;
        };
        let key = if direction == 0 {
            (seg.src_port, seg.dst_port)
        } else {
            (seg.dst_port, seg.src_port)
        };
        if !self.conns.contains_key(&key) {
            if direction != 0 || seg.flags & (SYN | ACK) != SYN {
                return;
            }
            let conn = self.next_conn;
            self.next_conn += 1;
            self.conns.insert(
                key,
                Conn {
                    conn,
                    sides: Default::default(),
                },
            );
            events.push(StreamEvent::Open(conn));
        }
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        let id = conn.conn;
        if seg.flags & RST != 0 {
            self.conns.remove(&key);
            events.push(StreamEvent::Close(id, direction));
            return;
        }
        advance(conn, direction, &seg, events);
        if conn.sides.iter().all(|s| s.ended) {
            self.conns.remove(&key);
            events.push(StreamEvent::Close(id, direction));
        }
    }
}

fn advance(conn: &mut Conn, direction: u8, seg: &Segment, events: &mut Vec<StreamEvent>) {
    let side = &mut conn.sides[usize::from(direction)];
    let mut seq = seg.seq;
    if seg.flags & SYN != 0 {
        if side.next_seq.is_none() {
            side.next_seq = Some(seq.wrapping_add(1));
        }
        seq = seq.wrapping_add(1);
    }
    if side.next_seq.is_none() || side.ended {
        return;
    }
    if seg.flags & FIN != 0 {
        side.fin_seq = Some(seq.wrapping_add(seg.payload.len() as u32));
    }
    if !seg.payload.is_empty() {
        hold(side, seq, seg.payload);
    }
    drain(conn.conn, direction, side, events);
}

fn hold(side: &mut Direction, mut seq: u32, mut payload: &[u8]) {
    let next = side.next_seq.unwrap_or(seq);
    let ahead = seq.wrapping_sub(next);
    if ahead >= HALF {
        // starts before what was delivered: keep only the new part
        let behind = ahead.wrapping_neg() as usize;
        if behind >= payload.len() {
            return;
        }
        payload = &payload[behind..];
        seq = next;
    }
    let known = side.waiting.get(&seq).map_or(0, Vec::len);
    if known > 0 && known >= payload.len() {
        return;
    }
    if side.waiting_bytes + payload.len() > MAX_OUT_OF_ORDER_BYTES {
        return; // the receiver's window would not hold it either
    }
    side.waiting_bytes = side.waiting_bytes + payload.len() - known;
    side.waiting.insert(seq, payload.to_vec());
}

fn drain(conn: u32, direction: u8, side: &mut Direction, events: &mut Vec<StreamEvent>) {
    // Each round delivers at least one waiting segment, so at most `waiting.len()` + 1 rounds.
    let mut rounds = side.waiting.len() + 1;
    loop {
        let mut moved = false;
        while let Some(payload) = side.next_seq.and_then(|n| side.waiting.remove(&n)) {
            side.waiting_bytes -= payload.len();
            side.next_seq = side.next_seq.map(|n| n.wrapping_add(payload.len() as u32));
            events.push(StreamEvent::Bytes(conn, direction, payload));
            moved = true;
        }
        if moved && !side.waiting.is_empty() {
            drop_covered(side); // a hole filled: a segment may now straddle next_seq
        }
        let again = moved && side.next_seq.is_some_and(|n| side.waiting.contains_key(&n));
        rounds = rounds.saturating_sub(1);
        if !again || rounds == 0 {
            break;
        }
    }
    if side.fin_seq.is_some() && side.next_seq == side.fin_seq && !side.ended {
        side.ended = true;
        events.push(StreamEvent::End(conn, direction));
    }
}

/// Waiting segments now wholly or partly behind `next_seq`: trim them to the rest.
fn drop_covered(side: &mut Direction) {
    let Some(next) = side.next_seq else {
        return;
    };
    let behind_next: Vec<u32> = side
        .waiting
        .keys()
        .copied()
        .filter(|&s| s.wrapping_sub(next) >= HALF)
        .collect();
    for seq in behind_next {
        let Some(payload) = side.waiting.remove(&seq) else {
            continue;
        };
        side.waiting_bytes -= payload.len();
        let behind = next.wrapping_sub(seq) as usize;
        if behind < payload.len() && !side.waiting.contains_key(&next) {
            let rest = payload[behind..].to_vec();
            side.waiting_bytes += rest.len();
            side.waiting.insert(next, rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/TCP packet (no options) from `src` to `dst` port.
    fn packet(src: u16, dst: u16, seq: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
        let total = 40 + payload.len();
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = 6;
        p[20..22].copy_from_slice(&src.to_be_bytes());
        p[22..24].copy_from_slice(&dst.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[32] = 5 << 4;
        p[33] = flags;
        p[40..].copy_from_slice(payload);
        p
    }

    fn feed(streams: &mut TcpStreams, direction: u8, p: &[u8]) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        streams.packet(direction, p, &mut events);
        events
    }

    fn opened(streams: &mut TcpStreams) {
        assert_eq!(
            feed(streams, 0, &packet(4000, 80, 99, SYN, b"")),
            vec![StreamEvent::Open(1)]
        );
        assert!(feed(streams, 1, &packet(80, 4000, u32::MAX, SYN | ACK, b"")).is_empty());
    }

    #[test]
    fn bytes_come_in_order_a_hole_waits_and_a_resend_is_cut() {
        let mut s = TcpStreams::new();
        opened(&mut s);
        assert!(feed(&mut s, 0, &packet(4000, 80, 103, ACK, b"def")).is_empty()); // past a hole
        let events = feed(&mut s, 0, &packet(4000, 80, 100, ACK, b"abcd")); // fills it, overlaps
        let want = vec![
            StreamEvent::Bytes(1, 0, b"abcd".to_vec()),
            StreamEvent::Bytes(1, 0, b"ef".to_vec()),
        ];
        assert_eq!(events, want);
        assert!(feed(&mut s, 0, &packet(4000, 80, 100, ACK, b"abc")).is_empty()); // a resend
                                                                                  // the down direction's sequence wraps past 2^32
        let down = feed(&mut s, 1, &packet(80, 4000, 0, ACK, b"xy"));
        assert_eq!(down, vec![StreamEvent::Bytes(1, 1, b"xy".to_vec())]);
    }

    #[test]
    fn both_fins_close_a_reset_closes_and_strangers_are_ignored() {
        let mut s = TcpStreams::new();
        assert!(feed(&mut s, 0, &packet(4000, 80, 5, ACK, b"no syn")).is_empty());
        opened(&mut s);
        assert_eq!(
            feed(&mut s, 0, &packet(4000, 80, 100, FIN | ACK, b"")),
            vec![StreamEvent::End(1, 0)]
        );
        let last = feed(&mut s, 1, &packet(80, 4000, 0, FIN | ACK, b"z"));
        let want = vec![
            StreamEvent::Bytes(1, 1, b"z".to_vec()),
            StreamEvent::End(1, 1),
            StreamEvent::Close(1, 1),
        ];
        assert_eq!(last, want);
        assert_eq!(
            feed(&mut s, 0, &packet(4001, 80, 7, SYN, b"")),
            vec![StreamEvent::Open(2)]
        );
        assert_eq!(
            feed(&mut s, 1, &packet(80, 4001, 9, RST, b"")),
            vec![StreamEvent::Close(2, 1)]
        );
        assert!(feed(&mut s, 0, &[0u8; 20]).is_empty()); // not IPv4/TCP
    }
}
