//! `kit-linkfwd --config '<ForwarderJob as JSON>'`: the packet link's compiled forwarder as a
//! process of the kit's process protocol (docs/process-protocol.md): it makes the client's and
//! the server's namespaces with their TUN devices, prints its ready line (the kit then starts
//! the server and the clients inside them), forwards until SIGTERM/SIGINT, writes the tap's
//! last lines and prints its `PacketTotals` as the result line (exit 0). A bad job exits 2, a
//! namespace or device it cannot make 3, each with one error line.
use linkd::fwd::{self, Refused, STACK};
use linkd::{config_arg, emit, fail, job, sys};
use serde_json::json;

fn main() {
    sys::tight_timer_slack();
    // Before anything else: SIGTERM/SIGINT are blocked and read from this fd.
    let signals = match sys::signal_fd() {
        Ok(fd) => fd,
        Err(e) => fail(&format!("{STACK}: signals: {}", sys::strerror(&e)), 3),
    };
    let text = config_arg(STACK, "ForwarderJob").unwrap_or_else(|e| fail(&e, 2));
    let job = job::decode_forwarder_job(&text)
        .unwrap_or_else(|e| fail(&format!("{STACK}: --config: bad job: {e}"), 2));
    let pid = std::process::id();
    let ready = || {
        emit(&json!({"ready": true, "pid": pid, "port": 0, "stack": STACK,
                     "version": env!("CARGO_PKG_VERSION")}));
    };
    match fwd::serve(job, signals, ready) {
        Ok(totals) => {
            emit(&json!({"result": totals}));
            std::process::exit(0);
        }
        Err(Refused::BadJob(m)) => fail(&format!("{STACK}: {m}"), 2),
        Err(Refused::CannotStart(m)) => fail(&format!("{STACK}: {m}"), 3),
    }
}
