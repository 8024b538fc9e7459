package kubeproxy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6b70)) }

func mustNew(t testing.TB, mode, scheduler string, rng *rand.Rand) Balancer {
	t.Helper()
	b, err := New(Parse(mode), scheduler, rng)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// allModes lists every mode and IPVS scheduler New accepts.
var allModes = []struct{ mode, scheduler string }{
	{"iptables", ""}, {"nftables", ""}, {"userspace", ""},
	{"ipvs", "rr"}, {"ipvs", "lc"}, {"ipvs", "sed"}, {"ipvs", "nq"}, {"ipvs", "sh"},
}

func TestNewRejectsUnknownNames(t *testing.T) {
	for _, c := range []struct{ mode, scheduler string }{
		{"kernelspace", ""}, {"", ""}, {"ipvs", "wrr"}, {"ipvs", "dh"}, {"IPTABLES", ""},
	} {
		if _, err := New(Parse(c.mode), c.scheduler, newRNG(1)); err == nil {
			t.Errorf("New(%q, %q) accepted", c.mode, c.scheduler)
		}
	}
	if _, err := New(Iptables, "", nil); err == nil {
		t.Error("New accepted a nil random stream")
	}
	// kube-proxy's IPVS default scheduler is rr: an empty name must behave as rr.
	b := mustNew(t, "ipvs", "", newRNG(1))
	addOneByOne(b, 1, 2, 3)
	if got := picks(b, 4); !slices.Equal(got, []Endpoint{3, 2, 1, 3}) {
		t.Errorf("ipvs default scheduler picked %v, want rr order [3 2 1 3]", got)
	}
}

// With no endpoints every mode refuses (ok=false), both before any endpoint was set and
// after the last one was removed.
func TestPickWithNoEndpoints(t *testing.T) {
	for _, m := range allModes {
		b := mustNew(t, m.mode, m.scheduler, newRNG(1))
		if _, ok := b.Pick(7); ok {
			t.Errorf("%s/%s: Pick before SetEndpoints returned ok", m.mode, m.scheduler)
		}
		b.SetEndpoints([]Endpoint{4, 5})
		if _, ok := b.Pick(7); !ok {
			t.Errorf("%s/%s: Pick with endpoints refused", m.mode, m.scheduler)
		}
		b.SetEndpoints(nil)
		if _, ok := b.Pick(7); ok {
			t.Errorf("%s/%s: Pick after removing every endpoint returned ok", m.mode, m.scheduler)
		}
	}
}

// Pick sits in the engine's hot path: it must not allocate in any mode.
func TestPickDoesNotAllocate(t *testing.T) {
	for _, m := range allModes {
		b := mustNew(t, m.mode, m.scheduler, newRNG(1))
		b.SetEndpoints([]Endpoint{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
		src := uint64(0)
		if a := testing.AllocsPerRun(1000, func() { src++; b.Pick(src) }); a != 0 {
			t.Errorf("%s/%s: %v allocations per Pick", m.mode, m.scheduler, a)
		}
	}
}

func TestUserspaceDialTimeouts(t *testing.T) {
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}
	if got := Userspace.DialTimeouts(); !slices.Equal(got, want) {
		t.Errorf("userspace dial timeouts = %v, want %v (pkg/proxy/userspace/proxysocket.go)", got, want)
	}
}

// picks returns the next n choices of b from source key 0.
func picks(b Balancer, n int) []Endpoint {
	out := make([]Endpoint, n)
	for i := range out {
		out[i], _ = b.Pick(0)
	}
	return out
}

// chiSquare is Pearson's statistic of counts against a uniform expectation.
func chiSquare(counts []int, total int) float64 {
	e := float64(total) / float64(len(counts))
	x := 0.0
	for _, c := range counts {
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	return x
}

// chiSquareCritical001 is the chi-square critical value at p = 0.001 by degrees of freedom
// (standard tables): a correct uniform picker exceeds it once in a thousand seeds.
var chiSquareCritical001 = map[int]float64{1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 6: 22.458}

func BenchmarkPick(b *testing.B) {
	eps := []Endpoint{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, m := range allModes {
		name := m.mode
		if m.scheduler != "" {
			name += "-" + m.scheduler
		}
		b.Run(fmt.Sprintf("%s/n=%d", name, len(eps)), func(b *testing.B) {
			bal := mustNew(b, m.mode, m.scheduler, newRNG(1))
			bal.SetEndpoints(eps)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				bal.Pick(uint64(i))
			}
		})
	}
}

// The critical values above are checked against the exact chi-square survival function:
// e^(-x/2) Σ_{i<k/2} (x/2)^i/i! for even k, erfc(√(x/2)) + e^(-x/2) Σ_{i=1..(k-1)/2}
// (x/2)^(i-1/2)/Γ(i+1/2) for odd k. Rounding a value to 3 decimals moves the tail by under
// 1e-6 here (the density is below 5e-4), hence the tolerance.
func TestChiSquareTableIsRight(t *testing.T) {
	for df, x := range chiSquareCritical001 {
		h := x / 2
		var tail float64
		if df%2 == 0 {
			term := 1.0
			for i := range df / 2 {
				if i > 0 {
					term *= h / float64(i)
				}
				tail += term
			}
			tail *= math.Exp(-h)
		} else {
			tail = math.Erfc(math.Sqrt(h))
			for i := 1; i <= df/2; i++ {
				tail += math.Exp(-h) * math.Pow(h, float64(i)-0.5) / math.Gamma(float64(i)+0.5)
			}
		}
		if math.Abs(tail-0.001) > 1e-6 {
			t.Errorf("df %d: P(X > %v) = %v, want 0.001", df, x, tail)
		}
	}
}
