package serve

import (
	"sync"
	"time"

	"trafficlab/result"
	"trafficlab/scenario"
)

// FiguresLine begins the line of a pod's log that holds its figures (serve
// --figures -), the rest of the line being their JSON.
const FiguresLine = "serve: figures "

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

// AddFigures adds the pods' figures up into r: each service's own, each edge's in
// the order simulate lists them (services in order, each one's callees as its calls
// first name them), and the calls each pod answered to its requests.
func AddFigures(r *result.Result, sc *scenario.Scenario, figs []Figures) {
	r.Services = sc.ServiceConfigs()
	answered := map[string]int64{}
	for i := range r.Services {
		rs := &r.Services[i]
		var held result.Latencies
		for _, f := range figs {
			if f.Service == rs.Name {
				rs.Requests += f.Requests
				rs.Errors += f.Errors
				f.Held.AddTo(&held)
			}
		}
		lat := held.Latency()
		rs.Calls, rs.LatencyMS = true, &lat
	}
	for i := range sc.Spec.Services {
		from := sc.Spec.Services[i].Name
		for _, to := range sc.Spec.Services[i].Pod.Callees() {
			e := result.Edge{From: from, To: to}
			var lat result.Latencies
			reached := map[string]bool{}
			for _, f := range figs {
				for _, cf := range f.Calls {
					if cf.Edge.From != from || cf.Edge.To != to {
						continue
					}
					e.Requests += cf.Edge.Requests
					e.Attempts += cf.Edge.Attempts
					e.Retries += cf.Edge.Retries
					e.Errors.AddAll(cf.Edge.Errors)
					e.AttemptErrors.AddAll(cf.Edge.AttemptErrors)
					e.ConnectionsOpened += cf.Edge.ConnectionsOpened
					e.PeakOpen += cf.Edge.PeakOpen
					cf.Latency.AddTo(&lat)
					for pod, n := range cf.Answered {
						reached[pod] = true
						answered[pod] += n
					}
				}
			}
			e.LatencyMS = lat.Latency()
			e.PodsReached = len(reached)
			r.Edges = append(r.Edges, e)
		}
	}
	for i := range r.Pods {
		r.Pods[i].Requests += answered[r.Pods[i].Name]
	}
}
