package report

import (
	"bytes"
	"strings"
	"testing"

	"trafficlab/result"
)

// The explanation of removed pods' errors and the advice follow how the pods were
// configured to end: nothing they already do is advised, and what they do is named.
func TestAvoidFollowsThePodsShutdown(t *testing.T) {
	with := func(svc *result.Service, errs result.Errors) func() *result.Result {
		return func() *result.Result {
			r := scaled()
			if svc != nil {
				r.Services = []result.Service{*svc}
			}
			r.Errors, r.Pods[1].Errors = errs, errs
			r.Timeline = nil
			return r
		}
	}
	early := result.Errors{ConnectionRefused: 19, ConnectionReset: 2}
	cases := []struct {
		name      string
		r         func() *result.Result
		want, not []string
	}{
		{"no shutdown recorded: the standard remedy", with(nil, early),
			[]string{"after its process exited on SIGTERM", "Avoid it: a preStop sleep longer than", "draining on SIGTERM (finish"},
			[]string{"already drains", "(30 s now)"}},
		{"exits at once, no preStop", with(&result.Service{Name: "web", OnSigterm: "exit", TerminationGracePeriodS: 30}, early),
			[]string{"after its process exited on SIGTERM", "Avoid it: a preStop sleep longer than", "draining on SIGTERM (finish",
				"terminationGracePeriodSeconds (30 s now) must cover"},
			[]string{"already drains", "closed its listener"}},
		{"drains already, no preStop", with(&result.Service{Name: "web", OnSigterm: "drain", TerminationGracePeriodS: 30}, early),
			[]string{"after it closed its listener on SIGTERM to drain", "Avoid it: a preStop sleep longer than",
				"the pod already drains on SIGTERM: what resets remain", "as the draining pod closed them as idle"},
			[]string{"process exited on SIGTERM", "draining on SIGTERM (finish", "that the exited pod no longer had"}},
		{"drains, with a preStop too short", with(&result.Service{Name: "web", OnSigterm: "drain", PreStopS: 5, TerminationGracePeriodS: 30},
			result.Errors{ConnectionRefused: 3}),
			[]string{"Avoid it: lengthen the preStop hook: it kept the pod serving 5.0 s after its deletion"},
			[]string{"a preStop sleep longer than", "draining on SIGTERM (finish", "resets remain"}},
		{"a drain cut short", with(&result.Service{Name: "web", OnSigterm: "drain", DrainTimeoutS: 10, TerminationGracePeriodS: 30},
			result.Errors{ConnectionClosed: 4}),
			[]string{"closed: requests were still in progress when the drain was cut short (the app's 10 s drain timeout, or SIGKILL at the end of the 30 s grace period)",
				"Avoid it: the pod drains on SIGTERM, but the app's 10 s drain timeout"},
			[]string{"preStop", "terminationGracePeriodSeconds ("}},
		{"exits at once, resets only", with(&result.Service{Name: "web", OnSigterm: "exit", TerminationGracePeriodS: 30},
			result.Errors{ConnectionReset: 2}),
			[]string{"Avoid it: draining on SIGTERM (finish"},
			[]string{"preStop", "terminationGracePeriodSeconds ("}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Text(&b, c.r()); err != nil {
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
