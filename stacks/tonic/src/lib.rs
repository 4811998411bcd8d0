//! The kit's side of the two tonic programs: the process protocol (docs/process-protocol.md),
//! the jobs they receive (protos/worker.proto, decoded by pbjson's generated serde code),
//! tonic's knob table, the server's download budget and message cache, and the read pacer.

pub mod budget;
pub mod job;
pub mod options;
pub mod pacer;
pub mod protocol;
pub mod tap;

/// Code generated from protos/ (committed; `regen.sh`).
#[allow(clippy::all)]
pub mod pb {
    /// The Throughput service's messages, client and server (tonic-prost-build 0.14.9).
    pub mod throughput {
        include!("pb/kit.throughput.rs");
    }
    /// The worker contract's messages (prost) and their canonical JSON (pbjson-build 0.9.0).
    pub mod worker {
        include!("pb/kit.worker.rs");
        include!("pb/kit.worker.serde.rs");
    }
}

/// Versions of the linked crates, from Cargo.lock at build time (build.rs).
pub const TONIC_VERSION: &str = env!("KIT_TONIC_VERSION");
pub const HYPER_VERSION: &str = env!("KIT_HYPER_VERSION");
pub const H2_VERSION: &str = env!("KIT_H2_VERSION");
