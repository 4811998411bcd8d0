//! The tonic server of the kit: `kit-tonic-server --config '<ServerProcess as JSON>'`, speaking
//! docs/process-protocol.md, with the semantics of the kit's reference server
//! (servers/grpcio_server.py): Download streams message_count messages of message_bytes bytes
//! of 0x5a (0: until cancelled), built once and reused; Ping echoes; Upload counts.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes_crate::Bytes;
use kit_tonic::config::{decode_server_process, MAX_WORKLOAD_MESSAGE, MIB};
use kit_tonic::options::{server_settings, Settings};
use kit_tonic::pb::throughput_server::{Throughput, ThroughputServer};
use kit_tonic::pb::{Chunk, DownloadRequest, PingReply, PingRequest, UploadSummary};
use kit_tonic::protocol::{self, EXIT_BAD_CONFIG, EXIT_CANNOT_START, EXIT_FAILED};
use kit_tonic::TONIC_VERSION;
use tokio::signal::unix::{signal, SignalKind};
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

const WHO: &str = "tonic server";
const MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;
const MAX_ECHO_BYTES: usize = MIB as usize;
const CACHE_MAX_BYTES: usize = 64 * 1024 * 1024;
const GRACE: Duration = Duration::from_millis(500);

#[derive(Default)]
struct Service {
    rpcs: Arc<AtomicU64>,
    payloads: Mutex<HashMap<usize, Bytes>>,
}

impl Service {
    /// The payload of a download's messages, built once per size (bounded: a size above a
    /// quarter of the cache is built per call; a full cache starts over).
    fn payload(&self, size: usize) -> Bytes {
        let mut cache = self.payloads.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = cache.get(&size) {
            return b.clone();
        }
        let b = Bytes::from(vec![0x5a_u8; size]);
        if size <= CACHE_MAX_BYTES / 4 {
            if cache.values().map(|b| b.len()).sum::<usize>() + size > CACHE_MAX_BYTES {
                cache.clear();
            }
            cache.insert(size, b.clone());
        }
        b
    }
}

/// `count` messages sharing one payload (0: until the client cancels, which drops this).
struct Chunks {
    payload: Bytes,
    left: Option<u64>,
}

impl Stream for Chunks {
    type Item = Result<Chunk, Status>;
    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.left {
            Some(0) => Poll::Ready(None),
            _ => {
                if let Some(n) = self.left.as_mut() {
                    *n -= 1;
                }
                Poll::Ready(Some(Ok(Chunk {
                    payload: self.payload.clone(),
                })))
            }
        }
    }
}

#[tonic::async_trait]
impl Throughput for Service {
    type DownloadStream = Chunks;

    async fn download(
        &self,
        request: Request<DownloadRequest>,
    ) -> Result<Response<Chunks>, Status> {
        self.rpcs.fetch_add(1, Ordering::Relaxed);
        let req = request.into_inner();
        if req.message_bytes as i64 > MAX_WORKLOAD_MESSAGE {
            return Err(Status::invalid_argument(format!(
                "message_bytes {} is above this server's maximum {MAX_WORKLOAD_MESSAGE}",
                req.message_bytes
            )));
        }
        let payload = self.payload(usize::max(1, req.message_bytes as usize));
        let left = if req.message_count == 0 {
            None
        } else {
            Some(req.message_count)
        };
        Ok(Response::new(Chunks { payload, left }))
    }

    async fn ping(&self, request: Request<PingRequest>) -> Result<Response<PingReply>, Status> {
        self.rpcs.fetch_add(1, Ordering::Relaxed);
        let payload = request.into_inner().payload;
        if payload.len() > MAX_ECHO_BYTES {
            return Err(Status::invalid_argument(format!(
                "ping payload of {} bytes is above the echo maximum {MAX_ECHO_BYTES}",
                payload.len()
            )));
        }
        Ok(Response::new(PingReply { payload }))
    }

    async fn upload(
        &self,
        request: Request<Streaming<Chunk>>,
    ) -> Result<Response<UploadSummary>, Status> {
        self.rpcs.fetch_add(1, Ordering::Relaxed);
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

fn builder(s: &Settings) -> tonic::transport::Server {
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
    if let Some(n) = s.max_streams {
        b = b.max_concurrent_streams(n);
    }
    b
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
    runtime.block_on(serve());
}

async fn serve() {
    // Until it serves, a signal just ends it (exit 0 with a result line, as when serving).
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = protocol::parse_config(&args, "ServerProcess")
        .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &format!("{WHO}: {e}")));
    let proc = decode_server_process(&data)
        .unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &format!("{WHO}: {e}")));
    if proc.config.kind != "tonic" {
        protocol::fail(
            EXIT_BAD_CONFIG,
            &format!(
                "{WHO}: config.kind is '{}'; this program is the tonic server",
                proc.config.kind
            ),
        );
    }
    let settings =
        server_settings(&proc.config).unwrap_or_else(|e| protocol::fail(EXIT_BAD_CONFIG, &e));
    let address = protocol::host_port(&proc.listen_host, proc.listen_port);
    // std's listeners set SO_REUSEADDR only, never SO_REUSEPORT: a port in use fails here.
    let listener = match std::net::TcpListener::bind(&address) {
        Ok(l) => l,
        Err(e) => {
            let hint = if proc.listen_port != 0 {
                "; is the port in use?"
            } else {
                ""
            };
            protocol::fail(
                EXIT_CANNOT_START,
                &format!("{WHO}: cannot listen on {address} ({e}){hint}"),
            )
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let _ = listener.set_nonblocking(true);
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => protocol::fail(
            EXIT_CANNOT_START,
            &format!("{WHO}: cannot listen on {address} ({e})"),
        ),
    };
    if !protocol::is_loopback_host(&proc.listen_host) {
        eprintln!(
            "WARNING: the server listens on {}, which is NOT a loopback address: anyone who can reach this host can connect to it.",
            proc.listen_host
        );
    }
    // serve_with_incoming ignores the Server's tcp_nodelay: the incoming stream sets it
    // (tonic's own default: on).
    let incoming = tonic::transport::server::TcpIncoming::from(listener)
        .with_nodelay(Some(settings.nodelay.unwrap_or(true)));
    let service = Service::default();
    let rpcs = service.rpcs.clone();
    let svc = ThroughputServer::new(service)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // One service, served without tonic's router (its `router` feature would pull in axum).
    let server = builder(&settings);
    let mut served = tokio::spawn(
        server.serve_with_incoming_shutdown(svc, incoming, async move {
            let _ = stop_rx.await;
        }),
    );
    protocol::ready(port, "tonic", TONIC_VERSION);
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
    protocol::result(serde_json::json!({"rpcs": rpcs.load(Ordering::Relaxed)}));
}
