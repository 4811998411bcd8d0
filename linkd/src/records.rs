//! The lines the line writes, in the kit's codec form (`kit/results/records.py`, read back
//! strictly by `kit.results.codec`): the result line's `ProxyTotals`, and in the tap file the
//! same totals and each connection's `LinkConnection` in the envelope of `TAP_SCHEMA`.

use serde_json::{json, Value};

pub const TAP_SCHEMA: u32 = 2;

#[derive(Default, Clone, Debug)]
pub struct Totals {
    pub connections: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub peak_buffered_bytes: i64,
    pub errors: Vec<String>,
    pub peak_queued_bytes: i64,
    pub tap_not_decoded_bytes: u64,
    pub refused_connections: u64,
    pub accept_errors: u64,
    pub buffer_full_pauses: u64,
}

impl Totals {
    pub fn to_json(&self) -> Value {
        json!({
            "connections": self.connections,
            "bytes_up": self.bytes_up,
            "bytes_down": self.bytes_down,
            "peak_buffered_bytes": self.peak_buffered_bytes,
            "errors": self.errors,
            "peak_queued_bytes": self.peak_queued_bytes,
            "tap_not_decoded_bytes": self.tap_not_decoded_bytes,
            "refused_connections": self.refused_connections,
            "accept_errors": self.accept_errors,
            "buffer_full_pauses": self.buffer_full_pauses,
        })
    }
}

/// One direction of a `LinkConnection`: its peak backlog and its delivery trace.
pub struct LinkSide<'a> {
    pub peak_queued_bytes: i64,
    pub origin_ns: i64,
    pub bucket_ns: i64,
    pub buckets: &'a [i64],
}

impl LinkSide<'_> {
    fn to_json(&self) -> Value {
        json!({
            "peak_queued_bytes": self.peak_queued_bytes,
            "delivered": {"origin_ns": self.origin_ns, "bucket_ns": self.bucket_ns, "bytes": self.buckets},
        })
    }
}

/// A tap-file line: the codec's envelope around `fields`.
pub fn tap_line(kind: &str, fields: Value) -> String {
    let mut line = serde_json::Map::new();
    line.insert("schema".into(), json!(TAP_SCHEMA));
    line.insert("kind".into(), json!(kind));
    if let Value::Object(map) = fields {
        line.extend(map);
    }
    Value::Object(line).to_string()
}

pub fn link_line(conn: u64, opened_ns: i64, up: &LinkSide, down: &LinkSide) -> String {
    tap_line(
        "link",
        json!({"conn": conn, "opened_ns": opened_ns, "up": up.to_json(), "down": down.to_json()}),
    )
}
