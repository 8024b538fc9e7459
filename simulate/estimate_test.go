package simulate

import (
	"testing"

	"trafficlab/examples"
	"trafficlab/scenario"
)

// TestOfferedEstimatesEveryExample: the estimate a long run is announced with is
// within a factor of two of the requests every example sends (10 s of each). The
// estimate takes every call to succeed at its first attempt; a run whose calls fail
// sends up to the product of (1 + retries) along its deepest chain of calls more.
func TestOfferedEstimatesEveryExample(t *testing.T) {
	for _, ex := range examples.List() {
		e := buildExample(t, ex.Name, "spec.duration=10s")
		want := Offered(e.sc)
		e.Run(nil)
		got := float64(e.Requests())
		t.Logf("%s: estimated %.0f, sent %.0f", ex.Name, want, got)
		if got > 2*want*retried(e.sc) || got < want/2 {
			t.Errorf("%s: estimated %.0f requests, the run sent %.0f", ex.Name, want, got)
		}
	}
}

// retried is the most attempts a client's request can lead to, over the requests
// every call leads to when each succeeds at once: along the deepest chain, the
// product of each call's (1 + retries).
func retried(sc *scenario.Scenario) float64 {
	var most func(name string, depth int) float64
	most = func(name string, depth int) float64 {
		svc := serviceNamed(sc, name)
		if svc == nil || depth > len(sc.Spec.Services) {
			return 1
		}
		m := 1.0
		for _, c := range calls(svc) {
			m = max(m, float64(1+c.Retries)*most(c.Service, depth+1))
		}
		return m
	}
	m := 1.0
	for _, c := range sc.Spec.Clients {
		m = max(m, most(c.Target, 0))
	}
	return m
}
