//! The records the kit sends (kit/plan/trial.py, kit/plan/processes.py), with their defaults
//! and the checks of their __post_init__: an unknown field, a missing required field, a value
//! of the wrong type or out of range is a bad config (exit 2), as in kit/results/codec.py.

use serde_json::{Map, Value};

pub const KIB: i64 = 1024;
pub const MIB: i64 = 1024 * 1024;
pub const HTTP2_MAX_WINDOW: i64 = (1 << 31) - 1;
pub const MAX_STREAMS: i64 = 1024;
pub const MAX_WORKLOAD_MESSAGE: i64 = 64 * MIB;
const MAX_DELAY_MS: f64 = 10_000.0;
const MIN_RATE: f64 = 1_000.0;
const MAX_RATE: f64 = 1e12;
const SLOWEST_FRAME_BYTES: f64 = 16_384.0;
const DEFAULT_MESSAGE_BYTES: i64 = 256 * 1024;
const DEFAULT_SERVER_WORKERS: i64 = MAX_STREAMS + 8;

const CLIENT_KINDS: &[&str] = &["grpcio", "h2", "grpc-go", "grpc-java", "grpc-js", "tonic"];
const SERVER_KINDS: &[&str] = &["grpcio", "grpc-go", "grpc-java", "grpc-js", "tonic"];
const WINDOW_MODES: &[&str] = &["dynamic", "static", "bdp-off", "pool"];
const CREDIT_POLICIES: &[&str] = &["immediate", "half", "quarter"];
const CONN_CREDITS: &[&str] = &["receipt", "read"];
const WORKLOAD_KINDS: &[&str] = &["download", "unary", "upload"];

pub type Res<T> = Result<T, String>;

#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Int(i64),
    Str(String),
}

impl std::fmt::Display for OptValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptValue::Int(i) => write!(f, "{i}"),
            OptValue::Str(s) => write!(f, "'{s}'"),
        }
    }
}

pub type Options = Vec<(String, OptValue)>;

#[derive(Clone, Debug)]
pub struct Link {
    pub delay_up_ms: f64,
    pub delay_down_ms: f64,
    pub rate_up_bits_s: Option<f64>,
    pub rate_down_bits_s: Option<f64>,
    // The packet link's fields and the rate steps: decoded and checked as the kit's Link
    // checks them, never acted on here (the delay line or the packet forwarder applies the
    // link; the client only dials it).
    pub kind: String,
    pub loss: f64,
    pub loss_burst_len: f64,
    pub queue_bytes: Option<i64>,
    pub mtu: i64,
    pub congestion: String,
    pub rate_steps: Vec<RateStep>,
}

/// One step of a down rate that changes over time (0 bit/s: an outage).
#[derive(Clone, Debug, PartialEq)]
pub struct RateStep {
    pub rate_bits_s: f64,
    pub duration_ms: f64,
}

impl Link {
    pub fn rtt_ms(&self) -> f64 {
        self.delay_up_ms + self.delay_down_ms
    }
}

#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub kind: String,
    pub window_mode: String,
    pub window_bytes: Option<i64>,
    pub conn_window_bytes: Option<i64>,
    pub credit_policy: Option<String>,
    pub max_frame_bytes: Option<i64>,
    pub channel_options: Options,
    pub connections: i64,
    pub conn_credit: String,
    pub pool_bytes: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub kind: String,
    pub window_mode: String,
    pub window_bytes: Option<i64>,
    pub channel_options: Options,
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub kind: String,
    pub message_bytes: i64,
    pub streams: i64,
    pub duration_s: Option<f64>,
    pub bytes_per_stream: Option<i64>,
    pub calls: i64,
    pub warmup: bool,
    pub timeout_s: f64,
    pub slow_streams: i64,
    pub read_rate_bits_s: Option<f64>,
}

impl Workload {
    /// The timed phase: the asked duration, else max(2 s, 20 RTTs).
    pub fn timed_duration_s(&self, rtt_ms: f64) -> f64 {
        self.duration_s
            .unwrap_or_else(|| f64::max(2.0, 20.0 * rtt_ms / 1000.0))
    }
    /// ceil(bytes_per_stream / message_bytes); None for a timed run.
    pub fn messages_per_stream(&self) -> Option<i64> {
        self.bytes_per_stream
            .map(|b| i64::max(1, (b + self.message_bytes - 1) / self.message_bytes))
    }
}

#[derive(Clone, Debug)]
pub struct Trial {
    pub link: Link,
    pub client: ClientConfig,
    pub server: ServerConfig,
    pub workload: Workload,
    pub label: String,
}

impl Trial {
    /// Streams are spread round-robin: the busiest connection carries this many.
    pub fn streams_per_connection(&self) -> i64 {
        i64::max(
            1,
            (self.workload.streams + self.client.connections - 1) / self.client.connections,
        )
    }
    /// A timed upload's deadline: the timed phase plus time to drain what is in flight.
    pub fn upload_call_timeout_s(&self) -> f64 {
        let w = &self.workload;
        if w.bytes_per_stream.is_some() {
            return w.timeout_s;
        }
        let drain = f64::max(5.0, 20.0 * self.link.rtt_ms() / 1000.0);
        f64::min(w.timeout_s, w.timed_duration_s(self.link.rtt_ms()) + drain)
    }
}

#[derive(Clone, Debug)]
pub struct ClientProcess {
    pub target_host: String,
    pub target_port: u16,
    pub trial: Trial,
}

#[derive(Clone, Debug)]
pub struct ServerProcess {
    pub config: ServerConfig,
    pub listen_host: String,
    pub listen_port: u16,
    pub workers: i64,
}

// ---- a JSON object being decoded -------------------------------------------------------

fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::String(_) => "str",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

struct Obj<'a> {
    m: &'a Map<String, Value>,
    at: String,
}

impl<'a> Obj<'a> {
    fn new(v: &'a Value, at: &str, fields: &[&str], required: &[&str]) -> Res<Obj<'a>> {
        let m = v
            .as_object()
            .ok_or_else(|| format!("{at}: a JSON object, not {}", py_type(v)))?;
        let mut unknown: Vec<&str> = m
            .keys()
            .map(|k| k.as_str())
            .filter(|k| !fields.contains(k))
            .collect();
        if !unknown.is_empty() {
            unknown.sort();
            return Err(format!("{at}: unknown field(s) {}", unknown.join(", ")));
        }
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|r| !m.contains_key(*r))
            .collect();
        if !missing.is_empty() {
            return Err(format!("{at}: missing field(s) {}", missing.join(", ")));
        }
        Ok(Obj {
            m,
            at: at.to_string(),
        })
    }

    fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    fn int_of(&self, key: &str, v: &Value) -> Res<i64> {
        match v {
            Value::Number(n) if !n.is_f64() => {
                Ok(n.as_i64().unwrap_or(i64::MAX)) // above i64: out of every range
            }
            _ => Err(format!(
                "{}: {} is not a whole number",
                self.path(key),
                py_repr(v)
            )),
        }
    }

    fn int(&self, key: &str, def: i64) -> Res<i64> {
        match self.m.get(key) {
            None => Ok(def),
            Some(v) => self.int_of(key, v),
        }
    }

    fn opt_int(&self, key: &str) -> Res<Option<i64>> {
        match self.m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.int_of(key, v).map(Some),
        }
    }

    fn float_of(&self, key: &str, v: &Value) -> Res<f64> {
        match v.as_f64() {
            Some(f) if f.is_finite() && !v.is_boolean() => Ok(f),
            _ => Err(format!(
                "{}: {} is not a finite number",
                self.path(key),
                py_repr(v)
            )),
        }
    }

    fn float(&self, key: &str, def: f64) -> Res<f64> {
        match self.m.get(key) {
            None => Ok(def),
            Some(v) => self.float_of(key, v),
        }
    }

    fn opt_float(&self, key: &str) -> Res<Option<f64>> {
        match self.m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.float_of(key, v).map(Some),
        }
    }

    fn boolean(&self, key: &str, def: bool) -> Res<bool> {
        match self.m.get(key) {
            None => Ok(def),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(format!(
                "{}: {} is not true or false",
                self.path(key),
                py_repr(v)
            )),
        }
    }

    fn string(&self, key: &str, def: &str) -> Res<String> {
        match self.m.get(key) {
            None => Ok(def.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(format!(
                "{}: {} is not a string",
                self.path(key),
                py_repr(v)
            )),
        }
    }

    fn literal(&self, key: &str, def: &str, choices: &[&str]) -> Res<String> {
        match self.m.get(key) {
            None => Ok(def.to_string()),
            Some(v) => self.literal_of(key, v, choices),
        }
    }

    fn opt_literal(&self, key: &str, choices: &[&str]) -> Res<Option<String>> {
        match self.m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.literal_of(key, v, choices).map(Some),
        }
    }

    fn literal_of(&self, key: &str, v: &Value, choices: &[&str]) -> Res<String> {
        match v {
            Value::String(s) if choices.contains(&s.as_str()) => Ok(s.clone()),
            _ => {
                let quoted: Vec<String> = choices.iter().map(|c| format!("'{c}'")).collect();
                Err(format!(
                    "{}: {} is not one of {}",
                    self.path(key),
                    py_repr(v),
                    quoted.join(", ")
                ))
            }
        }
    }

    fn options(&self, key: &str) -> Res<Options> {
        let Some(v) = self.m.get(key) else {
            return Ok(vec![]);
        };
        let at = self.path(key);
        let list = v
            .as_array()
            .ok_or_else(|| format!("{at}: a JSON array, not {}", py_type(v)))?;
        let mut out = vec![];
        for (i, item) in list.iter().enumerate() {
            let at = format!("{at}[{i}]");
            let pair = item
                .as_array()
                .ok_or_else(|| format!("{at}: a JSON array, not {}", py_type(item)))?;
            if pair.len() != 2 {
                return Err(format!("{at}: an array of 2 items, not {}", pair.len()));
            }
            let k = pair[0]
                .as_str()
                .ok_or_else(|| format!("{at}[0]: {} is not a string", py_repr(&pair[0])))?;
            let value = match &pair[1] {
                Value::Number(n) if !n.is_f64() => OptValue::Int(n.as_i64().unwrap_or(i64::MAX)),
                Value::String(s) => OptValue::Str(s.clone()),
                other => return Err(format!("{at}[1]: {} fits no allowed type", py_repr(other))),
            };
            out.push((k.to_string(), value));
        }
        Ok(out)
    }
}

fn require(ok: bool, msg: impl FnOnce() -> String) -> Res<()> {
    if ok {
        Ok(())
    } else {
        Err(msg())
    }
}

fn check_window(name: &str, w: Option<i64>) -> Res<()> {
    match w {
        Some(v) if !(1..=HTTP2_MAX_WINDOW).contains(&v) => Err(format!(
            "{name}: {v} is outside HTTP/2's window range 1..{HTTP2_MAX_WINDOW} (2^31-1)"
        )),
        _ => Ok(()),
    }
}

fn wrap<T>(at: &str, r: Res<T>) -> Res<T> {
    r.map_err(|e| format!("{at}: {e}"))
}

fn decode_link(v: &Value, at: &str) -> Res<Link> {
    let o = Obj::new(
        v,
        at,
        &[
            "delay_up_ms",
            "delay_down_ms",
            "rate_up_bits_s",
            "rate_down_bits_s",
            "jitter_ms",
            "seed",
            "kind",
            "loss",
            "loss_burst_len",
            "queue_bytes",
            "mtu",
            "congestion",
            "rate_steps",
        ],
        &[],
    )?;
    let l = Link {
        delay_up_ms: o.float("delay_up_ms", 0.0)?,
        delay_down_ms: o.float("delay_down_ms", 0.0)?,
        rate_up_bits_s: o.opt_float("rate_up_bits_s")?,
        rate_down_bits_s: o.opt_float("rate_down_bits_s")?,
        kind: o.literal("kind", "stream", &["stream", "packet"])?,
        loss: o.float("loss", 0.0)?,
        loss_burst_len: o.float("loss_burst_len", 0.0)?,
        queue_bytes: o.opt_int("queue_bytes")?,
        mtu: o.int("mtu", 1500)?,
        congestion: o.string("congestion", "")?,
        rate_steps: decode_rate_steps(&o)?,
    };
    let jitter = o.float("jitter_ms", 0.0)?;
    let seed = o.int("seed", 1)?;
    wrap(
        at,
        (|| {
            for (name, d) in [
                ("delay_up_ms", l.delay_up_ms),
                ("delay_down_ms", l.delay_down_ms),
            ] {
                require((0.0..=MAX_DELAY_MS).contains(&d), || {
                    format!("{name}: {d} ms is outside 0..10000 ms")
                })?;
            }
            for (name, r) in [
                ("--rate-up", l.rate_up_bits_s),
                ("--rate-down", l.rate_down_bits_s),
            ] {
                if let Some(r) = r {
                    require((MIN_RATE..=MAX_RATE).contains(&r), || {
                        format!("{name}: {r} bit/s is outside 1 kbit/s .. 1 Tbit/s")
                    })?;
                }
            }
            require((0.0..=MAX_DELAY_MS).contains(&jitter), || {
                format!("--jitter: {jitter} ms is outside 0..10000 ms")
            })?;
            require((0..i64::MAX).contains(&seed), || {
                format!("--seed: {seed} is not a whole number >= 0")
            })?;
            check_packet_fields(&l)
        })(),
    )?;
    Ok(l)
}

fn decode_rate_steps(o: &Obj) -> Res<Vec<RateStep>> {
    let Some(v) = o.m.get("rate_steps") else {
        return Ok(vec![]);
    };
    let at = o.path("rate_steps");
    let list = v
        .as_array()
        .ok_or_else(|| format!("{at}: a JSON array, not {}", py_type(v)))?;
    let mut out = vec![];
    for (i, item) in list.iter().enumerate() {
        let fields = ["rate_bits_s", "duration_ms"];
        let s = Obj::new(item, &format!("{at}[{i}]"), &fields, &fields)?;
        out.push(RateStep {
            rate_bits_s: s.float("rate_bits_s", 0.0)?,
            duration_ms: s.float("duration_ms", 0.0)?,
        });
    }
    Ok(out)
}

// The kit's _check_packet_fields and _check_rate_steps, in their words.
fn check_packet_fields(l: &Link) -> Res<()> {
    let (loss, burst, mtu) = (l.loss, l.loss_burst_len, l.mtu);
    require((0.0..=0.5).contains(&loss), || {
        format!("loss: {loss} is outside 0..0.5 (a fraction of packets)")
    })?;
    require(
        burst == 0.0 || ((1.0..=1000.0).contains(&burst) && loss > 0.0),
        || format!("loss_burst_len: {burst} packets must be 1..1000, with a loss above 0"),
    )?;
    require((576..=65000).contains(&mtu), || {
        format!("mtu: {mtu} bytes is outside 576..65000")
    })?;
    if let Some(q) = l.queue_bytes {
        require(q >= mtu, || {
            format!("queue_bytes: {q} bytes must hold at least one packet (the MTU, {mtu} bytes)")
        })?;
    }
    for s in &l.rate_steps {
        let (r, d) = (s.rate_bits_s, s.duration_ms);
        require(r == 0.0 || (MIN_RATE..=MAX_RATE).contains(&r), || {
            format!("rate_steps: a rate of {r} bit/s is outside 1 kbit/s .. 1 Tbit/s (or 0)")
        })?;
        require(d > 0.0 && d <= 3_600_000.0, || {
            format!("rate_steps: a step of {d} ms is outside 0..1 h")
        })?;
    }
    let n = l.rate_steps.len();
    require(
        n == 0 || (n <= 2000 && l.rate_steps.iter().any(|s| s.rate_bits_s > 0.0)),
        || format!("rate_steps: {n} steps; give 1..2000, at least one above 0"),
    )
}

fn decode_client_config(v: &Value, at: &str) -> Res<ClientConfig> {
    let o = Obj::new(
        v,
        at,
        &[
            "kind",
            "window_mode",
            "window_bytes",
            "conn_window_bytes",
            "credit_policy",
            "max_frame_bytes",
            "channel_options",
            "connections",
            "conn_credit",
            "pool_bytes",
        ],
        &[],
    )?;
    let c = ClientConfig {
        kind: o.literal("kind", "grpcio", CLIENT_KINDS)?,
        window_mode: o.literal("window_mode", "dynamic", WINDOW_MODES)?,
        window_bytes: o.opt_int("window_bytes")?,
        conn_window_bytes: o.opt_int("conn_window_bytes")?,
        credit_policy: o.opt_literal("credit_policy", CREDIT_POLICIES)?,
        max_frame_bytes: o.opt_int("max_frame_bytes")?,
        channel_options: o.options("channel_options")?,
        connections: o.int("connections", 1)?,
        conn_credit: o.literal("conn_credit", "receipt", CONN_CREDITS)?,
        pool_bytes: o.opt_int("pool_bytes")?,
    };
    wrap(
        at,
        (|| {
            require((1..=256).contains(&c.connections), || {
                format!("connections: {} is outside 1..256", c.connections)
            })?;
            check_window("--window", c.window_bytes)?;
            check_window("--conn-window", c.conn_window_bytes)?;
            require(
                (c.window_mode == "static") == c.window_bytes.is_some(),
                || {
                    "--window: a static window needs a size, and only a static window takes one"
                        .into()
                },
            )?;
            if let Some(f) = c.max_frame_bytes {
                require((16_384..=(1 << 24) - 1).contains(&f), || {
                    format!("max frame size: {f} is outside HTTP/2's 16384..16777215")
                })?;
            }
            if let Some(p) = c.pool_bytes {
                require(c.window_mode == "pool", || {
                    "--pool: only the pool window policy takes a pool (add --window-policy pool)"
                        .into()
                })?;
                require((16_384..=1 << 30).contains(&p), || {
                    format!("--pool: {p} is outside 16384 B..1 GiB")
                })?;
            }
            Ok(())
        })(),
    )?;
    Ok(c)
}

fn decode_server_config(v: &Value, at: &str) -> Res<ServerConfig> {
    let o = Obj::new(
        v,
        at,
        &["kind", "window_mode", "window_bytes", "channel_options"],
        &[],
    )?;
    let s = ServerConfig {
        kind: o.literal("kind", "grpcio", SERVER_KINDS)?,
        window_mode: o.literal("window_mode", "dynamic", WINDOW_MODES)?,
        window_bytes: o.opt_int("window_bytes")?,
        channel_options: o.options("channel_options")?,
    };
    wrap(
        at,
        (|| {
            check_window("--server-window", s.window_bytes)?;
            require(
                (s.window_mode == "static") == s.window_bytes.is_some(),
                || {
                    "--server-window: a static window needs a size, and only a static window takes one".into()
                },
            )
        })(),
    )?;
    Ok(s)
}

fn decode_workload(v: &Value, at: &str) -> Res<Workload> {
    let o = Obj::new(
        v,
        at,
        &[
            "kind",
            "message_bytes",
            "streams",
            "duration_s",
            "bytes_per_stream",
            "calls",
            "warmup",
            "timeout_s",
            "slow_streams",
            "read_rate_bits_s",
        ],
        &[],
    )?;
    let w = Workload {
        kind: o.literal("kind", "download", WORKLOAD_KINDS)?,
        message_bytes: o.int("message_bytes", DEFAULT_MESSAGE_BYTES)?,
        streams: o.int("streams", 1)?,
        duration_s: o.opt_float("duration_s")?,
        bytes_per_stream: o.opt_int("bytes_per_stream")?,
        calls: o.int("calls", 200)?,
        warmup: o.boolean("warmup", true)?,
        timeout_s: o.float("timeout_s", 60.0)?,
        slow_streams: o.int("slow_streams", 0)?,
        read_rate_bits_s: o.opt_float("read_rate_bits_s")?,
    };
    wrap(
        at,
        (|| {
            require(
                (1..=MAX_WORKLOAD_MESSAGE).contains(&w.message_bytes),
                || format!("--message-size: {} is outside 1..64 MiB", w.message_bytes),
            )?;
            require((1..=MAX_STREAMS).contains(&w.streams), || {
                format!("--streams: {} is outside 1..{MAX_STREAMS}", w.streams)
            })?;
            require((1..=1_000_000).contains(&w.calls), || {
                format!("--calls: {} is outside 1..1000000", w.calls)
            })?;
            if let Some(d) = w.duration_s {
                require((0.01..=3600.0).contains(&d), || {
                    format!("--duration: {d} s is outside 0.01..3600 s")
                })?;
            }
            if let Some(b) = w.bytes_per_stream {
                require((1..=1 << 40).contains(&b), || {
                    format!("--bytes: {b} is outside 1 B..1 TiB")
                })?;
                require(b >= w.message_bytes, || {
                    format!(
                "--bytes: {b} B per stream is less than one message ({}); ask for at least the message size, or a smaller --message-size",
                crate::protocol::format_bytes(w.message_bytes as f64))
                })?;
            }
            require((1.0..=7200.0).contains(&w.timeout_s), || {
                format!("--timeout: {} s is outside 1..7200 s", w.timeout_s)
            })?;
            require((0..=w.streams).contains(&w.slow_streams), || {
                format!(
                    "--slow-streams: {} is outside 0..{} (--streams)",
                    w.slow_streams, w.streams
                )
            })?;
            require((w.slow_streams > 0) == w.read_rate_bits_s.is_some(), || {
                "--read-rate: slow streams need a read rate, and only slow streams take one (give --slow-streams and --read-rate together)".into()
            })?;
            if let Some(r) = w.read_rate_bits_s {
                require(r > 0.0, || {
                    format!("--read-rate: {r} bit/s must be above 0")
                })?;
                require(w.kind == "download", || {
                    "--slow-streams: slow readers are for downloads (--workload download)".into()
                })?;
            }
            Ok(())
        })(),
    )?;
    Ok(w)
}

fn decode_trial(v: &Value, at: &str) -> Res<Trial> {
    let o = Obj::new(
        v,
        at,
        &["link", "client", "server", "workload", "label"],
        &[],
    )?;
    let empty = Value::Object(Map::new());
    let link = decode_link(o.m.get("link").unwrap_or(&empty), &o.path("link"))?;
    let client = decode_client_config(o.m.get("client").unwrap_or(&empty), &o.path("client"))?;
    let server = decode_server_config(o.m.get("server").unwrap_or(&empty), &o.path("server"))?;
    let workload = decode_workload(o.m.get("workload").unwrap_or(&empty), &o.path("workload"))?;
    let label = o.string("label", "")?;
    for (name, r) in [
        ("--rate-up", link.rate_up_bits_s),
        ("--rate-down", link.rate_down_bits_s),
    ] {
        if let Some(r) = r {
            let frame_s = SLOWEST_FRAME_BYTES * 8.0 / r;
            require(frame_s <= workload.timeout_s, || {
                format!(
                "{at}: {name}: one 16 KiB frame takes {frame_s:.0} s, longer than the {} s timeout (raise the rate or --timeout)",
                workload.timeout_s)
            })?;
        }
    }
    Ok(Trial {
        link,
        client,
        server,
        workload,
        label,
    })
}

/// from_json(ClientProcess, data, "ClientProcess").
pub fn decode_client_process(v: &Value) -> Res<ClientProcess> {
    let at = "ClientProcess";
    let o = Obj::new(
        v,
        at,
        &["target_host", "target_port", "trial"],
        &["target_port"],
    )?;
    let target_host = o.string("target_host", "127.0.0.1")?;
    let port = o.int("target_port", 0)?;
    let empty = Value::Object(Map::new());
    let trial = decode_trial(o.m.get("trial").unwrap_or(&empty), &o.path("trial"))?;
    wrap(
        at,
        require(!target_host.is_empty(), || {
            "target_host: must not be empty".into()
        }),
    )?;
    wrap(
        at,
        require((1..=65535).contains(&port), || {
            format!("target_port: {port} is outside 1..65535")
        }),
    )?;
    Ok(ClientProcess {
        target_host,
        target_port: port as u16,
        trial,
    })
}

/// from_json(ServerProcess, data, "ServerProcess").
pub fn decode_server_process(v: &Value) -> Res<ServerProcess> {
    let at = "ServerProcess";
    let o = Obj::new(
        v,
        at,
        &["config", "listen_host", "listen_port", "workers"],
        &[],
    )?;
    let empty = Value::Object(Map::new());
    let config = decode_server_config(o.m.get("config").unwrap_or(&empty), &o.path("config"))?;
    let listen_host = o.string("listen_host", "127.0.0.1")?;
    let port = o.int("listen_port", 0)?;
    let workers = o.int("workers", DEFAULT_SERVER_WORKERS)?;
    wrap(
        at,
        (|| {
            require(!listen_host.is_empty(), || {
                "--listen: the host must not be empty".into()
            })?;
            require((0..=65535).contains(&port), || {
                format!("listen port: {port} is outside 0..65535")
            })?;
            require((8..=4096).contains(&workers), || {
                format!("workers: {workers} is outside 8..4096")
            })
        })(),
    )?;
    Ok(ServerProcess {
        config,
        listen_host,
        listen_port: port as u16,
        workers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link_of(json: &str) -> Res<Link> {
        let v: Value = serde_json::from_str(json).unwrap();
        decode_client_process(&v).map(|p| p.trial.link)
    }

    #[test]
    fn packet_link_with_rate_steps_is_accepted() {
        let l = link_of(
            r#"{"target_port": 1, "trial": {"link": {"kind": "packet", "loss": 0.01,
            "loss_burst_len": 2, "queue_bytes": 65536, "mtu": 1400, "congestion": "cubic",
            "rate_steps": [{"rate_bits_s": 1e6, "duration_ms": 100},
                           {"rate_bits_s": 0, "duration_ms": 50}]}}}"#,
        )
        .unwrap();
        assert_eq!(
            (l.kind.as_str(), l.mtu, l.queue_bytes),
            ("packet", 1400, Some(65536))
        );
        assert_eq!(l.rate_steps.len(), 2);
        assert_eq!(l.rate_steps[1].duration_ms, 50.0);
    }

    #[test]
    fn bad_loss_is_refused_in_the_kits_words() {
        let e =
            link_of(r#"{"target_port": 1, "trial": {"link": {"kind": "packet", "loss": 0.9}}}"#)
                .unwrap_err();
        assert_eq!(
            e,
            "ClientProcess.trial.link: loss: 0.9 is outside 0..0.5 (a fraction of packets)"
        );
    }
}
