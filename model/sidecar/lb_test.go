package sidecar

import (
	"math"
	"testing"
)

func TestNewBalancer(t *testing.T) {
	cases := []struct {
		name string
		want string
	}{
		{"", "least"}, // Istio's default (cluster_traffic_policy.go, defaultLBAlgorithm)
		{"LEAST_REQUEST", "least"},
		{"LEAST_CONN", "least"}, // deprecated alias
		{"least_request", "least"},
		{"ROUND_ROBIN", "rr"},
		{"RANDOM", "random"},
		{"MAGLEV", ""},
	}
	for _, c := range cases {
		b, err := NewBalancer(c.name, newRNG(1))
		got := ""
		switch b.(type) {
		case LeastRequest:
			got = "least"
		case *RoundRobin:
			got = "rr"
		case Random:
			got = "random"
		}
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("NewBalancer(%q) = %T, %v; want %s", c.name, b, err, c.want)
		}
	}
}

func TestEmptyHostListPicksNothing(t *testing.T) {
	for _, b := range []Balancer{NewRoundRobin(newRNG(1)), LeastRequest{}, Random{}} {
		if got := b.Pick(nil, newRNG(1)); got != -1 {
			t.Errorf("%T: Pick(nil) = %d, want -1", b, got)
		}
	}
}

// round_robin_lb.h: the index starts at the LB's random seed_ and each pick takes
// hosts[index++ % len]; a host-set change keeps the index.
func TestRoundRobinSeededStartAndHostChange(t *testing.T) {
	twin := newRNG(7)
	seed := twin.Uint64()
	rr := NewRoundRobin(newRNG(7))
	hosts := hostsWithActive(0, 0, 0)
	for k := range uint64(7) {
		if got, want := rr.Pick(hosts, nil), int((seed+k)%3); got != want {
			t.Fatalf("pick %d = %d, want %d", k, got, want)
		}
	}
	hosts = hostsWithActive(0, 0, 0, 0, 0) // scale-out: rotation continues modulo 5
	for k := uint64(7); k < 12; k++ {
		if got, want := rr.Pick(hosts, nil), int((seed+k)%5); got != want {
			t.Fatalf("after change, pick %d = %d, want %d", k, got, want)
		}
	}
}

// Each worker seeds its own LB: over many workers the first pick is uniform over the hosts,
// and over any n consecutive picks one worker hits every host exactly once.
func TestRoundRobinPerWorkerStart(t *testing.T) {
	const n, workers = 4, 40000
	hosts := hostsWithActive(0, 0, 0, 0)
	counts := make([]int, n)
	rng := newRNG(3)
	for range workers {
		rr := NewRoundRobin(rng)
		var seen [n]int
		first := rr.Pick(hosts, nil)
		seen[first]++
		for range n - 1 {
			seen[rr.Pick(hosts, nil)]++
		}
		if seen != [n]int{1, 1, 1, 1} {
			t.Fatalf("%d consecutive picks hit %v, want each host once", n, seen)
		}
		counts[first]++
	}
	if x := chiSquare(counts, nil); x > chiSquareCritical001[n-1] {
		t.Errorf("first picks %v: chi-square %.2f > %.3f (df %d, p = 0.001)", counts, x, chiSquareCritical001[n-1], n-1)
	}
}

// With choice_count c and draws with replacement, the host of rank r (0 = fewest active,
// all counts distinct) wins when every draw ranks ≥ r and not every draw ranks ≥ r+1:
// P(r) = ((n−r)^c − (n−r−1)^c) / n^c. Two hosts: the busier wins 1/4.
func TestLeastRequestChoiceProbabilities(t *testing.T) {
	const draws = 200000
	cases := []struct {
		name    string
		active  []int32
		choices int
	}{
		{"two hosts", []int32{0, 5}, 0},
		{"four hosts, default 2 choices", []int32{3, 0, 9, 1}, 0},
		{"five hosts, 3 choices", []int32{4, 2, 8, 0, 6}, 3},
	}
	for _, c := range cases {
		n := len(c.active)
		ch := c.choices
		if ch == 0 {
			ch = DefaultChoiceCount
		}
		p := make([]float64, n)
		for i, a := range c.active {
			r := 0 // rank: hosts with fewer active
			for _, b := range c.active {
				if b < a {
					r++
				}
			}
			p[i] = (math.Pow(float64(n-r), float64(ch)) - math.Pow(float64(n-r-1), float64(ch))) / math.Pow(float64(n), float64(ch))
		}
		lb := LeastRequest{Choices: c.choices}
		hosts := hostsWithActive(c.active...)
		rng := newRNG(11)
		counts := make([]int, n)
		for range draws {
			counts[lb.Pick(hosts, rng)]++
		}
		if x := chiSquare(counts, p); x > chiSquareCritical001[n-1] {
			t.Errorf("%s: counts %v for p %v: chi-square %.2f > %.3f", c.name, counts, p, x, chiSquareCritical001[n-1])
		}
	}
}

// A later draw replaces the candidate only with strictly fewer active requests, so among
// equals the first draw wins (least_request_lb.cc, unweightedHostPickNChoices).
func TestLeastRequestTieKeepsFirstDraw(t *testing.T) {
	hosts := hostsWithActive(2, 2, 2, 2, 2)
	twin, rng := newRNG(5), newRNG(5)
	for k := range 1000 {
		first := twin.IntN(len(hosts))
		twin.IntN(len(hosts))
		if got := (LeastRequest{}).Pick(hosts, rng); got != first {
			t.Fatalf("pick %d = %d, want the first draw %d", k, got, first)
		}
	}
	// A lower count wins whichever draw found it.
	hosts = hostsWithActive(5, 0)
	twin, rng = newRNG(9), newRNG(9)
	for k := range 1000 {
		a, b := twin.IntN(2), twin.IntN(2)
		want := a
		if hosts[b].Active < hosts[a].Active {
			want = b
		}
		if got := (LeastRequest{}).Pick(hosts, rng); got != want {
			t.Fatalf("pick %d = %d, want %d", k, got, want)
		}
	}
}

func TestRandomIsUniform(t *testing.T) {
	const n, draws = 5, 100000
	hosts := hostsWithActive(9, 0, 0, 0, 0) // RANDOM ignores load
	counts := make([]int, n)
	rng := newRNG(21)
	for range draws {
		counts[(Random{}).Pick(hosts, rng)]++
	}
	if x := chiSquare(counts, nil); x > chiSquareCritical001[n-1] {
		t.Errorf("counts %v: chi-square %.2f > %.3f", counts, x, chiSquareCritical001[n-1])
	}
}

// chooseHost re-picks while the pick was tried, at most host_selection_retry_max_attempts
// times, then takes the last pick whatever it is.
func TestPickAvoidingRoundRobin(t *testing.T) {
	hosts := hostsWithActive(0, 0, 0, 0)
	twin := newRNG(2)
	start := twin.Uint64()
	rr := NewRoundRobin(newRNG(2))
	id := func(k uint64) int32 { return hosts[(start+k)%4].ID }
	// The first two picks were tried: the third is taken, and the index moved three places.
	got := PickAvoiding(rr, hosts, nil, []int32{id(0), id(1)}, IstioHostSelectionRetryMaxAttempts)
	if hosts[got].ID != id(2) {
		t.Errorf("picked %d, want %d", hosts[got].ID, id(2))
	}
	if next := rr.Pick(hosts, nil); hosts[next].ID != id(3) {
		t.Errorf("next pick %d, want %d (three picks consumed)", hosts[next].ID, id(3))
	}
	// Every host tried: 1 + 5 picks, then the last one is accepted.
	rr = NewRoundRobin(newRNG(2))
	all := []int32{hosts[0].ID, hosts[1].ID, hosts[2].ID, hosts[3].ID}
	got = PickAvoiding(rr, hosts, nil, all, IstioHostSelectionRetryMaxAttempts)
	if hosts[got].ID != id(5) {
		t.Errorf("all tried: picked %d, want the sixth pick %d", hosts[got].ID, id(5))
	}
	if PickAvoiding(rr, nil, nil, all, 5) != -1 {
		t.Error("no hosts: want -1")
	}
}

// RANDOM over n hosts with one tried: the retry lands on it only if all 1+m picks do,
// probability n^−(1+m). With Istio's m = 5 and n = 3 that is 1/729; without the predicate
// (m = 0) it is 1/3.
func TestPickAvoidingProbability(t *testing.T) {
	const trials = 300000
	hosts := hostsWithActive(0, 0, 0)
	tried := []int32{hosts[1].ID}
	for _, m := range []int{0, 1, IstioHostSelectionRetryMaxAttempts} {
		rng := newRNG(uint64(40 + m))
		bad := 0
		for range trials {
			if PickAvoiding(Random{}, hosts, rng, tried, m) == 1 {
				bad++
			}
		}
		p := math.Pow(1.0/3, float64(1+m))
		if !within(bad, trials, p, 5) {
			t.Errorf("m=%d: landed on the tried host %d times in %d, expected %.1f", m, bad, trials, p*trials)
		}
	}
}

// The engine calls Pick once per request: it must not allocate.
func TestPickDoesNotAllocate(t *testing.T) {
	hosts := hostsWithActive(3, 1, 4, 1, 5)
	rng := newRNG(1)
	tried := []int32{hosts[0].ID}
	for _, b := range []Balancer{NewRoundRobin(rng), LeastRequest{}, Random{}} {
		if a := testing.AllocsPerRun(1000, func() { PickAvoiding(b, hosts, rng, tried, 5) }); a != 0 {
			t.Errorf("%T: %v allocations per pick", b, a)
		}
	}
}
