//! The packet link's frame tap, as `kit/delayline/packettap.py`: the forwarder's delivered
//! packets, reassembled into each connection's byte streams (`tcpstream`), fed to the kit's
//! decoder process through the same ring as the stream line's tap (`tap::channel`), so the tap
//! file has the same `TapConnection` lines; and each connection's `LinkConnection` line (its
//! delivery trace per 2 ms and the bottleneck's peak backlog since the trial's first
//! connection opened). The decoder is never waited for: its lag costs tap data, not link time.

use crate::line::inheritable;
use crate::records::{link_line, tap_line, LinkSide};
use crate::schedule::{DeliveryTrace, TRACE_BUCKET_NS};
use crate::tap::channel::{TapChannel, TapFeed};
use crate::tcpstream::{StreamEvent, TcpStreams};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::os::fd::OwnedFd;
use std::sync::Mutex;

const RING_READ_BYTES: usize = 1 << 20;

struct Open {
    feeds: [TapFeed; 2],
    traces: [DeliveryTrace; 2],
    opened_ns: i64,
}

pub struct PacketTap {
    channel: Mutex<TapChannel>,
    streams: TcpStreams,
    conns: HashMap<u32, Open>,
    events: Vec<StreamEvent>,
}

impl PacketTap {
    /// Start the decoder (`decoder` argv) appending to `tap_path`; a line for people if not.
    pub fn open(tap_path: &str, decoder: &[String]) -> Result<PacketTap, String> {
        if decoder.is_empty() {
            return Err("tap_decoder: the tap needs its decoder's argv".into());
        }
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(tap_path)
            .map_err(|e| format!("cannot open tap file {tap_path}: {e}"))?;
        let channel = TapChannel::open(decoder, inheritable(OwnedFd::from(file)), RING_READ_BYTES)
            .map_err(|e| format!("cannot start the tap decoder: {e}"))?;
        Ok(PacketTap {
            channel: Mutex::new(channel),
            streams: TcpStreams::new(),
            conns: HashMap::new(),
            events: Vec::new(),
        })
    }

    /// One delivered packet travelling `direction` (0 up, 1 down) at `now_ns`; `peaks` are
    /// the directions' queue peaks since the mark (reset when a trial's first connection opens).
    pub fn packet(&mut self, direction: u8, packet: &[u8], now_ns: i64, peaks: &mut [i64; 2]) {
        let mut events = std::mem::take(&mut self.events);
        self.streams.packet(direction, packet, &mut events);
        for event in events.drain(..) {
            self.handle(event, now_ns, peaks);
        }
        self.events = events;
    }

    fn handle(&mut self, event: StreamEvent, now_ns: i64, peaks: &mut [i64; 2]) {
        match event {
            StreamEvent::Open(conn) => self.open_conn(conn, now_ns, peaks),
            StreamEvent::Bytes(conn, d, data) => {
                if let Some(open) = self.conns.get_mut(&conn) {
                    open.feeds[usize::from(d)].feed(&self.channel, &data, now_ns);
                    open.traces[usize::from(d)].add(data.len() as i64, now_ns);
                }
            }
            StreamEvent::End(conn, d) => {
                if let Some(open) = self.conns.get_mut(&conn) {
                    open.feeds[usize::from(d)].end(&self.channel, now_ns);
                }
            }
            StreamEvent::Close(conn, _) => self.done(conn, now_ns, peaks),
        }
    }

    fn open_conn(&mut self, conn: u32, now_ns: i64, peaks: &mut [i64; 2]) {
        if self.conns.is_empty() {
            // a trial's first connection: its queue peak starts here
            *peaks = [0, 0];
        }
        let open = Open {
            feeds: [TapFeed::new(conn, 0), TapFeed::new(conn, 1)],
            traces: [DeliveryTrace::default(), DeliveryTrace::default()],
            opened_ns: now_ns,
        };
        self.conns.insert(conn, open);
    }

    fn done(&mut self, conn: u32, now_ns: i64, peaks: &[i64; 2]) {
        let Some(mut open) = self.conns.remove(&conn) else {
            return;
        };
        for feed in open.feeds.iter_mut() {
            feed.close(&self.channel, now_ns);
        }
        let side = |i: usize| LinkSide {
            peak_queued_bytes: peaks[i],
            origin_ns: open.traces[i].origin_ns.unwrap_or(0),
            bucket_ns: TRACE_BUCKET_NS,
            buckets: &open.traces[i].buckets,
        };
        let line = link_line(u64::from(conn), open.opened_ns, &side(0), &side(1));
        let mut ch = self.channel.lock().unwrap_or_else(|e| e.into_inner());
        ch.line(&line);
        ch.conn_done(conn, open.opened_ns, now_ns);
    }

    /// Close what is still open, write the totals line, let the decoder finish; a problem
    /// for people, if there was one.
    pub fn close(mut self, totals: serde_json::Value, now_ns: i64, peaks: &[i64; 2]) -> Option<String> {
        let mut open: Vec<u32> = self.conns.keys().copied().collect();
        open.sort_unstable();
        for conn in open {
            self.done(conn, now_ns, peaks);
        }
        let line = tap_line("packet", totals);
        let mut ch = self.channel.lock().unwrap_or_else(|e| e.into_inner());
        ch.close(&line)
    }
}
