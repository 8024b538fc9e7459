package serve

import (
	"strings"
	"testing"
	"time"
)

// A pod spec is read as scenario.Load reads it, with diagnostics placed in the spec.
func TestParsePod(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string // a diagnostic; "" for none
		ok   bool
	}{
		{"serviceTime: {distribution: constant, value: 20ms}", "", true},
		{"{serviceTime: {distribution: exponential, mean: 1ms}, responseBytes: 16Ki, concurrency: 4}", "", true},
		{"serviceTime:\n  distribution: lognormal\n  mean: 2ms\n  p99: 10ms\nwaitTime: {distribution: uniform, min: 1ms, max: 3ms}", "", true},
		{"", "f: serviceTime: is required", false},
		{"concurrency: -1\nserviceTime: {distribution: constant, value: 1ms}", "f:1:14: concurrency: must not be negative", false},
		{"serviceTime: {distribution: constant, value: 1ms}\n\nresponseBytes: lots", "f:3:16: responseBytes:", false},
		{"serviceTime: {distribution: constant, value: 1ms}\nserviceTme: 1", `f:2:1: unknown field "serviceTme" in pod`, false},
		{"serviceTime: {distribution: constant, value: 1ms}\nonSigterm: {action: exit, drainTimeout: 1s}", "f:2:41: warning: onSigterm.drainTimeout: applies only to action drain", true},
		{"[1, 2]", "f:1:1: expected a mapping", false},
		{"serviceTime: {distribution: constant", "f: invalid YAML", false},
	} {
		p, diags := ParsePod("f", []byte(tc.spec))
		if (p != nil) != tc.ok {
			t.Errorf("%q: pod %v with %v, want ok %v", tc.spec, p != nil, diags, tc.ok)
		}
		got := diags.Error()
		if tc.want == "" && len(diags) > 0 || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: diagnostics %q, want %q", tc.spec, got, tc.want)
		}
	}
}

// The spec comes back with the scenario's defaults.
func TestParsePodDefaults(t *testing.T) {
	p, diags := ParsePod("f", []byte("serviceTime: {distribution: constant, value: 20ms}"))
	if p == nil {
		t.Fatal(diags)
	}
	if *p.ResponseBytes != 200 || *p.TerminationGracePeriodSeconds != 30 || p.OnSigterm.Action != "exit" ||
		*p.MaxConcurrentStreams != 250 || p.ServiceTime.Value.Duration != 20*time.Millisecond {
		t.Errorf("defaults: responseBytes %d, grace %d, onSigterm %q, streams %d, serviceTime %v",
			*p.ResponseBytes, *p.TerminationGracePeriodSeconds, p.OnSigterm.Action, *p.MaxConcurrentStreams, p.ServiceTime.Value)
	}
}
