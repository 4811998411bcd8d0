//! kit/clients/pacing.py's ReadPacer, read for read: a slow reader takes one message per
//! message_bytes/rate seconds, each gap stretched by a seeded uniform factor in
//! [1 - jitter, 1 + jitter] (the job's ReadPacing). The random numbers are Python's
//! (random.Random(seed): MT19937 seeded by init_by_array with the seed's 32-bit words), so a
//! tonic slow stream reads at the same instants as the kit's Python clients'.

pub struct ReadPacer {
    pub chunk_bytes: i64,
    jitter: f64,
    gap_ns: f64,
    rng: PyRandom,
    pub due_ns: i64,
}

fn round_even(x: f64) -> i64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        (2.0 * (x / 2.0).round()) as i64
    } else {
        r as i64
    }
}

impl ReadPacer {
    pub fn new(
        rate_bytes_s: f64,
        start_ns: i64,
        seed: u64,
        chunk_bytes: i64,
        jitter: f64,
    ) -> ReadPacer {
        let mut p = ReadPacer {
            chunk_bytes,
            jitter,
            gap_ns: chunk_bytes as f64 / rate_bytes_s * 1e9,
            rng: PyRandom::new(seed),
            due_ns: 0,
        };
        p.due_ns = start_ns.saturating_add(p.gap());
        p
    }

    fn gap(&mut self) -> i64 {
        let factor = 1.0 + self.jitter * (2.0 * self.rng.random() - 1.0);
        i64::max(1, round_even(self.gap_ns * factor))
    }

    /// One read at `now` (the read is due): the next one's time.
    pub fn take(&mut self, now: i64) {
        let next = self.due_ns.saturating_add(self.gap());
        self.due_ns = i64::max(next, now.saturating_sub(round_even(self.gap_ns)));
    }
}

struct PyRandom {
    mt: [u32; 624],
    idx: usize,
}

impl PyRandom {
    fn new(seed: u64) -> PyRandom {
        let mut r = PyRandom {
            mt: [0; 624],
            idx: 624,
        };
        r.mt[0] = 19_650_218;
        for i in 1..624 {
            let prev = r.mt[i - 1];
            r.mt[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        // random.seed(n): init_by_array(the 32-bit words of n, least significant first; [0] for 0)
        let key: Vec<u32> = if seed >> 32 == 0 {
            vec![seed as u32]
        } else {
            vec![seed as u32, (seed >> 32) as u32]
        };
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..624 {
            let prev = r.mt[i - 1];
            r.mt[i] = (r.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                r.mt[0] = r.mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            let prev = r.mt[i - 1];
            r.mt[i] = (r.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                r.mt[0] = r.mt[623];
                i = 1;
            }
        }
        r.mt[0] = 0x8000_0000;
        r
    }

    fn next_u32(&mut self) -> u32 {
        if self.idx >= 624 {
            for k in 0..624 {
                let y = (self.mt[k] & 0x8000_0000) | (self.mt[(k + 1) % 624] & 0x7fff_ffff);
                let mut v = self.mt[(k + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.mt[k] = v;
            }
            self.idx = 0;
        }
        let mut y = self.mt[self.idx];
        self.idx += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// random.random(): 53 bits in [0, 1).
    fn random(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_random_seed_1() {
        // python3 -c "import random; r=random.Random(1); print(r.random(), r.random())"
        let mut r = PyRandom::new(1);
        assert_eq!(r.random(), 0.13436424411240122);
        assert_eq!(r.random(), 0.8474337369372327);
        // python3 -c "import random; print(random.Random(2**40 + 7).random())"
        assert_eq!(PyRandom::new((1 << 40) + 7).random(), 0.6137037779936511);
    }

    #[test]
    fn due_times_are_the_kits() {
        // kit.clients.pacing.ReadPacer(125000.0, 1000, 3, 16384) (grpc-go's pacer_test.go too)
        let mut p = ReadPacer::new(125_000.0, 1000, 3, 16384, 0.5);
        let mut got = vec![p.due_ns];
        for i in 0..5 {
            let now = p.due_ns + i * 1_000_000;
            p.take(now);
            got.push(p.due_ns);
        }
        assert_eq!(
            got,
            vec![96727500, 233596713, 347623477, 492316484, 639866896, 713991895]
        );
    }
}
