package kubeproxy

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// kube-proxy prints 1/(n-i) with %0.10f, so each probability is the exact ten-decimal string
// below and within 0.5e-10 of 1/(n-i); the last rule has no statistic match at all.
func TestIptablesProbabilities(t *testing.T) {
	want := map[int][]float64{
		1: {1},
		2: {0.5, 1},
		3: {0.3333333333, 0.5, 1},
		4: {0.25, 0.3333333333, 0.5, 1},
		5: {0.2, 0.25, 0.3333333333, 0.5, 1},
	}
	for n := 1; n <= 5; n++ {
		got := IptablesProbabilities(n)
		if !slices.Equal(got, want[n]) {
			t.Errorf("IptablesProbabilities(%d) = %v, want %v", n, got, want[n])
		}
		for i, p := range got {
			if d := math.Abs(p - 1/float64(n-i)); d > 0.5e-10 {
				t.Errorf("n=%d rule %d: %v is %g from 1/%d", n, i, p, d, n-i)
			}
		}
	}
	if IptablesProbabilities(0) != nil {
		t.Error("IptablesProbabilities(0) is not empty")
	}
}

// The kernel threshold is lround(2^31 * p) of the printed probability. iptables-save prints
// it back as threshold/2^31 with %.11f (libxt_statistic.c, print_match), which is why
// kube-proxy's 0.3333333333 reads back as 0.33333333349.
func TestStatisticThreshold(t *testing.T) {
	for _, c := range []struct {
		k         int
		threshold uint32
		saved     string
	}{
		{2, 1 << 30, "0.50000000000"},
		{3, 715827883, "0.33333333349"}, // 0.3333333333 × 2^31 = 715827882.595…
		{7, 306783378, "0.14285714272"}, // 0.1428571429 × 2^31 = 306783378.377…
	} {
		th := statisticThreshold(c.k)
		saved := fmt.Sprintf("%.11f", float64(th)/0x80000000)
		if th != c.threshold || saved != c.saved {
			t.Errorf("k=%d: threshold %d (saved as %s), want %d (%s)", c.k, th, saved, c.threshold, c.saved)
		}
	}
}

// IptablesPick draws once per rule it evaluates, masks the draw to 31 bits and stops at the
// first rule whose threshold exceeds it.
func TestIptablesPickWalksTheChain(t *testing.T) {
	const miss, hit = 0x7FFFFFFF, 0
	for _, c := range []struct {
		name  string
		n     int
		draws []uint32
		want  int
	}{
		{"one endpoint needs no draw", 1, nil, 0},
		{"first rule matches", 3, []uint32{hit}, 0},
		{"second rule matches", 3, []uint32{miss, hit}, 1},
		{"falls through to the last rule", 3, []uint32{miss, miss}, 2},
		{"the high bit is masked off", 3, []uint32{0x80000000}, 0},
		{"just below the threshold of 1/3", 3, []uint32{715827882}, 0},
		{"at the threshold of 1/3", 3, []uint32{715827883, hit}, 1},
	} {
		used := 0
		got := IptablesPick(c.n, func() uint32 { used++; return c.draws[used-1] })
		if got != c.want || used != len(c.draws) {
			t.Errorf("%s: rule %d after %d draws, want rule %d after %d", c.name, got, used, c.want, len(c.draws))
		}
	}
}

// The exact probability that endpoint i is chosen is Π_{j<i}(1 - t_j/2^31) · t_i/2^31.
// Each threshold is off 2^31/k by at most 0.5 (lround) plus 2^31 × 0.5e-10 (the ten
// decimals), under 0.61 in all, i.e. 2.9e-10 in probability per rule; over n rules the
// error stays below n × 3e-10.
func TestIptablesExactProbabilities(t *testing.T) {
	for _, n := range []int{2, 3, 5, 7, 100, 1000} {
		tab := thresholdTable(n)
		rest := 1.0
		for i := range n {
			p := rest
			if i < n-1 {
				p *= float64(tab[n-i]) / 0x80000000
			}
			rest -= p
			if d := math.Abs(p - 1/float64(n)); d > float64(n)*3e-10 {
				t.Fatalf("n=%d endpoint %d: probability %v, %g from 1/n", n, i, p, d)
			}
		}
	}
}

// 100,000 connections over 5 endpoints: the chi-square statistic has 4 degrees of freedom;
// the thresholds' bias (above) is far too small to show at this sample size.
func TestIptablesPickIsUniform(t *testing.T) {
	const n, draws = 5, 100000
	b := mustNew(t, "iptables", "", newRNG(42))
	b.SetEndpoints([]Endpoint{10, 11, 12, 13, 14})
	counts := make([]int, n)
	for range draws {
		ep, _ := b.Pick(0)
		counts[ep-10]++
	}
	if x := chiSquare(counts, draws); x > chiSquareCritical001[n-1] {
		t.Errorf("counts %v: chi-square %.2f > %.3f (df %d, p = 0.001)", counts, x, chiSquareCritical001[n-1], n-1)
	}
}

func TestIptablesFollowsEndpointOrder(t *testing.T) {
	// Rule i jumps to endpoint i of the list as given: a draw that matches rule 0 picks the
	// first endpoint written.
	b := &iptablesBalancer{draw: func() uint32 { return 0 }}
	b.SetEndpoints([]Endpoint{7, 3, 5})
	if ep, _ := b.Pick(0); ep != 7 {
		t.Errorf("first rule's endpoint is %d, want 7", ep)
	}
}
