package scenario

import (
	"strings"
	"testing"
	"time"
)

// callsBase has a frontend that calls a backend; the cases below each change one line,
// so the expected line and column can be read off this listing.
const callsBase = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  duration: 10s
  services:
  - name: front
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
      calls:
      - {service: back}
      - parallel: [{service: back}, {service: db, optional: true}]
  - name: back
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  - name: db
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: caller
    target: front
    threads: 2
`

func callsEdit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(callsBase, old) {
		t.Fatalf("callsBase has no %q", old)
	}
	return strings.Replace(callsBase, old, new, 1)
}

func TestCallsDefaults(t *testing.T) {
	sc, _, diags := Load("f.yaml", []byte(callsEdit(t, "      calls:", "      client: {library: go-net-http, connections: {maxPerHost: 4}, request: {bodyBytes: 300}}\n      calls:")), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := &sc.Spec.Services[0].Pod
	c := p.Client
	if c.Connections.Reuse != ReuseShared || *c.Connections.MaxPerHost != 4 || c.Timeout.Duration != defaultTimeout {
		t.Errorf("client %+v: want shared reuse, maxPerHost 4, timeout %s", c, defaultTimeout)
	}
	call := p.Calls[0]
	if *call.Probability != 1 || *call.Count != 1 || *call.RequestBytes != 300 || call.Timeout.Duration != defaultTimeout || call.Retries != 0 {
		t.Errorf("call %+v: want probability 1, count 1, 300 bytes, the client's timeout", call)
	}
	if db := p.Calls[1].Parallel[1]; !db.Optional || *db.Count != 1 {
		t.Errorf("parallel call %+v: want optional, count 1", db)
	}
	if sc.Spec.Services[1].Pod.Client != nil {
		t.Error("a service without calls got a client")
	}
	sc, _, _ = Load("f.yaml", []byte(callsEdit(t, "{service: back}\n", "{service: back, timeout: 50ms}\n")), nil)
	if got := sc.Spec.Services[0].Pod.Calls[0].Timeout.Duration; got != 50*time.Millisecond {
		t.Errorf("timeout %s, want the call's own 50ms", got)
	}
}

func TestCallsErrors(t *testing.T) {
	const call = "      - {service: back}\n"
	cases := []struct{ name, old, new, want string }{
		{"unknown service", call, "      - {service: cart}\n",
			`12:19: spec.services[0].pod.calls[0].service: no service named "cart"; services: back, db, front`},
		{"probability above 1", call, "      - {service: back, probability: 1.5}\n",
			`12:38: spec.services[0].pod.calls[0].probability: must be from 0 to 1`},
		{"negative probability", call, "      - {service: back, probability: -0.1}\n",
			`12:38: spec.services[0].pod.calls[0].probability: must be from 0 to 1`},
		{"negative retries", call, "      - {service: back, retries: -1}\n",
			`12:34: spec.services[0].pod.calls[0].retries: must not be negative`},
		{"count 0", call, "      - {service: back, count: 0}\n",
			`12:32: spec.services[0].pod.calls[0].count: must be at least 1`},
		{"zero timeout", call, "      - {service: back, timeout: 0s}\n",
			`12:34: spec.services[0].pod.calls[0].timeout: must be greater than 0`},
		{"negative request bytes", call, "      - {service: back, requestBytes: -1}\n",
			`12:39: spec.services[0].pod.calls[0].requestBytes: must not be negative`},
		{"neither service nor parallel", call, "      - {retries: 1}\n",
			`12:9: spec.services[0].pod.calls[0]: needs service (a Service to call) or parallel (calls made at once)`},
		{"service and parallel", call, "      - {service: back, parallel: [{service: db}]}\n",
			`12:35: spec.services[0].pod.calls[0].parallel: cannot be set with service`},
		{"a key on a parallel step", "      - parallel:", "      - retries: 2\n        parallel:",
			`13:18: spec.services[0].pod.calls[1].retries: is a call's key: a parallel step has none of its own`},
		{"nested parallel", "{service: db, optional: true}", "{parallel: [{service: db}]}",
			`13:48: spec.services[0].pod.calls[1].parallel[1].parallel: cannot be nested`},
		{"empty parallel", "      - parallel: [{service: back}, {service: db, optional: true}]\n", "      - parallel: []\n",
			`13:19: spec.services[0].pod.calls[1].parallel: must list at least one call`},
		{"a service calling itself", call, "      - {service: front}\n",
			`12:19: spec.services[0].pod.calls[0].service: closes a cycle of calls, front → front: a request would never end`},
		{"a longer cycle", "    replicas: 1\n    pod:\n      serviceTime: {distribution: exponential, mean: 1ms}\n",
			"    replicas: 1\n    pod:\n      serviceTime: {distribution: exponential, mean: 1ms}\n      calls: [{service: front}]\n",
			`22:25: spec.services[2].pod.calls[0].service: closes a cycle of calls, front → db → front: a request would never end`},
		{"per-thread pools for calls", "      calls:", "      client: {connections: {reuse: per-thread}}\n      calls:",
			`11:37: spec.services[0].pod.client.connections.reuse: per-thread is a client's closed loop`},
		{"unknown library", "      calls:", "      client: {library: curl9}\n      calls:",
			`11:25: spec.services[0].pod.client.library: unknown library "curl9"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := callsEdit(t, tc.old, tc.new)
			sc, _, diags := Load("f.yaml", []byte(in), nil)
			if sc != nil || !diags.HasErrors() {
				t.Fatalf("loaded without errors; diagnostics: %v", diags)
			}
			if got := diags.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, tc.want)
			}
		})
	}
}

func TestCallsWarnings(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"afterCalls without calls", "      serviceTime: {distribution: exponential, mean: 1ms}\n  - name: db",
			"      serviceTime: {distribution: exponential, mean: 1ms}\n      afterCalls: {distribution: constant, value: 1ms}\n  - name: db",
			`f.yaml:18:19: warning: spec.services[1].pod.afterCalls: applies only with calls; ignored`},
		{"a call to a service with no replicas", "    replicas: 1", "    replicas: 0",
			`f.yaml:13:47: warning: spec.services[0].pod.calls[1].parallel[1].service: service db has 0 replicas`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(callsEdit(t, tc.old, tc.new)), nil)
			if sc == nil || diags.HasErrors() {
				t.Fatalf("want a scenario and only warnings, got %v", diags)
			}
			if len(diags) != 1 || !strings.HasPrefix(diags[0].Error(), tc.want) {
				t.Errorf("diagnostics:\n%v\nwant exactly one, starting:\n%s", diags, tc.want)
			}
		})
	}
}
