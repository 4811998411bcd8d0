//! The line's job (`ProxyJob` of protos/worker.proto), decoded strictly from protobuf's
//! canonical JSON by the generated prost + pbjson code (src/pb/, `./regen.sh`): an unknown
//! field or a wrong type is refused in the decoder's words. Ranges are the kit's to check.

#[allow(clippy::all, clippy::pedantic)]
pub mod pb {
    include!("pb/kit.worker.rs");
    include!("pb/kit.worker.serde.rs");
}

pub use pb::{ForwarderJob, LinkJob, ProxyJob};

/// `text` as a `ProxyJob`; the decoder's message when it is not one.
pub fn decode_job(text: &str) -> Result<ProxyJob, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

pub fn decode_link(text: &str) -> Result<LinkJob, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// `text` as a `ForwarderJob` (the packet link's forwarder); the decoder's message if not.
pub fn decode_forwarder_job(text: &str) -> Result<ForwarderJob, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}
