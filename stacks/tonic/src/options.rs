//! tonic's knobs, by the names tonic gives them (`tonic::transport::Endpoint` and
//! `tonic::transport::Server` methods; the README's table says what each does), and what a
//! job sets through them: its windows first, then its options in order (a later one wins).
//! No ranges here: the kit checks values (kit/plan/stack_options.py); a value is refused only
//! when it is of the wrong variant for its knob or does not fit the type tonic's call takes.

use std::time::Duration;

use crate::pb::worker::{option, Option as JobOption, Windows};
use crate::protocol::format_bytes;
use crate::{H2_VERSION, HYPER_VERSION, TONIC_VERSION};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Knob {
    StreamWindow,
    ConnWindow,
    Adaptive,
    MaxFrame,
    NoDelay,
    MaxStreams,
    KeepAliveInterval,
    KeepAliveTimeout,
    KeepAliveWhileIdle,
}

/// Client options: name -> knob (`Endpoint::<name>`), sorted by name.
const CLIENT_KNOBS: &[(&str, Knob)] = &[
    ("http2_adaptive_window", Knob::Adaptive),
    ("http2_keep_alive_interval", Knob::KeepAliveInterval),
    ("initial_connection_window_size", Knob::ConnWindow),
    ("initial_stream_window_size", Knob::StreamWindow),
    ("keep_alive_timeout", Knob::KeepAliveTimeout),
    ("keep_alive_while_idle", Knob::KeepAliveWhileIdle),
    ("max_frame_size", Knob::MaxFrame),
    ("tcp_nodelay", Knob::NoDelay),
];

/// Server options: name -> knob (`Server::<name>`; tcp_nodelay: `TcpIncoming::with_nodelay`).
const SERVER_KNOBS: &[(&str, Knob)] = &[
    ("http2_adaptive_window", Knob::Adaptive),
    ("http2_keepalive_interval", Knob::KeepAliveInterval),
    ("http2_keepalive_timeout", Knob::KeepAliveTimeout),
    ("initial_connection_window_size", Knob::ConnWindow),
    ("initial_stream_window_size", Knob::StreamWindow),
    ("max_concurrent_streams", Knob::MaxStreams),
    ("max_frame_size", Knob::MaxFrame),
    ("tcp_nodelay", Knob::NoDelay),
];

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Side {
    Client,
    Server,
}

/// What tonic is told, and each call as written (for the notes), in the order first told.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    pub stream_window: Option<u32>,
    pub conn_window: Option<u32>,
    pub adaptive: Option<bool>,
    pub max_frame: Option<u32>,
    pub nodelay: Option<bool>,
    pub max_streams: Option<u32>,
    pub keep_alive_interval: Option<Duration>,
    pub keep_alive_timeout: Option<Duration>,
    pub keep_alive_while_idle: Option<bool>,
    /// The job's windows were static.
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

fn table(side: Side) -> &'static [(&'static str, Knob)] {
    match side {
        Side::Client => CLIENT_KNOBS,
        Side::Server => SERVER_KNOBS,
    }
}

/// The option names of a side, sorted, comma-space separated.
pub fn names(side: Side) -> String {
    let mut names: Vec<&str> = table(side).iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    names.join(", ")
}

fn variant(v: Option<&option::Value>) -> String {
    match v {
        Some(option::Value::Int(i)) => format!("int {i}"),
        Some(option::Value::Flag(b)) => format!("flag {b}"),
        Some(option::Value::Ratio(r)) => format!("ratio {r}"),
        Some(option::Value::Text(t)) => format!("text {t:?}"),
        None => "no value".into(),
    }
}

fn millis(ms: u64) -> String {
    format!("Duration::from_millis({ms})")
}

fn apply(who: &str, side: Side, s: &mut Settings, opt: &JobOption) -> Result<(), String> {
    let name = opt.name.as_str();
    let Some(&(_, knob)) = table(side).iter().find(|(n, _)| *n == name) else {
        return Err(format!(
            "{who}: option '{name}' is not one of {}",
            names(side)
        ));
    };
    let value = opt.value.as_ref();
    let wrong = |takes: &str| format!("{who}: option {name} takes {takes}, not {}", variant(value));
    let flag = || match value {
        Some(option::Value::Flag(b)) => Ok(*b),
        _ => Err(wrong("a flag")),
    };
    let int = || match value {
        Some(option::Value::Int(i)) => Ok(*i),
        _ => Err(wrong("an int")),
    };
    let u32_of = |takes: &str| {
        let i = int()?;
        u32::try_from(i)
            .map_err(|_| format!("{who}: option {name}: {i} does not fit {takes} (a u32)"))
    };
    let ms_of = || {
        let i = int()?;
        u64::try_from(i).map_err(|_| format!("{who}: option {name}: {i} ms is not a duration"))
    };
    let server = side == Side::Server;
    match knob {
        Knob::StreamWindow => {
            let w = u32_of("a window")?;
            s.stream_window = Some(w);
            s.call(name, w.to_string());
        }
        Knob::ConnWindow => {
            let w = u32_of("a window")?;
            s.conn_window = Some(w);
            s.call(name, w.to_string());
        }
        Knob::MaxFrame => {
            let f = u32_of("a frame size")?;
            s.max_frame = Some(f);
            s.call(name, f.to_string());
        }
        Knob::MaxStreams => {
            let n = u32_of("a stream count")?;
            s.max_streams = Some(n);
            s.call(name, format!("Some({n})"));
        }
        Knob::Adaptive => {
            let b = flag()?;
            s.adaptive = Some(b);
            s.call(
                name,
                if server {
                    format!("Some({b})")
                } else {
                    b.to_string()
                },
            );
        }
        Knob::NoDelay => {
            let b = flag()?;
            s.nodelay = Some(b);
            s.call(name, b.to_string());
        }
        Knob::KeepAliveWhileIdle => {
            let b = flag()?;
            s.keep_alive_while_idle = Some(b);
            s.call(name, b.to_string());
        }
        Knob::KeepAliveInterval | Knob::KeepAliveTimeout => {
            let ms = ms_of()?;
            let d = Duration::from_millis(ms);
            let arg = if server {
                format!("Some({})", millis(ms))
            } else {
                millis(ms)
            };
            if knob == Knob::KeepAliveInterval {
                s.keep_alive_interval = Some(d);
            } else {
                s.keep_alive_timeout = Some(d);
            }
            s.call(name, arg);
        }
    }
    Ok(())
}

/// A job's settings: its windows (static: the job's; else tonic's defaults), then its options.
pub fn settings(
    who: &str,
    side: Side,
    windows: Option<&Windows>,
    options: &[JobOption],
) -> Result<Settings, String> {
    let mut s = Settings::default();
    if let Some(w) = windows.filter(|w| w.r#static) {
        s.static_window = true;
        s.stream_window = Some(w.stream_bytes);
        s.call("initial_stream_window_size", w.stream_bytes.to_string());
        if w.conn_bytes != 0 {
            s.conn_window = Some(w.conn_bytes);
            s.call("initial_connection_window_size", w.conn_bytes.to_string());
        }
        s.adaptive = Some(false);
        let off = if side == Side::Server {
            "Some(false)"
        } else {
            "false"
        };
        s.call("http2_adaptive_window", off.into());
    }
    for opt in options {
        apply(who, side, &mut s, opt)?;
    }
    Ok(s)
}

pub fn versions() -> String {
    format!("tonic {TONIC_VERSION} (hyper {HYPER_VERSION}, h2 {H2_VERSION})")
}

const CREDIT: &str = "h2 returns credit once the released bytes reach half the remaining window \
    (stream: as tonic reads, connection: as read too)";

/// What the client's windows were, in tonic's terms.
pub fn client_notes(s: &Settings) -> Vec<String> {
    let calls = s.calls().join(", ");
    if s.static_window {
        let mut notes = vec![format!("{}: Endpoint::{calls}; {CREDIT}", versions())];
        if let Some(conn) = s.conn_window.filter(|c| *c < 65_535) {
            notes.push(format!(
                "connection window {} is below HTTP/2's initial 65535: h2 withholds credit until the connection \
                 is below it, but the first 65535 bytes may come at once",
                format_bytes(f64::from(conn))
            ));
        }
        return notes;
    }
    if s.adaptive_on() {
        return vec![format!(
            "{}: Endpoint::{calls}: hyper's adaptive window (BDP estimator, proto/h2/ping.rs) on: stream and \
             connection windows start at 65535 B and grow to 2 x the bytes of one PING round trip, up to 16 MiB; \
             {CREDIT}",
            versions()
        )];
    }
    if !calls.is_empty() {
        let stream = s.stream_window.map(f64::from).unwrap_or(2.0 * 1048576.0);
        let conn = s.conn_window.map(f64::from).unwrap_or(5.0 * 1048576.0);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(name: &str, value: option::Value) -> JobOption {
        JobOption {
            name: name.into(),
            value: Some(value),
        }
    }

    #[test]
    fn an_unknown_option_names_the_sides_options() {
        let e = settings(
            "tonic client",
            Side::Client,
            None,
            &[opt("Foo", option::Value::Int(1))],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "tonic client: option 'Foo' is not one of http2_adaptive_window, http2_keep_alive_interval, \
             initial_connection_window_size, initial_stream_window_size, keep_alive_timeout, \
             keep_alive_while_idle, max_frame_size, tcp_nodelay"
        );
        let e = settings(
            "tonic server",
            Side::Server,
            None,
            &[opt("Foo", option::Value::Int(1))],
        )
        .unwrap_err();
        assert!(
            e.ends_with(
                "http2_adaptive_window, http2_keepalive_interval, http2_keepalive_timeout, \
             initial_connection_window_size, initial_stream_window_size, max_concurrent_streams, \
             max_frame_size, tcp_nodelay"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_value_of_the_wrong_variant_is_refused() {
        let e = settings(
            "tonic client",
            Side::Client,
            None,
            &[opt("max_frame_size", option::Value::Text("x".into()))],
        );
        assert_eq!(
            e.unwrap_err(),
            "tonic client: option max_frame_size takes an int, not text \"x\""
        );
        let e = settings(
            "tonic client",
            Side::Client,
            None,
            &[opt("tcp_nodelay", option::Value::Int(1))],
        );
        assert_eq!(
            e.unwrap_err(),
            "tonic client: option tcp_nodelay takes a flag, not int 1"
        );
        let e = settings(
            "tonic client",
            Side::Client,
            None,
            &[opt(
                "initial_stream_window_size",
                option::Value::Int(1 << 40),
            )],
        );
        assert!(e.unwrap_err().contains("does not fit a window (a u32)"));
        let e = settings(
            "tonic client",
            Side::Client,
            None,
            &[JobOption {
                name: "tcp_nodelay".into(),
                value: None,
            }],
        );
        assert_eq!(
            e.unwrap_err(),
            "tonic client: option tcp_nodelay takes a flag, not no value"
        );
    }

    #[test]
    fn static_windows_then_the_options_in_order() {
        let w = Windows {
            r#static: true,
            stream_bytes: 65536,
            conn_bytes: 131072,
        };
        let s = settings(
            "tonic client",
            Side::Client,
            Some(&w),
            &[
                opt("initial_stream_window_size", option::Value::Int(1000)),
                opt("http2_keep_alive_interval", option::Value::Int(250)),
                opt("keep_alive_while_idle", option::Value::Flag(true)),
                opt("initial_stream_window_size", option::Value::Int(2000)),
            ],
        )
        .unwrap();
        assert_eq!(
            (s.stream_window, s.conn_window, s.adaptive),
            (Some(2000), Some(131072), Some(false))
        );
        assert_eq!(s.keep_alive_interval, Some(Duration::from_millis(250)));
        assert_eq!(
            s.calls(),
            vec![
                "initial_stream_window_size(2000)",
                "initial_connection_window_size(131072)",
                "http2_adaptive_window(false)",
                "http2_keep_alive_interval(Duration::from_millis(250))",
                "keep_alive_while_idle(true)",
            ]
        );
        let dynamic = Windows {
            r#static: false,
            ..w
        };
        let s = settings(
            "tonic server",
            Side::Server,
            Some(&dynamic),
            &[opt("max_concurrent_streams", option::Value::Int(100))],
        )
        .unwrap();
        assert_eq!(
            (s.stream_window, s.max_streams, s.static_window),
            (None, Some(100), false)
        );
        assert_eq!(s.calls(), vec!["max_concurrent_streams(Some(100))"]);
    }
}
