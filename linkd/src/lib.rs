//! kit-linkd: the compiled delay line, the same process (docs/process-protocol.md) and the
//! same rules as `kit.delayline`. `schedule` and `mt` are pure (the rules both lines share,
//! checked by tests/vectors); `store`, `conn` and `line` move bytes; `tap` hands them to the
//! kit's frame decoder without ever waiting for it. The packet link's forwarder
//! (`kit-linkfwd`) is `fwd`: `packets` (pure, tests/vectors/packets.json), `netns`, `gso`,
//! `tcpstream` and `packettap`.
pub mod conn;
pub mod counter;
pub mod fwd;
pub mod gso;
pub mod job;
pub mod limits;
pub mod line;
pub mod mt;
pub mod netns;
pub mod packets;
pub mod packettap;
pub mod priority;
pub mod records;
pub mod schedule;
pub mod store;
pub mod sys;
pub mod tap;
pub mod tcpstream;

pub const STACK: &str = "kit-linkd";

/// A line for people, on stderr (warnings, upstream errors, refusals).
pub fn log(message: &str) {
    eprintln!("{STACK}: {message}");
}

/// One protocol line on stdout (ready, changed, result, error), flushed at once.
pub fn emit(line: &serde_json::Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The protocol's error line (whitespace folded to one line), then exit with `code`.
pub fn fail(message: &str, code: i32) -> ! {
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    emit(&serde_json::json!({"error": message, "exit_code": code}));
    std::process::exit(code);
}

/// The job's JSON text from the arguments (`--config TEXT` or `--config=TEXT`), each checked
/// as UTF-8 first; `stack` and `job` name the program and its message in the usage line.
pub fn config_arg(stack: &str, job: &str) -> Result<String, String> {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if raw.iter().any(|a| a.to_str().is_none()) {
        return Err(format!("{stack}: --config: not UTF-8"));
    }
    let args: Vec<String> = raw.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    match args.as_slice() {
        [one] if one.starts_with("--config=") => Ok(one["--config=".len()..].to_string()),
        [flag, text] if flag == "--config" => Ok(text.clone()),
        _ => Err(format!(
            "{stack}: usage: --config '<{job} as JSON>' (got {} argument(s))",
            args.len()
        )),
    }
}
