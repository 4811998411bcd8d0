'use strict';
// A slow application reader, paced to a rate with seeded jitter: kit/clients/pacing.py's
// ReadPacer, the same rules (gaps of chunk/rate stretched by a uniform factor in
// [1 - J, 1 + J]; a reader woken late catches up by at most one chunk). The jitter comes from
// mulberry32 here, not Python's Mersenne Twister: the same seed gives other instants than the
// kit's Python clients, with the same distribution.

const NS_PER_S = 1e9;

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class ReadPacer {
  constructor(rateBytesS, startNs, seed, chunkBytes = 16384, jitter = 0.5) {
    if (!(rateBytesS > 0) || !(chunkBytes > 0) || !(jitter >= 0 && jitter < 1)) {
      throw new Error('a read pacer needs a positive rate and chunk, jitter in [0, 1)');
    }
    this.chunkBytes = chunkBytes;
    this.jitter = jitter;
    this.gapNs = (chunkBytes / rateBytesS) * NS_PER_S;
    this.random = mulberry32(seed);
    this.dueNs = startNs + this.gap();
  }

  gap() {
    const factor = 1.0 + this.jitter * (2.0 * this.random() - 1.0);
    return BigInt(Math.max(1, Math.round(this.gapNs * factor)));
  }

  // Bytes to read at nowNs out of waitingBytes (0 if no read is due).
  take(nowNs, waitingBytes) {
    if (nowNs < this.dueNs) return 0;
    const next = this.dueNs + this.gap();
    const late = nowNs - BigInt(Math.round(this.gapNs));
    this.dueNs = next > late ? next : late;
    return Math.min(this.chunkBytes, waitingBytes);
  }
}

module.exports = { ReadPacer };
