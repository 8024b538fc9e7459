package report

import (
	"strings"
	"testing"

	"trafficlab/result"
)

// Each line of the overload section comes from a field of the Result: what
// saturated, the pool waiters, the autoscaler's maxReplicas, the sweep; a result
// without overloads has no such section.
func TestOverloadSection(t *testing.T) {
	autoscaled := result.Overload{Service: "api", OfferedRPS: 900, ServedRPS: 600, Saturated: []string{"cpu", "workers"},
		CPUUtilization: 1, CPUPerRequestMS: 2, CoresPerPod: 0.5, HoldMS: 20, Workers: 4, PoolWaitersAtEnd: 3,
		Replicas: 3, ReplicasNeeded: 5, ReplicasPath: "spec.services[1].autoscaler.maxReplicas",
		Sweep: "trafficlab sweep FILE --set 'spec.services[1].autoscaler.maxReplicas=4..7' --find 'min spec.services[1].autoscaler.maxReplicas where errors == 0'"}
	cases := []struct {
		name      string
		r         result.Result
		want, not []string
	}{
		{"autoscaled, CPU and workers", result.Result{Overloads: []result.Overload{autoscaled}, Errors: result.Errors{Timeout: 1}},
			[]string{"Overload: api was offered 900 requests/s; its pods finished 600/s",
				"CPU: its pods used 100% of the CPU they could get (0.5 cores a pod), 2 ms of CPU a request.",
				"workers: every app worker of each pod (4 a pod) was busy, each request holding one for 20 ms.",
				"client pools: 3 requests waited for a pooled connection at the end",
				"the excess queued: 1 request timed out.",
				"Fix: more replicas (the autoscaler's maxReplicas). The offered load needs 900/s × 2 ms of CPU = 1.8 cores at 0.5 cores a pod, and 900/s × 20 ms held = 18 busy workers at 4 a pod: fewer than 5 pods (3 now)",
				autoscaled.Sweep},
			[]string{"throttled", "Fix: more cores"}},
		{"nothing overloaded", result.Result{Errors: result.Errors{Timeout: 1}}, nil, []string{"Overload:", "Fix:"}},
	}
	for _, c := range cases {
		var b strings.Builder
		writeOverloads(&b, &c.r)
		out := strings.Join(strings.Fields(b.String()), " ")
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", c.name, w, b.String())
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: says %q:\n%s", c.name, n, b.String())
			}
		}
	}
}
