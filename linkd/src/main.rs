//! `kit-linkd --config '<ProxyJob as JSON>'`: the compiled delay line as a process of the
//! kit's process protocol (docs/process-protocol.md): the ready line once listening; on
//! SIGTERM/SIGINT it stops accepting, flushes, closes, writes the tap's records and prints
//! its `ProxyTotals` as the result line (exit 0). A bad job exits 2, an address it cannot
//! listen on 3, each with one error line. Each line of stdin is a `LinkJob` (a link change),
//! answered once applied with `{"changed": N}`.
use linkd::{config_arg, emit, fail, job, line, sys, STACK};
use serde_json::json;

fn main() {
    sys::tight_timer_slack();
    // Before any thread starts: every thread blocks SIGTERM/SIGINT, read from this fd.
    let signals = match sys::signal_fd() {
        Ok(fd) => fd,
        Err(e) => fail(&format!("{STACK}: signals: {}", sys::strerror(&e)), 3),
    };
    let text = config_arg(STACK, "ProxyJob").unwrap_or_else(|e| fail(&e, 2));
    let job = job::decode_job(&text).unwrap_or_else(|e| fail(&format!("{STACK}: --config: bad job: {e}"), 2));
    let pid = std::process::id();
    let ready = |port: u16| {
        emit(&json!({"ready": true, "pid": pid, "port": port, "stack": STACK,
                     "version": env!("CARGO_PKG_VERSION")}));
    };
    match line::serve(job, signals, ready) {
        Ok(totals) => {
            emit(&json!({"result": totals.to_json()}));
            std::process::exit(0);
        }
        Err(line::CannotStart(message)) => fail(&message, 3),
    }
}
