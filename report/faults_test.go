package report

import (
	"bytes"
	"strings"
	"testing"

	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// Errors that ended while a fault lasted, or within the clients' timeout after it,
// are put down to the fault; those before it or long after are not.
func TestErrorsDuringFaults(t *testing.T) {
	// partitioned is a run like a partition of web-1 from 10 s to 20 s with a 2 s
	// client timeout: 1,700 timeouts in the window and, with before, a few outside it.
	partitioned := func(before int64) *result.Result {
		r := &result.Result{Engine: "simulate", Scenario: "p", DurationS: 30, ProxyMode: kubeproxy.Iptables,
			Pods:              pods(30000, 30000, 28000),
			Clients:           []result.Client{{Name: "load", Target: "web", TimeoutS: 2, Requests: 88000}},
			TimelineIntervalS: 1,
			Faults:            []result.Fault{{Name: "cut", Kind: "partition", Target: "pod web-1", Direction: "both", StartS: 10, EndS: 20}},
		}
		for i := 0; i < 30; i++ {
			pt := result.Point{TS: float64(i), Requests: 3000}
			var n int64
			switch {
			case i >= 12 && i < 22: // the timeouts of requests sent from 10 s end 2 s later
				n = 170
			case i == 3:
				n = before
			}
			if n > 0 {
				pt.Errors, pt.ErrorsByKind = n, &result.Errors{Timeout: n}
			}
			r.Timeline = append(r.Timeline, pt)
			r.Errors.Timeout += n
		}
		r.Requests = result.Requests{Total: 90000, OK: 90000 - r.Errors.Timeout, Failed: r.Errors.Timeout}
		return r
	}
	cases := []struct {
		name      string
		r         *result.Result
		want, not []string
	}{
		{"every error in the window", partitioned(0),
			[]string{"Where the errors came from: 1700 of 1700 failed requests during faults",
				"- the partition fault cut on pod web-1 (both ways), 10s–20s: 1700 timeouts while it lasted or within the clients' 2s timeout after. " +
					"A partition drops every packet: requests on the connections to it got no answer, so the clients waited until their timeout."},
			[]string{"not attributed", "caused by pods being removed", "could not be opened"}},
		{"SYNs unanswered: connections could not be opened", func() *result.Result {
			r := partitioned(0)
			r.TCP = &result.TCP{Connections: 15152, Segments: 383613, SynRetransmits: 1906}
			return r
		}(), []string{"A partition drops every packet: connections to the target could not be opened (their SYNs went unanswered) and requests"}, nil},
		{"errors before the fault are not its", partitioned(9),
			[]string{"1700 of 1709 failed requests during faults", "- not attributed to any pod or fault: 9 timeouts."}, nil},
		{"a fault without errors in its window is not blamed", func() *result.Result {
			r := partitioned(9)
			r.Faults[0].StartS, r.Faults[0].EndS = 25, 27
			for i := range r.Timeline[12:22] {
				r.Timeline[12+i].Errors, r.Timeline[12+i].ErrorsByKind = 0, nil
			}
			r.Errors.Timeout = 9
			return r
		}(), nil, []string{"Where the errors came from", "during faults"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Text(&b, c.r); err != nil {
				t.Fatal(err)
			}
			out := flat(b.String())
			for _, w := range c.want {
				if !strings.Contains(out, flat(w)) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range c.not {
				if strings.Contains(out, flat(w)) {
					t.Errorf("report has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// A pod deleted by a pod-kill fault is named as such, and no shutdown setting is
// advised: a pod-kill skips preStop and SIGTERM.
func TestPodKillIsNotAShutdown(t *testing.T) {
	for _, c := range []struct {
		name      string
		faults    []result.Fault
		want, not []string
	}{
		{"killed", []result.Fault{{Name: "boom", Kind: "pod-kill", Target: "pod web-1", StartS: 80, EndS: 80}},
			[]string{"web-1, deleted at 80s by the pod-kill fault boom", "after a pod-kill ended its process at once",
				"Avoid it: nothing in the pods' shutdown can"},
			[]string{"preStop sleep longer", "exited on SIGTERM", "not by the autoscaler"}},
		{"a pod-kill of another pod", []result.Fault{{Kind: "pod-kill", Target: "pod web-2", StartS: 80, EndS: 80}},
			[]string{"web-1, deleted at 80s (not by the autoscaler)", "preStop sleep longer", "exited on SIGTERM"},
			[]string{"pod-kill"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := scaled()
			r.ScaleEvents, r.Timeline = nil, nil
			r.Faults = c.faults
			var b bytes.Buffer
			if err := Text(&b, r); err != nil {
				t.Fatal(err)
			}
			out := flat(b.String())
			for _, w := range c.want {
				if !strings.Contains(out, flat(w)) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range c.not {
				if strings.Contains(out, flat(w)) {
					t.Errorf("report has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
