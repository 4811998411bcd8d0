//! tonic's knobs for flow control and throughput, by the names tonic gives them
//! (`tonic::transport::Endpoint` and `tonic::transport::Server` methods; see the README's
//! table), and what a config sets through them.

use crate::config::{ClientConfig, OptValue, Options, ServerConfig, Trial, HTTP2_MAX_WINDOW};
use crate::protocol::format_bytes;
use crate::{H2_VERSION, HYPER_VERSION, TONIC_VERSION};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Window,  // u32 1..2^31-1
    Frame,   // u32 16384..2^24-1
    Bool,    // 0/1, true/false
    Streams, // u32 1..2^32-1
}

const CLIENT_KNOBS: &[(&str, Kind)] = &[
    ("http2_adaptive_window", Kind::Bool),
    ("initial_connection_window_size", Kind::Window),
    ("initial_stream_window_size", Kind::Window),
    ("max_frame_size", Kind::Frame),
    ("tcp_nodelay", Kind::Bool),
];

const SERVER_KNOBS: &[(&str, Kind)] = &[
    ("http2_adaptive_window", Kind::Bool),
    ("initial_connection_window_size", Kind::Window),
    ("initial_stream_window_size", Kind::Window),
    ("max_concurrent_streams", Kind::Streams),
    ("max_frame_size", Kind::Frame),
    ("tcp_nodelay", Kind::Bool),
];

/// What tonic is told, in the order it is told (each a call on the Endpoint or the Server).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub stream_window: Option<u32>,
    pub conn_window: Option<u32>,
    pub adaptive: Option<bool>,
    pub max_frame: Option<u32>,
    pub nodelay: Option<bool>,
    pub max_streams: Option<u32>,
    /// The kit's static window (not a named option).
    pub static_window: bool,
    calls: Vec<(String, String)>,
}

impl Settings {
    fn call(&mut self, name: &str, arg: String) {
        if let Some(c) = self.calls.iter_mut().find(|(n, _)| n == name) {
            c.1 = arg;
        } else {
            self.calls.push((name.to_string(), arg));
        }
    }

    /// Every setting as tonic code: initial_stream_window_size(65536), ...
    pub fn calls(&self) -> Vec<String> {
        self.calls
            .iter()
            .map(|(n, a)| format!("{n}({a})"))
            .collect()
    }

    /// hyper's BDP estimator (the adaptive window) runs.
    pub fn adaptive_on(&self) -> bool {
        self.adaptive == Some(true)
    }

    /// A window knob is set: the windows are fixed at what was set.
    pub fn windows_set(&self) -> bool {
        self.stream_window.is_some() || self.conn_window.is_some()
    }
}

fn names(table: &[(&str, Kind)]) -> String {
    table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

fn apply(
    who: &str,
    table: &[(&str, Kind)],
    s: &mut Settings,
    key: &str,
    v: &OptValue,
) -> Result<(), String> {
    let Some((_, kind)) = table.iter().find(|(n, _)| *n == key) else {
        return Err(format!(
            "{who}: option '{key}' is not one of {}",
            names(table)
        ));
    };
    let int_in = |lo: i64, hi: i64, what: &str| -> Result<i64, String> {
        match v {
            OptValue::Int(i) if (lo..=hi).contains(i) => Ok(*i),
            _ => Err(format!("{who}: option {key} takes {what}, not {v}")),
        }
    };
    match kind {
        Kind::Window => {
            let w = int_in(1, HTTP2_MAX_WINDOW, "an integer in 1..2147483647")? as u32;
            if key == "initial_stream_window_size" {
                s.stream_window = Some(w);
            } else {
                s.conn_window = Some(w);
            }
            s.call(key, w.to_string());
        }
        Kind::Frame => {
            let f = int_in(16_384, (1 << 24) - 1, "an integer in 16384..16777215")? as u32;
            s.max_frame = Some(f);
            s.call(key, f.to_string());
        }
        Kind::Streams => {
            let n = int_in(1, (1 << 32) - 1, "an integer in 1..4294967295")? as u32;
            s.max_streams = Some(n);
            s.call(key, format!("Some({n})"));
        }
        Kind::Bool => {
            let b = match v {
                OptValue::Int(0) => false,
                OptValue::Int(1) => true,
                OptValue::Str(t) if t == "false" => false,
                OptValue::Str(t) if t == "true" => true,
                _ => {
                    return Err(format!(
                        "{who}: option {key} takes 0, 1, true or false, not {v}"
                    ))
                }
            };
            if key == "tcp_nodelay" {
                s.nodelay = Some(b);
            } else {
                s.adaptive = Some(b);
            }
            let arg = if key == "http2_adaptive_window" && who.ends_with("server") {
                format!("Some({b})")
            } else {
                b.to_string()
            };
            s.call(key, arg);
        }
    }
    Ok(())
}

fn is_true(v: &OptValue) -> bool {
    matches!(v, OptValue::Int(1)) || matches!(v, OptValue::Str(t) if t == "true")
}

fn seen_twice(who: &str, options: &Options) -> Result<(), String> {
    let mut seen: Vec<&str> = vec![];
    for (k, _) in options {
        if seen.contains(&k.as_str()) {
            return Err(format!("{who}: option {k} given twice"));
        }
        seen.push(k);
    }
    Ok(())
}

/// The kit's options that are the h2 client's, not tonic's: refused in one line.
fn refuse_h2_only(who: &str, c: &ClientConfig) -> Result<(), String> {
    if c.window_mode != "dynamic" && c.window_mode != "static" {
        return Err(format!(
            "window mode: {who} is static or dynamic, not {}",
            c.window_mode
        ));
    }
    if c.credit_policy.is_some() {
        return Err(format!("credit policy: {who} returns credit its own way (h2: when half the window is released; see its README)"));
    }
    if c.conn_credit != "receipt" {
        return Err(format!("conn credit: {who} credits on receipt"));
    }
    if c.max_frame_bytes.is_some() {
        return Err(format!("max frame size: the kit's max_frame_bytes is the h2 client's; for {who} use the option max_frame_size (Endpoint::max_frame_size)"));
    }
    if c.pool_bytes.is_some() {
        return Err(format!(
            "pool: the receive pool is the h2 client's, not {who}'s"
        ));
    }
    Ok(())
}

fn adaptive_conflicts(who: &str, s: &Settings) -> Result<(), String> {
    if s.adaptive_on() && s.windows_set() {
        return Err(format!(
            "{who}: http2_adaptive_window=1 overrides initial_stream_window_size / initial_connection_window_size \
             (tonic applies it last and hyper then starts both windows at 65535): give one or the other"
        ));
    }
    Ok(())
}

/// A client config's settings: the kit's static window, then the named options.
pub fn client_settings(trial: &Trial) -> Result<Settings, String> {
    let who = "tonic client";
    let c = &trial.client;
    if c.kind != "tonic" {
        return Err(format!(
            "{who}: client.kind is {:?}; this program is the tonic client",
            c.kind
        ));
    }
    refuse_h2_only(who, c)?;
    seen_twice(who, &c.channel_options)?;
    let mut s = Settings::default();
    if let Some(w) = c.window_bytes {
        s.static_window = true;
        let spc = trial.streams_per_connection();
        let conn = c
            .conn_window_bytes
            .unwrap_or_else(|| i64::min(w * spc, HTTP2_MAX_WINDOW));
        s.stream_window = Some(w as u32);
        s.conn_window = Some(conn as u32);
        s.adaptive = Some(false);
        s.call("initial_stream_window_size", w.to_string());
        s.call("initial_connection_window_size", conn.to_string());
        s.call("http2_adaptive_window", "false".into());
        for (k, v) in &c.channel_options {
            if k.starts_with("initial_") || (k == "http2_adaptive_window" && is_true(v)) {
                apply(who, CLIENT_KNOBS, &mut Settings::default(), k, v)?; // its own refusal first
                return Err(format!(
                    "{who}: option {k} with a static window: the static window sets the windows \
                     itself (initial_stream_window_size, initial_connection_window_size, no adaptive window); \
                     give the option with dynamic windows instead"
                ));
            }
        }
    } else if c.conn_window_bytes.is_some() {
        return Err(format!(
            "conn window: a dynamic {who} keeps tonic's windows; set the window too, or use the option initial_connection_window_size"
        ));
    }
    for (k, v) in &c.channel_options {
        apply(who, CLIENT_KNOBS, &mut s, k, v)?;
    }
    adaptive_conflicts(who, &s)?;
    Ok(s)
}

/// A server config's settings: its static receive window, then the named options.
pub fn server_settings(c: &ServerConfig) -> Result<Settings, String> {
    let who = "tonic server";
    if c.window_mode != "dynamic" && c.window_mode != "static" {
        return Err(format!(
            "server window mode: the {who} is static or dynamic, not {}",
            c.window_mode
        ));
    }
    seen_twice(who, &c.channel_options)?;
    let mut s = Settings::default();
    if let Some(w) = c.window_bytes {
        s.static_window = true;
        s.stream_window = Some(w as u32);
        s.conn_window = Some(w as u32);
        s.adaptive = Some(false);
        s.call("initial_stream_window_size", w.to_string());
        s.call("initial_connection_window_size", w.to_string());
        s.call("http2_adaptive_window", "Some(false)".into());
        for (k, v) in &c.channel_options {
            if k.starts_with("initial_") || (k == "http2_adaptive_window" && is_true(v)) {
                apply(who, SERVER_KNOBS, &mut Settings::default(), k, v)?;
                return Err(format!(
                    "{who}: option {k} with a static server window: the window sets it itself; give the option with a dynamic server window instead"
                ));
            }
        }
    }
    for (k, v) in &c.channel_options {
        apply(who, SERVER_KNOBS, &mut s, k, v)?;
    }
    adaptive_conflicts(who, &s)?;
    Ok(s)
}

pub fn versions() -> String {
    format!("tonic {TONIC_VERSION} (hyper {HYPER_VERSION}, h2 {H2_VERSION})")
}

const CREDIT: &str = "h2 returns credit once the released bytes reach half the remaining window \
    (stream: as tonic reads, connection: as read too)";

/// What the client's windows were, in tonic's terms (downloads).
pub fn client_notes(s: &Settings, trial: &Trial) -> Vec<String> {
    let calls = s.calls().join(", ");
    if s.static_window {
        let mut notes = vec![format!("{}: Endpoint::{calls}; {CREDIT}", versions())];
        if let Some(conn) = s.conn_window {
            if conn < 65_535 {
                notes.push(format!(
                    "connection window {} is below HTTP/2's initial 65535: h2 withholds credit until the connection \
                     is below it, but the first 65535 bytes may come at once",
                    format_bytes(conn as f64)
                ));
            }
        }
        let _ = trial;
        return notes;
    }
    if s.adaptive_on() {
        let mut text = format!(
            "{}: Endpoint::{calls}: hyper's adaptive window (BDP estimator, proto/h2/ping.rs) on: stream and \
             connection windows start at 65535 B and grow to 2 x the bytes of one PING round trip, up to 16 MiB",
            versions()
        );
        text.push_str(&format!("; {CREDIT}"));
        return vec![text];
    }
    if s.windows_set() || !calls.is_empty() {
        let stream = s.stream_window.map(|w| w as f64).unwrap_or(2.0 * 1048576.0);
        let conn = s.conn_window.map(|w| w as f64).unwrap_or(5.0 * 1048576.0);
        return vec![format!(
            "{}: Endpoint::{calls}; fixed windows (stream {}, connection {}), adaptive window off",
            versions(),
            format_bytes(stream),
            format_bytes(conn)
        )];
    }
    vec![format!(
        "{} defaults: fixed windows, stream 2 MiB, connection 5 MiB (hyper's client defaults); adaptive window \
         (BDP estimator) off: the option http2_adaptive_window=1 turns it on",
        versions()
    )]
}

/// What the tonic server's receive windows were (it receives uploads).
pub fn server_notes(s: &Settings) -> String {
    let calls = s.calls().join(", ");
    if s.static_window {
        return format!("tonic server {}: Server::{calls}; {CREDIT}", versions());
    }
    if s.adaptive_on() {
        return format!(
            "tonic server {}: Server::{calls}: adaptive window on (starts at 65535, up to 16 MiB)",
            versions()
        );
    }
    let mut text = format!("tonic server {} defaults: fixed windows, stream 1 MiB, connection 1 MiB (hyper's server defaults)", versions());
    if !calls.is_empty() {
        text.push_str(&format!("; Server::{calls}"));
    }
    text
}
