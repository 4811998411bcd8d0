//! The line: listen, accept (a thread per connection, `conn`), follow link changes on stdin,
//! stop on SIGTERM/SIGINT with the totals. What every connection shares lives in `Shared`:
//! the config, the counters, the budget, each direction's bottleneck, the live link, the tap.

use crate::counter::Counter;
use crate::job::{LinkJob, ProxyJob};
use crate::limits::{ensure_fd_room, Budget, QuietLog};
use crate::records::{tap_line, Totals};
use crate::schedule::{Bottleneck, RateSteps};
use crate::sys::{self, Epoll, Flag, Timer, IN};
use crate::tap::channel::TapChannel;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LISTEN_BACKLOG: i32 = 1024;
const ACCEPT_BATCH: usize = 64;
const ACCEPT_RETRY_NS: i64 = 500_000_000;
const SHUTDOWN_WAIT: Duration = Duration::from_secs(3); // the connections' 2 s grace, + 1
const MAX_ERRORS_KEPT: usize = 100;
const THREAD_STACK_BYTES: usize = 256 * 1024;

/// The line could not start: the error line's text (exit 3).
pub struct CannotStart(pub String);

#[derive(Default)]
pub struct Stats {
    pub accepted: AtomicU64,
    pub active: AtomicU64,
    pub bytes_up: AtomicU64,
    pub bytes_down: AtomicU64,
    pub peak_buffered: AtomicI64,
    pub refused: AtomicU64,
    pub accept_errors: AtomicU64,
    pub dial_errors: AtomicU64,
    errors: Mutex<Vec<String>>,
}

impl Stats {
    pub fn add_error(&self, message: String) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if errors.len() < MAX_ERRORS_KEPT {
            errors.push(message);
        }
    }
}

/// The link now: what a new connection's queues start with, and what a change gives the
/// running ones (each looks at `generation` between two events).
pub struct Live {
    pub generation: AtomicU64,
    pub link: Mutex<LinkJob>,
}

pub struct Shared {
    pub job: ProxyJob,
    pub upstream: String,
    pub stats: Stats,
    pub budget: Budget,
    pub bottlenecks: [Option<Mutex<Bottleneck>>; 2],
    pub live: Live,
    pub tap: Option<Mutex<TapChannel>>,
    pub counter: Option<Counter>,
    pub stopping: AtomicBool,
    pub stop: Flag,
    /// A rate, jitter or a live count: each connection's link line is worth writing.
    pub shapes_traffic: bool,
    pub fd_trouble: QuietLog,
    refusals: QuietLog,
}

fn bottleneck(link: &LinkJob, down: bool) -> Option<Mutex<Bottleneck>> {
    if down && !link.rate_steps.is_empty() {
        let steps: Vec<(f64, i64)> = link
            .rate_steps
            .iter()
            .map(|s| (s.rate_bits_s, s.duration_ns))
            .collect();
        return RateSteps::new(&steps)
            .and_then(Bottleneck::with_steps)
            .map(Mutex::new);
    }
    let rate = if down {
        link.rate_down_bits_s
    } else {
        link.rate_up_bits_s
    };
    rate.and_then(Bottleneck::new).map(Mutex::new)
}

fn resolve(host: &str, port: u16) -> io::Result<SocketAddr> {
    let mut addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
    addrs.sort_by_key(|a| !a.is_ipv4()); // IPv4 first, where clients dial by default
    addrs
        .into_iter()
        .next()
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

fn open_append(path: &str) -> io::Result<OwnedFd> {
    let c_path = std::ffi::CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path.
    let fd = sys::check(unsafe { libc::open(c_path.as_ptr(), flags, 0o644) })?;
    // SAFETY: a fresh descriptor of ours.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn inheritable(fd: OwnedFd) -> OwnedFd {
    // SAFETY: clearing close-on-exec on our own descriptor (the decoder appends through it).
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) };
    fd
}

/// What the line starts with, or why it cannot (each message as the Python line's).
fn start(job: ProxyJob) -> Result<(Shared, OwnedFd), CannotStart> {
    if let Some(warning) = ensure_fd_room(u64::from(job.max_connections)) {
        crate::log(&warning);
    }
    let err = |what: String, e: io::Error| CannotStart(format!("{what}: {}", sys::strerror(&e)));
    let tap_file = if job.tap_path.is_empty() {
        None
    } else {
        Some(
            open_append(&job.tap_path)
                .map_err(|e| err(format!("cannot open tap file {}", job.tap_path), e))?,
        )
    };
    let port = job.listen_port as u16;
    let where_ = format!("{}:{}", job.listen_host, job.listen_port);
    let listener = resolve(&job.listen_host, port)
        .and_then(|addr| sys::listen(&addr, LISTEN_BACKLOG))
        .map_err(|e| err(format!("cannot listen on {where_}"), e))?;
    let counter = if job.counter_path.is_empty() {
        None
    } else {
        let path = &job.counter_path;
        Some(Counter::create(path).map_err(|e| err(format!("cannot create the byte counter {path}"), e))?)
    };
    let tap = match tap_file {
        None => None,
        Some(file) => {
            let channel = TapChannel::open(&job.tap_decoder, inheritable(file), job.read_bytes as usize)
                .map_err(|e| err("cannot start the tap decoder".to_string(), e))?;
            Some(Mutex::new(channel))
        }
    };
    let link = job.link.clone().unwrap_or_default();
    let bottlenecks = [bottleneck(&link, false), bottleneck(&link, true)];
    let shapes_traffic = bottlenecks.iter().any(Option::is_some) || link.jitter_ns > 0 || counter.is_some();
    let shared = Shared {
        upstream: format!("{}:{}", job.upstream_host, job.upstream_port),
        stats: Stats::default(),
        budget: Budget::new(job.max_buffered_bytes as i64),
        bottlenecks,
        live: Live {
            generation: AtomicU64::new(0),
            link: Mutex::new(link),
        },
        tap,
        counter,
        stopping: AtomicBool::new(false),
        stop: Flag::new().map_err(|e| err("cannot start".to_string(), e))?,
        shapes_traffic,
        fd_trouble: QuietLog::new(),
        refusals: QuietLog::new(),
        job,
    };
    Ok((shared, listener))
}

const LISTENER: u64 = 0;
const SIGNALS: u64 = 1;
const STDIN: u64 = 2;
const RETRY: u64 = 3;

/// Run the line until SIGTERM/SIGINT (on `signals`); `ready(port)` once it listens.
pub fn serve(job: ProxyJob, signals: OwnedFd, ready: impl FnOnce(u16)) -> Result<Totals, CannotStart> {
    let (shared, listener) = start(job)?;
    let shared = Arc::new(shared);
    let port = sys::local_port(listener.as_raw_fd()).unwrap_or(0);
    let ep = Epoll::new().map_err(|e| CannotStart(sys::strerror(&e)))?;
    let mut retry = Timer::new().map_err(|e| CannotStart(sys::strerror(&e)))?;
    let _ = ep.add(listener.as_raw_fd(), IN, LISTENER);
    let _ = ep.add(signals.as_raw_fd(), IN, SIGNALS);
    let _ = ep.add(retry.fd(), IN, RETRY);
    let mut stdin = ep.add(0, IN, STDIN).is_ok().then(Vec::new); // not a pipe: no changes
    ready(port);
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
    'serving: loop {
        let n = ep.wait(&mut events, -1).unwrap_or(0);
        for ev in &events[..n] {
            match ev.u64 {
                LISTENER => accept_batch(&shared, &listener, &ep, &mut retry),
                SIGNALS => break 'serving,
                STDIN => follow_stdin(&shared, &ep, &mut stdin),
                _ => {
                    retry.drain();
                    let _ = ep.add(listener.as_raw_fd(), IN, LISTENER);
                }
            }
        }
    }
    drop(listener);
    Ok(shutdown(&shared))
}

fn accept_batch(shared: &Arc<Shared>, listener: &OwnedFd, ep: &Epoll, retry: &mut Timer) {
    for _ in 0..ACCEPT_BATCH {
        match sys::accept(listener.as_raw_fd()) {
            Ok(Some(conn)) => adopt(shared, conn),
            Ok(None) => return,
            Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => continue,
            Err(e) => {
                // Out of descriptors (or memory): stop reading the socket, say so once, retry.
                let _ = ep.delete(listener.as_raw_fd());
                accept_failed(shared, &e);
                retry.set(sys::monotonic_ns() + ACCEPT_RETRY_NS);
                return;
            }
        }
    }
}

fn accept_failed(shared: &Shared, e: &io::Error) {
    shared.stats.accept_errors.fetch_add(1, Ordering::Relaxed);
    let active = shared.stats.active.load(Ordering::Relaxed);
    shared.fd_trouble.say(format!(
        "cannot accept new connections: {} ({active} open; raise `ulimit -n` or lower \
         --max-connections); they wait in the listen backlog",
        sys::strerror(e)
    ));
}

fn adopt(shared: &Arc<Shared>, conn: OwnedFd) {
    let stats = &shared.stats;
    let active = stats.active.load(Ordering::Acquire);
    let max = u64::from(shared.job.max_connections);
    if active >= max {
        let refused = stats.refused.fetch_add(1, Ordering::Relaxed) + 1;
        shared.refusals.say(format!(
            "refused a connection: {active} open, the limit is --max-connections {max} \
             ({refused} refused so far)"
        ));
        sys::abort(conn);
        return;
    }
    let id = stats.accepted.fetch_add(1, Ordering::Relaxed) + 1;
    stats.active.fetch_add(1, Ordering::AcqRel);
    let worker = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name(format!("conn-{id}"))
        .stack_size(THREAD_STACK_BYTES)
        .spawn(move || crate::conn::run(&worker, id, conn));
    if let Err(e) = spawned {
        stats.active.fetch_sub(1, Ordering::AcqRel);
        accept_failed(shared, &e);
    }
}

/// Each line of stdin is a `LinkJob`: the link from then on, answered `{"changed": N}`.
fn follow_stdin(shared: &Shared, ep: &Epoll, pending: &mut Option<Vec<u8>>) {
    let Some(buf) = pending.as_mut() else { return };
    let mut chunk = [0u8; 4096];
    let n = sys::read(0, &mut chunk).unwrap_or(0);
    if n == 0 {
        let _ = ep.delete(0); // the kit closed it: no more changes, not a stop
        *pending = None;
        return;
    }
    buf.extend_from_slice(&chunk[..n]);
    while let Some(end) = buf.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = buf.drain(..=end).collect();
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        match crate::job::decode_link(text.trim()) {
            Ok(link) => change_link(shared, link),
            Err(e) => crate::log(&format!("stdin: bad link change: {e}")),
        }
    }
}

/// A new delay and jitter for what arrives from now on, and a new rate where the line has
/// that bottleneck (a rate-steps bottleneck keeps its steps).
fn change_link(shared: &Shared, link: LinkJob) {
    for (i, rate) in [link.rate_up_bits_s, link.rate_down_bits_s]
        .into_iter()
        .enumerate()
    {
        if let (Some(b), Some(rate)) = (&shared.bottlenecks[i], rate) {
            b.lock().unwrap_or_else(|e| e.into_inner()).set_rate(rate);
        }
    }
    *shared.live.link.lock().unwrap_or_else(|e| e.into_inner()) = link;
    let changes = shared.live.generation.fetch_add(1, Ordering::AcqRel) + 1;
    crate::emit(&serde_json::json!({ "changed": changes }));
}

/// Stop accepting, let every connection flush what is due and close (bounded), then the
/// totals, handed to the tap's decoder last.
fn shutdown(shared: &Shared) -> Totals {
    shared.stopping.store(true, Ordering::Release);
    shared.stop.raise();
    let deadline = Instant::now() + SHUTDOWN_WAIT;
    while shared.stats.active.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    shared.refusals.flush();
    shared.fd_trouble.flush();
    let mut totals = totals(shared);
    if let Some(tap) = &shared.tap {
        let mut channel = tap.lock().unwrap_or_else(|e| e.into_inner());
        totals.tap_not_decoded_bytes = channel.not_decoded_bytes;
        if let Some(problem) = channel.close(&tap_line("proxy", totals.to_json())) {
            crate::log(&problem);
        }
    }
    totals
}

fn totals(shared: &Shared) -> Totals {
    let s = &shared.stats;
    let peak_queued = shared
        .bottlenecks
        .iter()
        .flatten()
        .map(|b| b.lock().unwrap_or_else(|e| e.into_inner()).peak_queued_bytes)
        .max()
        .unwrap_or(0);
    Totals {
        connections: s.accepted.load(Ordering::Relaxed),
        bytes_up: s.bytes_up.load(Ordering::Relaxed),
        bytes_down: s.bytes_down.load(Ordering::Relaxed),
        peak_buffered_bytes: s.peak_buffered.load(Ordering::Relaxed),
        errors: s.errors.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        peak_queued_bytes: peak_queued,
        tap_not_decoded_bytes: 0,
        refused_connections: s.refused.load(Ordering::Relaxed),
        accept_errors: s.accept_errors.load(Ordering::Relaxed),
        buffer_full_pauses: shared.budget.pauses.load(Ordering::Relaxed),
    }
}

/// Where to dial (resolved per connection, as the Python line does).
pub fn upstream_addr(shared: &Shared) -> io::Result<SocketAddr> {
    resolve(&shared.job.upstream_host, shared.job.upstream_port as u16)
}
