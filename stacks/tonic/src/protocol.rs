//! Protocol lines, exit codes, the clock and CPU time.

use serde_json::{json, Value};
use std::io::Write;
use std::sync::Mutex;

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_BAD_CONFIG: i32 = 2;
pub const EXIT_CANNOT_START: i32 = 3;
pub const EXIT_MEASUREMENT: i32 = 4;

static FINAL: Mutex<bool> = Mutex::new(false);

fn write_line(v: &Value) {
    let mut text = serde_json::to_string(v)
        .unwrap_or_else(|_| r#"{"error": "cannot encode a protocol line", "exit_code": 1}"#.into());
    text.push('\n');
    let out = std::io::stdout();
    let mut lock = out.lock();
    let _ = lock.write_all(text.as_bytes());
    let _ = lock.flush();
}

/// The ready line (nothing once a final line is out).
pub fn ready(port: u16, stack: &str, version: &str) {
    let done = FINAL.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        write_line(
            &json!({"ready": true, "pid": std::process::id(), "port": port,
                           "stack": stack, "version": version}),
        );
    }
}

/// A client worker's ready line: it says `"worker": true`.
pub fn ready_worker(stack: &str, version: &str) {
    let done = FINAL.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        write_line(&json!({"ready": true, "pid": std::process::id(), "port": 0,
                           "stack": stack, "version": version, "worker": true}));
    }
}

/// A client worker's result line for its trial number `trial` (1 = its first): not a final
/// line, more trials may follow (nothing once a final line is out: a signal came first).
pub fn trial_result(result: Value, trial: u64) {
    let done = FINAL.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        drop(done);
        loop {
            std::thread::park();
        }
    }
    write_line(&json!({ "result": result, "client_trial": trial }));
}

/// Hold the final-line lock for good: a second final line never comes; the first one's
/// process::exit is under way.
fn take_final() -> std::sync::MutexGuard<'static, bool> {
    let mut done = FINAL.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        drop(done);
        loop {
            std::thread::park();
        }
    }
    *done = true;
    done
}

/// The result line, then exit 0.
pub fn result(result: Value) -> ! {
    let _guard = take_final();
    write_line(&json!({ "result": result }));
    std::process::exit(EXIT_OK)
}

/// One error line (one line of text), then exit with `code`.
pub fn fail(code: i32, msg: &str) -> ! {
    let _guard = take_final();
    let mut text = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        text = "failed".into();
    }
    write_line(&json!({"error": text, "exit_code": code}));
    std::process::exit(code)
}

/// The JSON of `--config JSON` or `--config=JSON`.
pub fn config_text(args: &[String], record: &str) -> Result<String, String> {
    match args {
        [one] if one.starts_with("--config=") => Ok(one["--config=".len()..].to_string()),
        [flag, text] if flag == "--config" => Ok(text.clone()),
        _ => Err(format!(
            "usage: --config '<{record} as JSON>' (got {} argument(s))",
            args.len()
        )),
    }
}

pub fn parse_config(args: &[String], record: &str) -> Result<Value, String> {
    let text = config_text(args, record)?;
    parse_config_text(&text, "--config")
}

/// One config's JSON (`--config`'s, or a worker's line); `source` names it in the error.
pub fn parse_config_text(text: &str, source: &str) -> Result<Value, String> {
    serde_json::from_str::<Value>(text).map_err(|e| format!("{source}: not JSON ({e})"))
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
    let name = if out == "OK" { "OK".to_string() } else { out };
    format!("{name}: {}", st.message())
}
