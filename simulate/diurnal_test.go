package simulate

import (
	"math"
	"testing"

	"trafficlab/result"
	"trafficlab/scenario"
)

// A diurnal open loop sends (min+max)/2 per second over whole periods, and at each
// moment the local rate; per-minute counts follow the cosine within Poisson noise.
func TestDiurnalClientFollowsTheCurve(t *testing.T) {
	in := `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: diurnal}
spec:
  duration: 2h
  services:
  - name: web
    replicas: 2
    pod: {serviceTime: {distribution: constant, value: 100us}}
  clients:
  - name: load
    target: web
    arrival: poisson
    rateCurve: {diurnal: {min: 10/s, max: 50/s, period: 1h, peakAt: 30m}}
  report: {samples: 0}
`
	r := runYAML(t, in)
	// Two periods at a mean of 30/s: 216,000 expected; Poisson sd √216000 ≈ 465, so
	// 4 sd is 1,860.
	if got := float64(r.Requests.Total); math.Abs(got-216000) > 1860 {
		t.Errorf("%v requests, want 216000 ± 1860", got)
	}
	// Each timeline second near the peak (30 min) and the trough (0, 60 min).
	peak, trough := 0.0, 0.0
	for _, p := range r.Timeline {
		switch s := p.TS; {
		case s >= 25*60 && s < 35*60:
			peak += float64(p.Requests)
		case s >= 55*60 && s < 65*60:
			trough += float64(p.Requests)
		}
	}
	// Over ±5 min around the peak the rate averages 30 + 20·sin(π/6)/(π/6) = 49.1/s,
	// around the trough 30 − 19.1 = 10.9/s; 600 s each: 29,459 and 6,541, sd 172 and 81.
	if math.Abs(peak-29459) > 4*172 || math.Abs(trough-6541) > 4*81 {
		t.Errorf("peak %v trough %v requests, want 29459 ± 688 and 6541 ± 324", peak, trough)
	}
}

// runYAML simulates a whole scenario document.
func runYAML(t testing.TB, src string, sets ...string) *result.Result {
	t.Helper()
	e := buildYAML(t, src, sets...)
	e.Run(nil)
	return e.Result()
}

// buildYAML sets a whole scenario document up, to run.
func buildYAML(t testing.TB, src string, sets ...string) *Engine {
	t.Helper()
	sc, _, diags := scenario.Load("test.yaml", []byte(src), sets)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
