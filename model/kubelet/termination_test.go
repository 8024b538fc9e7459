package kubelet

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/scenario"
)

func TestTermination(t *testing.T) {
	sleep := func(s int64) *scenario.Lifecycle {
		return &scenario.Lifecycle{PreStop: &scenario.LifecycleHandler{Sleep: &scenario.SleepAction{Seconds: s}}}
	}
	exec := &scenario.Lifecycle{PreStop: &scenario.LifecycleHandler{Exec: &scenario.ExecAction{
		Command: []string{"sleep", "5"}, Duration: &metav1.Duration{Duration: 5 * time.Second}}}}
	for _, tc := range []struct {
		name            string
		grace           int64
		lifecycle       *scenario.Lifecycle
		sigterm, sigkil time.Duration
	}{
		{"no hook: SIGTERM at once, SIGKILL at the grace period", 30, nil, 0, 30 * time.Second},
		{"a sleep hook takes its time from the grace period", 30, sleep(10), 10 * time.Second, 30 * time.Second},
		{"an exec hook's duration", 30, exec, 5 * time.Second, 30 * time.Second},
		{"a hook longer than the grace period is cut at it, then 2 s more", 10, sleep(15), 10 * time.Second, 12 * time.Second},
		{"a hook leaving under 2 s still leaves the app 2 s", 10, sleep(9), 9 * time.Second, 11 * time.Second},
		{"grace 0: SIGKILL 2 s after SIGTERM", 0, nil, 0, 2 * time.Second},
	} {
		spec := &scenario.Pod{TerminationGracePeriodSeconds: &tc.grace, Lifecycle: tc.lifecycle}
		term, kill := Termination(spec)
		if term != tc.sigterm || kill != tc.sigkil {
			t.Errorf("%s: SIGTERM at %v, SIGKILL at %v; want %v and %v", tc.name, term, kill, tc.sigterm, tc.sigkil)
		}
	}
}
