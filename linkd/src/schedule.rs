//! The pure schedule: a bottleneck queue, then a propagation delay, with seeded jitter.
//!
//! A line-for-line port of `kit/delayline/schedule.py` (its docstring gives the rules); both
//! pass the vectors of `tests/vectors/schedule.json`. It holds no bytes: an entry is a due
//! time and a size (the bytes wait in the connection's store), and it never reads a clock.
//! Floating-point steps follow Python's order of operations and its rounding (`round()`
//! is half-to-even, `%` and `//` take the divisor's sign), so both compute the same times.

use crate::mt::Random;
use std::collections::VecDeque;

pub const CHUNK_TIME_NS: i64 = 1_000_000;
pub const MIN_CHUNK_BYTES: usize = 1024;
pub const MAX_CHUNK_BYTES: usize = 1024 * 1024;
pub const TRACE_BUCKET_NS: i64 = 2_000_000;
pub const MAX_TRACE_BUCKETS: usize = 30_000;

/// Python's `round(x)` for a float: half to even.
pub fn py_round(x: f64) -> i64 {
    x.round_ties_even() as i64
}

/// Python's `x % y` for floats.
fn py_mod(x: f64, y: f64) -> f64 {
    let m = x % y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m + y
        } else {
            m
        }
    } else {
        0.0f64.copysign(y)
    }
}

/// Python's `x // y` for floats.
fn py_floordiv(x: f64, y: f64) -> f64 {
    let m = x % y;
    let mut div = (x - m) / y;
    if m != 0.0 && (y < 0.0) != (m < 0.0) {
        div -= 1.0;
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        0.0f64.copysign(x / y)
    }
}

/// The size a read is split into at `rate_bits_s` (1 ms of the link, 1 KiB..1 MiB).
pub fn chunk_bytes(rate_bits_s: f64) -> usize {
    let per_ms = (rate_bits_s / 8.0 * CHUNK_TIME_NS as f64 / 1e9).trunc();
    let per_ms = if per_ms < 0.0 { 0 } else { per_ms as usize };
    per_ms.clamp(MIN_CHUNK_BYTES, MAX_CHUNK_BYTES)
}

/// A rate that changes over time: `(rate_bits_s, duration_ns)` steps, looped from the first
/// byte that reaches the bottleneck on; a step of rate 0 is an outage.
#[derive(Clone, Debug)]
pub struct RateSteps {
    steps: Vec<(f64, i64)>, // bytes per ns, duration
    period_ns: i64,
    period_bytes: f64,
    pub mean_rate_bits_s: f64,
    pub max_rate_bits_s: f64,
    origin_ns: Option<f64>,
}

impl RateSteps {
    /// `None` when the steps are not a link (a rate < 0, a duration <= 0, or no rate > 0).
    pub fn new(steps: &[(f64, i64)]) -> Option<Self> {
        let bad = steps.iter().any(|&(r, d)| r < 0.0 || d <= 0);
        if steps.is_empty() || bad || !steps.iter().any(|&(r, _)| r > 0.0) {
            return None;
        }
        let per_ns: Vec<(f64, i64)> = steps.iter().map(|&(r, d)| (r / 8e9, d)).collect();
        let period_ns: i64 = steps.iter().map(|&(_, d)| d).sum();
        let period_bytes = per_ns.iter().fold(0.0, |sum, &(b, d)| sum + b * d as f64);
        Some(RateSteps {
            steps: per_ns,
            period_ns,
            period_bytes,
            mean_rate_bits_s: period_bytes * 8e9 / period_ns as f64,
            max_rate_bits_s: steps.iter().map(|&(r, _)| r).fold(f64::MIN, f64::max),
            origin_ns: None,
        })
    }

    /// (step index, ns left in it) at `t_ns`.
    fn locate(&self, t_ns: f64) -> (usize, f64) {
        let origin = self.origin_ns.unwrap_or(0.0);
        let mut into = py_mod(t_ns - origin, self.period_ns as f64);
        for (index, &(_, duration)) in self.steps.iter().enumerate() {
            let duration = duration as f64;
            if into < duration {
                return (index, duration - into);
            }
            into -= duration;
        }
        (0, self.steps[0].1 as f64)
    }

    /// When `n_bytes` starting to serialise at `start_ns` have all left.
    pub fn finish_ns(&mut self, start_ns: f64, n_bytes: usize) -> f64 {
        if self.origin_ns.is_none() {
            self.origin_ns = Some(start_ns);
        }
        let n = n_bytes as f64;
        let periods = py_floordiv(n, self.period_bytes) as i64;
        let mut t = start_ns + (periods * self.period_ns) as f64;
        let mut left = n - periods as f64 * self.period_bytes;
        let (mut index, mut room_ns) = self.locate(t);
        loop {
            let per_ns = self.steps[index].0;
            if per_ns * room_ns >= left {
                return t + if per_ns != 0.0 { left / per_ns } else { 0.0 };
            }
            left -= per_ns * room_ns;
            t += room_ns;
            index = (index + 1) % self.steps.len();
            room_ns = self.steps[index].1 as f64;
        }
    }

    /// Bytes the link can serialise between `t0_ns` and `t1_ns` (a backlog's size).
    pub fn capacity_bytes(&self, t0_ns: f64, t1_ns: f64) -> f64 {
        if self.origin_ns.is_none() || t1_ns <= t0_ns {
            return 0.0;
        }
        let periods = py_floordiv(t1_ns - t0_ns, self.period_ns as f64) as i64;
        let mut total = periods as f64 * self.period_bytes;
        let mut t = t0_ns + (periods * self.period_ns) as f64;
        let (mut index, mut room_ns) = self.locate(t);
        while t < t1_ns {
            let span = room_ns.min(t1_ns - t);
            total += self.steps[index].0 * span;
            t += span;
            index = (index + 1) % self.steps.len();
            room_ns = self.steps[index].1 as f64;
        }
        total
    }
}

/// The serialisation point of one direction of a link, shared by its connections.
#[derive(Clone, Debug)]
pub struct Bottleneck {
    pub rate_bits_s: f64,
    ns_per_byte: f64,
    steps: Option<RateSteps>,
    pub chunk_bytes: usize,
    last_exit_ns: f64,
    pub peak_queued_bytes: i64,
}

impl Bottleneck {
    pub fn new(rate_bits_s: f64) -> Option<Self> {
        Self::build(rate_bits_s, None)
    }

    pub fn with_steps(steps: RateSteps) -> Option<Self> {
        Self::build(steps.mean_rate_bits_s, Some(steps))
    }

    fn build(rate_bits_s: f64, steps: Option<RateSteps>) -> Option<Self> {
        if rate_bits_s.is_nan() || rate_bits_s <= 0.0 {
            return None;
        }
        let chunk_rate = steps.as_ref().map_or(rate_bits_s, |s| s.max_rate_bits_s);
        Some(Bottleneck {
            rate_bits_s,
            ns_per_byte: 8e9 / rate_bits_s,
            steps,
            chunk_bytes: chunk_bytes(chunk_rate),
            last_exit_ns: f64::NEG_INFINITY,
            peak_queued_bytes: 0,
        })
    }

    pub fn has_steps(&self) -> bool {
        self.steps.is_some()
    }

    /// When the last byte of an `n_bytes` chunk arriving at `arrival_ns` has left.
    pub fn exit_ns(&mut self, n_bytes: usize, arrival_ns: i64) -> i64 {
        let arrival = arrival_ns as f64;
        let start = if arrival >= self.last_exit_ns {
            arrival
        } else {
            self.last_exit_ns
        };
        self.last_exit_ns = match self.steps.as_mut() {
            None => start + n_bytes as f64 * self.ns_per_byte,
            Some(steps) => steps.finish_ns(start, n_bytes),
        };
        py_round(self.last_exit_ns)
    }

    /// Bytes still waiting to be serialised at `now_ns` (the backlog).
    pub fn queued_bytes(&self, now_ns: i64) -> i64 {
        let backlog_ns = self.last_exit_ns - now_ns as f64;
        if backlog_ns.is_nan() || backlog_ns <= 0.0 {
            return 0;
        }
        match &self.steps {
            Some(steps) => py_round(steps.capacity_bytes(now_ns as f64, self.last_exit_ns)),
            None => py_round(backlog_ns / self.ns_per_byte),
        }
    }

    /// The backlog at `now_ns` (right after an arrival: its peak), kept in the peak.
    pub fn note_backlog(&mut self, now_ns: i64) -> i64 {
        let queued = self.queued_bytes(now_ns);
        if queued > self.peak_queued_bytes {
            self.peak_queued_bytes = queued;
        }
        queued
    }

    /// A new rate for what arrives from now on; false (unchanged) for a rate <= 0 or a
    /// bottleneck with rate steps.
    pub fn set_rate(&mut self, rate_bits_s: f64) -> bool {
        if rate_bits_s.is_nan() || rate_bits_s <= 0.0 || self.steps.is_some() {
            return false;
        }
        self.rate_bits_s = rate_bits_s;
        self.ns_per_byte = 8e9 / rate_bits_s;
        true
    }

    /// `n_bytes` still waiting here were dropped: the link no longer spends time on them.
    pub fn forget(&mut self, n_bytes: i64, now_ns: i64) {
        if n_bytes > 0 && self.last_exit_ns > now_ns as f64 {
            let back = self.last_exit_ns - n_bytes as f64 * self.ns_per_byte;
            let now = now_ns as f64;
            self.last_exit_ns = if now >= back { now } else { back };
        }
    }
}

/// Bytes released per `TRACE_BUCKET_NS`, from the first release on (bounded).
#[derive(Clone, Debug, Default)]
pub struct DeliveryTrace {
    pub origin_ns: Option<i64>,
    pub buckets: Vec<i64>,
}

impl DeliveryTrace {
    pub fn add(&mut self, n_bytes: i64, now_ns: i64) {
        let origin = *self.origin_ns.get_or_insert(now_ns);
        let index = (now_ns - origin).div_euclid(TRACE_BUCKET_NS);
        if index < 0 || index as usize >= MAX_TRACE_BUCKETS {
            return;
        }
        let index = index as usize;
        if index >= self.buckets.len() {
            self.buckets.resize(index + 1, 0);
        }
        self.buckets[index] += n_bytes;
    }
}

/// One queued entry: its due time and size (`None`: the end-of-stream marker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub due_ns: i64,
    pub size: Option<usize>,
}

/// The FIFO of (due time, size) of one direction of one connection.
pub struct DelayQueue {
    pub delay_ns: i64,
    pub cap_bytes: i64,
    pub jitter_ns: i64,
    rng: Random,
    entries: VecDeque<Entry>,
    last_due_ns: i64,
    eof_queued: bool,
    pub eof_released: bool,
    pub buffered_bytes: i64,
    pub peak_buffered_bytes: i64,
    pub peak_queued_bytes: i64,
    pub released_bytes: i64,
    pub delivered: DeliveryTrace,
    paused: bool,
    exits: VecDeque<(i64, i64)>,
    limited: bool,
}

impl DelayQueue {
    /// `limited`: its chunks cross a bottleneck (passed to `push` and `discard`).
    pub fn new(delay_ns: i64, cap_bytes: i64, jitter_ns: i64, seed: u128, limited: bool) -> Self {
        DelayQueue {
            delay_ns,
            cap_bytes,
            jitter_ns,
            rng: Random::new(seed),
            entries: VecDeque::new(),
            last_due_ns: i64::MIN,
            eof_queued: false,
            eof_released: false,
            buffered_bytes: 0,
            peak_buffered_bytes: 0,
            peak_queued_bytes: 0,
            released_bytes: 0,
            delivered: DeliveryTrace::default(),
            paused: false,
            exits: VecDeque::new(),
            limited,
        }
    }

    pub fn is_limited(&self) -> bool {
        self.limited
    }

    /// Queue `size` bytes that arrived at `arrival_ns`: through the bottleneck (the
    /// direction's, when limited), then delayed. Returns the entries it added.
    pub fn push(&mut self, size: usize, arrival_ns: i64, bottleneck: Option<&mut Bottleneck>) {
        assert!(!self.eof_queued, "push after end-of-stream");
        if size == 0 {
            return;
        }
        match bottleneck {
            None => {
                let delay = self.draw_delay_ns();
                let due = self.stamp(arrival_ns + delay);
                self.entries.push_back(Entry {
                    due_ns: due,
                    size: Some(size),
                });
            }
            Some(b) => self.push_limited(size, arrival_ns, b),
        }
        self.buffered_bytes += size as i64;
        if self.buffered_bytes > self.peak_buffered_bytes {
            self.peak_buffered_bytes = self.buffered_bytes;
        }
        if self.buffered_bytes >= self.cap_bytes {
            self.paused = true;
        }
    }

    fn push_limited(&mut self, size: usize, arrival_ns: i64, bottleneck: &mut Bottleneck) {
        let step = bottleneck.chunk_bytes;
        while self.exits.front().is_some_and(|&(exit, _)| exit <= arrival_ns) {
            self.exits.pop_front();
        }
        let mut start = 0;
        while start < size {
            let piece = step.min(size - start);
            let exit = bottleneck.exit_ns(piece, arrival_ns);
            let delay = self.draw_delay_ns();
            let due = self.stamp(exit + delay);
            self.entries.push_back(Entry {
                due_ns: due,
                size: Some(piece),
            });
            self.exits.push_back((exit, piece as i64));
            start += piece;
        }
        let queued = bottleneck.note_backlog(arrival_ns);
        if queued > self.peak_queued_bytes {
            self.peak_queued_bytes = queued;
        }
    }

    /// The connection is gone: drop what is queued and give the bottleneck back the time its
    /// unserialised bytes would have taken. Returns the bytes dropped.
    pub fn discard(&mut self, now_ns: i64, bottleneck: Option<&mut Bottleneck>) -> i64 {
        let dropped = self.buffered_bytes;
        let unsent: i64 = self
            .exits
            .iter()
            .filter(|&&(e, _)| e > now_ns)
            .map(|&(_, n)| n)
            .sum();
        if let Some(b) = bottleneck {
            b.forget(unsent, now_ns);
        }
        self.entries.clear();
        self.exits.clear();
        self.buffered_bytes = 0;
        dropped
    }

    /// Queue end-of-stream; released after all data, `delay_ns` after it arrived.
    pub fn push_eof(&mut self, arrival_ns: i64) {
        if self.eof_queued {
            return;
        }
        self.eof_queued = true;
        let due = self.stamp(arrival_ns + self.delay_ns);
        self.entries.push_back(Entry {
            due_ns: due,
            size: None,
        });
    }

    /// Every chunk due at `now_ns`, oldest first (their sizes, appended to `out`); sets
    /// `eof_released` on the marker. Returns the bytes released.
    pub fn pop_due(&mut self, now_ns: i64, out: &mut Vec<usize>) -> usize {
        let mut released = 0usize;
        while let Some(entry) = self.entries.front().copied() {
            if entry.due_ns > now_ns {
                break;
            }
            self.entries.pop_front();
            match entry.size {
                None => {
                    self.eof_released = true;
                    break;
                }
                Some(size) => {
                    out.push(size);
                    released += size;
                }
            }
        }
        if released > 0 {
            self.buffered_bytes -= released as i64;
            self.released_bytes += released as i64;
            self.delivered.add(released as i64, now_ns);
        }
        if self.paused && self.buffered_bytes < self.cap_bytes / 2 {
            self.paused = false;
        }
        released
    }

    /// Due time of the oldest entry (data or end-of-stream), or None when empty.
    pub fn next_due_ns(&self) -> Option<i64> {
        self.entries.front().map(|e| e.due_ns)
    }

    pub fn should_pause_reading(&self) -> bool {
        self.paused
    }

    pub fn eof_queued(&self) -> bool {
        self.eof_queued
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries queued now, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    fn draw_delay_ns(&mut self) -> i64 {
        if self.jitter_ns == 0 {
            return self.delay_ns;
        }
        let offset = self.rng.randint(-self.jitter_ns, self.jitter_ns);
        (self.delay_ns + offset).max(0)
    }

    fn stamp(&mut self, due: i64) -> i64 {
        let due = due.max(self.last_due_ns);
        self.last_due_ns = due;
        due
    }
}

/// A stable per-(connection, direction) seed: `(seed * 1_000_003 + conn) * 2 + direction`
/// (0 up, 1 down), as `kit.delayline.schedule.hash_seed`.
pub fn hash_seed(seed: u64, conn_id: u64, down: bool) -> u128 {
    (u128::from(seed) * 1_000_003 + u128::from(conn_id)) * 2 + u128::from(down)
}
