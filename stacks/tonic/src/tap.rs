//! The client's own socket tap: hyper exposes neither its windows nor its PING round trips,
//! so the client reads them off the bytes it writes and reads (the frames h2 puts on the
//! wire), as grpc-go's client taps its own socket. Outgoing: every SETTINGS
//! INITIAL_WINDOW_SIZE the client announces (hyper's adaptive window steps are such
//! SETTINGS) and every PING it sends; incoming: the PING ACKs, matched by payload.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::protocol::now_ns;

const PREFACE_BYTES: usize = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", client to server only
const HEADER_BYTES: usize = 9;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const ACK: u8 = 0x1;
const INITIAL_WINDOW_SIZE: u16 = 0x4;
const MAX_KEPT: usize = 4096; // bounded: a run never announces more windows or PINGs
const KEEP_PAYLOAD: usize = 256; // SETTINGS and PING payloads are small; others are skipped

/// What one connection's tap saw: (monotonic ns, window) per announced stream window, and
/// the RTT of each PING the client sent, in ms.
#[derive(Default)]
pub struct TapState {
    pub window_steps: Vec<(i64, i64)>,
    pub ping_rtt_ms: Vec<f64>,
    pings_out: HashMap<[u8; 8], i64>,
}

pub type Tap = Arc<Mutex<TapState>>;

/// A frame as it completes: type, flags, (the first bytes of) its payload.
struct Frame {
    kind: u8,
    flags: u8,
    payload: Vec<u8>,
}

/// Cuts one direction's byte stream into frames, whatever the chunking.
struct Splitter {
    skip: usize,
    header: Vec<u8>,
    left: usize,
    current: Option<Frame>,
}

impl Splitter {
    fn new(skip: usize) -> Self {
        Splitter {
            skip,
            header: Vec::with_capacity(HEADER_BYTES),
            left: 0,
            current: None,
        }
    }

    fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Frame>) {
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
            } else if let Some(frame) = self.current.as_mut() {
                let n = self.left.min(bytes.len());
                let room = KEEP_PAYLOAD.saturating_sub(frame.payload.len()).min(n);
                frame.payload.extend_from_slice(&bytes[..room]);
                self.left -= n;
                bytes = &bytes[n..];
                if self.left == 0 {
                    out.extend(self.current.take());
                }
            } else {
                let n = (HEADER_BYTES - self.header.len()).min(bytes.len());
                self.header.extend_from_slice(&bytes[..n]);
                bytes = &bytes[n..];
                if self.header.len() == HEADER_BYTES {
                    self.start_frame(out);
                }
            }
        }
    }

    fn start_frame(&mut self, out: &mut Vec<Frame>) {
        let h = &self.header;
        self.left = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
        let frame = Frame {
            kind: h[3],
            flags: h[4],
            payload: Vec::new(),
        };
        self.header.clear();
        if self.left == 0 {
            out.push(frame);
        } else {
            self.current = Some(frame);
        }
    }
}

fn initial_window(payload: &[u8]) -> Option<i64> {
    payload.chunks_exact(6).rev().find_map(|e| {
        (u16::from_be_bytes([e[0], e[1]]) == INITIAL_WINDOW_SIZE)
            .then(|| i64::from(u32::from_be_bytes([e[2], e[3], e[4], e[5]])))
    })
}

fn ping_key(payload: &[u8]) -> Option<[u8; 8]> {
    payload.get(..8).and_then(|p| p.try_into().ok())
}

impl TapState {
    fn sent(&mut self, f: &Frame, now: i64) {
        if f.kind == SETTINGS && f.flags & ACK == 0 && self.window_steps.len() < MAX_KEPT {
            if let Some(w) = initial_window(&f.payload) {
                self.window_steps.push((now, w));
            }
        } else if f.kind == PING && f.flags & ACK == 0 && self.pings_out.len() < MAX_KEPT {
            if let Some(key) = ping_key(&f.payload) {
                self.pings_out.insert(key, now);
            }
        }
    }

    fn received(&mut self, f: &Frame, now: i64) {
        if f.kind == PING && f.flags & ACK != 0 && self.ping_rtt_ms.len() < MAX_KEPT {
            if let Some(sent) = ping_key(&f.payload).and_then(|k| self.pings_out.remove(&k)) {
                self.ping_rtt_ms.push((now - sent) as f64 / 1e6);
            }
        }
    }
}

/// The client's TCP stream with the tap on both directions (bytes pass unchanged).
pub struct Tapped {
    io: TcpStream,
    tap: Tap,
    up: Splitter,
    down: Splitter,
}

impl Tapped {
    pub fn new(io: TcpStream, tap: Tap) -> Self {
        Tapped {
            io,
            tap,
            up: Splitter::new(PREFACE_BYTES),
            down: Splitter::new(0),
        }
    }

    fn seen(&mut self, bytes: &[u8], sent: bool) {
        let mut frames = vec![];
        if sent {
            self.up.feed(bytes, &mut frames);
        } else {
            self.down.feed(bytes, &mut frames);
        }
        if frames.is_empty() {
            return;
        }
        let now = now_ns();
        if let Ok(mut state) = self.tap.lock() {
            for f in &frames {
                if sent {
                    state.sent(f, now);
                } else {
                    state.received(f, now);
                }
            }
        }
    }
}

impl AsyncRead for Tapped {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.seen(&buf.filled()[before..], false);
        }
        polled
    }
}

impl AsyncWrite for Tapped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.seen(&buf[..n], true);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let n = payload.len();
        let mut out = vec![
            (n >> 16) as u8,
            (n >> 8) as u8,
            n as u8,
            kind,
            flags,
            0,
            0,
            0,
            0,
        ];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn windows_and_ping_rtts_whatever_the_chunking() {
        let mut up = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        up.extend(frame(SETTINGS, 0, &[0, 4, 0, 1, 0, 0, 0, 5, 0, 0, 64, 0]));
        up.extend(frame(0x0, 0, &[7; 300])); // DATA: skipped, longer than what is kept
        up.extend(frame(PING, 0, &[1, 2, 3, 4, 5, 6, 7, 8]));
        let mut state = TapState::default();
        let mut s = Splitter::new(PREFACE_BYTES);
        for chunk in up.chunks(5) {
            let mut frames = vec![];
            s.feed(chunk, &mut frames);
            frames.iter().for_each(|f| state.sent(f, 1_000_000));
        }
        assert_eq!(state.window_steps, vec![(1_000_000, 65536)]);
        let mut frames = vec![];
        Splitter::new(0).feed(&frame(PING, ACK, &[1, 2, 3, 4, 5, 6, 7, 8]), &mut frames);
        state.received(&frames[0], 21_000_000);
        assert_eq!(state.ping_rtt_ms, vec![20.0]);
    }
}
