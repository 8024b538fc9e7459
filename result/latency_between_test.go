package result

import (
	"math"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestLatencyBetween: with the exact extremes known, min and max are exact and
// every percentile lies in [min, max], within half a bucket (1/2048, then the
// microsecond's rounding) of the recorded value: an exact 1.5 ms is not 1.499 ms,
// a run of 2 s timeouts has no p99 above 2 s.
func TestLatencyBetween(t *testing.T) {
	cases := []struct {
		name   string
		values []int64 // ns
		p50    float64 // ms, the recorded value the median stands for
	}{
		{"one request of 1.5 ms", []int64{1_500_000}, 1.5},
		{"every request at a 2 s timeout", []int64{2e9, 2e9, 2e9, 2e9}, 2000},
		{"spread", []int64{1_000_000, 1_234_567, 2_000_000, 5e6, 1e8}, 2},
	}
	for _, c := range cases {
		h := hdr.New(1, 3600e9, 3)
		lo, hi := c.values[0], c.values[0]
		for _, v := range c.values {
			_ = h.RecordValue(v)
			lo, hi = min(lo, v), max(hi, v)
		}
		l := LatencyBetween(h, lo, hi)
		if l.Min != MS(lo) || l.Max != MS(hi) {
			t.Errorf("%s: min %v max %v, want the exact %v and %v", c.name, l.Min, l.Max, MS(lo), MS(hi))
		}
		for _, p := range []float64{l.P50, l.P90, l.P95, l.P99, l.P999, l.Mean} {
			if p < l.Min || p > l.Max {
				t.Errorf("%s: %v outside [%v, %v]", c.name, p, l.Min, l.Max)
			}
		}
		if tol := c.p50/2048 + 0.0005; math.Abs(l.P50-c.p50) > tol {
			t.Errorf("%s: p50 %v, want %v within half a bucket (%v)", c.name, l.P50, c.p50, tol)
		}
	}
}
