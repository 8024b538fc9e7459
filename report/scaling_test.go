package report

import (
	"strings"
	"testing"

	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// Rollouts and pods left Pending each get a section; a pod a rollout deleted is
// blamed on that rollout.
func TestRolloutsAndPending(t *testing.T) {
	done, del, end := 18.0, 12.0, 12.5
	r := &result.Result{
		Engine: "simulate", Scenario: "roll", DurationS: 30, ProxyMode: kubeproxy.Iptables,
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

// A run whose autoscaler only added pods, with errors from overload, raises no
// question of removed pods; a run that deleted one does, and hears that it
// caused none of them when it did not.
func TestAttributionOnlyWhenPodsWent(t *testing.T) {
	deleted := 20.0
	for _, c := range []struct {
		name      string
		pods      []result.Pod
		want, not string
	}{
		{"scale-out only", []result.Pod{{Name: "web-0", Service: "web"}, {Name: "web-8", Service: "web"}},
			"", "Where the errors came from"},
		{"a pod deleted, none blamed", []result.Pod{{Name: "web-0", Service: "web"}, {Name: "web-8", Service: "web", DeletedS: &deleted}},
			"Where the errors came from: none of the 100 failed requests was caused by a pod's removal", "0 of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &result.Result{Engine: "simulate", DurationS: 60, Pods: c.pods,
				Requests:    result.Requests{Total: 1000, OK: 900, Failed: 100},
				Errors:      result.Errors{Timeout: 100},
				ScaleEvents: []result.ScaleEvent{{TS: 10, Service: "web", From: 8, To: 12}}}
			var b strings.Builder
			writeAttribution(&b, r)
			out := strings.Join(strings.Fields(b.String()), " ")
			if c.want != "" && !strings.Contains(out, c.want) {
				t.Errorf("lacks %q:\n%s", c.want, b.String())
			}
			if strings.Contains(out, c.not) {
				t.Errorf("says %q:\n%s", c.not, b.String())
			}
		})
	}
}

// More than three pods are counted and the first two named; the list never reads
// as a range of names (a scale-in deletes web-6 before web-3).
func TestPodChangeNamesNoRange(t *testing.T) {
	for _, c := range []struct {
		created, deleted []string
		want             string
	}{
		{[]string{"web-1", "web-2"}, nil, "+web-1 +web-2"},
		{nil, []string{"web-6", "web-8", "web-2", "web-3"}, "−4 pods (web-6, web-8 and 2 more)"},
	} {
		if got := podChange(c.created, c.deleted); got != c.want {
			t.Errorf("podChange(%v, %v) = %q, want %q", c.created, c.deleted, got, c.want)
		}
	}
}
