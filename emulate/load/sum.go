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
	// Slow counts the answers over the slow threshold the loads were given.
	Slow int64
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
		s.Slow += rep.Slow
		s.Errors.AddAll(rep.Errors)
		if rep.Latency != nil {
			s.Latency.Merge(rep.Latency)
		}
		for _, p := range rep.Pods {
			sum := s.Pods[p.Name]
			sum.Requests += p.Requests
			sum.Errors += p.Errors
			sum.Connections += p.Connections
			sum.Slow += p.Slow
			s.Pods[p.Name] = sum
		}
		s.IntervalS = rep.TimelineIntervalS
	}
	s.Ended = MergeEnded(reps)
	return s
}

// Fill sets r's request figures from s over the run's dur seconds: the counts,
// the throughput and rate, the latency and its spectrum, the slow requests, and
// the ended requests.
func (s *Sum) Fill(r *result.Result, dur float64) {
	r.Requests = s.Requests
	r.Errors.AddAll(s.Errors)
	r.TimelineIntervalS = s.IntervalS
	if dur > 0 {
		r.ThroughputRPS = result.Round(float64(r.Requests.OK)/dur, 3)
		r.RateRPS = result.Round(float64(r.Requests.Total+r.Requests.InFlight)/dur, 3)
	}
	r.LatencyMS = result.LatencyOf(s.Latency)
	r.LatencySpectrum = result.SpectrumOf(s.Latency)
	r.Slow = s.Slow
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

// SlowShares sets the pods' Slow and SlowShare from what the loads counted for
// each (counted, by pod name), and the nodes' from their pods': a share of the
// successful answers.
func SlowShares(pods []result.Pod, nodes []result.Node, counted map[string]Pod) {
	slow, ok := map[string]int64{}, map[string]int64{}
	for i := range pods {
		p := &pods[i]
		c := counted[p.Name]
		served := c.Requests - c.Errors
		p.Slow = c.Slow
		if served > 0 {
			p.SlowShare = result.Round(float64(c.Slow)/float64(served), 6)
		}
		slow[p.Node] += c.Slow
		ok[p.Node] += served
	}
	for i := range nodes {
		n := &nodes[i]
		n.Slow = slow[n.Name]
		if ok[n.Name] > 0 {
			n.SlowShare = result.Round(float64(n.Slow)/float64(ok[n.Name]), 6)
		}
	}
}
