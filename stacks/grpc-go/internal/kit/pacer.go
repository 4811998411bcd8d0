package kit

import "math"

// ReadPacer is kit/clients/pacing.py's ReadPacer, read for read (the job's ReadPacing): a
// slow reader takes one chunk per chunk_bytes/rate seconds, each gap stretched by a seeded
// uniform factor in [1-J, 1+J]. The random numbers are Python's (random.Random(seed),
// Mersenne Twister), so a grpc-go slow stream reads at the same instants as the kit's
// Python clients'.
type ReadPacer struct {
	ChunkBytes int
	Jitter     float64
	gapNS      float64
	rng        *pyRandom
	DueNS      int64
}

func NewReadPacer(rateBytesS, jitter float64, seed uint64, startNS int64, chunkBytes int) *ReadPacer {
	p := &ReadPacer{ChunkBytes: chunkBytes, Jitter: jitter, gapNS: float64(chunkBytes) / rateBytesS * 1e9,
		rng: newPyRandom(seed)}
	p.DueNS = startNS + p.gap()
	return p
}

func (p *ReadPacer) gap() int64 {
	factor := 1.0 + p.Jitter*(2.0*p.rng.random()-1.0)
	return max(1, int64(math.RoundToEven(p.gapNS*factor)))
}

// Take is the bytes to read at now out of waiting (0 if no read is due yet).
func (p *ReadPacer) Take(now int64, waiting int) int {
	if now < p.DueNS {
		return 0
	}
	p.DueNS = max(p.DueNS+p.gap(), now-int64(math.RoundToEven(p.gapNS)))
	return min(p.ChunkBytes, waiting)
}

// pyRandom is CPython's random.Random seeded with an int >= 0: MT19937, init_by_array.
type pyRandom struct {
	mt  [624]uint32
	idx int
}

func newPyRandom(seed uint64) *pyRandom {
	r := &pyRandom{}
	r.initGenrand(19650218)
	key := []uint32{uint32(seed)} // CPython: the value's 32-bit words, low first; 0 is one word 0
	if high := uint32(seed >> 32); high != 0 {
		key = append(key, high)
	}
	i, j := 1, 0
	k := max(624, len(key))
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
	r.idx = 624
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = 624
}

func (r *pyRandom) uint32() uint32 {
	if r.idx >= 624 {
		for k := 0; k < 624; k++ {
			y := (r.mt[k] & 0x80000000) | (r.mt[(k+1)%624] & 0x7fffffff)
			v := r.mt[(k+397)%624] ^ (y >> 1)
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// random is random.random(): 53 bits in [0, 1).
func (r *pyRandom) random() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}
