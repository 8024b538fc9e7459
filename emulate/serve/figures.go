package serve

import (
	"sync"
	"time"

	"trafficlab/result"
)

// Figures are what a pod's app did, in a form that adds up across pods: emulate
// reads every pod's (`serve --figures FILE`, written when the process exits) into
// the Result's services[] and edges[], as simulate counts them.
type Figures struct {
	// Pod and Service name the pod and its service.
	Pod     string `json:"pod"`
	Service string `json:"service"`
	// Requests the app answered, and Errors of them answered 503 because a call it
	// made failed.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// Held is the time the app held each answered request: from reaching it to the
	// answer leaving it.
	Held Bars `json:"held_ns"`
	// Calls are the pod's calls per Service it calls, by the Service's name.
	Calls []CallFigures `json:"calls"`
}

// CallFigures are a pod's calls to one Service.
type CallFigures struct {
	// Edge is the Result's edge of these calls alone.
	Edge result.Edge `json:"edge"`
	// Latency is the answered calls' latency as the pod saw it.
	Latency Bars `json:"latency_ns"`
	// Answered are the attempts each pod of the Service answered, by its name.
	Answered map[string]int64 `json:"answered"`
}

// Bars are a histogram of nanoseconds as its values and their counts, with the
// exact extremes: what HdrHistogram holds, written out without its empty buckets.
type Bars struct {
	Values []int64 `json:"values"`
	Counts []int64 `json:"counts"`
	Min    int64   `json:"min"`
	Max    int64   `json:"max"`
}

// latencies are result.Latencies for handlers running at once.
type latencies struct {
	mu sync.Mutex
	l  result.Latencies
}

func newLatencies() *latencies { return &latencies{} }

func (l *latencies) record(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l.Record(int64(d))
}

// bars writes the histogram out.
func (l *latencies) bars() Bars {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b Bars
	b.Values, b.Counts, b.Min, b.Max = l.l.Buckets()
	return b
}

// latency sums the latencies up.
func (l *latencies) latency() result.Latency {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.l.Latency()
}

// AddTo adds b to l.
func (b Bars) AddTo(l *result.Latencies) { l.AddBuckets(b.Values, b.Counts, b.Min, b.Max) }

// Figures are the app's figures so far.
func (s *Server) Figures() Figures {
	f := Figures{Pod: s.cfg.Name, Service: s.cfg.Service, Requests: s.answered.Load(), Errors: s.unavailable.Load(), Held: s.held.bars()}
	for _, svc := range sortedNames(s.callees) {
		f.Calls = append(f.Calls, s.callees[svc].figures(s.cfg.Service, svc))
	}
	return f
}
