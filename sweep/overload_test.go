package sweep_test

import (
	"regexp"
	"testing"

	"trafficlab/report"
	"trafficlab/scenario"
	"trafficlab/simulate"
	"trafficlab/sweep"
)

// overloaded offers 1,200/s to 2 pods that serve 500/s each.
const overloaded = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: overloaded}
spec:
  duration: 10s
  seed: 1
  cluster:
    nodes: [{name: worker, count: 1, cpu: "8"}]
  services:
  - name: web
    replicas: 2
    pod:
      cpu: "1"
      serviceTime: {distribution: exponential, mean: 2ms}
  clients:
  - name: load
    target: web
    rate: 1200/s
    timeout: 500ms
`

// pooled offers 1,000/s through a pool of 10 connections each held 21 ms: the pool
// carries 476/s.
const pooled = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: pooled}
spec:
  duration: 10s
  seed: 1
  cluster:
    nodes: [{name: worker, count: 1, cpu: "8"}]
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: constant, value: 1ms}
      waitTime: {distribution: constant, value: 20ms}
  clients:
  - name: load
    target: web
    rate: 1000/s
    timeout: 500ms
    library: go-net-http
    connections: {maxPerHost: 10}
`

// The sweep command an overload diagnosis prints is one the sweep reads: its --set
// and --find parse, and each value of the axis sets a field the scenario has, for
// replicas and for a client pool's connections.
func TestOverloadSweepCommandParses(t *testing.T) {
	for name, src := range map[string]string{"overloaded.yaml": overloaded, "pooled.yaml": pooled} {
		t.Run(name, func(t *testing.T) { sweepCommandParses(t, name, src) })
	}
}

func sweepCommandParses(t *testing.T, name, src string) {
	sc, _, diags := scenario.Load(name, []byte(src), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := simulate.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	e.Run(nil)
	r := e.Result()
	if len(r.Overloads) != 1 || r.Overloads[0].Sweep == nil {
		t.Fatalf("overloads %+v, want one with a sweep", r.Overloads)
	}
	cmd := report.SweepCommand(nil, r.Overloads[0].Sweep)
	m := regexp.MustCompile(`^trafficlab sweep FILE --set '([^']+)' --find '([^']+)'$`).FindStringSubmatch(cmd)
	if m == nil {
		t.Fatalf("sweep command %q: not trafficlab sweep FILE --set '...' --find '...'", cmd)
	}
	axis, err := sweep.ParseSet(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.ParseQuery(m[2], []sweep.Axis{axis}); err != nil {
		t.Fatal(err)
	}
	for _, v := range axis.Values {
		if _, _, diags := scenario.Load(name, []byte(src), []string{axis.Path + "=" + v}); diags.HasErrors() {
			t.Errorf("--set %s=%s: %v", axis.Path, v, diags)
		}
	}
}
