//! The line's side of the tap, as `kit/capture/channel.py`: the decoder is the kit's own
//! (`ProxyJob.tap_decoder`, a process of its own fed through the shared ring), each chunk
//! costs one copy into the ring or is dropped and counted ("tap incomplete"), never waited
//! for. Control records (a direction's end, a closed connection, whole lines) are never
//! dropped: a reserve of the ring is kept for them and, past that, a backlog retried later.

use super::ring::{RingWriter, KIND_BYTES, KIND_CONN_DONE, KIND_EOF, KIND_GAP, KIND_LINE, KIND_SCANNED};
use super::scanner::{encode_scanned, DataScanner};
use crate::sys;
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const MIN_RING_BYTES: usize = 16 << 20;
const CONTROL_RESERVE_BYTES: usize = 256 * 1024;
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);
const STALL: Duration = Duration::from_secs(1);
const DRAIN_GRACE: Duration = Duration::from_secs(2);
const PARENT_ENV: &str = "KIT_TAP_PARENT_PID";

struct Control {
    kind: u8,
    conn: u32,
    direction: u8,
    t_ns: i64,
    payload: Vec<u8>,
}

pub struct TapChannel {
    writer: RingWriter,
    child: Child,
    pub not_decoded_bytes: u64,
    backlog: VecDeque<Control>,
}

fn inheritable_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: a two-int array; no O_CLOEXEC: the read end goes to the decoder.
    sys::check(unsafe { libc::pipe(fds.as_mut_ptr()) })?;
    // SAFETY: both ends are new and ours.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on our own descriptor: the write end stays here only.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    sys::set_nonblocking(w.as_raw_fd());
    Ok((r, w))
}

impl TapChannel {
    /// Start `decoder RING_FD BELL_FD TAP_FD` appending to `tap` (our copy closes here).
    pub fn open(decoder: &[String], tap: OwnedFd, read_bytes: usize) -> io::Result<TapChannel> {
        let (bell_r, bell_w) = inheritable_pipe()?;
        let (ring_fd, writer) = RingWriter::create(MIN_RING_BYTES.max(8 * read_bytes), bell_w)?;
        let args = [ring_fd.as_raw_fd(), bell_r.as_raw_fd(), tap.as_raw_fd()];
        let mut command = Command::new(&decoder[0]);
        command
            .args(&decoder[1..])
            .args(args.iter().map(|fd| fd.to_string()))
            .env(PARENT_ENV, std::process::id().to_string())
            .stdin(Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
                Ok(())
            })
        };
        let child = command.spawn()?;
        drop((ring_fd, bell_r, tap));
        Ok(TapChannel {
            writer,
            child,
            not_decoded_bytes: 0,
            backlog: VecDeque::new(),
        })
    }

    /// A record that may be dropped (the ring's reserve is kept for control records).
    pub fn put_bytes(&mut self, conn: u32, direction: u8, data: &[u8], now_ns: i64, kind: u8) -> bool {
        if !self.backlog.is_empty() && !self.flush() {
            return false;
        }
        self.writer
            .put(kind, conn, direction, now_ns, data, CONTROL_RESERVE_BYTES, false)
    }

    pub fn put_control(&mut self, kind: u8, conn: u32, direction: u8, t_ns: i64, payload: Vec<u8>) {
        self.backlog.push_back(Control {
            kind,
            conn,
            direction,
            t_ns,
            payload,
        });
        self.flush();
    }

    /// A whole tap-file line the line made (a `LinkConnection`), written in order.
    pub fn line(&mut self, text: &str) {
        self.put_control(KIND_LINE, 0, 0, sys::monotonic_ns(), text.as_bytes().to_vec());
    }

    pub fn conn_done(&mut self, conn: u32, opened_ns: i64, closed_ns: i64) {
        self.put_control(
            KIND_CONN_DONE,
            conn,
            0,
            closed_ns,
            (opened_ns as u64).to_le_bytes().to_vec(),
        );
    }

    /// Hand over backlogged control records in order; true once none is left.
    pub fn flush(&mut self) -> bool {
        while let Some(c) = self.backlog.front() {
            if !self
                .writer
                .put(c.kind, c.conn, c.direction, c.t_ns, &c.payload, 0, true)
            {
                return false;
            }
            self.backlog.pop_front();
        }
        true
    }

    fn decoding(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn drained(&mut self) -> bool {
        self.flush() && self.writer.free_bytes() == self.writer.capacity
    }

    /// Hand over `final_line`, let the decoder drain and exit; a problem as text, or None.
    pub fn close(&mut self, final_line: &str) -> Option<String> {
        self.put_control(
            KIND_LINE,
            0,
            0,
            sys::monotonic_ns(),
            final_line.as_bytes().to_vec(),
        );
        let grace = Instant::now() + DRAIN_GRACE;
        while !self.drained() && Instant::now() < grace && self.decoding() {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.writer.hurry();
        let mut deadline = Instant::now() + CLOSE_TIMEOUT;
        let (mut free, mut since) = (self.writer.free_bytes(), Instant::now());
        while !self.flush() && Instant::now() < deadline {
            let now_free = self.writer.free_bytes();
            if now_free != free {
                (free, since) = (now_free, Instant::now());
            }
            if !self.decoding() || since.elapsed() >= STALL {
                deadline = Instant::now();
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut problem =
            (!self.backlog.is_empty()).then(|| "the tap decoder did not take every record".to_string());
        self.writer.close_bell();
        while self.decoding() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        match self.child.try_wait() {
            Ok(Some(status)) if !status.success() => {
                let code = status.code().unwrap_or(-1);
                problem = Some(format!("the tap decoder exited with status {code}"));
            }
            Ok(Some(_)) => {}
            _ => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                problem = Some("the tap decoder did not finish in time (killed)".to_string());
            }
        }
        problem
    }
}

/// One connection direction's tap: `feed` every chunk, `end` at end-of-stream.
pub struct TapFeed {
    conn: u32,
    direction: u8,
    lost_bytes: u64,
    scanner: DataScanner,
}

impl TapFeed {
    pub fn new(conn: u32, direction: u8) -> Self {
        TapFeed {
            conn,
            direction,
            lost_bytes: 0,
            scanner: DataScanner::new(direction == 0),
        }
    }

    pub fn feed(&mut self, channel: &Mutex<TapChannel>, data: &[u8], now_ns: i64) {
        let scanned = self.scanner.split(data); // always: the walk must see every byte
        let mut ch = channel.lock().unwrap_or_else(|e| e.into_inner());
        if self.lost_bytes > 0 {
            let gap = self.lost_bytes.to_le_bytes();
            if ch.put_bytes(self.conn, self.direction, &gap, now_ns, KIND_GAP) {
                self.lost_bytes = 0;
            }
        }
        let whole = match &scanned {
            None => true,
            Some((carried, pieces)) => carried.is_empty() && pieces.as_slice() == [(0, data.len())],
        };
        let (kind, record) = if whole {
            (KIND_BYTES, None)
        } else {
            let (carried, pieces) = scanned
                .as_ref()
                .map(|(c, p)| (c.as_slice(), p.as_slice()))
                .unwrap();
            let counts = self.scanner.take_data(); // taken even when dropped: counted once
            let streams = self.scanner.take_streams();
            let span = self.scanner.span;
            (
                KIND_SCANNED,
                Some(encode_scanned(data, carried, pieces, counts, span, &streams)),
            )
        };
        let put = self.lost_bytes == 0
            && ch.put_bytes(
                self.conn,
                self.direction,
                record.as_deref().unwrap_or(data),
                now_ns,
                kind,
            );
        if !put {
            self.lost_bytes += data.len() as u64;
            ch.not_decoded_bytes += data.len() as u64;
        }
    }

    pub fn end(&mut self, channel: &Mutex<TapChannel>, now_ns: i64) {
        let held = self.scanner.take_held();
        let mut ch = channel.lock().unwrap_or_else(|e| e.into_inner());
        if !held.is_empty() {
            ch.put_control(KIND_BYTES, self.conn, self.direction, now_ns, held);
        }
        self.close_locked(&mut ch, now_ns);
        let missing = self.scanner.in_data_payload() as u64;
        let payload = if missing > 0 {
            missing.to_le_bytes().to_vec()
        } else {
            Vec::new()
        };
        ch.put_control(KIND_EOF, self.conn, self.direction, now_ns, payload);
    }

    /// No more bytes in this direction: hand over the last gap (never dropped).
    pub fn close(&mut self, channel: &Mutex<TapChannel>, now_ns: i64) {
        let mut ch = channel.lock().unwrap_or_else(|e| e.into_inner());
        self.close_locked(&mut ch, now_ns);
    }

    fn close_locked(&mut self, ch: &mut TapChannel, now_ns: i64) {
        if self.lost_bytes > 0 {
            let gap = self.lost_bytes.to_le_bytes().to_vec();
            ch.put_control(KIND_GAP, self.conn, self.direction, now_ns, gap);
            self.lost_bytes = 0;
        }
    }
}
