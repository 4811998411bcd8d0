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
