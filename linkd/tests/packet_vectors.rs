//! The packet link's per-packet rules, shared with the Python forwarder: tests/vectors/
//! packets.json (written by tests/unit/packet_vectors.py from kit.delayline.packets) replayed
//! through this crate's `PacketDirection`, packet by packet, and its loss draws bit for bit.
use linkd::mt::Random;
use linkd::packets::{DirectionSpec, PacketDirection};
use linkd::schedule::{Bottleneck, RateSteps};
use serde_json::{json, Value};

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/packets.json");
    let text = std::fs::read_to_string(path).expect("tests/vectors/packets.json");
    serde_json::from_str(&text).expect("vectors are JSON")
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Seeds exceed 64 bits: the vectors keep them as text.
fn big(v: &Value) -> u128 {
    let text = v.as_str().unwrap_or_else(|| panic!("a seed as text: {v}"));
    text.parse().unwrap_or_else(|_| panic!("not a whole number: {v}"))
}

fn bottleneck(case: &Value) -> Option<Bottleneck> {
    if let Some(steps) = case.get("steps") {
        let steps: Vec<(f64, i64)> = steps
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s[0].as_f64().unwrap(), int(&s[1])))
            .collect();
        return Bottleneck::with_steps(RateSteps::new(&steps).unwrap());
    }
    case.get("rate_bits_s")
        .map(|r| Bottleneck::new(r.as_f64().unwrap()).unwrap())
}

fn direction(case: &Value) -> PacketDirection {
    PacketDirection::new(DirectionSpec {
        delay_ns: int(&case["delay_ns"]),
        bottleneck: bottleneck(case),
        queue_bytes: case.get("queue_bytes").map_or(0, int),
        jitter_ns: case.get("jitter_ns").map_or(0, int),
        loss: case.get("loss").map_or(0.0, |v| v.as_f64().unwrap()),
        burst_len: case.get("burst_len").map_or(0.0, |v| v.as_f64().unwrap()),
        seed: case.get("seed").map_or(1, big),
    })
    .unwrap()
}

fn replay(case: &Value) -> Value {
    let mut packets = direction(case);
    let dues: Vec<Value> = case["arrivals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| json!(packets.offer(int(&a[1]) as usize, int(&a[0]))))
        .collect();
    let c = &packets.counts;
    json!({"due_ns": dues, "counts": {
        "packets": c.packets, "bytes": c.bytes, "delivered_packets": c.delivered_packets,
        "delivered_bytes": c.delivered_bytes, "lost_packets": c.lost_packets,
        "queue_drops": c.queue_drops, "peak_queued_bytes": c.peak_queued_bytes,
        "peak_since_mark_bytes": c.peak_since_mark_bytes,
    }})
}

#[test]
fn each_case_gives_the_python_outcomes() {
    let vectors = vectors();
    let cases = vectors["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        assert_eq!(replay(case), case["expect"], "case {}", case["name"]);
    }
}

#[test]
fn loss_draws_are_cpythons() {
    for v in vectors()["prng"].as_array().unwrap() {
        let mut rng = Random::new(big(&v["seed"]));
        let draws: Vec<f64> = (0..20).map(|_| rng.random()).collect();
        let want: Vec<f64> = v["draws"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_f64().unwrap())
            .collect();
        assert_eq!(draws, want, "seed {}", v["seed"]);
    }
}

#[test]
fn bad_settings_are_refused_not_panicked() {
    let spec = |loss: f64, burst_len: f64| DirectionSpec {
        delay_ns: 0,
        bottleneck: None,
        queue_bytes: 0,
        jitter_ns: 0,
        loss,
        burst_len,
        seed: 1,
    };
    assert!(PacketDirection::new(spec(1.0, 0.0)).is_err());
    assert!(PacketDirection::new(spec(0.1, 0.5)).is_err());
    assert!(PacketDirection::new(spec(0.1, 2.0)).is_ok());
}
