package simulate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"trafficlab/scenario"
)

// overloaded offers a 2-core pod 10 times what it serves (20,000/s of 1 ms each),
// with a timeout much shorter than the run: the requests clients give up on pile up
// at the pod at about 18,000/s.
const overloaded = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: overloaded}
spec:
  duration: 60s
  cluster:
    nodes: [{name: n, count: 1, cpu: "2"}]
  services:
  - name: web
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1ms}
  clients:
  - name: c
    target: web
    rate: 20000/s
    timeout: 100ms
`

// TestOverloadStopsAtTheLiveRequestBound: what the pods hold grows with the run
// when the offered load is far beyond their capacity; the run stops with an error
// naming the pod once they hold liveLimit requests, instead of growing until the
// process runs out of memory.
func TestOverloadStopsAtTheLiveRequestBound(t *testing.T) {
	sc, _, diags := scenario.Load("overloaded.yaml", []byte(overloaded), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	// The pod's backlog grows at the offered rate less the served one: 20,000/s less
	// 2 cores / 1 ms = 18,000/s, so 36,000 live requests take about 2 s.
	e.liveLimit = 36_000
	e.Run(nil)
	err = e.Err()
	if err == nil {
		t.Fatalf("the run went to its end with %d live requests", len(e.jobs)-len(e.freeJobs))
	}
	if !strings.Contains(err.Error(), "at pod web-0") || !strings.Contains(err.Error(), "spec.services[0].replicas") {
		t.Errorf("error %q does not name the pod and the path to sweep", err)
	}
	if len(e.jobs) > e.liveLimit+1 {
		t.Errorf("%d jobs allocated, over the bound %d", len(e.jobs), e.liveLimit)
	}
	// Stopped where the backlog reached the bound: 2 s, give or take the 100 ms
	// before the first requests time out and the start-up of the pod.
	if at := time.Duration(e.k.Now()); at < 1500*time.Millisecond || at > 3*time.Second {
		t.Errorf("stopped at %s, want about 2s", at)
	}
}

// TestOutstandingRequestsStopAtTheBound: with a timeout longer than the run, an
// open loop beyond the pods' capacity keeps every request it sends outstanding; the
// run stops with an error naming the client pod and maxInFlight once they number
// liveLimit, instead of growing until the process runs out of memory.
func TestOutstandingRequestsStopAtTheBound(t *testing.T) {
	sc, _, diags := scenario.Load("overloaded.yaml", []byte(overloaded), []string{"spec.clients[0].timeout=60s"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	// Outstanding requests grow at 20,000/s less the 2,000/s served: 2 s to 36,000.
	e.liveLimit = 36_000
	e.Run(nil)
	err = e.Err()
	if err == nil {
		t.Fatalf("the run went to its end with %d open-loop callers", e.openSlots)
	}
	if !strings.Contains(err.Error(), "in client pod c-0") || !strings.Contains(err.Error(), "spec.clients[0].maxInFlight") {
		t.Errorf("error %q does not name the client pod and maxInFlight", err)
	}
	if e.openSlots > e.liveLimit {
		t.Errorf("%d open-loop callers, over the bound %d", e.openSlots, e.liveLimit)
	}
	if at := time.Duration(e.k.Now()); at < 1500*time.Millisecond || at > 3*time.Second {
		t.Errorf("stopped at %s, want about 2s", at)
	}
}

// TestRunWithinCapacityHasNoError: a run the pods keep up with goes to its end.
func TestRunWithinCapacityHasNoError(t *testing.T) {
	sc, _, diags := scenario.Load("ok.yaml", []byte(strings.Replace(overloaded, "rate: 20000/s", "rate: 1000/s", 1)), []string{"spec.duration=5s"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	e.liveLimit = 36_000
	e.Run(nil)
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(e.k.Now()); got != 5*time.Second {
		t.Errorf("ended at %s", got)
	}
}

// TestZeroTimeRequestsLetTimeAdvance: with no latency and no work, or refused at
// once, a closed loop's request takes no simulated time; each thread then sends at
// most one a nanosecond, where the run used to loop at its first instant for ever.
func TestZeroTimeRequestsLetTimeAdvance(t *testing.T) {
	const zero = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: zero}
spec:
  duration: 1us
  cluster:
    network: {latency: 0s, localLatency: 0s}
  services:
  - name: web
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 0s}
  clients:
  - name: c
    target: web
    threads: 2
`
	for _, sets := range [][]string{nil, {"spec.services[0].replicas=0"}, {"spec.clients[0].connections.reuse=none"}} {
		sc, _, diags := scenario.Load("zero.yaml", []byte(zero), sets)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		e, err := New(sc)
		if err != nil {
			t.Fatal(err)
		}
		e.Run(nil)
		// 2 threads, one request a nanosecond each, over 1,000 ns.
		if got := e.Requests(); got != 2000 {
			t.Errorf("%v: %d requests, want 2000", sets, got)
		}
	}
}

// TestCheckPlacesPodsWithoutCallers: Check finds what New finds, a distribution the
// sampler refuses or a client pod no node takes, and sets up no client callers,
// which a run alone needs.
func TestCheckPlacesPodsWithoutCallers(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		err  string
	}{
		{[]string{"spec.clients[0].rate=", "spec.clients[0].threads=1000"}, ""},
		// A lognormal's p99 can be at most 14.97 times its mean, which dist checks.
		{[]string{"spec.services[0].pod.serviceTime={distribution: lognormal, mean: 1ms, p99: 20ms}"}, "spec.services[0].pod.serviceTime"},
		// Client pods tolerate no taint.
		{[]string{"spec.cluster.nodes[0].taints=[{key: a, effect: NoSchedule}]"}, "spec.clients[0].replicas"},
	} {
		sc, _, diags := scenario.Load("overloaded.yaml", []byte(overloaded), tc.sets)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		_, newErr := New(sc)
		e, checkErr := newEngine(sc, true)
		if (newErr == nil) != (checkErr == nil) || newErr != nil && newErr.Error() != checkErr.Error() {
			t.Errorf("%v: New: %v; Check: %v", tc.sets, newErr, checkErr)
		}
		if tc.err == "" && (checkErr != nil || len(e.slots) != 0 || len(e.cpods) != 0) {
			t.Errorf("%v: Check: %v, with %d callers in %d client pods", tc.sets, checkErr, len(e.slots), len(e.cpods))
		}
		var fe *scenario.FieldError
		if tc.err != "" && (!errors.As(checkErr, &fe) || !strings.HasPrefix(fe.Path, tc.err)) {
			t.Errorf("%v: Check: %v; want an error at %s", tc.sets, checkErr, tc.err)
		}
	}
}
