package dns

import (
	"slices"
	"testing"

	"trafficlab/sim"
)

func TestAnswerShufflesEveryResponseUniformly(t *testing.T) {
	rng := sim.Stream(1, "dns-test")
	ready := []int32{0, 1, 2, 3}
	const n = 40000
	first := make([]int, len(ready))
	for range n {
		a := Answer(ready, rng)
		if len(a) != len(ready) {
			t.Fatalf("answer %v lost records of %v", a, ready)
		}
		first[a[0]]++
	}
	// Each pod comes first with p = 1/4: a binomial count, sd = sqrt(n p (1-p));
	// 5 sd leaves a false alarm about once in 10^6 runs.
	mean, sd := n/4.0, 86.6
	for pod, c := range first {
		if d := float64(c) - mean; d > 5*sd || d < -5*sd {
			t.Errorf("pod %d first in %d of %d answers, want %.0f ± %.0f", pod, c, n, mean, 5*sd)
		}
	}
	if !slices.Equal(ready, []int32{0, 1, 2, 3}) {
		t.Errorf("Answer changed its input: %v", ready)
	}
	if a := Answer[int32](nil, rng); len(a) != 0 {
		t.Errorf("no ready pod answered %v, want NXDOMAIN (empty)", a)
	}
}

func TestResolverOrder(t *testing.T) {
	s := sim.Time(1e9)
	answers := [][]int32{{3, 1, 2}, {2, 3, 1}, {1, 2, 3}, {}}
	tests := []struct {
		name  string
		cache Cache
		at    []sim.Time
		want  [][]int32
	}{
		{"no cache: every connection looks up", Cache{}, []sim.Time{0, 0, s},
			[][]int32{{3, 1, 2}, {2, 3, 1}, {1, 2, 3}}},
		{"Java's 30 s cache: the same first address until it expires", Cache{TTL: 30 * s},
			[]sim.Time{0, 10 * s, 29 * s, 30 * s}, [][]int32{{3, 1, 2}, {3, 1, 2}, {3, 1, 2}, {2, 3, 1}}},
		{"aiohttp rotates its cached answer", Cache{TTL: 10 * s, Pick: Rotate},
			[]sim.Time{0, 1, 2, 3, 10 * s}, [][]int32{{3, 1, 2}, {1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {2, 3, 1}}},
		{"an empty answer is NXDOMAIN and not kept", Cache{TTL: Forever},
			[]sim.Time{0, 0}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Resolver[int32]
			lookups := 0
			lookup := func() []int32 {
				lookups++
				if tt.want == nil {
					return answers[3]
				}
				return answers[lookups-1]
			}
			for i, at := range tt.at {
				got := r.Order(at, tt.cache, lookup, nil, nil)
				var want []int32
				if tt.want != nil {
					want = tt.want[i]
				}
				if !slices.Equal(got, want) {
					t.Errorf("connection %d at %v tries %v, want %v", i, at, got, want)
				}
			}
			if tt.want == nil && lookups != len(tt.at) {
				t.Errorf("%d lookups for %d connections after NXDOMAIN, want each to look up again", lookups, len(tt.at))
			}
		})
	}
}

func TestRandomPickIsUniformOverTheCachedAnswer(t *testing.T) {
	rng := sim.Stream(2, "dns-test")
	var r Resolver[int32]
	lookup := func() []int32 { return []int32{7, 8} }
	first := map[int32]int{}
	const n = 10000
	for range n {
		o := r.Order(0, Cache{TTL: Forever, Pick: Random}, lookup, rng, nil)
		if len(o) != 2 {
			t.Fatalf("order %v, want both addresses", o)
		}
		first[o[0]]++
	}
	// Binomial, p = 1/2: sd = 50; 5 sd.
	if d := first[7] - n/2; d > 250 || d < -250 {
		t.Errorf("pod 7 first %d of %d, want %d ± 250", first[7], n, n/2)
	}
}

func TestRefreshWhen(t *testing.T) {
	s := sim.Time(1e9)
	tests := []struct {
		name      string
		f         Refresh
		now, last sim.Time
		at        sim.Time
		ok        bool
	}{
		{"grpc-go puts an early request off to 30 s after the last", Refresh{Every: 30 * s}, 12 * s, 0, 30 * s, true},
		{"grpc-go resolves at once after 30 s", Refresh{Every: 30 * s}, 45 * s, 10 * s, 45 * s, true},
		{"grpc-java drops an early request", Refresh{Every: 30 * s, SkipsEarly: true}, 12 * s, 0, 0, false},
		{"grpc-java resolves at once after 30 s", Refresh{Every: 30 * s, SkipsEarly: true}, 30 * s, 0, 30 * s, true},
	}
	for _, tt := range tests {
		at, ok := tt.f.When(tt.now, tt.last)
		if at != tt.at || ok != tt.ok {
			t.Errorf("%s: When(%v, %v) = %v, %v; want %v, %v", tt.name, tt.now, tt.last, at, ok, tt.at, tt.ok)
		}
	}
}
