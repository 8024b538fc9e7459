package emulate

import (
	"testing"

	"trafficlab/emulate/emutest"
	"trafficlab/emulate/serve"
	"trafficlab/result"
	"trafficlab/scenario"
)

const callScenario = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: calls}
spec:
  duration: 3s
  seed: 1
  cluster:
    proxyMode: iptables
    nodes: [{name: node, count: 2}]
  services:
  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 200us}
      calls: [{service: back}]
      client: {connections: {reuse: none}}
  - name: back
    replicas: 2
    pod: {serviceTime: {distribution: constant, value: 200us}}
  clients:
  - name: caller
    target: front
    threads: 2
    connections: {reuse: per-thread}
`

// A service that calls another, run for real: every answered request made its call
// through the back's ClusterIP, a new connection each (reuse none) spread over both
// back pods by kube-proxy, and the Result counts the calls as simulate does: the
// edge, each service's own figures, and the calls each back pod answered.
func TestCallsRunForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore")
	r := emulateDoc(t, "calls.yaml", callScenario)
	if r.Requests.OK < 100 || r.Requests.Failed != 0 {
		t.Fatalf("requests %+v; want hundreds answered, none failed", r.Requests)
	}
	if len(r.Edges) != 1 {
		t.Fatalf("edges %+v; want front → back", r.Edges)
	}
	e := r.Edges[0]
	// Every answered request made its call; one still in flight at the end may have
	// too, and its call may have been in flight when the front exited: an attempt
	// that did not end (as simulate counts a call in flight at the end).
	if out := e.Attempts - e.Requests; e.From != "front" || e.To != "back" || e.Requests < r.Requests.OK ||
		e.Requests > r.Requests.OK+r.Requests.InFlight || out < 0 || out > r.Requests.InFlight ||
		e.Errors.Total() != 0 || e.PodsReached != 2 || e.ConnectionsOpened != e.Attempts {
		t.Errorf("edge %+v for %+v; want a call per request, a connection each, over both back pods", e, r.Requests)
	}
	if e.LatencyMS.P50 <= 0 || e.LatencyMS.P50 > r.LatencyMS.P50 {
		t.Errorf("calls' p50 %g ms, the requests' %g ms; a call is part of its request", e.LatencyMS.P50, r.LatencyMS.P50)
	}
	var back int64
	for _, p := range r.Pods {
		if p.Service == "back" {
			back += p.Requests
		}
	}
	if back != e.Requests {
		t.Errorf("the back pods answered %d calls, the front's %d calls ended answered", back, e.Requests)
	}
	for _, s := range r.Services {
		if !s.Calls || s.LatencyMS == nil || s.Requests < r.Requests.OK || s.Errors != 0 {
			t.Errorf("service %+v; want its own figures", s)
		}
	}
}

// Every pod's figures add up: the edge's counts, the union of the pods reached, the
// calls each back pod answered onto its requests, each service's requests and 503s.
func TestFiguresAddUp(t *testing.T) {
	sc, _, diags := scenario.Load("calls.yaml", []byte(callScenario), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	bars := serve.Bars{Values: []int64{1e6, 2e6}, Counts: []int64{3, 1}, Min: 1e6, Max: 2e6}
	call := func(pods map[string]int64) []serve.CallFigures {
		return []serve.CallFigures{{Edge: result.Edge{From: "front", To: "back", Requests: 4, Attempts: 5, Retries: 1,
			Errors: result.Errors{Timeout: 1}, ConnectionsOpened: 2, PeakOpen: 1}, Latency: bars, Answered: pods}}
	}
	figs := []serve.Figures{
		{Pod: "front-0", Service: "front", Requests: 4, Errors: 1, Held: bars, Calls: call(map[string]int64{"back-0": 4})},
		{Pod: "front-1", Service: "front", Requests: 4, Held: bars, Calls: call(map[string]int64{"back-1": 3})},
		{Pod: "back-0", Service: "back", Requests: 4, Held: bars},
	}
	r := &result.Result{Pods: []result.Pod{{Name: "back-0", Service: "back"}, {Name: "back-1", Service: "back"}}}
	serve.AddFigures(r, sc, figs)
	if len(r.Edges) != 1 {
		t.Fatalf("edges %+v", r.Edges)
	}
	e := r.Edges[0]
	if e.Requests != 8 || e.Attempts != 10 || e.Retries != 2 || e.Errors.Timeout != 2 || e.ConnectionsOpened != 4 || e.PodsReached != 2 ||
		e.LatencyMS.Min != 1 || e.LatencyMS.Max != 2 {
		t.Errorf("edge %+v: want the two front pods' calls added up", e)
	}
	if r.Pods[0].Requests != 4 || r.Pods[1].Requests != 3 {
		t.Errorf("back pods answered %d and %d calls, want 4 and 3", r.Pods[0].Requests, r.Pods[1].Requests)
	}
	if s := r.Services[0]; s.Name != "front" || !s.Calls || s.Requests != 8 || s.Errors != 1 || s.LatencyMS.Max != 2 || s.OnSigterm == "" {
		t.Errorf("front %+v: want its pods' figures and its configuration", s)
	}
	if l := sc.CallLevels(); l["front"] != 0 || l["back"] != 1 {
		t.Errorf("levels %v: the front ends before the back it calls", l)
	}
}
