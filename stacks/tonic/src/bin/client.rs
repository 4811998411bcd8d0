//! The tonic client of the kit: `kit-tonic-client --config '<ClientJob as JSON>'`, one process
//! per measured cell, or `kit-tonic-client --worker`, one ClientJob per line of stdin,
//! speaking docs/process-protocol.md; the job is protos/worker.proto's ClientJob. It connects
//! its channels, warms them up, leaves them idle if asked, then does the job's work: timed or
//! fixed downloads over N streams and M connections (slow readers paced as the job says),
//! sequential unary pings, or one client-streaming upload.

use std::ffi::OsString;
use std::io::BufRead;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes_crate::Bytes;
use hyper_util::rt::TokioIo;
use kit_tonic::job::{self, Args, Client, Work};
use kit_tonic::options::{self, client_notes, Settings, Side};
use kit_tonic::pacer::ReadPacer;
use kit_tonic::pb::throughput::throughput_client::ThroughputClient;
use kit_tonic::pb::throughput::{Chunk, DownloadRequest, PingRequest};
use kit_tonic::pb::worker::{ClientResult, Download, Unary, Upload, WindowStep};
use kit_tonic::protocol::{
    self, cpu_seconds, now_ns, secs, status_text, EXIT_BAD_CONFIG, EXIT_CANNOT_START, EXIT_FAILED,
    EXIT_MEASUREMENT,
};
use kit_tonic::tap::{Tap, TapState, Tapped};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio_stream::Stream;
use tonic::transport::{Channel, Endpoint, Uri};

const WHO: &str = "tonic client";
/// tonic's send and receive limit per message (its default receive limit is 4 MiB).
const MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;
/// The most a connection may take to come up (the trial's timeout_s when shorter).
const CONNECT_LIMIT_S: f64 = 10.0;

type ThroughputChannel = ThroughputClient<Channel>;
type Res<T> = Result<T, String>;

fn main() {
    protocol::on_panic(WHO);
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let args = job::parse_args(&args, WHO, "ClientJob", true)
        .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
    // A job is decoded before anything starts: its error line is the only line.
    let first = match &args {
        Args::Config(text) => Some(decode(text)),
        Args::Worker => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            protocol::fail(
                EXIT_CANNOT_START,
                &format!("{WHO}: cannot start the tokio runtime: {e}"),
            )
        });
    runtime.block_on(async {
        on_signals();
        match first {
            Some((client, settings)) => {
                protocol::ready(0, false);
                protocol::client_result(measure(client, settings).await)
            }
            None => worker().await,
        }
    });
}

/// SIGTERM or SIGINT, whenever it comes: one error line, exit 128 + N.
fn on_signals() {
    let hook = |kind: SignalKind| {
        signal(kind).unwrap_or_else(|e| {
            protocol::fail(
                EXIT_CANNOT_START,
                &format!("{WHO}: cannot handle signals: {e}"),
            )
        })
    };
    let (mut term, mut int) = (hook(SignalKind::terminate()), hook(SignalKind::interrupt()));
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => protocol::fail(128 + libc::SIGTERM, &format!("{WHO}: interrupted by SIGTERM")),
            _ = int.recv() => protocol::fail(128 + libc::SIGINT, &format!("{WHO}: interrupted by SIGINT")),
        }
    });
}

/// `kit-tonic-client --worker`, a client worker (docs/process-protocol.md): one trial per line
/// of stdin, each on channels (TCP connections) of its own, one result line each; the first
/// error (a bad line too) is the final line and ends it; stdin's end: exit 0.
async fn worker() -> ! {
    protocol::ready(0, true);
    let stdin = std::io::stdin();
    let mut trial = 1;
    loop {
        let mut line = Vec::new();
        // The signal task runs on the runtime's worker threads meanwhile.
        let read = tokio::task::block_in_place(|| stdin.lock().read_until(b'\n', &mut line));
        match read {
            Ok(0) => std::process::exit(protocol::EXIT_OK), // stdin's end: the normal end
            Ok(_) => {}
            Err(e) => protocol::fail(EXIT_FAILED, &format!("{WHO}: cannot read stdin: {e}")),
        }
        let text =
            job::worker_line(&line, WHO).unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
        if let Some(text) = text {
            let (client, settings) = decode(&text);
            protocol::trial_result(measure(client, settings).await, trial);
            trial += 1;
        }
    }
}

/// The job of one `--config` or worker line, with tonic's settings, or its error line (exit 2).
fn decode(text: &str) -> (Client, Settings) {
    let client = job::client_job(text, WHO).unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
    let settings = options::settings(
        WHO,
        Side::Client,
        client.job.windows.as_ref(),
        &client.job.options,
    )
    .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
    (client, settings)
}

/// One trial's result, or its error line (exit 4).
async fn measure(client: Client, settings: Settings) -> ClientResult {
    match run(client, settings).await {
        Ok(result) => result,
        Err(msg) => protocol::fail(EXIT_MEASUREMENT, &msg),
    }
}

/// An error and what caused it, on one line; a cause that is EMFILE says so.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut emfile = false;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            emfile |= io.raw_os_error() == Some(libc::EMFILE);
        }
        let t = err.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        cur = err.source();
    }
    if emfile {
        format!("too many open files (EMFILE): {text}")
    } else {
        text
    }
}

/// A limit's length as written in the lines: 2 s, 0.5 s.
fn s(limit: f64) -> String {
    format!("{limit} s")
}

fn endpoint(target: &str, st: &Settings, connect_s: f64) -> Res<Endpoint> {
    let mut ep = Endpoint::from_shared(format!("http://{target}"))
        .map_err(|e| {
            format!(
                "{WHO}: cannot reach {target}: not a URI authority ({})",
                chain(&e)
            )
        })?
        .connect_timeout(secs(connect_s))
        .tcp_nodelay(st.nodelay.unwrap_or(true));
    if let Some(w) = st.stream_window {
        ep = ep.initial_stream_window_size(w);
    }
    if let Some(w) = st.conn_window {
        ep = ep.initial_connection_window_size(w);
    }
    if let Some(a) = st.adaptive {
        ep = ep.http2_adaptive_window(a);
    }
    if let Some(f) = st.max_frame {
        ep = ep.max_frame_size(f);
    }
    if let Some(d) = st.keep_alive_interval {
        ep = ep.http2_keep_alive_interval(d);
    }
    if let Some(d) = st.keep_alive_timeout {
        ep = ep.keep_alive_timeout(d);
    }
    if let Some(b) = st.keep_alive_while_idle {
        ep = ep.keep_alive_while_idle(b);
    }
    Ok(ep)
}

/// Connects as tonic's own connector does (TCP, Nagle per the settings) but through the
/// socket tap, so the client can report its windows and PING round trips (hyper exposes
/// neither).
#[derive(Clone)]
struct TapConnector {
    tap: Tap,
    nodelay: bool,
}

type Connecting =
    Pin<Box<dyn std::future::Future<Output = std::io::Result<TokioIo<Tapped>>> + Send>>;

impl tower_service::Service<Uri> for TapConnector {
    type Response = TokioIo<Tapped>;
    type Error = std::io::Error;
    type Future = Connecting;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (tap, nodelay) = (self.tap.clone(), self.nodelay);
        Box::pin(async move {
            let host = uri
                .host()
                .unwrap_or("127.0.0.1")
                .trim_matches(['[', ']'])
                .to_string();
            let io = tokio::net::TcpStream::connect((host.as_str(), uri.port_u16().unwrap_or(80)))
                .await?;
            io.set_nodelay(nodelay)?;
            Ok(TokioIo::new(Tapped::new(io, tap)))
        })
    }
}

/// The trial's clock: everything it does ends by `deadline` (timeout_s after its start).
#[derive(Clone, Copy)]
struct Clock {
    deadline: Instant,
    timeout_s: f64,
}

impl Clock {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// `what` within the trial's time, or the line naming the limit that fired.
    async fn within<T>(&self, what: &str, fut: impl std::future::Future<Output = T>) -> Res<T> {
        tokio::time::timeout(self.left(), fut).await.map_err(|_| {
            format!(
                "{WHO}: {what}: DEADLINE_EXCEEDED: the trial's timeout_s of {} ran out",
                s(self.timeout_s)
            )
        })
    }
}

struct Runner {
    client: Client,
    settings: Settings,
    clients: Vec<ThroughputChannel>,
    taps: Vec<Tap>,
    clock: Clock,
}

async fn run(client: Client, settings: Settings) -> Res<ClientResult> {
    let job = &client.job;
    let clock = Clock {
        deadline: Instant::now() + secs(job.timeout_s),
        timeout_s: job.timeout_s,
    };
    let target = protocol::host_port(&job.target_host, client.target_port);
    let connect_s = f64::min(CONNECT_LIMIT_S, job.timeout_s);
    let limit = secs(connect_s);
    let max_message = usize::max(MAX_MESSAGE_BYTES, job.message_bytes as usize + 64);
    // One Endpoint::connect per connection: each Channel is one HTTP/2 connection of its own.
    let mut connecting = vec![];
    let mut taps = vec![];
    for _ in 0..job.connections {
        let ep = endpoint(&target, &settings, connect_s)?;
        let tap: Tap = Arc::new(std::sync::Mutex::new(TapState::default()));
        let connector = TapConnector {
            tap: tap.clone(),
            nodelay: settings.nodelay.unwrap_or(true),
        };
        taps.push(tap);
        connecting.push(tokio::spawn(async move {
            tokio::time::timeout(limit, ep.connect_with_connector(connector)).await
        }));
    }
    let unreachable = |why: String| {
        format!(
            "{WHO}: cannot reach {target} within {} ({why}); is the server running?",
            s(connect_s)
        )
    };
    let mut clients = vec![];
    for c in connecting {
        let channel = match c.await {
            Ok(Ok(Ok(ch))) => ch,
            Ok(Ok(Err(e))) => return Err(unreachable(chain(&e))),
            Ok(Err(_)) => return Err(unreachable("timed out".into())),
            Err(e) => return Err(format!("{WHO}: connecting failed: {e}")),
        };
        clients.push(
            ThroughputClient::new(channel)
                .max_decoding_message_size(max_message)
                .max_encoding_message_size(max_message),
        );
    }
    if job.warmup {
        // One Ping per connection, nothing else.
        for c in clients.iter_mut() {
            let req = PingRequest {
                payload: Bytes::from_static(b"warm"),
            };
            clock
                .within("warm-up ping", c.ping(req))
                .await?
                .map_err(|st| format!("{WHO}: warm-up ping: {}", status_text(&st)))?;
        }
    }
    if job.idle_s > 0.0 {
        // Every connection open, no call on it: keepalive and idle rules act here.
        clock
            .within(
                &format!("idle gap of {}", s(job.idle_s)),
                tokio::time::sleep(secs(job.idle_s)),
            )
            .await?;
    }
    let work = client.work;
    let r = Runner {
        client,
        settings,
        clients,
        taps,
        clock,
    };
    match work {
        Work::Download(d) => r.download(d).await,
        Work::Unary(u) => r.unary(u).await,
        Work::Upload(u) => r.upload(u).await,
    }
}

impl Runner {
    fn result(&self) -> ClientResult {
        ClientResult {
            client: protocol::STACK.to_string(),
            ..ClientResult::default()
        }
    }

    /// Every connection's announced stream windows, (ms since the timed start, bytes; the
    /// ones announced before it at 0), and its PING round trips.
    fn tapped(&self, start: i64, r: &mut ClientResult) {
        let mut steps = vec![];
        for tap in &self.taps {
            if let Ok(state) = tap.lock() {
                steps.extend(state.window_steps.iter().copied());
                r.ping_rtt_ms.extend(state.ping_rtt_ms.iter().copied());
            }
        }
        steps.sort_by_key(|s| s.0);
        r.window_trace = steps
            .iter()
            .map(|(t, w)| WindowStep {
                at_ms: f64::max(0.0, (t - start) as f64 / 1e6),
                window_bytes: u64::try_from(*w).unwrap_or(0),
            })
            .collect();
    }

    /// The client's first note: what it applied, in tonic's terms.
    fn first_note(&self) -> Vec<String> {
        client_notes(&self.settings).into_iter().take(1).collect()
    }
}

#[derive(Default)]
struct Tally {
    messages: u64,
    bytes: u64,
    last_ns: i64,
    err: Option<String>,
    slow: bool,
}

struct StreamJob {
    index: u32,
    client: ThroughputChannel,
    fixed: Option<u64>,
    end_ns: i64,
    msg_bytes: u32,
    clock: Clock,
    pacer: Option<ReadPacer>,
    stop: watch::Receiver<bool>,
    fast_left: Arc<AtomicU64>,
    stop_tx: Arc<watch::Sender<bool>>,
}

impl StreamJob {
    async fn run(mut self) -> Tally {
        let mut t = Tally {
            slow: self.pacer.is_some(),
            ..Tally::default()
        };
        let clock = self.clock;
        let what = format!("download stream {}", self.index + 1);
        if let Err(e) = clock.within(&what, self.read(&mut t)).await {
            t.err = Some(e);
        }
        if t.last_ns == 0 {
            t.last_ns = now_ns();
        }
        if !t.slow && self.fast_left.fetch_sub(1, Ordering::SeqCst) == 1 {
            let _ = self.stop_tx.send(true);
        }
        t
    }

    async fn read(&mut self, t: &mut Tally) {
        let failed =
            |st: tonic::Status| Some(format!("{WHO}: download failed: {}", status_text(&st)));
        let req = DownloadRequest {
            message_count: self.fixed.unwrap_or(0),
            message_bytes: self.msg_bytes,
        };
        let mut stream = match self.client.download(req).await {
            Ok(r) => r.into_inner(),
            Err(st) => {
                t.err = failed(st);
                return;
            }
        };
        loop {
            let chunk = match stream.message().await {
                Ok(Some(c)) => c,
                Ok(None) => return,
                Err(st) => {
                    t.err = failed(st);
                    return;
                }
            };
            let now = now_ns();
            t.messages += 1;
            t.bytes += chunk.payload.len() as u64;
            t.last_ns = now; // a stream's finish: its last message, or when a slow reader stopped
            match self.fixed {
                None if now >= self.end_ns => return, // dropping the stream cancels the call
                Some(n) if t.messages >= n => continue, // the trailers come next
                _ => {}
            }
            if self.pacer.is_some() && self.paced_stop().await {
                t.last_ns = now_ns();
                return;
            }
        }
    }

    /// A slow reader waits for its next read (h2 holds what arrives meanwhile, within the
    /// stream's window); true when the full-speed streams are done and it should stop.
    async fn paced_stop(&mut self) -> bool {
        let due = self.pacer.as_ref().map(|p| p.due_ns).unwrap_or(0);
        let wait = due.saturating_sub(now_ns());
        if wait > 0 && !*self.stop.borrow() {
            tokio::select! {
                _ = self.stop.wait_for(|v| *v) => return true,
                _ = tokio::time::sleep(Duration::from_nanos(wait as u64)) => {}
            }
        }
        if let Some(p) = self.pacer.as_mut() {
            p.take(i64::max(now_ns(), p.due_ns));
        }
        *self.stop.borrow()
    }
}

/// "stream 1" or "streams 1..3": the paced streams are the first ones a client opens.
fn slow_streams_text(n: u32) -> String {
    if n == 1 {
        "stream 1".into()
    } else {
        format!("streams 1..{n}")
    }
}

impl Runner {
    async fn download(self, d: Download) -> Res<ClientResult> {
        let msg_bytes = self.client.job.message_bytes;
        let fixed = (d.messages_per_stream != 0).then_some(d.messages_per_stream);
        let pacing = d.pacing.filter(|_| d.slow_streams > 0);
        let slow = if pacing.is_some() {
            u32::min(d.slow_streams, d.streams)
        } else {
            0
        };
        let cpu0 = cpu_seconds();
        let start = now_ns();
        let (stop_tx, stop_rx) = watch::channel(false);
        let stop_tx = Arc::new(stop_tx);
        let fast_left = Arc::new(AtomicU64::new(u64::from(d.streams - slow)));
        let mut jobs = vec![];
        for i in 0..d.streams {
            let pacer = pacing.filter(|_| i < slow).map(|p| {
                ReadPacer::new(
                    p.rate_bytes_s,
                    start,
                    p.seed.wrapping_add(u64::from(i)),
                    i64::from(msg_bytes),
                    p.jitter,
                )
            });
            let job = StreamJob {
                index: i,
                client: self.clients[i as usize % self.clients.len()].clone(),
                fixed,
                end_ns: start.saturating_add(secs(d.timed_s).as_nanos() as i64),
                msg_bytes,
                clock: self.clock,
                pacer,
                stop: stop_rx.clone(),
                fast_left: fast_left.clone(),
                stop_tx: stop_tx.clone(),
            };
            jobs.push(tokio::spawn(job.run()));
        }
        let mut tallies = vec![];
        for j in jobs {
            tallies.push(
                j.await
                    .map_err(|e| format!("{WHO}: download failed: {e}"))?,
            );
        }
        let cpu = cpu_seconds() - cpu0;
        if let Some(err) = tallies.iter().find_map(|t| t.err.clone()) {
            return Err(err);
        }
        // The last stream's last message ends the timed phase; with slow readers in a fixed
        // run, the last full-speed stream's.
        let fast_ends: Vec<&Tally> = tallies.iter().filter(|t| !t.slow).collect();
        let ends: Vec<&Tally> = if fixed.is_some() && !fast_ends.is_empty() {
            fast_ends
        } else {
            tallies.iter().collect()
        };
        let last = ends.iter().map(|t| t.last_ns).fold(start, i64::max);
        let mut r = self.result();
        r.messages = tallies.iter().map(|t| t.messages).sum();
        r.bytes = tallies.iter().map(|t| t.bytes).sum();
        r.stream_bytes = tallies.iter().map(|t| t.bytes).collect();
        r.stream_finish_s = tallies
            .iter()
            .map(|t| (t.last_ns - start) as f64 / 1e9)
            .collect();
        r.elapsed_s = (last - start) as f64 / 1e9;
        r.t_start_ns = start;
        r.t_end_ns = last;
        r.cpu_s = cpu;
        r.slow_streams = slow;
        self.tapped(start, &mut r);
        r.notes = client_notes(&self.settings);
        if let Some(p) = pacing.filter(|_| slow > 0) {
            r.notes.push(format!(
                "{} read one message per {:.0} ms ({} Mbit/s); h2 holds what they have not read, up to \
                 the stream window (not counted here)",
                slow_streams_text(slow),
                f64::from(msg_bytes) / p.rate_bytes_s * 1000.0,
                p.rate_bytes_s * 8.0 / 1e6
            ));
        }
        Ok(r)
    }

    async fn unary(mut self, u: Unary) -> Res<ClientResult> {
        let clock = self.clock;
        let client = &mut self.clients[0];
        let payload = Bytes::from_static(b"xxxxxxxxxxxxxxxx");
        let mut latencies = Vec::with_capacity(u.calls as usize);
        let cpu0 = cpu_seconds();
        let start = now_ns();
        for _ in 0..u.calls {
            let t0 = now_ns();
            let req = PingRequest {
                payload: payload.clone(),
            };
            clock
                .within("unary ping", client.ping(req))
                .await?
                .map_err(|st| format!("{WHO}: unary ping failed: {}", status_text(&st)))?;
            latencies.push((now_ns() - t0) as f64 / 1e6);
        }
        let end = now_ns();
        let mut r = self.result();
        r.messages = latencies.len() as u64;
        r.elapsed_s = (end - start) as f64 / 1e9;
        r.t_start_ns = start;
        r.t_end_ns = end;
        r.cpu_s = cpu_seconds() - cpu0;
        r.latencies_ms = latencies;
        r.notes = self.first_note();
        Ok(r)
    }

    /// One client-streaming call: send until the timed phase ends (or `messages`), then
    /// half-close; the server's summary says what it received, and its arrival ends the phase.
    /// Its deadline: call_timeout_s after the timed start, or the trial's end if sooner.
    async fn upload(mut self, u: Upload) -> Res<ClientResult> {
        let msg_bytes = self.client.job.message_bytes;
        let (limit, limit_name) = if secs(u.call_timeout_s) <= self.clock.left() {
            (
                secs(u.call_timeout_s),
                format!("the upload's call_timeout_s of {}", s(u.call_timeout_s)),
            )
        } else {
            (
                self.clock.left(),
                format!("the trial's timeout_s of {}", s(self.clock.timeout_s)),
            )
        };
        let sent = Arc::new(AtomicU64::new(0));
        let cpu0 = cpu_seconds();
        let start = now_ns();
        let feed = Feed {
            payload: Bytes::from(vec![0x5a_u8; msg_bytes as usize]),
            limit: (u.messages != 0).then_some(u.messages),
            deadline_ns: start.saturating_add(secs(u.timed_s).as_nanos() as i64),
            sent: sent.clone(),
        };
        let reply = tokio::time::timeout(limit, self.clients[0].upload(feed)).await;
        let end = now_ns();
        let stalled = || {
            format!(
                "{WHO}: upload: DEADLINE_EXCEEDED: the server stopped taking the upload (no summary within {limit_name})"
            )
        };
        let summary = match reply {
            Ok(Ok(r)) => r.into_inner(),
            Ok(Err(st)) if st.code() == tonic::Code::DeadlineExceeded => return Err(stalled()),
            Ok(Err(st)) => return Err(format!("{WHO}: upload failed: {}", status_text(&st))),
            Err(_) => return Err(stalled()),
        };
        let elapsed = (end - start) as f64 / 1e9;
        let mut r = self.result();
        r.bytes = summary.payload_bytes;
        r.messages = summary.messages;
        r.elapsed_s = elapsed;
        r.t_start_ns = start;
        r.t_end_ns = end;
        r.stream_bytes = vec![summary.payload_bytes];
        r.stream_finish_s = vec![elapsed];
        r.cpu_s = cpu_seconds() - cpu0;
        r.sent_bytes = sent.load(Ordering::SeqCst) * u64::from(msg_bytes);
        r.notes = self.first_note();
        Ok(r)
    }
}

/// The upload's messages, made as tonic asks for them (it asks as h2 has room to send):
/// `sent` counts what was handed to tonic, all of which is sent before the half-close.
struct Feed {
    payload: Bytes,
    limit: Option<u64>,
    deadline_ns: i64,
    sent: Arc<AtomicU64>,
}

impl Stream for Feed {
    type Item = Chunk;
    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Chunk>> {
        let sent = self.sent.load(Ordering::SeqCst);
        let more = match self.limit {
            Some(n) => sent < n,
            None => now_ns() < self.deadline_ns,
        };
        if !more {
            return Poll::Ready(None);
        }
        self.sent.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(Some(Chunk {
            payload: self.payload.clone(),
        }))
    }
}
