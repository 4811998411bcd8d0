//! The tonic server of the kit: `kit-tonic-server --config '<ServerJob as JSON>'`, speaking
//! docs/process-protocol.md; the job is protos/worker.proto's ServerJob. It serves the
//! Throughput service with the limits every kit server keeps (servers/grpcio_server.py):
//! Download streams message_count messages of message_bytes bytes of 0x5a (0: until
//! cancelled), within a budget for what the calls hold together, each message encoded once
//! per size and shared (or once per call when large), sent as the transport takes it; Ping
//! echoes (up to max_echo_bytes); Upload counts.

use std::convert::Infallible;
use std::ffi::OsString;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes_crate::Bytes;
use http_body::Frame;
use kit_tonic::budget::{charge_of, Budget, Charge, MessageCache};
use kit_tonic::job::{self, Args};
use kit_tonic::options::{self, Settings, Side};
use kit_tonic::pb::throughput::throughput_server::{Throughput, ThroughputServer};
use kit_tonic::pb::throughput::{Chunk, DownloadRequest, PingReply, PingRequest, UploadSummary};
use kit_tonic::pb::worker::{ServerJob, ServerResult};
use kit_tonic::protocol::{self, format_bytes, EXIT_BAD_CONFIG, EXIT_CANNOT_START, EXIT_FAILED};
use tokio::signal::unix::{signal, SignalKind};
use tonic::body::Body;
use tonic::codec::{Codec, Streaming};
use tonic::codegen::{http, BoxFuture, Service};
use tonic::{Request, Response, Status};

const WHO: &str = "tonic server";
/// tonic's send and receive limit per message (its default receive limit is 4 MiB).
const MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;
/// A DownloadRequest is a few bytes; a larger one is refused by tonic's decoder.
const MAX_REQUEST_BYTES: usize = 64 * 1024;
const DOWNLOAD_PATH: &str = "/kit.throughput.Throughput/Download";
const GRACE: Duration = Duration::from_millis(500);
/// Messages at least this large are built off the async worker threads.
const BUILD_APART_BYTES: usize = 1024 * 1024;

/// What every call shares: the counts for the result line and the job's limits.
struct State {
    rpcs: AtomicU64,
    refused: AtomicU64,
    budget: Arc<Budget>,
    cache: MessageCache,
    shared_max: u64,
    max_message: u64,
    max_echo: u64,
}

impl State {
    fn new(job: &ServerJob) -> State {
        State {
            rpcs: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            budget: Budget::new(job.download_budget_bytes),
            cache: MessageCache::new(job.message_cache_bytes, job.shared_message_max_bytes),
            shared_max: job.shared_message_max_bytes,
            max_message: job.max_message_bytes,
            max_echo: job.max_echo_bytes,
        }
    }
}

/// Ping and Upload, through tonic's generated service.
struct Calls {
    state: Arc<State>,
}

#[tonic::async_trait]
impl Throughput for Calls {
    type DownloadStream = tokio_stream::Empty<Result<Chunk, Status>>;

    /// Never called: `Kit` serves Download itself, with its encoded messages shared.
    async fn download(
        &self,
        _request: Request<DownloadRequest>,
    ) -> Result<Response<Self::DownloadStream>, Status> {
        Err(Status::internal(
            "Download is served by the kit's own handler",
        ))
    }

    async fn ping(&self, request: Request<PingRequest>) -> Result<Response<PingReply>, Status> {
        self.state.rpcs.fetch_add(1, Ordering::Relaxed);
        let payload = request.into_inner().payload;
        if payload.len() as u64 > self.state.max_echo {
            return Err(Status::invalid_argument(format!(
                "ping payload of {} bytes is above the echo maximum {}",
                payload.len(),
                self.state.max_echo
            )));
        }
        Ok(Response::new(PingReply { payload }))
    }

    async fn upload(
        &self,
        request: Request<Streaming<Chunk>>,
    ) -> Result<Response<UploadSummary>, Status> {
        self.state.rpcs.fetch_add(1, Ordering::Relaxed);
        let mut stream = request.into_inner();
        let (mut messages, mut payload_bytes) = (0u64, 0u64);
        while let Some(chunk) = stream.message().await? {
            messages += 1;
            payload_bytes += chunk.payload.len() as u64;
        }
        Ok(Response::new(UploadSummary {
            messages,
            payload_bytes,
        }))
    }
}

/// The service as served: Download by `download` below, the rest by tonic's generated one.
#[derive(Clone)]
struct Kit {
    calls: ThroughputServer<Calls>,
    state: Arc<State>,
}

impl Service<http::Request<Body>> for Kit {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Service::<http::Request<Body>>::poll_ready(&mut self.calls, cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if req.uri().path() == DOWNLOAD_PATH {
            let state = self.state.clone();
            Box::pin(async move { Ok(download(state, req).await) })
        } else {
            Service::<http::Request<Body>>::call(&mut self.calls, req)
        }
    }
}

/// A Download call: its request decoded by tonic, refused before anything is allocated if it
/// asks for too large a message or the budget has no room; else its messages, as a body.
async fn download(state: Arc<State>, req: http::Request<Body>) -> http::Response<Body> {
    state.rpcs.fetch_add(1, Ordering::Relaxed);
    let decoder = tonic_prost::ProstCodec::<Chunk, DownloadRequest>::default().decoder();
    let mut stream =
        Streaming::new_request(decoder, req.into_body(), None, Some(MAX_REQUEST_BYTES));
    let request = match stream.message().await {
        Ok(Some(r)) => r,
        Ok(None) => return Status::internal("Missing request message.").into_http(),
        Err(st) => return st.into_http(),
    };
    if let Err(st) = stream.trailers().await {
        return st.into_http();
    }
    drop(stream);
    let asked = u64::from(request.message_bytes);
    if asked > state.max_message {
        return Status::invalid_argument(format!(
            "message_bytes {asked} is above this server's maximum {}",
            state.max_message
        ))
        .into_http();
    }
    let size = u64::max(1, asked);
    let charge = match state.budget.take(charge_of(size, state.shared_max)) {
        Ok(c) => c,
        Err(r) => {
            state.refused.fetch_add(1, Ordering::Relaxed);
            return Status::resource_exhausted(format!(
                "this download would hold {}; the server's calls already hold {} of its {} maximum",
                format_bytes(r.would_hold as f64),
                format_bytes(r.held as f64),
                format_bytes(r.max as f64)
            ))
            .into_http();
        }
    };
    let size = size as usize;
    let message = if size >= BUILD_APART_BYTES {
        let built = state.clone();
        match tokio::task::spawn_blocking(move || built.cache.get(size)).await {
            Ok(m) => m,
            Err(e) => {
                return Status::internal(format!("building the message failed: {e}")).into_http()
            }
        }
    } else {
        state.cache.get(size)
    };
    let body = Messages {
        message,
        left: (request.message_count != 0).then_some(request.message_count),
        done: false,
        _charge: charge,
    };
    let mut response = http::Response::new(Body::new(body));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    response
}

/// A Download's response body: the one encoded message, `left` times (None: until the call
/// is cancelled, which drops the body), then the OK trailers. Lazy: a message is handed
/// over only when hyper asks for the next frame, which it does once h2 has sent (nearly) all
/// it holds of the stream. The budget's charge goes back when the body is dropped: the call
/// ended, however it ended.
struct Messages {
    message: Bytes,
    left: Option<u64>,
    done: bool,
    _charge: Charge,
}

impl http_body::Body for Messages {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.left == Some(0) {
            self.done = true;
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
            return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
        }
        if let Some(n) = self.left.as_mut() {
            *n -= 1;
        }
        Poll::Ready(Some(Ok(Frame::data(self.message.clone()))))
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

fn builder(s: &Settings, job: &ServerJob) -> tonic::transport::Server {
    let mut b = tonic::transport::Server::builder();
    if let Some(w) = s.stream_window {
        b = b.initial_stream_window_size(w);
    }
    if let Some(w) = s.conn_window {
        b = b.initial_connection_window_size(w);
    }
    if let Some(a) = s.adaptive {
        b = b.http2_adaptive_window(Some(a));
    }
    if let Some(f) = s.max_frame {
        b = b.max_frame_size(f);
    }
    // The job's SETTINGS_MAX_CONCURRENT_STREAMS (0: not given, tonic's default: none), then
    // the option of the same knob.
    let streams = s
        .max_streams
        .or((job.max_concurrent_streams != 0).then_some(job.max_concurrent_streams));
    if let Some(n) = streams {
        b = b.max_concurrent_streams(n);
    }
    if let Some(d) = s.keep_alive_interval {
        b = b.http2_keepalive_interval(Some(d));
    }
    if let Some(d) = s.keep_alive_timeout {
        b = b.http2_keepalive_timeout(Some(d));
    }
    b
}

fn main() {
    protocol::on_panic(WHO);
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let text = match job::parse_args(&args, WHO, "ServerJob", false) {
        Ok(Args::Config(text)) => text,
        Ok(Args::Worker) => {
            protocol::fail(EXIT_BAD_CONFIG, &format!("{WHO}: a server is no worker"))
        }
        Err(e) => protocol::fail(EXIT_BAD_CONFIG, &e),
    };
    let server =
        job::server_job(&text, WHO).unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
    let settings = options::settings(
        WHO,
        Side::Server,
        server.job.windows.as_ref(),
        &server.job.options,
    )
    .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            protocol::fail(
                EXIT_CANNOT_START,
                &format!("{WHO}: cannot start the tokio runtime: {e}"),
            )
        });
    runtime.block_on(serve(server, settings));
}

async fn serve(server: job::Server, settings: Settings) {
    let job = server.job;
    let hook = |kind: SignalKind| {
        signal(kind).unwrap_or_else(|e| {
            protocol::fail(
                EXIT_CANNOT_START,
                &format!("{WHO}: cannot handle signals: {e}"),
            )
        })
    };
    // Until it serves, a signal just ends it (exit 0 with a result line, as when serving).
    let (mut term, mut int) = (hook(SignalKind::terminate()), hook(SignalKind::interrupt()));
    let address = protocol::host_port(&job.listen_host, server.listen_port);
    // std's listeners set SO_REUSEADDR only, never SO_REUSEPORT: a port in use fails here.
    let cannot = |e: std::io::Error| -> ! {
        let hint = if server.listen_port != 0 {
            "; is the port in use?"
        } else {
            ""
        };
        protocol::fail(
            EXIT_CANNOT_START,
            &format!("{WHO}: cannot listen on {address} ({e}){hint}"),
        )
    };
    let listener = std::net::TcpListener::bind(&address).unwrap_or_else(|e| cannot(e));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    if let Err(e) = listener.set_nonblocking(true) {
        cannot(e)
    }
    let listener = tokio::net::TcpListener::from_std(listener).unwrap_or_else(|e| cannot(e));
    if !protocol::is_loopback_host(&job.listen_host) {
        eprintln!(
            "WARNING: the server listens on {}, which is NOT a loopback address: anyone who can reach this host can connect to it.",
            job.listen_host
        );
    }
    // serve_with_incoming ignores the Server's tcp_nodelay: the incoming stream sets it
    // (tonic's own default: on).
    let incoming = tonic::transport::server::TcpIncoming::from(listener)
        .with_nodelay(Some(settings.nodelay.unwrap_or(true)));
    let state = Arc::new(State::new(&job));
    let calls = ThroughputServer::new(Calls {
        state: state.clone(),
    })
    .max_decoding_message_size(MAX_MESSAGE_BYTES)
    .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let kit = Kit {
        calls,
        state: state.clone(),
    };
    let applied = settings.calls();
    if !applied.is_empty() {
        eprintln!(
            "{WHO}: {}: Server::{}",
            options::versions(),
            applied.join(", ")
        );
    }
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // One service, served without tonic's router (its `router` feature would pull in axum).
    let mut served = tokio::spawn(builder(&settings, &job).serve_with_incoming_shutdown(
        kit,
        incoming,
        async move {
            let _ = stop_rx.await;
        },
    ));
    protocol::ready(port, false);
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
        r = &mut served => {
            let why = match r {
                Ok(Ok(())) => "it stopped".to_string(),
                Ok(Err(e)) => e.to_string(),
                Err(e) => e.to_string(),
            };
            protocol::fail(EXIT_FAILED, &format!("{WHO}: stopped serving: {why}"));
        }
    }
    // A short grace for calls in flight, then force (the process exits with them).
    let _ = stop_tx.send(());
    let _ = tokio::time::timeout(GRACE, served).await;
    protocol::server_result(ServerResult {
        rpcs: state.rpcs.load(Ordering::Relaxed),
        refused: state.refused.load(Ordering::Relaxed),
    })
}
