package sidecar

import (
	"math"
	"math/rand/v2"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// chiSquare is Pearson's statistic of counts against expected probabilities p (nil: uniform).
func chiSquare(counts []int, p []float64) float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	x := 0.0
	for i, c := range counts {
		pi := 1 / float64(len(counts))
		if p != nil {
			pi = p[i]
		}
		e := pi * float64(total)
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	return x
}

// chiSquareCritical001[df] is the chi-square quantile with p = 0.001 of exceeding it by chance.
var chiSquareCritical001 = []float64{0, 10.828, 13.816, 16.266, 18.467, 20.515, 22.458, 24.322}

// within reports whether a count is within k standard deviations of its binomial mean n·p.
func within(count, n int, p, k float64) bool {
	mean := float64(n) * p
	return math.Abs(float64(count)-mean) <= k*math.Sqrt(float64(n)*p*(1-p))
}

func hostsWithActive(active ...int32) []Host {
	hs := make([]Host, len(active))
	for i, a := range active {
		hs[i] = Host{ID: int32(100 + i), Active: a}
	}
	return hs
}
