package simulate

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/result"
)

// serviceFigures is what a service's pods did, for a scenario with calls: over the
// run, and the latencies of the timeline interval in progress.
type serviceFigures struct {
	requests, errors int64
	latency          result.Latencies
	interval         *hdr.Histogram
}

// serviceAnswered records what service si's pod did with request j: for a scenario
// with calls, each service's own figures.
func (e *Engine) serviceAnswered(j *job) {
	f := &e.svcFigures[e.pods[j.pod].svc]
	f.requests++
	v := j.spent.atPod()
	f.latency.Record(v)
	if f.interval == nil {
		f.interval = hdr.New(1, int64(3600e9), 2)
	}
	_ = f.interval.RecordValue(min(max(v, 1), f.interval.HighestTrackableValue()))
}

// intervalP99s are each service's p99 at its pods in the timeline interval that
// ends (0: none answered), and starts the next.
func (e *Engine) intervalP99s() []int64 {
	out := make([]int64, len(e.svcFigures))
	for i := range e.svcFigures {
		if h := e.svcFigures[i].interval; h != nil && h.TotalCount() > 0 {
			out[i] = h.ValueAtQuantile(99)
			h.Reset()
		}
	}
	return out
}

// edgeResults are the edges' figures, in the order their callers list them.
func (e *Engine) edgeResults() []result.Edge {
	var out []result.Edge
	for i := range e.edges {
		ed := &e.edges[i]
		d := &e.deps[ed.dep]
		re := result.Edge{
			From: e.services[ed.from].name, To: e.services[ed.to].name,
			Requests: ed.requests, Attempts: ed.attempts, Retries: ed.retries,
			Errors: errorsOf(ed.errors), AttemptErrors: errorsOf(ed.attemptErrors),
			LatencyMS: ed.latency.Latency(), ConnectionsOpened: d.opened, PeakOpen: d.peak,
		}
		for _, r := range d.reached {
			if r {
				re.PodsReached++
			}
		}
		out = append(out, re)
	}
	return out
}
