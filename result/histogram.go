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

// LatencyBetween sums up a histogram of latencies in nanoseconds whose exact
// fastest and slowest, minNS and maxNS, are known. HdrHistogram reports a
// percentile as the highest value equivalent to its bucket (ValueAtPercentile →
// highestEquivalentValue, hdr.go), Min as the lowest and Max as the highest: up to
// a bucket, 1/1024 of the value at 3 significant digits, beside what was recorded,
// so a run whose every request took exactly its 2 s timeout would report a p50 of
// 2.000683 s, above the timeout, and an exact 1.5 ms a min of 1.499 ms. Here min
// and max are the exact ones, and each percentile is its bucket's middle (as
// HdrHistogram's medianEquivalentValue, which its Mean uses), within half a bucket
// of any value in it, clamped into [min, max]; the mean too.
func LatencyBetween(h *hdr.Histogram, minNS, maxNS int64) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	clamp := func(ns int64) int64 { return min(max(ns, minNS), maxNS) }
	at := func(p float64) float64 { return MS(clamp(middle(h, h.ValueAtPercentile(p)))) }
	mean := min(max(h.Mean(), float64(minNS)), float64(maxNS))
	return Latency{
		Min: MS(minNS), Mean: Round(mean/1e6, 3),
		P50: at(50), P90: at(90), P95: at(95), P99: at(99), P999: at(99.9),
		Max: MS(maxNS),
	}
}

// middle is the middle of the bucket whose highest equivalent value is high: its
// lowest equivalent value is found by bisection with ValuesAreEquivalent (a bucket
// is at most 1/1024 of its values wide, so the search spans a few dozen steps).
func middle(h *hdr.Histogram, high int64) int64 {
	lo, hi := max(high-high/512-2, 0), high // lo outside the bucket or 0, hi inside
	for lo < hi {
		mid := lo + (hi-lo)/2
		if h.ValuesAreEquivalent(mid, high) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo + (high-lo+1)/2
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

// Latencies gathers latencies in nanoseconds as the engines record them: an
// HdrHistogram from 1 ns to 1 hour at 3 significant digits, with the exact fastest
// and slowest, summed up by LatencyBetween. Values outside its range are clamped
// into it rather than lost. The zero value is empty and ready to use.
type Latencies struct {
	h        *hdr.Histogram
	min, max int64
}

// highestLatency is the longest latency a Latencies keeps apart, 1 hour in ns.
const highestLatency = int64(3600e9)

// Record adds one latency of ns.
func (l *Latencies) Record(ns int64) {
	v := min(max(ns, 1), highestLatency)
	if l.h == nil {
		l.h = hdr.New(1, highestLatency, 3)
	}
	if l.h.TotalCount() == 0 || v < l.min {
		l.min = v
	}
	l.max = max(l.max, v)
	_ = l.h.RecordValue(v)
}

// Latency sums the latencies up; the zero Latency when there are none.
func (l *Latencies) Latency() Latency {
	if l.h == nil || l.h.TotalCount() == 0 {
		return Latency{}
	}
	return LatencyBetween(l.h, l.min, l.max)
}

// Buckets are the non-empty buckets, as each one's lowest value and count, with the
// exact extremes: what another Latencies needs to add these to its own (AddBuckets).
func (l *Latencies) Buckets() (values, counts []int64, lo, hi int64) {
	if l.h == nil {
		return nil, nil, 0, 0
	}
	for _, b := range l.h.Distribution() {
		if b.Count > 0 {
			values, counts = append(values, b.From), append(counts, b.Count)
		}
	}
	return values, counts, l.min, l.max
}

// AddBuckets adds what Buckets gave of another Latencies: each value counts times,
// the extremes widened to lo and hi.
func (l *Latencies) AddBuckets(values, counts []int64, lo, hi int64) {
	if len(values) == 0 {
		return
	}
	if l.h == nil {
		l.h = hdr.New(1, highestLatency, 3)
	}
	if l.h.TotalCount() == 0 || lo < l.min {
		l.min = lo
	}
	l.max = max(l.max, hi)
	for i, v := range values {
		_ = l.h.RecordValues(v, counts[i])
	}
}
