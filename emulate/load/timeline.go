package load

import (
	"math"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/result"
)

// Timeline merges the load pods' per-interval latency histograms as they hand
// them over, and keeps only each interval's percentiles once every load has
// passed it: memory stays flat however long the run.
type Timeline struct {
	mu   sync.Mutex
	last []int64 // per load, the last interval it handed over; MaxInt64 once it ended
	open map[int64]*hdr.Histogram
	pct  map[int64][4]float64
}

// NewTimeline is the timeline of a run of loads load pods.
func NewTimeline(loads int) *Timeline {
	t := &Timeline{last: make([]int64, loads), open: map[int64]*hdr.Histogram{}, pct: map[int64][4]float64{}}
	for i := range t.last {
		t.last[i] = -1
	}
	return t
}

// Adder is load i's ReadStream callback: a load hands its intervals over in order.
func (t *Timeline) Adder(i int) func(sec int64, h *hdr.Histogram) {
	return func(sec int64, h *hdr.Histogram) {
		t.mu.Lock()
		defer t.mu.Unlock()
		m := t.open[sec]
		if m == nil {
			m = hdr.New(1, int64(time.Hour), 2)
			t.open[sec] = m
		}
		m.Merge(h)
		t.last[i] = sec
		t.settle()
	}
}

// Ended notes that load i has ended: it hands nothing more over.
func (t *Timeline) Ended(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last[i] = math.MaxInt64
	t.settle()
}

// settle reduces the intervals every load has passed to percentiles.
func (t *Timeline) settle() {
	upTo := slices.Min(t.last)
	for sec, h := range t.open {
		if sec <= upTo {
			t.pct[sec] = [4]float64{result.MS(h.ValueAtQuantile(50)), result.MS(h.ValueAtQuantile(90)),
				result.MS(h.ValueAtQuantile(99)), result.MS(h.ValueAtQuantile(99.9))}
			delete(t.open, sec)
		}
	}
}

// Percentiles are interval sec's p50, p90, p99 and p99.9 in milliseconds, once
// settled.
func (t *Timeline) Percentiles(sec int64) [4]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pct[sec]
}

// Points add up reps' timelines, interval by interval (step seconds), with the
// percentiles of their merged histograms. replicasAt counts each service's pods
// and ready endpoints at a time since the start, as the engine saw them.
func (t *Timeline) Points(reps []*Report, step float64, replicasAt func(time.Duration) (replicas, ready map[string]int)) []result.Point {
	var out []result.Point
	for i := 0; ; i++ {
		var pt *result.Point
		for _, rep := range reps {
			if i >= len(rep.Timeline) {
				continue
			}
			lp := rep.Timeline[i]
			if pt == nil {
				pt = &result.Point{TS: lp.TS}
				pt.Replicas, pt.ReadyEndpoints = replicasAt(time.Duration((lp.TS + step) * 1e9))
				pt.DesiredReplicas = pt.Replicas
			}
			pt.Requests += lp.Requests
			pt.Errors += lp.Errors
			pt.Slow += lp.Slow
			for kind, n := range lp.ErrorsByKind {
				if pt.ErrorsByKind == nil {
					pt.ErrorsByKind = &result.Errors{}
				}
				if k, ok := result.ErrorKindNamed(kind); ok { // "other" counts in the totals only
					pt.ErrorsByKind.Add(k, n)
				}
			}
			for pod, n := range lp.PodRequests {
				if pt.PodRequests == nil {
					pt.PodRequests = map[string]int64{}
				}
				pt.PodRequests[pod] += n
			}
		}
		if pt == nil {
			return out
		}
		p := t.Percentiles(int64(i))
		pt.P50MS, pt.P90MS, pt.P99MS, pt.P999MS = p[0], p[1], p[2], p[3]
		out = append(out, *pt)
	}
}
