package simulate

import (
	"math/rand/v2"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/result"
	"trafficlab/sim"
)

// record adds one finished request (kind -1: success) to the histogram buckets and
// the sample.
func (s *stats) record(sent, now sim.Time, kind int8) {
	s.buckets.add(now - sent)
	s.samples.add(sent, now-sent, kind)
}

// buckets counts every request, failures at their time to failure, in the user's
// latency buckets, as vegeta's hist reporter does (lib/histogram.go: a request falls
// in the last bucket whose lower bound it reaches; the last bucket has no upper bound).
type buckets struct {
	bounds []sim.Time
	counts []int64
}

func (b *buckets) init(bounds []metav1.Duration) {
	for _, d := range bounds {
		b.bounds = append(b.bounds, sim.Duration(d.Duration))
	}
	b.counts = make([]int64, len(b.bounds))
}

func (b *buckets) add(latency sim.Time) {
	if len(b.bounds) == 0 || latency < b.bounds[0] {
		return
	}
	// The first bound above latency, minus one, is its bucket.
	i, _ := slices.BinarySearch(b.bounds, latency+1)
	b.counts[i-1]++
}

func (b *buckets) result() []result.Bucket {
	var total int64
	for _, c := range b.counts {
		total += c
	}
	out := make([]result.Bucket, len(b.bounds))
	for i, from := range b.bounds {
		out[i] = result.Bucket{FromMS: ms(from), Count: b.counts[i]}
		if i+1 < len(b.bounds) {
			to := ms(b.bounds[i+1])
			out[i].ToMS = &to
		}
		if total > 0 {
			out[i].Share = result.Round(float64(b.counts[i])/float64(total), 6)
		}
	}
	return out
}

// reservoir keeps a uniform random sample of at most cap requests however many there
// are (Vitter's algorithm R), so latency over time can be plotted from a bounded
// memory; every request has the same chance to be kept.
type reservoir struct {
	cap  int
	seen int64
	rng  *rand.Rand
	kept []sampled
}

type sampled struct {
	sent, latency sim.Time
	kind          int8
}

func (r *reservoir) init(capacity int, rng *rand.Rand) {
	r.cap, r.rng = capacity, rng
}

func (r *reservoir) add(sent, latency sim.Time, kind int8) {
	if r.cap == 0 {
		return
	}
	r.seen++
	if len(r.kept) < r.cap {
		r.kept = append(r.kept, sampled{sent, latency, kind})
		return
	}
	if j := r.rng.Int64N(r.seen); j < int64(r.cap) {
		r.kept[j] = sampled{sent, latency, kind}
	}
}

// result is the sample in order of sending.
func (r *reservoir) result() []result.Sample {
	kept := slices.Clone(r.kept)
	slices.SortStableFunc(kept, func(a, b sampled) int { return int(a.sent - b.sent) })
	out := make([]result.Sample, len(kept))
	for i, s := range kept {
		out[i] = result.Sample{TS: result.Round(s.sent.Seconds(), 6), LatencyMS: result.Round(ms(s.latency), 4)}
		if s.kind >= 0 {
			out[i].Error = result.ErrorKind(s.kind).String()
		}
	}
	return out
}

func ms(t sim.Time) float64 { return float64(t) / 1e6 }
