package result

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// LatencyOf sums up a histogram of latencies in nanoseconds, as every engine
// reports them; the zero Latency when it is empty.
func LatencyOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Min: MS(h.Min()), Mean: Round(h.Mean()/1e6, 3),
		P50: MS(h.ValueAtQuantile(50)), P90: MS(h.ValueAtQuantile(90)),
		P95: MS(h.ValueAtQuantile(95)), P99: MS(h.ValueAtQuantile(99)),
		P999: MS(h.ValueAtQuantile(99.9)), Max: MS(h.Max()),
	}
}

// SpectrumOf is HdrHistogram's percentile distribution of a histogram of latencies
// in nanoseconds: five steps per halving of the remaining tail, as its percentile
// output prints them. Nil when it is empty.
func SpectrumOf(h *hdr.Histogram) []Percentile {
	if h.TotalCount() == 0 {
		return nil
	}
	var out []Percentile
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		out = append(out, Percentile{Percentile: Round(b.Quantile, 6), MS: MS(b.ValueAt), Count: b.Count})
	}
	return out
}

// MS is nanoseconds in milliseconds, to the microsecond.
func MS(ns int64) float64 { return Round(float64(ns)/1e6, 3) }

// Round keeps JSON short and stable: digits beyond these are noise in a measurement.
func Round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
