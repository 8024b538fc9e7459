package simulate

import (
	"reflect"
	"testing"

	"trafficlab/model/library"
	"trafficlab/result"
)

// The Result records how each service's pods end and the faults that ran, cut to
// the run: the report's advice and its errors explanation start from them.
func TestResultRecordsShutdownAndFaults(t *testing.T) {
	r := runYAML(t, `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: config}
spec:
  duration: 10s
  seed: 1
  cluster:
    nodes: [{name: n, count: 2, cpu: "4"}]
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: constant, value: 1ms}
      terminationGracePeriodSeconds: 20
      lifecycle: {preStop: {sleep: {seconds: 3}}}
      onSigterm: {action: drain, drainTimeout: 5s}
  - name: api
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1ms}
      terminationGracePeriodSeconds: 2
      lifecycle: {preStop: {sleep: {seconds: 9}}}
  clients:
  - name: load
    target: web
    rate: 100/s
    timeout: 2s
  - name: callers
    target: api
    threads: 2
  - name: steps
    target: api
    phases:
    - {rate: 10/s, duration: 5s}
    - {threads: 1, duration: 5s}
  faults:
  - {name: cut, kind: partition, start: 2s, end: 4s, target: {pod: web-1}, direction: both}
  - {kind: delay, start: 5s, target: {service: web}, peer: {client: load}, latency: 1ms}
  - {kind: pod-kill, start: 6s, target: {pod: web-0}}
`)
	wantServices := []result.Service{
		{Name: "web", Replicas: 2, OnSigterm: "drain", DrainTimeoutS: 5, PreStopS: 3, TerminationGracePeriodS: 20},
		// The kubelet cuts a preStop hook at the end of the grace period.
		{Name: "api", Replicas: 1, OnSigterm: "exit", PreStopS: 2, TerminationGracePeriodS: 2},
	}
	if !reflect.DeepEqual(r.Services, wantServices) {
		t.Errorf("services %+v, want %+v", r.Services, wantServices)
	}
	// The delay lasts to the run's end; a pod-kill acts at once.
	wantFaults := []result.Fault{
		{Name: "cut", Kind: "partition", Target: "pod web-1", Direction: "both", StartS: 2, EndS: 4},
		{Kind: "delay", Target: "service web", Peer: "client load", Direction: "to", StartS: 5, EndS: 10},
		{Kind: "pod-kill", Target: "pod web-0", StartS: 6, EndS: 6},
	}
	if !reflect.DeepEqual(r.Faults, wantFaults) {
		t.Errorf("faults %+v, want %+v", r.Faults, wantFaults)
	}
	if got := r.Clients[0].TimeoutS; got != 2 {
		t.Errorf("client timeout %v s, want 2", got)
	}
	// Only an open loop's rate is the load: the others send as fast as they are answered.
	for i, want := range []bool{false, true, true} {
		if got := r.Clients[i].ClosedLoop; got != want {
			t.Errorf("client %s: closed loop %v, want %v", r.Clients[i].Name, got, want)
		}
	}
}

// The engine closes an HTTP/1.1 connection whose request timed out (onTimeout, then
// letGo), whatever the library: a profile that kept such a connection would need
// the engine to hold it busy until the late answer came, which it does not model.
func TestEveryLibraryClosesOnTimeout(t *testing.T) {
	for _, name := range library.Names() {
		if p, _ := library.Lookup(name); !p.ClosesOnTimeout {
			t.Errorf("library %s keeps a connection whose request timed out; the engine closes it", name)
		}
	}
}
