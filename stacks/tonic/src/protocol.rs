//! Protocol lines (docs/process-protocol.md), printed with pbjson from protos/worker.proto's
//! messages (proto field names, one JSON object per line, flushed at once); exit codes; the
//! panic backstop; the clock and CPU time.

use std::io::Write;
use std::sync::Mutex;

use crate::pb::worker::{ClientAnswer, ClientResult, Failure, Ready, ServerAnswer, ServerResult};

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_BAD_CONFIG: i32 = 2;
pub const EXIT_CANNOT_START: i32 = 3;
pub const EXIT_MEASUREMENT: i32 = 4;

pub const STACK: &str = "tonic";

static FINAL: Mutex<bool> = Mutex::new(false);

fn write_line<T: serde::Serialize>(line: &T) {
    let mut text = serde_json::to_string(line).unwrap_or_else(|e| {
        format!(r#"{{"error": "cannot encode a protocol line: {e}", "exit_code": 1}}"#)
    });
    text.push('\n');
    let out = std::io::stdout();
    let mut lock = out.lock();
    let _ = lock.write_all(text.as_bytes());
    let _ = lock.flush();
}

fn ready_line(port: u16, worker: bool) -> Ready {
    Ready {
        ready: true,
        pid: std::process::id(),
        port: u32::from(port),
        stack: STACK.to_string(),
        version: crate::TONIC_VERSION.to_string(),
        worker,
    }
}

/// The ready line (nothing once a final line is out); `worker`: a client worker's.
pub fn ready(port: u16, worker: bool) {
    let done = FINAL.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        write_line(&ready_line(port, worker));
    }
}

/// Park for good: another thread's final line and process::exit are under way.
fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// A client worker's result line for its trial number `trial` (1 = its first): not a final
/// line, more trials may follow (nothing once a final line is out: a signal came first).
pub fn trial_result(result: ClientResult, trial: u32) {
    let done = FINAL.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        drop(done);
        park_forever();
    }
    write_line(&ClientAnswer {
        result: Some(result),
        client_trial: trial,
    });
}

/// Hold the final-line lock for good: a second final line never comes; the first one's
/// process::exit is under way.
fn take_final() -> std::sync::MutexGuard<'static, bool> {
    let mut done = FINAL.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        drop(done);
        park_forever();
    }
    *done = true;
    done
}

/// A client's result line, then exit 0.
pub fn client_result(result: ClientResult) -> ! {
    let _guard = take_final();
    write_line(&ClientAnswer {
        result: Some(result),
        client_trial: 0,
    });
    std::process::exit(EXIT_OK)
}

/// A server's result line, then exit 0.
pub fn server_result(result: ServerResult) -> ! {
    let _guard = take_final();
    write_line(&ServerAnswer {
        result: Some(result),
    });
    std::process::exit(EXIT_OK)
}

/// `msg` on one line: its whitespace (newlines too) collapsed.
pub fn one_line(msg: &str) -> String {
    let text = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        "failed".into()
    } else {
        text
    }
}

/// One error line (one line of text), then exit with `code`.
pub fn fail(code: i32, msg: &str) -> ! {
    let _guard = take_final();
    write_line(&Failure {
        error: one_line(msg),
        exit_code: code,
    });
    std::process::exit(code)
}

/// The backstop: a panic anywhere (any thread, any task) is one error line and exit 1, not
/// a backtrace (it still goes to stderr, for people).
pub fn on_panic(who: &'static str) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        fail(EXIT_FAILED, &format!("{who}: internal error: {what}{at}"))
    }));
}

/// CLOCK_MONOTONIC in nanoseconds (the clock the kit's processes share).
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// This process's user + system CPU time (getrusage(RUSAGE_SELF)).
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// host:port, bracketing an IPv6 host.
pub fn host_port(host: &str, port: u16) -> String {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    if h.contains(':') {
        format!("[{h}]:{port}")
    } else {
        format!("{h}:{port}")
    }
}

pub fn is_loopback_host(host: &str) -> bool {
    if host == "localhost" {
        return true;
    }
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .map(|ip| ip.is_loopback())
        .unwrap_or(false)
}

/// kit.plan.units.format_bytes: 64 KiB, 1.5 MiB, 1000 B.
pub fn format_bytes(n: f64) -> String {
    for (name, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        let size = size as f64;
        if n >= size {
            let s = format!("{:.2}", n / size);
            let s = s.trim_end_matches('0').trim_end_matches('.');
            return format!("{s} {name}");
        }
    }
    format!("{n:.0} B")
}

/// Seconds as a Duration, whatever the double: negative or NaN is 0, and anything beyond
/// ~31 years is ~31 years (tokio's timers and std's Instant take that without overflow).
pub fn secs(s: f64) -> std::time::Duration {
    const FAR_S: f64 = 1e9;
    let s = if s.is_nan() { 0.0 } else { s.clamp(0.0, FAR_S) };
    std::time::Duration::from_secs_f64(s)
}

/// A gRPC status as the kit's Python clients word it: "UNAVAILABLE: details".
pub fn status_text(st: &tonic::Status) -> String {
    let name = format!("{:?}", st.code()); // DeadlineExceeded
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i > 0 && c.is_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    format!("{out}: {}", st.message())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_use_the_protos_field_names() {
        let text = serde_json::to_string(&ready_line(0, true)).unwrap();
        assert!(text.starts_with(r#"{"ready":true,"pid":"#), "{text}");
        assert!(
            text.ends_with(r#""stack":"tonic","version":"0.14.9","worker":true}"#),
            "{text}"
        );
        let text = serde_json::to_string(&ServerAnswer {
            result: Some(ServerResult {
                rpcs: 5,
                refused: 2,
            }),
        })
        .unwrap();
        assert_eq!(text, r#"{"result":{"rpcs":"5","refused":"2"}}"#);
        let text = serde_json::to_string(&Failure {
            error: one_line("a\nb  c"),
            exit_code: 4,
        })
        .unwrap();
        assert_eq!(text, r#"{"error":"a b c","exit_code":4}"#);
    }

    #[test]
    fn any_double_is_a_duration() {
        assert_eq!(secs(f64::NAN), std::time::Duration::ZERO);
        assert_eq!(secs(-1.0), std::time::Duration::ZERO);
        assert_eq!(secs(1.5), std::time::Duration::from_millis(1500));
        assert!(std::time::Instant::now()
            .checked_add(secs(f64::INFINITY))
            .is_some());
    }
}
