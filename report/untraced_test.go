package report_test

import (
	"testing"

	"trafficlab/examples"
	"trafficlab/result"
)

// An engine that does not trace failures to pods (emulate, cluster) says when
// they came, not who caused them: the scale-in's refusals came while web-1 was
// being removed; the same failures at another time came outside any removal; and
// simulate's own run still blames the pod.
func TestUntracedErrorsAreTimedNotBlamed(t *testing.T) {
	src, err := examples.Get("r2-rapid-scaling.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sim := simulateSource(t, "r2-rapid-scaling.yaml", src)
	untraced := func(engine string, move func(*result.Result)) *result.Result {
		r := *sim
		r.Engine = engine
		r.Pods = append([]result.Pod(nil), sim.Pods...)
		for i := range r.Pods {
			r.Pods[i].Errors = result.Errors{}
		}
		r.Timeline = append([]result.Point(nil), sim.Timeline...)
		if move != nil {
			move(&r)
		}
		return &r
	}
	// The errors of the scale-in's interval moved to the run's first second.
	early := func(r *result.Result) {
		for i, pt := range r.Timeline {
			if pt.ErrorsByKind != nil && pt.ErrorsByKind.Total() > 0 {
				first := r.Timeline[0]
				first.ErrorsByKind, first.Errors = pt.ErrorsByKind, pt.Errors
				r.Timeline[0] = first
				r.Timeline[i].ErrorsByKind, r.Timeline[i].Errors = nil, 0
			}
		}
	}
	for _, tc := range []struct {
		name       string
		r          *result.Result
		want, lack []string
	}{
		{"simulate blames the pod", sim, []string{"19 of 19 failed requests caused by pods being removed", "web-1, deleted at 80s"}, []string{"does not trace"}},
		{"cluster times them", untraced("cluster", nil),
			[]string{"Where the errors came from: 19 failed requests", "came while pods were being removed", "web-1 80s–", "19 connections refused",
				"The cluster engine sees failures from the clients' side and does not trace one to a pod"},
			[]string{"caused by pods being removed", "How:", "Refusals with no pod to blame"}},
		{"emulate, failures at another time", untraced("emulate", early),
			[]string{"none came while pods were being removed"}, []string{"caused by pods being removed", "does not trace"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkText(t, tc.r, tc.want, tc.lack) })
	}
}

// Slow pods are listed with what the engine measured: simulate's waits inside the
// pod, or for an engine that measures from the clients' side, the counts alone.
func TestSlowPodsShowOnlyWhatWasMeasured(t *testing.T) {
	src, err := examples.Get("r2-rapid-scaling.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sim := simulateSource(t, "r2-rapid-scaling.yaml", src)
	withSlow := func(engine string) *result.Result {
		r := *sim
		r.Engine = engine
		r.Pods = append([]result.Pod(nil), sim.Pods...)
		r.Slow, r.Pods[0].Slow, r.Pods[0].SlowShare = 10, 10, 0.01
		return &r
	}
	checkText(t, withSlow("simulate"), []string{"waits are means per request answered", "QUEUE"}, []string{"measures from the clients' side"})
	checkText(t, withSlow("cluster"), []string{"Pods with the most slow requests (the cluster engine measures from the clients' side, not where a request waited in its pod)"},
		[]string{"waits are means", "QUEUE"})
}
