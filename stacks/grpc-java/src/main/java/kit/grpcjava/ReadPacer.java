package kit.grpcjava;

/**
 * A slow application reader paced to a rate with seeded jitter: kit/clients/pacing.py's
 * ReadPacer, with Python's own Mersenne Twister (random.Random(seed).random()), so a slow stream
 * here reads at the same instants as the kit's Python clients with the same seed.
 */
final class ReadPacer {
  private final double gapNs;
  private final double jitter;
  private final MersenneTwister random;
  long dueNs;

  ReadPacer(double rateBytesS, long startNs, long seed, int chunkBytes, double jitter) {
    if (rateBytesS <= 0 || chunkBytes <= 0 || jitter < 0 || jitter >= 1) {
      throw new IllegalArgumentException(
          "a read pacer needs a positive rate and chunk, jitter in [0, 1)");
    }
    this.jitter = jitter;
    this.gapNs = chunkBytes / rateBytesS * 1e9;
    this.random = new MersenneTwister(seed);
    this.dueNs = startNs + gap();
  }

  private long gap() {
    double factor = 1.0 + jitter * (2.0 * random.random() - 1.0);
    return Math.max(1, (long) Math.rint(gapNs * factor));
  }

  /** A read at {@code nowNs} (due or late): the next one's due time moves on. */
  void take(long nowNs) {
    if (nowNs < dueNs) {
      return;
    }
    dueNs = Math.max(dueNs + gap(), nowNs - (long) Math.rint(gapNs));
  }

  /** MT19937 seeded as CPython's random.seed(int) does (init_by_array of the 32-bit words). */
  static final class MersenneTwister {
    private final int[] mt = new int[624];
    private int index;

    /** {@code seed}: an unsigned 64-bit value (ReadPacing.seed is a uint64). */
    MersenneTwister(long seed) {
      long abs = seed;
      int words = Math.max(1, (64 - Long.numberOfLeadingZeros(abs) + 31) / 32);
      int[] key = new int[words];
      for (int i = 0; i < words; i++) {
        key[i] = (int) (abs >>> (32 * i));
      }
      initByArray(key);
    }

    private void initGenrand(int s) {
      mt[0] = s;
      for (int i = 1; i < 624; i++) {
        mt[i] = 1812433253 * (mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
      }
      index = 624;
    }

    private void initByArray(int[] key) {
      initGenrand(19650218);
      int i = 1;
      int j = 0;
      for (int k = Math.max(624, key.length); k > 0; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >>> 30)) * 1664525)) + key[j] + j;
        i++;
        j++;
        if (i >= 624) {
          mt[0] = mt[623];
          i = 1;
        }
        if (j >= key.length) {
          j = 0;
        }
      }
      for (int k = 623; k > 0; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >>> 30)) * 1566083941)) - i;
        i++;
        if (i >= 624) {
          mt[0] = mt[623];
          i = 1;
        }
      }
      mt[0] = 0x80000000;
    }

    private int next32() {
      if (index >= 624) {
        for (int k = 0; k < 624; k++) {
          int y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7fffffff);
          mt[k] = mt[(k + 397) % 624] ^ (y >>> 1) ^ ((y & 1) != 0 ? 0x9908b0df : 0);
        }
        index = 0;
      }
      int y = mt[index++];
      y ^= y >>> 11;
      y ^= (y << 7) & 0x9d2c5680;
      y ^= (y << 15) & 0xefc60000;
      y ^= y >>> 18;
      return y;
    }

    /** random.random(): 53 random bits in [0, 1). */
    double random() {
      long a = (next32() & 0xffffffffL) >>> 5;
      long b = (next32() & 0xffffffffL) >>> 6;
      return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
    }
  }
}
