package kit

import "testing"

// The numbers CPython gives for random.Random(seed).random() and for the kit's ReadPacer
// (kit/clients/pacing.py) with the same arguments.
func TestPyRandomMatchesCPython(t *testing.T) {
	want := map[uint64][]float64{
		1: {0.13436424411240122, 0.8474337369372327, 0.763774618976614},
		2: {0.9560342718892494, 0.9478274870593494, 0.05655136772680869},
		7: {0.32383276483316237, 0.15084917392450192, 0.6509344730398537},
		// A seed above 32 bits is two words of CPython's key.
		1<<32 + 5: {0.15727238718789782, 0.2824866316461999, 0.6044540318498407},
		1 << 40:   {0.1036394562812375, 0.6705558677439764, 0.4266543913526999},
	}
	for seed, values := range want {
		r := newPyRandom(seed)
		for i, v := range values {
			if got := r.random(); got != v {
				t.Fatalf("seed %d value %d: %v, CPython %v", seed, i, got, v)
			}
		}
	}
}

func TestReadPacerMatchesTheKits(t *testing.T) {
	p := NewReadPacer(125000.0, 0.5, 3, 1000, 16384)
	got := []int64{p.DueNS}
	for i := int64(0); i < 5; i++ {
		p.Take(p.DueNS+i*1_000_000, 16384)
		got = append(got, p.DueNS)
	}
	want := []int64{96727500, 233596713, 347623477, 492316484, 639866896, 713991895}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("due times %v, the kit's %v", got, want)
		}
	}
}
