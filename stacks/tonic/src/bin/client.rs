//! The tonic client of the kit: `kit-tonic-client --config '<ClientProcess as JSON>'`, one
//! process per measured cell, or `kit-tonic-client --worker`, one trial per line of stdin,
//! speaking docs/process-protocol.md. Semantics follow the kit's
//! reference client (kit/clients/grpcio_client.py): warm-up, timed or fixed downloads over N
//! streams and M connections, slow readers, sequential unary pings, one client-streaming upload.

use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes_crate::Bytes;
use hyper_util::rt::TokioIo;
use kit_tonic::config::{decode_client_process, ClientProcess, Trial, Workload};
use kit_tonic::options::{client_notes, client_settings, server_notes, server_settings, Settings};
use kit_tonic::pacer::ReadPacer;
use kit_tonic::pb::throughput_client::ThroughputClient;
use kit_tonic::pb::{Chunk, DownloadRequest, PingRequest};
use kit_tonic::protocol::{
    self, cpu_seconds, now_ns, status_text, EXIT_BAD_CONFIG, EXIT_CANNOT_START, EXIT_MEASUREMENT,
};
use kit_tonic::tap::{Tap, TapState, Tapped};
use kit_tonic::TONIC_VERSION;
use serde_json::{json, Value};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio_stream::Stream;
use tonic::transport::{Channel, Endpoint, Uri};

const WHO: &str = "tonic client";
const MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;
const CONNECT_TIMEOUT_S: f64 = 10.0;

type Client = ThroughputClient<Channel>;
type Res<T> = Result<T, String>;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(f64::max(0.0, s))
}

fn main() {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => protocol::fail(
            EXIT_CANNOT_START,
            &format!("{WHO}: cannot start the tokio runtime: {e}"),
        ),
    };
    runtime.block_on(async {
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => protocol::fail(128 + libc::SIGTERM, &format!("{WHO}: interrupted by SIGTERM")),
                _ = int.recv() => protocol::fail(128 + libc::SIGINT, &format!("{WHO}: interrupted by SIGINT")),
            }
        });
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args == ["--worker"] {
            worker().await;
        }
        let data = protocol::parse_config(&args, "ClientProcess")
            .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &format!("{WHO}: {e}")));
        let (proc, settings) = decode(&data);
        protocol::ready(0, "tonic", TONIC_VERSION);
        protocol::result(measure(proc, settings).await)
    });
}

/// `kit-tonic-client --worker`, a client worker (docs/process-protocol.md): one trial per line
/// of stdin, each on channels (TCP connections) of its own, one result line each; the first
/// error (a bad line too) is the final line and ends it; stdin's end: exit 0.
async fn worker() -> ! {
    protocol::ready_worker("tonic", TONIC_VERSION);
    let mut trial = 1;
    loop {
        let mut line = String::new();
        // The signal task runs on the runtime's other threads meanwhile.
        let read = tokio::task::block_in_place(|| std::io::stdin().read_line(&mut line));
        if !line.trim().is_empty() {
            let data = protocol::parse_config_text(&line, "worker line")
                .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &format!("{WHO}: {e}")));
            let (proc, settings) = decode(&data);
            protocol::trial_result(measure(proc, settings).await, trial);
            trial += 1;
        }
        if matches!(read, Ok(0) | Err(_)) {
            std::process::exit(protocol::EXIT_OK) // stdin's end: the normal end
        }
    }
}

/// The trial of one config, or its error line (exit 2).
fn decode(data: &Value) -> (ClientProcess, Settings) {
    let proc = decode_client_process(data)
        .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &format!("{WHO}: {e}")));
    let settings =
        client_settings(&proc.trial).unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
    (proc, settings)
}

/// One trial's result, or its error line (exit 4).
async fn measure(proc: ClientProcess, settings: Settings) -> Value {
    match run(proc, settings).await {
        Ok(result) => result,
        Err(msg) => protocol::fail(EXIT_MEASUREMENT, &msg),
    }
}

/// An error and what caused it, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        cur = s.source();
    }
    text
}

fn endpoint(target: &str, s: &Settings, connect_s: f64) -> Res<Endpoint> {
    let mut ep = Endpoint::from_shared(format!("http://{target}"))
        .map_err(|e| format!("{WHO}: bad target {target}: {}", chain(&e)))?
        .connect_timeout(secs(connect_s))
        .tcp_nodelay(s.nodelay.unwrap_or(true));
    if let Some(w) = s.stream_window {
        ep = ep.initial_stream_window_size(w);
    }
    if let Some(w) = s.conn_window {
        ep = ep.initial_connection_window_size(w);
    }
    if let Some(a) = s.adaptive {
        ep = ep.http2_adaptive_window(a);
    }
    if let Some(f) = s.max_frame {
        ep = ep.max_frame_size(f);
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

struct Runner {
    trial: Trial,
    settings: Settings,
    clients: Vec<Client>,
    taps: Vec<Tap>,
}

impl Runner {
    /// Every connection's announced stream windows, (ms since the timed start, bytes; the
    /// ones announced before it at 0), and its PING round trips.
    fn tapped(&self, start: i64, r: &mut serde_json::Map<String, Value>) {
        let mut steps = vec![];
        let mut rtts = vec![];
        for tap in &self.taps {
            if let Ok(state) = tap.lock() {
                steps.extend(state.window_steps.iter().copied());
                rtts.extend(state.ping_rtt_ms.iter().copied());
            }
        }
        steps.sort_by_key(|s| s.0);
        let trace: Vec<(f64, i64)> = steps
            .iter()
            .map(|(t, w)| (f64::max(0.0, (t - start) as f64 / 1e6), *w))
            .collect();
        r.insert("window_trace".into(), json!(trace));
        r.insert("ping_rtt_ms".into(), json!(rtts));
    }
}

async fn run(proc: ClientProcess, settings: Settings) -> Res<Value> {
    let w = proc.trial.workload.clone();
    let target = protocol::host_port(&proc.target_host, proc.target_port);
    let deadline = std::time::Instant::now() + secs(w.timeout_s);
    let left = || {
        f64::max(
            0.05,
            deadline
                .saturating_duration_since(std::time::Instant::now())
                .as_secs_f64(),
        )
    };
    let count = i64::min(proc.trial.client.connections, w.streams) as usize;
    let wait_s = f64::min(CONNECT_TIMEOUT_S, w.timeout_s);
    // One Endpoint::connect per connection: each Channel is one HTTP/2 connection of its own.
    let mut connecting = vec![];
    let mut taps = vec![];
    for _ in 0..count {
        let ep = endpoint(&target, &settings, wait_s)?;
        let tap: Tap = Arc::new(std::sync::Mutex::new(TapState::default()));
        let connector = TapConnector {
            tap: tap.clone(),
            nodelay: settings.nodelay.unwrap_or(true),
        };
        taps.push(tap);
        connecting.push(tokio::spawn(async move {
            tokio::time::timeout(secs(wait_s), ep.connect_with_connector(connector)).await
        }));
    }
    let mut clients = vec![];
    for c in connecting {
        let channel = match c.await {
            Ok(Ok(Ok(ch))) => ch,
            Ok(Ok(Err(e))) => {
                return Err(format!(
                    "{WHO}: cannot reach {target} within {wait_s} s ({}); is the server running?",
                    chain(&e)
                ))
            }
            Ok(Err(_)) => {
                return Err(format!(
                    "{WHO}: cannot reach {target} within {wait_s} s; is the server running?"
                ))
            }
            Err(e) => return Err(format!("{WHO}: connecting failed: {e}")),
        };
        clients.push(
            ThroughputClient::new(channel)
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES),
        );
    }
    if w.warmup {
        // The reference study's warm-up: one Ping per connection, nothing else.
        for c in clients.iter_mut() {
            let req = PingRequest {
                payload: Bytes::from_static(b"warm"),
            };
            match tokio::time::timeout(secs(left()), c.ping(req)).await {
                Ok(Ok(_)) => {}
                Ok(Err(st)) => return Err(format!("{WHO}: warm-up ping: {}", status_text(&st))),
                Err(_) => return Err(format!("{WHO}: warm-up ping: DEADLINE_EXCEEDED: timed out")),
            }
        }
    }
    let mut trial = proc.trial.clone();
    trial.workload.timeout_s = f64::max(1.0, left()); // the workload gets what is left
    let r = Runner {
        trial,
        settings,
        clients,
        taps,
    };
    match w.kind.as_str() {
        "unary" => r.unary().await,
        "upload" => r.upload().await,
        _ => r.download().await,
    }
}

fn result_record() -> serde_json::Map<String, Value> {
    let v = json!({
        "client": "tonic", "bytes": 0, "messages": 0, "elapsed_s": 0.0, "t_start_ns": 0, "t_end_ns": 0,
        "stream_bytes": [], "stream_finish_s": [], "cpu_s": 0.0, "ping_rtt_ms": [], "latencies_ms": [],
        "window_trace": [], "notes": [], "sent_bytes": 0, "slow_streams": 0,
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

#[derive(Default)]
struct Tally {
    messages: i64,
    bytes: i64,
    last_ns: i64,
    err: Option<String>,
    slow: bool,
}

struct StreamJob {
    client: Client,
    fixed: Option<i64>,
    end_ns: i64,
    msg_bytes: i64,
    timeout: Duration,
    pacer: Option<ReadPacer>,
    stop: watch::Receiver<bool>,
    fast_left: Arc<AtomicI64>,
    stop_tx: Arc<watch::Sender<bool>>,
}

impl StreamJob {
    async fn run(mut self) -> Tally {
        let mut t = Tally {
            slow: self.pacer.is_some(),
            ..Tally::default()
        };
        let timeout = self.timeout;
        if tokio::time::timeout(timeout, self.read(&mut t))
            .await
            .is_err()
        {
            t.err = Some("DEADLINE_EXCEEDED: Deadline Exceeded".into());
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
        let req = DownloadRequest {
            message_count: self.fixed.unwrap_or(0) as u64,
            message_bytes: self.msg_bytes as u32,
        };
        let mut stream = match self.client.download(req).await {
            Ok(r) => r.into_inner(),
            Err(st) => {
                t.err = Some(status_text(&st));
                return;
            }
        };
        loop {
            let chunk = match stream.message().await {
                Ok(Some(c)) => c,
                Ok(None) => return,
                Err(st) => {
                    t.err = Some(status_text(&st));
                    return;
                }
            };
            let now = now_ns();
            t.messages += 1;
            t.bytes += chunk.payload.len() as i64;
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
        let wait = due - now_ns();
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

fn slow_notes(w: &Workload) -> Vec<String> {
    match w.read_rate_bits_s {
        Some(rate) if w.slow_streams > 0 => vec![format!(
            "streams 1..{} read one message per {:.0} ms ({} Mbit/s); h2 holds what they have not read, up to \
             the stream window (not counted here)",
            w.slow_streams,
            w.message_bytes as f64 * 8.0 / rate * 1000.0,
            rate / 1e6
        )],
        _ => vec![],
    }
}

impl Runner {
    async fn download(self) -> Res<Value> {
        let w = &self.trial.workload;
        let fixed = w.messages_per_stream();
        let duration_s = if fixed.is_none() {
            w.timed_duration_s(self.trial.link.rtt_ms())
        } else {
            w.timeout_s
        };
        let cpu0 = cpu_seconds();
        let start = now_ns();
        let (stop_tx, stop_rx) = watch::channel(false);
        let stop_tx = Arc::new(stop_tx);
        let fast = w.streams
            - if w.read_rate_bits_s.is_some() {
                w.slow_streams
            } else {
                0
            };
        let fast_left = Arc::new(AtomicI64::new(fast));
        let mut jobs = vec![];
        for i in 0..w.streams {
            let pacer = match w.read_rate_bits_s {
                Some(rate) if i < w.slow_streams => Some(ReadPacer::new(
                    rate / 8.0,
                    start,
                    (i + 1) as u32,
                    w.message_bytes,
                )),
                _ => None,
            };
            let job = StreamJob {
                client: self.clients[i as usize % self.clients.len()].clone(),
                fixed,
                end_ns: start + (duration_s * 1e9) as i64,
                msg_bytes: w.message_bytes,
                timeout: secs(w.timeout_s),
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
            return Err(format!("{WHO}: download failed: {err}"));
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
        let mut r = result_record();
        r.insert(
            "messages".into(),
            json!(tallies.iter().map(|t| t.messages).sum::<i64>()),
        );
        r.insert(
            "bytes".into(),
            json!(tallies.iter().map(|t| t.bytes).sum::<i64>()),
        );
        r.insert(
            "stream_bytes".into(),
            json!(tallies.iter().map(|t| t.bytes).collect::<Vec<_>>()),
        );
        r.insert(
            "stream_finish_s".into(),
            json!(tallies
                .iter()
                .map(|t| (t.last_ns - start) as f64 / 1e9)
                .collect::<Vec<_>>()),
        );
        r.insert("elapsed_s".into(), json!((last - start) as f64 / 1e9));
        r.insert("t_start_ns".into(), json!(start));
        r.insert("t_end_ns".into(), json!(last));
        r.insert("cpu_s".into(), json!(cpu));
        r.insert("slow_streams".into(), json!(w.slow_streams));
        self.tapped(start, &mut r);
        let mut notes = client_notes(&self.settings, &self.trial);
        notes.extend(slow_notes(w));
        r.insert("notes".into(), json!(notes));
        Ok(Value::Object(r))
    }

    async fn unary(mut self) -> Res<Value> {
        let w = self.trial.workload.clone();
        let client = &mut self.clients[0];
        let payload = Bytes::from_static(b"xxxxxxxxxxxxxxxx");
        let mut latencies = Vec::with_capacity(w.calls as usize);
        let cpu0 = cpu_seconds();
        let start = now_ns();
        for _ in 0..w.calls {
            let t0 = now_ns();
            let reply = tokio::time::timeout(
                secs(w.timeout_s),
                client.ping(PingRequest {
                    payload: payload.clone(),
                }),
            )
            .await;
            let t1 = now_ns();
            match reply {
                Ok(Ok(_)) => {}
                Ok(Err(st)) => return Err(format!("{WHO}: {}", status_text(&st))),
                Err(_) => return Err(format!("{WHO}: DEADLINE_EXCEEDED: Deadline Exceeded")),
            }
            latencies.push((t1 - t0) as f64 / 1e6);
        }
        let end = now_ns();
        let mut r = result_record();
        r.insert("messages".into(), json!(latencies.len()));
        r.insert("elapsed_s".into(), json!((end - start) as f64 / 1e9));
        r.insert("t_start_ns".into(), json!(start));
        r.insert("t_end_ns".into(), json!(end));
        r.insert("cpu_s".into(), json!(cpu_seconds() - cpu0));
        r.insert("latencies_ms".into(), json!(latencies));
        let notes = client_notes(&self.settings, &self.trial);
        r.insert("notes".into(), json!(notes[..1]));
        Ok(Value::Object(r))
    }

    /// One client-streaming call: send until the deadline (or bytes_per_stream), then
    /// half-close; the server's summary says what it received, and its arrival ends the phase.
    async fn upload(mut self) -> Res<Value> {
        let w = self.trial.workload.clone();
        let call_timeout_s = self.trial.upload_call_timeout_s();
        let sent = Arc::new(AtomicI64::new(0));
        let cpu0 = cpu_seconds();
        let start = now_ns();
        let feed = Feed {
            payload: Bytes::from(vec![0x5a_u8; w.message_bytes as usize]),
            limit: w.messages_per_stream(),
            deadline_ns: start + (w.timed_duration_s(self.trial.link.rtt_ms()) * 1e9) as i64,
            sent: sent.clone(),
        };
        let reply = tokio::time::timeout(secs(call_timeout_s), self.clients[0].upload(feed)).await;
        let end = now_ns();
        let summary = match reply {
            Ok(Ok(r)) => r.into_inner(),
            Ok(Err(st)) if st.code() == tonic::Code::DeadlineExceeded => {
                return Err(stalled(call_timeout_s))
            }
            Ok(Err(st)) => return Err(format!("{WHO}: upload failed: {}", status_text(&st))),
            Err(_) => return Err(stalled(call_timeout_s)),
        };
        let elapsed = (end - start) as f64 / 1e9;
        let mut r = result_record();
        r.insert("bytes".into(), json!(summary.payload_bytes));
        r.insert("messages".into(), json!(summary.messages));
        r.insert("elapsed_s".into(), json!(elapsed));
        r.insert("t_start_ns".into(), json!(start));
        r.insert("t_end_ns".into(), json!(end));
        r.insert("stream_bytes".into(), json!([summary.payload_bytes]));
        r.insert("stream_finish_s".into(), json!([elapsed]));
        r.insert("cpu_s".into(), json!(cpu_seconds() - cpu0));
        r.insert(
            "sent_bytes".into(),
            json!(sent.load(Ordering::SeqCst) * w.message_bytes),
        );
        r.insert("notes".into(), json!(upload_notes(&self.trial)));
        Ok(Value::Object(r))
    }
}

fn stalled(timeout_s: f64) -> String {
    format!("{WHO}: the server stopped taking the upload (no summary within {timeout_s} s)")
}

const CCORE_SERVER_NOTE: &str = "grpcio server (C-core) receives uploads: it grants each stream extra credit of \
    min(bytes missing of the message being read, 1 MiB), so a static server window can exceed window/RTT";

/// The server receives, so its window is what the notes describe.
fn upload_notes(t: &Trial) -> Vec<String> {
    match t.server.kind.as_str() {
        "tonic" => server_settings(&t.server)
            .map(|s| vec![server_notes(&s)])
            .unwrap_or_default(),
        "grpcio" if t.server.window_mode != "dynamic" => vec![CCORE_SERVER_NOTE.to_string()],
        _ => vec![],
    }
}

/// The upload's messages, made as tonic asks for them (it asks as h2 has room to send):
/// `sent` counts what was handed to tonic, all of which is sent before the half-close.
struct Feed {
    payload: Bytes,
    limit: Option<i64>,
    deadline_ns: i64,
    sent: Arc<AtomicI64>,
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
