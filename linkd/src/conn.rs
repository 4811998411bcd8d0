//! One relayed connection on a thread of its own: the client's socket and its upstream twin,
//! one delay queue per direction, one epoll and one timerfd.
//!
//! Each turn: release what is due (its bytes go out of the direction's store), then wait for
//! a socket or the head's due time (an absolute timerfd deadline; the process runs with a
//! 1 ns timer slack; a light connection's thread runs at real-time priority and spins the
//! last 100 us, see `priority`). Bytes are stamped when the read that took them returns:
//! every one of them had arrived by then, so none is ever released early. As in the Python line: the client is read (and stamped) from the moment it
//! is accepted, before the upstream connection exists; end-of-stream is forwarded as a
//! half-close after the same delay as data; a reset or write error on either side closes
//! both; a slow receiver holds its direction back (nothing more is released while the last
//! release is unwritten, and reading pauses at the cap); at the line's stop, what is due is
//! flushed (2 s at most) and both sides close.

use crate::line::{upstream_addr, Shared};
use crate::priority::{Priority, SPIN_NS};
use crate::records::{link_line, LinkSide};
use crate::schedule::{hash_seed, DelayQueue, TRACE_BUCKET_NS};
use crate::store::{Filled, Store};
use crate::sys::{self, Epoll, Timer, ERR, IN, OUT};
use crate::tap::channel::TapFeed;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

const UP: usize = 0;
const DOWN: usize = 1;
const CLIENT: u64 = 0;
const UPSTREAM: u64 = 1;
const TIMER: u64 = 2;
const STOP: u64 = 3;
const DIAL_TIMEOUT_NS: i64 = 10_000_000_000;
const SHUTDOWN_GRACE_NS: i64 = 2_000_000_000;
const REFUSED_LINGER_NS: i64 = 2_000_000_000;
const BUDGET_POLL_MS: i32 = 1;

struct Dir {
    queue: DelayQueue,
    store: Store,
    tap: Option<TapFeed>,
    reading: bool,
    unwritten: usize,
    full: bool, // the destination took less than offered: wait for EPOLLOUT
    wrote_eof: bool,
    sizes: Vec<usize>,
}

struct Conn<'a> {
    sh: &'a Shared,
    id: u64,
    opened_ns: i64,
    client: OwnedFd,
    upstream: Option<OwnedFd>,
    connected: bool,
    dial_deadline_ns: i64,
    dirs: [Dir; 2],
    ep: Epoll,
    timer: Timer,
    registered: [u32; 2],
    generation: u64,
    priority: Priority,
    next_due_ns: Option<i64>,
}

enum End {
    Done,
    Failed(io::Error),
    Refused(String),
    Stopped,
}

pub fn run(sh: &Shared, id: u64, client: OwnedFd) {
    sys::tune_tcp(client.as_raw_fd());
    let mut conn = match Conn::new(sh, id, client) {
        Ok(conn) => conn,
        Err(e) => {
            sh.stats.add_error(format!("conn {id}: {}", sys::error_kind(&e)));
            sh.stats.active.fetch_sub(1, Ordering::AcqRel);
            return;
        }
    };
    let end = conn.relay();
    conn.end(end);
    conn.finish();
}

fn lock<T>(m: &std::sync::Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'a> Conn<'a> {
    fn new(sh: &'a Shared, id: u64, client: OwnedFd) -> io::Result<Self> {
        let link = lock(&sh.live.link).clone();
        let generation = sh.live.generation.load(Ordering::Acquire);
        let use_pipes = sh.tap.is_none();
        let read_bytes = sh.job.read_bytes as usize;
        let dir = |down: bool| {
            let delay = if down {
                link.delay_down_ns
            } else {
                link.delay_up_ns
            };
            let seed = hash_seed(link.seed, id, down);
            let limited = sh.bottlenecks[usize::from(down)].is_some();
            Dir {
                queue: DelayQueue::new(
                    delay,
                    sh.job.buffer_cap_bytes as i64,
                    link.jitter_ns,
                    seed,
                    limited,
                ),
                store: Store::new(use_pipes, read_bytes),
                tap: sh.tap.as_ref().map(|_| TapFeed::new(id as u32, u8::from(down))),
                reading: true,
                unwritten: 0,
                full: false,
                wrote_eof: false,
                sizes: Vec::new(),
            }
        };
        let ep = Epoll::new()?;
        let timer = Timer::new()?;
        ep.add(timer.fd(), IN, TIMER)?;
        ep.add(sh.stop.fd(), IN, STOP)?;
        Ok(Conn {
            sh,
            id,
            opened_ns: sys::monotonic_ns(),
            client,
            upstream: None,
            connected: false,
            dial_deadline_ns: 0,
            dirs: [dir(false), dir(true)],
            ep,
            timer,
            registered: [0, 0],
            generation,
            priority: Priority::start(sys::monotonic_ns()),
            next_due_ns: None,
        })
    }

    fn relay(&mut self) -> End {
        if let Err(end) = self.dial() {
            return end;
        }
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
        loop {
            if self.sh.stopping.load(Ordering::Acquire) {
                return End::Stopped;
            }
            self.follow_link();
            let now = sys::monotonic_ns();
            for d in [UP, DOWN] {
                if let Err(e) = self.release(d, now) {
                    return End::Failed(e);
                }
            }
            if self.dirs[UP].wrote_eof && self.dirs[DOWN].wrote_eof {
                return End::Done;
            }
            if !self.connected && now >= self.dial_deadline_ns {
                return End::Refused("Connect call timed out".to_string());
            }
            self.watch();
            let n = match self.ep.wait(&mut events, self.wait_ms(now)) {
                Ok(n) => n,
                Err(e) => return End::Failed(e),
            };
            let now = sys::monotonic_ns();
            self.priority.update(now);
            for ev in &events[..n] {
                if let Err(end) = self.handle(ev.u64, ev.events) {
                    return end;
                }
            }
        }
    }

    fn dial(&mut self) -> Result<(), End> {
        let addr = upstream_addr(self.sh).map_err(|e| End::Refused(sys::strerror(&e)))?;
        match sys::connect_start(&addr) {
            Ok(fd) => {
                self.upstream = Some(fd);
                self.dial_deadline_ns = sys::monotonic_ns() + DIAL_TIMEOUT_NS;
                Ok(())
            }
            Err(e) if crate::limits::is_out_of_resources(&e) => {
                self.sh.stats.dial_errors.fetch_add(1, Ordering::Relaxed);
                let active = self.sh.stats.active.load(Ordering::Relaxed);
                self.sh.fd_trouble.say(format!(
                    "cannot connect upstream: {} ({active} open; raise `ulimit -n` or lower \
                     --max-connections); closing those client connections",
                    sys::strerror(&e)
                ));
                Err(End::Refused(String::new()))
            }
            Err(e) => Err(End::Refused(sys::strerror(&e))),
        }
    }

    fn handle(&mut self, token: u64, events: u32) -> Result<(), End> {
        match token {
            TIMER => self.timer.drain(),
            CLIENT | UPSTREAM => {
                if token == UPSTREAM && !self.connected {
                    return self.connect_done();
                }
                let (src_of, dst_of) = if token == CLIENT { (UP, DOWN) } else { (DOWN, UP) };
                if events & (IN | ERR) != 0 && self.wants_read(src_of) {
                    self.read(src_of).map_err(End::Failed)?;
                }
                if events & (OUT | ERR) != 0 && self.dirs[dst_of].unwritten > 0 {
                    self.dirs[dst_of].full = false;
                    self.write(dst_of).map_err(End::Failed)?;
                }
            }
            _ => {} // STOP: seen at the top of the loop
        }
        Ok(())
    }

    fn connect_done(&mut self) -> Result<(), End> {
        let fd = self.fd(UPSTREAM);
        match sys::socket_error(fd) {
            Ok(()) => {
                sys::tune_tcp(fd);
                self.connected = true;
                Ok(())
            }
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(()),
            Err(e) => Err(End::Refused(sys::strerror(&e))),
        }
    }

    fn fd(&self, token: u64) -> RawFd {
        match token {
            CLIENT => self.client.as_raw_fd(),
            _ => self.upstream.as_ref().map_or(-1, |f| f.as_raw_fd()),
        }
    }

    fn wants_read(&self, d: usize) -> bool {
        let dir = &self.dirs[d];
        dir.reading
            && (d == UP || self.connected)
            && !dir.queue.should_pause_reading()
            && !(self.sh.budget.full() && dir.queue.buffered_bytes > 0)
    }

    /// Register each socket for what it is waiting for now (none: not registered at all,
    /// so a closed peer cannot wake the loop for nothing).
    fn watch(&mut self) {
        let client = (if self.wants_read(UP) { IN } else { 0 })
            | (if self.dirs[DOWN].unwritten > 0 { OUT } else { 0 });
        let upstream = if self.connected {
            (if self.wants_read(DOWN) { IN } else { 0 }) | (if self.dirs[UP].unwritten > 0 { OUT } else { 0 })
        } else {
            OUT
        };
        for (i, want) in [(0usize, client), (1, upstream)] {
            if want == self.registered[i] {
                continue;
            }
            let fd = self.fd(i as u64);
            let _ = match (self.registered[i], want) {
                (0, _) => self.ep.add(fd, want, i as u64),
                (_, 0) => self.ep.delete(fd),
                _ => self.ep.modify(fd, want, i as u64),
            };
            self.registered[i] = want;
        }
        self.next_due_ns = [UP, DOWN]
            .into_iter()
            .filter(|&d| self.dirs[d].unwritten == 0 && (d == DOWN || self.connected))
            .filter_map(|d| self.dirs[d].queue.next_due_ns())
            .min();
        // A light thread's timer fires `SPIN_NS` early; the loop then polls until the due time.
        let spin = if self.priority.light() { SPIN_NS } else { 0 };
        self.timer.set(self.next_due_ns.map_or(0, |due| due - spin));
    }

    fn wait_ms(&self, now: i64) -> i32 {
        let spin = if self.priority.light() { SPIN_NS } else { 0 };
        if self.next_due_ns.is_some_and(|due| due - now <= spin) {
            return 0; // the last microseconds: poll rather than sleep through a wake-up
        }
        let budget_wait = [UP, DOWN].into_iter().any(|d| {
            let dir = &self.dirs[d];
            dir.reading && self.sh.budget.full() && dir.queue.buffered_bytes > 0
        });
        if budget_wait {
            BUDGET_POLL_MS // room made by other connections wakes nobody: look again soon
        } else if !self.connected {
            ((self.dial_deadline_ns - now) / 1_000_000 + 1).clamp(0, i32::MAX as i64) as i32
        } else {
            -1
        }
    }

    /// One read; its bytes are stamped when it returns: every byte it got had arrived by then
    /// (a stamp taken before the read could predate bytes that came meanwhile, and release
    /// them early: seen once, 1.1 ms early, on a thread preempted between the two).
    fn read(&mut self, d: usize) -> io::Result<()> {
        let sh = self.sh;
        let src = self.fd(if d == UP { CLIENT } else { UPSTREAM });
        let Dir {
            queue,
            store,
            tap,
            reading,
            ..
        } = &mut self.dirs[d];
        let filled = store.fill(src, sh.job.read_bytes as usize);
        let now = sys::monotonic_ns();
        let n = match filled {
            Ok(Filled::Spliced(n)) => n,
            Ok(Filled::Copied(bytes)) => {
                if let (Some(feed), Some(channel)) = (tap.as_mut(), &sh.tap) {
                    if !bytes.is_empty() {
                        feed.feed(channel, bytes, now);
                    }
                }
                bytes.len()
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        };
        if n == 0 {
            *reading = false;
            if let (Some(feed), Some(channel)) = (tap.as_mut(), &sh.tap) {
                feed.end(channel, now);
            }
            queue.push_eof(now);
            return Ok(());
        }
        self.follow_link(); // a change the kit was told is applied holds for these bytes
        let queue = &mut self.dirs[d].queue;
        {
            let mut bottleneck = sh.bottlenecks[d].as_ref().map(lock);
            queue.push(n, now, bottleneck.as_deref_mut());
        }
        self.priority.moved(n);
        sh.budget.add(n as i64);
        let count = if d == UP {
            &sh.stats.bytes_up
        } else {
            &sh.stats.bytes_down
        };
        count.fetch_add(n as u64, Ordering::Relaxed);
        sh.stats
            .peak_buffered
            .fetch_max(queue.peak_buffered_bytes, Ordering::Relaxed);
        Ok(())
    }

    /// Release what is due (when the last release went out) and write it; the half-close
    /// once end-of-stream is due and every byte before it went.
    fn release(&mut self, d: usize, now: i64) -> io::Result<()> {
        if d == UP && !self.connected {
            return Ok(());
        }
        let sh = self.sh;
        let dir = &mut self.dirs[d];
        if dir.unwritten == 0 {
            dir.sizes.clear();
            let n = dir.queue.pop_due(now, &mut dir.sizes);
            if n > 0 {
                dir.unwritten = n;
                sh.budget.release(n as i64);
                if d == DOWN {
                    if let Some(counter) = &sh.counter {
                        counter.add(n as u64);
                    }
                }
            }
        }
        if self.dirs[d].unwritten > 0 {
            self.write(d)?;
        }
        let dir = &mut self.dirs[d];
        if dir.queue.eof_released && dir.unwritten == 0 && !dir.wrote_eof {
            dir.wrote_eof = true;
            let dst = self.fd(if d == UP { UPSTREAM } else { CLIENT });
            let _ = sys::shutdown_write(dst);
        }
        Ok(())
    }

    /// Write what was released; a socket that took less than offered is full until the
    /// epoll says it is writable again (no write tried meanwhile: it would only fail).
    fn write(&mut self, d: usize) -> io::Result<()> {
        let dst = self.fd(if d == UP { UPSTREAM } else { CLIENT });
        let dir = &mut self.dirs[d];
        while dir.unwritten > 0 && !dir.full {
            let offered = dir.unwritten;
            match dir.store.drain(dst, offered) {
                Ok(n) => {
                    dir.unwritten -= n;
                    dir.full = n < offered;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => dir.full = true,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// A changed link (`kit proxy --control`): new delays and jitter for what arrives next.
    fn follow_link(&mut self) {
        let generation = self.sh.live.generation.load(Ordering::Acquire);
        if generation == self.generation {
            return;
        }
        self.generation = generation;
        let link = lock(&self.sh.live.link).clone();
        self.dirs[UP].queue.delay_ns = link.delay_up_ns;
        self.dirs[DOWN].queue.delay_ns = link.delay_down_ns;
        for dir in &mut self.dirs {
            dir.queue.jitter_ns = link.jitter_ns;
        }
    }

    fn end(&mut self, end: End) {
        match end {
            End::Done => {}
            End::Failed(e) => {
                self.sh
                    .stats
                    .add_error(format!("conn {}: {}", self.id, sys::error_kind(&e)));
                for d in [UP, DOWN] {
                    let _ = self.write(d); // what was already released, best effort
                }
            }
            End::Stopped => self.flush_due(),
            End::Refused(why) => self.refuse(&why),
        }
    }

    /// At the line's stop: hand over what is already due, for `SHUTDOWN_GRACE_NS` at most.
    fn flush_due(&mut self) {
        let stop_ns = sys::monotonic_ns();
        let deadline = stop_ns + SHUTDOWN_GRACE_NS;
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 4];
        let _ = self.ep.delete(self.sh.stop.fd()); // readable for good now: only sockets wake
        let _ = self.ep.delete(self.timer.fd());
        loop {
            for d in [UP, DOWN] {
                if self.release(d, stop_ns).is_err() {
                    self.dirs[d].unwritten = 0; // that side is gone: nothing more goes there
                    self.dirs[d].queue.discard(stop_ns, None);
                }
            }
            let pending = [UP, DOWN].into_iter().any(|d| {
                self.dirs[d].unwritten > 0 || self.dirs[d].queue.next_due_ns().is_some_and(|t| t <= stop_ns)
            });
            if !pending || sys::monotonic_ns() >= deadline {
                return;
            }
            for (i, d) in [(0usize, DOWN), (1, UP)] {
                let want = if self.dirs[d].unwritten > 0 { OUT } else { 0 };
                if want != self.registered[i] && (i == 0 || self.connected) {
                    let fd = self.fd(i as u64);
                    let _ = if self.registered[i] == 0 {
                        self.ep.add(fd, want, i as u64)
                    } else if want == 0 {
                        self.ep.delete(fd)
                    } else {
                        self.ep.modify(fd, want, i as u64)
                    };
                    self.registered[i] = want;
                }
            }
            let left_ms = ((deadline - sys::monotonic_ns()) / 1_000_000).max(1) as i32;
            if self.ep.wait(&mut events, left_ms.min(50)).is_err() {
                return;
            }
            for dir in &mut self.dirs {
                dir.full = false; // try again: a socket that is still full says so
            }
        }
    }

    /// Upstream unreachable: say so, half-close towards the client and read it until its
    /// own end (bounded), so the client's side closes cleanly rather than with a reset.
    fn refuse(&mut self, why: &str) {
        if !why.is_empty() {
            let message = format!(
                "conn {}: upstream {} unreachable ({why}); closed the client connection",
                self.id, self.sh.upstream
            );
            crate::log(&message);
            self.sh.stats.add_error(message);
        }
        if self.sh.stopping.load(Ordering::Acquire) {
            return;
        }
        let client = self.client.as_raw_fd();
        let _ = sys::shutdown_write(client);
        let deadline = sys::monotonic_ns() + REFUSED_LINGER_NS;
        let mut poll = libc::pollfd {
            fd: client,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut scratch = vec![0u8; 64 * 1024];
        loop {
            let left_ms = (deadline - sys::monotonic_ns()) / 1_000_000;
            // SAFETY: one pollfd.
            if left_ms <= 0 || unsafe { libc::poll(&mut poll, 1, left_ms as i32) } <= 0 {
                break;
            }
            match sys::read(client, &mut scratch) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    self.sh.stats.bytes_up.fetch_add(n as u64, Ordering::Relaxed);
                }
            }
        }
    }

    /// Closed: give back the budget and the bottleneck's time, tell the tap, count it.
    fn finish(mut self) {
        let sh = self.sh;
        let now = sys::monotonic_ns();
        for d in [UP, DOWN] {
            let dir = &mut self.dirs[d];
            sh.budget.release(dir.queue.buffered_bytes);
            sh.stats
                .peak_buffered
                .fetch_max(dir.queue.peak_buffered_bytes, Ordering::Relaxed);
            let mut bottleneck = sh.bottlenecks[d].as_ref().map(lock);
            dir.queue.discard(now, bottleneck.as_deref_mut());
            dir.store.clear();
        }
        drop(self.upstream.take());
        if let Some(channel) = &sh.tap {
            for dir in &mut self.dirs {
                if let Some(feed) = dir.tap.as_mut() {
                    feed.close(channel, now);
                }
            }
            if sh.shapes_traffic {
                let line = self.link_line();
                lock(channel).line(&line);
            }
            lock(channel).conn_done(self.id as u32, self.opened_ns, now);
        }
        // Counted as closed before its sockets go: whoever sees them gone (a client that
        // connects again at once, under --max-connections) finds the room there.
        sh.stats.active.fetch_sub(1, Ordering::AcqRel);
        drop(self);
    }

    fn link_line(&self) -> String {
        let side = |d: usize| {
            let q = &self.dirs[d].queue;
            LinkSide {
                peak_queued_bytes: q.peak_queued_bytes,
                origin_ns: q.delivered.origin_ns.unwrap_or(0),
                bucket_ns: TRACE_BUCKET_NS,
                buckets: &q.delivered.buckets,
            }
        };
        link_line(self.id, self.opened_ns, &side(UP), &side(DOWN))
    }
}
