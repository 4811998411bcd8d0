//! The schedule's rules, shared with the Python line: tests/vectors/schedule.json (written by
//! tests/unit/schedule_vectors.py from kit.delayline.schedule) replayed through this crate's
//! schedule, event by event, and its jitter's random numbers draw by draw.
use linkd::mt::Random;
use linkd::schedule::{chunk_bytes, hash_seed, Bottleneck, DelayQueue, RateSteps};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/schedule.json");
    let text = std::fs::read_to_string(path).expect("tests/vectors/schedule.json");
    serde_json::from_str(&text).expect("vectors are JSON")
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// A seed may exceed 64 bits (a connection's hashed seed): the vectors keep seeds as text.
fn big(v: &Value) -> u128 {
    let text = v.as_str().unwrap_or_else(|| panic!("a seed as text: {v}"));
    text.parse().unwrap_or_else(|_| panic!("not a whole number: {v}"))
}

fn bottlenecks(spec: Option<&Value>) -> BTreeMap<String, Bottleneck> {
    let mut out = BTreeMap::new();
    for (name, b) in spec.and_then(Value::as_object).into_iter().flatten() {
        let bottleneck = match b.get("steps") {
            Some(steps) => {
                let steps: Vec<(f64, i64)> = steps
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| (s[0].as_f64().unwrap(), int(&s[1])))
                    .collect();
                Bottleneck::with_steps(RateSteps::new(&steps).unwrap()).unwrap()
            }
            None => Bottleneck::new(b["rate_bits_s"].as_f64().unwrap()).unwrap(),
        };
        out.insert(name.clone(), bottleneck);
    }
    out
}

struct Case {
    queues: Vec<DelayQueue>,
    names: Vec<Option<String>>,
    bottlenecks: BTreeMap<String, Bottleneck>,
}

impl Case {
    fn new(case: &Value) -> Self {
        let bottlenecks = bottlenecks(case.get("bottlenecks"));
        let mut queues = Vec::new();
        let mut names = Vec::new();
        for q in case["queues"].as_array().unwrap() {
            let name = q.get("bottleneck").and_then(Value::as_str).map(str::to_string);
            queues.push(DelayQueue::new(
                int(&q["delay_ns"]),
                q.get("cap_bytes").map_or(64 << 20, int),
                q.get("jitter_ns").map_or(0, int),
                q.get("seed").map_or(1, big),
                name.is_some(),
            ));
            names.push(name);
        }
        Case {
            queues,
            names,
            bottlenecks,
        }
    }

    fn event(&mut self, e: &Value) -> Value {
        let t = int(&e["t"]);
        if let Some(rate) = e.get("set_rate") {
            let b = self
                .bottlenecks
                .get_mut(e["bottleneck"].as_str().unwrap())
                .unwrap();
            return json!({"ok": b.set_rate(rate.as_f64().unwrap())});
        }
        let qi = e.get("q").map_or(0, int) as usize;
        let bottleneck = match &self.names[qi] {
            Some(name) => self.bottlenecks.get_mut(name),
            None => None,
        };
        let queue = &mut self.queues[qi];
        let before = queue.len();
        if let Some(size) = e.get("push") {
            queue.push(int(size) as usize, t, bottleneck);
        } else if e.get("eof").is_some() {
            queue.push_eof(t);
        } else if e.get("discard").is_some() {
            let dropped = queue.discard(t, bottleneck);
            let queued = match &self.names[qi] {
                Some(name) => json!(self.bottlenecks[name].queued_bytes(t)),
                None => Value::Null,
            };
            return json!({"dropped": dropped, "queued": queued});
        } else if let Some(set) = e.get("set") {
            if let Some(d) = set.get("delay_ns") {
                queue.delay_ns = int(d);
            }
            if let Some(j) = set.get("jitter_ns") {
                queue.jitter_ns = int(j);
            }
            return json!({});
        } else if e.get("pop").is_some() {
            let mut sizes = Vec::new();
            queue.pop_due(t, &mut sizes);
            return json!({
                "released": sizes,
                "eof_released": queue.eof_released,
                "buffered": queue.buffered_bytes,
                "paused": queue.should_pause_reading(),
                "next_due": queue.next_due_ns(),
            });
        }
        let added: Vec<Value> = queue
            .entries()
            .skip(before)
            .map(|e| json!([e.due_ns, e.size]))
            .collect();
        json!({
            "entries": added,
            "buffered": queue.buffered_bytes,
            "paused": queue.should_pause_reading(),
            "peak_queued": queue.peak_queued_bytes,
        })
    }

    fn final_state(&self) -> Value {
        let queues: Vec<Value> = self
            .queues
            .iter()
            .map(|q| {
                json!({
                    "buffered": q.buffered_bytes,
                    "peak_buffered": q.peak_buffered_bytes,
                    "peak_queued": q.peak_queued_bytes,
                    "released": q.released_bytes,
                    "delivered_origin": q.delivered.origin_ns,
                    "delivered": q.delivered.buckets,
                })
            })
            .collect();
        let mut bottlenecks = serde_json::Map::new();
        for (name, b) in &self.bottlenecks {
            bottlenecks.insert(
                name.clone(),
                json!({"peak_queued": b.peak_queued_bytes, "chunk_bytes": b.chunk_bytes}),
            );
        }
        json!({"queues": queues, "bottlenecks": bottlenecks})
    }
}

#[test]
fn every_case_gives_the_reference_outcomes() {
    let vectors = vectors();
    let cases = vectors["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let mut replay = Case::new(case);
        let expected = &case["expect"]["events"];
        for (i, event) in case["events"].as_array().unwrap().iter().enumerate() {
            let got = replay.event(event);
            assert_eq!(got, expected[i], "{name}: event {i} {event}");
        }
        assert_eq!(
            replay.final_state(),
            case["expect"]["final"],
            "{name}: final state"
        );
    }
}

#[test]
fn jitter_draws_are_pythons() {
    for v in vectors()["prng"].as_array().unwrap() {
        let mut rng = Random::new(big(&v["seed"]));
        let j = int(&v["jitter_ns"]);
        let draws: Vec<i64> = (0..20).map(|_| rng.randint(-j, j)).collect();
        let want: Vec<i64> = v["draws"].as_array().unwrap().iter().map(int).collect();
        assert_eq!(draws, want, "seed {} jitter {j}", v["seed"]);
    }
}

#[test]
fn connection_seeds_and_chunk_sizes() {
    let vectors = vectors();
    for v in vectors["hash_seed"].as_array().unwrap() {
        let seed = big(&v["seed"]) as u64;
        let got = hash_seed(seed, v["conn"].as_u64().unwrap(), v["down"].as_bool().unwrap());
        assert_eq!(got, big(&v["hash"]));
    }
    for v in vectors["chunk_bytes"].as_array().unwrap() {
        assert_eq!(
            chunk_bytes(v["rate_bits_s"].as_f64().unwrap()) as i64,
            int(&v["chunk_bytes"])
        );
    }
}
