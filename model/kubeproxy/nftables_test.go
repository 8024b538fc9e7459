package kubeproxy

import (
	"math"
	"testing"
)

// reciprocal_scale maps r to floor(r·n/2^32): element i owns the draws from ceil(i·2^32/n)
// up, so the smallest draw of each element picks it and the draw just below picks the one
// before.
func TestNftablesPickBoundaries(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 7, 1000} {
		if got := NftablesPick(n, 0); got != 0 {
			t.Errorf("n=%d r=0: %d", n, got)
		}
		if got := NftablesPick(n, math.MaxUint32); got != n-1 {
			t.Errorf("n=%d r=max: %d, want %d", n, got, n-1)
		}
		for i := 1; i < n; i++ {
			first := (uint64(i)<<32 + uint64(n) - 1) / uint64(n) // ceil(i·2^32/n)
			if got := NftablesPick(n, uint32(first)); got != i {
				t.Errorf("n=%d r=%d: %d, want %d", n, first, got, i)
			}
			if got := NftablesPick(n, uint32(first-1)); got != i-1 {
				t.Errorf("n=%d r=%d: %d, want %d", n, first-1, got, i-1)
			}
		}
	}
}

// 100,000 connections for each n: the chi-square statistic has n-1 degrees of freedom.
// reciprocal_scale's own bias (at most 1 draw in 2^32 per element) cannot show here.
func TestNftablesPickIsUniform(t *testing.T) {
	const draws = 100000
	for _, n := range []int{2, 3, 5, 7} {
		b := mustNew(t, "nftables", "", newRNG(uint64(n)))
		eps := make([]Endpoint, n)
		for i := range eps {
			eps[i] = Endpoint(i)
		}
		b.SetEndpoints(eps)
		counts := make([]int, n)
		for range draws {
			ep, _ := b.Pick(0)
			counts[ep]++
		}
		if x := chiSquare(counts, draws); x > chiSquareCritical001[n-1] {
			t.Errorf("n=%d counts %v: chi-square %.2f > %.3f (df %d, p = 0.001)", n, counts, x, chiSquareCritical001[n-1], n-1)
		}
	}
}
