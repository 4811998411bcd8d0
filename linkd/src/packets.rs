//! The packet link's pure per-packet schedule: one `PacketDirection` per direction.
//!
//! A line-for-line port of `kit/delayline/packets.py` (its docstring gives the rules); both
//! pass the vectors of `tests/vectors/packets.json`. It never reads a clock: the forwarder
//! passes each IP packet's size and arrival time and gets back its due time, or `None`
//! (dropped). A packet crosses the bottleneck's drop-tail queue, then the wire's loss
//! (independent, or Gilbert-Elliott bursts), then the delay, jittered and never reordering.

use crate::mt::Random;
use crate::schedule::Bottleneck;

/// How the wire loses packets: independently, or in Gilbert-Elliott bursts.
pub enum LossModel {
    Bernoulli {
        loss: f64,
        rng: Random,
    },
    GilbertElliott {
        p_enter: f64,
        p_leave: f64,
        bad: bool,
        rng: Random,
    },
}

impl LossModel {
    /// The model for `loss` and `burst_len` (None: no loss); an error for values the
    /// Python side refuses too.
    pub fn new(loss: f64, burst_len: f64, seed: u128) -> Result<Option<LossModel>, String> {
        if loss == 0.0 {
            return Ok(None);
        }
        let rng = Random::new(seed);
        if burst_len > 0.0 {
            if !(loss > 0.0 && loss < 1.0) {
                return Err(format!("loss-burst: loss {loss} must be above 0 and below 1"));
            }
            if burst_len < 1.0 {
                return Err(format!(
                    "loss-burst: mean burst length {burst_len} must be at least 1"
                ));
            }
            let p_enter = (loss / (burst_len * (1.0 - loss))).min(1.0);
            let p_leave = 1.0 / burst_len;
            return Ok(Some(LossModel::GilbertElliott {
                p_enter,
                p_leave,
                bad: false,
                rng,
            }));
        }
        Ok(Some(LossModel::Bernoulli { loss, rng }))
    }

    /// Whether the next packet is lost (one draw each, as the Python models).
    pub fn lost(&mut self) -> bool {
        match self {
            LossModel::Bernoulli { loss, rng } => rng.random() < *loss,
            LossModel::GilbertElliott {
                p_enter,
                p_leave,
                bad,
                rng,
            } => {
                *bad = if *bad {
                    rng.random() >= *p_leave
                } else {
                    rng.random() < *p_enter
                };
                *bad
            }
        }
    }
}

/// What one direction did with the packets it was offered (`DirectionCounts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirectionCounts {
    pub packets: u64,
    pub bytes: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub lost_packets: u64,
    pub queue_drops: u64,
    pub peak_queued_bytes: i64,
    /// The peak since the frame tap last marked it (a trial's first connection opening).
    pub peak_since_mark_bytes: i64,
}

/// The settings of one direction (delays in ns, as the job gives them).
pub struct DirectionSpec {
    pub delay_ns: i64,
    pub bottleneck: Option<Bottleneck>,
    pub queue_bytes: i64,
    pub jitter_ns: i64,
    pub loss: f64,
    pub burst_len: f64,
    pub seed: u128,
}

/// Delay, rate with a drop-tail queue, jitter and loss for one direction of the link.
pub struct PacketDirection {
    delay_ns: i64,
    jitter_ns: i64,
    bottleneck: Option<Bottleneck>,
    queue_bytes: i64,
    rng: Random,
    loss_model: Option<LossModel>,
    last_due_ns: i64,
    pub counts: DirectionCounts,
}

impl PacketDirection {
    pub fn new(spec: DirectionSpec) -> Result<Self, String> {
        if spec.delay_ns < 0 || spec.jitter_ns < 0 {
            return Err("delay and jitter must be 0 or more".into());
        }
        if !(0.0..1.0).contains(&spec.loss) {
            return Err(format!("loss: {} must be at least 0 and below 1", spec.loss));
        }
        let loss_seed = spec.seed * 7919 + 1;
        Ok(PacketDirection {
            delay_ns: spec.delay_ns,
            jitter_ns: spec.jitter_ns,
            bottleneck: spec.bottleneck,
            queue_bytes: spec.queue_bytes,
            rng: Random::new(spec.seed),
            loss_model: LossModel::new(spec.loss, spec.burst_len, loss_seed)?,
            last_due_ns: i64::MIN,
            counts: DirectionCounts::default(),
        })
    }

    /// The delivery time of a `size`-byte packet arriving at `arrival_ns`, or `None` when
    /// the queue or the wire drops it.
    pub fn offer(&mut self, size: usize, arrival_ns: i64) -> Option<i64> {
        let counts = &mut self.counts;
        counts.packets += 1;
        counts.bytes += size as u64;
        let mut exit_ns = arrival_ns;
        if let Some(bottleneck) = self.bottleneck.as_mut() {
            let queued = bottleneck.queued_bytes(arrival_ns);
            let after = queued + size as i64;
            if after > self.queue_bytes {
                counts.queue_drops += 1;
                return None;
            }
            counts.peak_queued_bytes = counts.peak_queued_bytes.max(after);
            counts.peak_since_mark_bytes = counts.peak_since_mark_bytes.max(after);
            exit_ns = bottleneck.exit_ns(size, arrival_ns);
        }
        if let Some(model) = self.loss_model.as_mut() {
            if model.lost() {
                self.counts.lost_packets += 1;
                return None;
            }
        }
        self.counts.delivered_packets += 1;
        self.counts.delivered_bytes += size as u64;
        let delay = self.delay();
        Some(self.stamp(exit_ns + delay))
    }

    /// The propagation delay of the next packet: jittered, never below 0.
    fn delay(&mut self) -> i64 {
        if self.jitter_ns == 0 {
            return self.delay_ns;
        }
        let offset = self.rng.randint(-self.jitter_ns, self.jitter_ns);
        (self.delay_ns + offset).max(0)
    }

    /// Never reorder: a due time is at least the previous one.
    fn stamp(&mut self, due_ns: i64) -> i64 {
        let due = due_ns.max(self.last_due_ns);
        self.last_due_ns = due;
        due
    }
}
