'use strict';
// A slow application reader, paced to the job's ReadPacing (protos/worker.proto): one message
// per message_bytes / rate_bytes_s seconds, each gap stretched by a uniform factor in
// [1 - jitter, 1 + jitter] drawn from Python's random.Random(seed + i) for stream i, so this
// client reads at the same instants as every other stack's; a reader woken late catches up by
// at most one gap. PythonRandom is CPython's Mersenne Twister (Modules/_randommodule.c:
// init_by_array seeded from the integer's 32-bit words, random() from two draws).

const NS_PER_S = 1e9;
const N = 624;
const M = 397;

class PythonRandom {
  // seed: a non-negative BigInt (or a safe integer), as random.Random(seed) takes it.
  constructor(seed) {
    let n = BigInt(seed);
    if (n < 0n) n = -n;
    const key = [];
    do {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    } while (n > 0n);
    this.mt = new Uint32Array(N);
    this.index = N;
    this.initByArray(key);
  }

  initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i += 1) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = N;
  }

  initByArray(key) {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k -= 1) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i += 1;
      j += 1;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k -= 1) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i += 1;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  uint32() {
    const mt = this.mt;
    if (this.index >= N) {
      for (let k = 0; k < N; k += 1) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
        mt[k] = mt[(k + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index];
    this.index += 1;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  // random.random(): 53 random bits in [0, 1)
  random() {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }
}

// Python's round() to an integer: halves to even.
function pyRound(x) {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

// kit/clients/pacing.py's ReadPacer, with time in BigInt nanoseconds.
class ReadPacer {
  constructor(rateBytesS, startNs, seed, chunkBytes, jitter) {
    if (!(rateBytesS > 0) || !(chunkBytes > 0) || !(jitter >= 0 && jitter < 1)) {
      throw new Error('a read pacer needs a positive rate and chunk, jitter in [0, 1)');
    }
    this.chunkBytes = chunkBytes;
    this.jitter = jitter;
    this.gapNs = (chunkBytes / rateBytesS) * NS_PER_S;
    this.random = new PythonRandom(seed);
    this.dueNs = startNs + this.gap();
  }

  gap() {
    const factor = 1.0 + this.jitter * (2.0 * this.random.random() - 1.0);
    return BigInt(Math.max(1, pyRound(this.gapNs * factor)));
  }

  // Bytes to read at nowNs out of waitingBytes (0 if no read is due).
  take(nowNs, waitingBytes) {
    if (nowNs < this.dueNs) return 0;
    const next = this.dueNs + this.gap();
    const late = nowNs - BigInt(pyRound(this.gapNs));
    this.dueNs = next > late ? next : late;
    return Math.min(this.chunkBytes, waitingBytes);
  }
}

module.exports = { PythonRandom, ReadPacer, pyRound };
