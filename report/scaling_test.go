package report

import (
	"strings"
	"testing"

	"trafficlab/result"
)

// Rollouts and pods left Pending each get a section; a pod a rollout deleted is
// blamed on that rollout.
func TestRolloutsAndPending(t *testing.T) {
	done, del, end := 18.0, 12.0, 12.5
	r := &result.Result{
		Engine: "simulate", Scenario: "roll", DurationS: 30, ProxyMode: "iptables",
		Requests: result.Requests{Total: 100, OK: 99, Failed: 1},
		Errors:   result.Errors{ConnectionRefused: 1},
		Pods: []result.Pod{
			{Name: "web-0", Service: "web", Node: "n-1", DeletedS: &del, EndS: &end, Errors: result.Errors{ConnectionRefused: 1}},
			{Name: "web-1", Service: "web", Node: "n-0", StartS: 10},
		},
		Rollouts: []result.Rollout{{Service: "web", Strategy: "RollingUpdate", StartS: 10, DoneS: &done,
			Created: []string{"web-1"}, Deleted: []string{"web-0"},
			Unschedulable: []string{"pod web-1 cannot be scheduled: x", "pod web-1 cannot be scheduled: x"}}},
		Pending: []result.PendingPod{{Name: "web-2", Service: "web", SinceS: 20, Reason: "0/2 nodes are available: 2 Insufficient cpu."}},
	}
	var b strings.Builder
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Rollouts: 1\n  10s web, RollingUpdate (done at 18s): +web-1 −web-0\n    waited Pending: pod web-1 cannot be scheduled: x\n\n",
		"Pending at the end: 1 pod no node could take\n  - web-2, since 20s: 0/2 nodes are available: 2 Insufficient cpu.\n",
		"web-0, deleted at 12s by the rollout of 10s, its process ending at 12.5s: 1 connection refused.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
