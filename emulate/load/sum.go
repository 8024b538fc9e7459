package load

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/result"
)

// Sum is what a run's load pods measured together, counted as one Result counts
// it. Both engines that run load pods, emulate and cluster, fill their Result
// from it.
type Sum struct {
	Requests result.Requests
	Errors   result.Errors
	Latency  *hdr.Histogram
	// Pods are the serving pods by name: the answers, errors and connections the
	// load pods counted for each.
	Pods map[string]Pod
	// IntervalS is the reports' timeline interval in seconds.
	IntervalS float64
	Ended     *result.Ended
}

// Add sums up reps, the reports of a run's load pods that reported. The
// latencies' histograms merge; no percentile is averaged.
func Add(reps []*Report) Sum {
	s := Sum{Latency: hdr.New(1, int64(time.Hour), 3), Pods: map[string]Pod{}, IntervalS: 1}
	for _, rep := range reps {
		addRequests(&s.Requests, rep.Requests)
		s.Errors.AddAll(rep.Errors)
		if rep.Latency != nil {
			s.Latency.Merge(rep.Latency)
		}
		for _, p := range rep.Pods {
			sum := s.Pods[p.Name]
			sum.Requests += p.Requests
			sum.Errors += p.Errors
			sum.Connections += p.Connections
			s.Pods[p.Name] = sum
		}
		s.IntervalS = rep.TimelineIntervalS
	}
	s.Ended = MergeEnded(reps)
	return s
}

// Fill sets r's request figures from s over the run's dur seconds: the counts,
// the throughput and rate, the latency and its spectrum, the slow requests over
// slowThreshold (none counted when 0), and the ended requests.
func (s *Sum) Fill(r *result.Result, dur float64, slowThreshold time.Duration) {
	r.Requests = s.Requests
	r.Errors.AddAll(s.Errors)
	r.TimelineIntervalS = s.IntervalS
	if dur > 0 {
		r.ThroughputRPS = result.Round(float64(r.Requests.OK)/dur, 3)
		r.RateRPS = result.Round(float64(r.Requests.Total+r.Requests.InFlight)/dur, 3)
	}
	r.LatencyMS = result.LatencyOf(s.Latency)
	r.LatencySpectrum = result.SpectrumOf(s.Latency)
	r.Slow = slowCount(s.Latency, slowThreshold)
	if r.Requests.OK > 0 {
		r.SlowShare = result.Round(float64(r.Slow)/float64(r.Requests.OK), 6)
	}
	r.Ended = s.Ended
}

func addRequests(sum *result.Requests, r result.Requests) {
	sum.Total += r.Total
	sum.OK += r.OK
	sum.Failed += r.Failed
	sum.InFlight += r.InFlight
	sum.NotSent += r.NotSent
	sum.Behind += r.Behind
	sum.Retried += r.Retried
}

// slowCount is how many recorded latencies exceed threshold (0: none counted), to
// the histogram's precision.
func slowCount(h *hdr.Histogram, threshold time.Duration) int64 {
	if threshold <= 0 {
		return 0
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.From > int64(threshold) {
			n += b.Count
		}
	}
	return n
}
