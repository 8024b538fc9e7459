package kubelet

import (
	"testing"
	"time"
)

func TestTermination(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		name            string
		spec            TerminationSpec
		sigterm, sigkil time.Duration
	}{
		{"no hook: SIGTERM at once, SIGKILL at the grace period", TerminationSpec{GracePeriod: 30 * s}, 0, 30 * s},
		{"a hook takes its time from the grace period", TerminationSpec{GracePeriod: 30 * s, PreStop: 10 * s}, 10 * s, 30 * s},
		{"a hook longer than the grace period is cut at it, then 2 s more", TerminationSpec{GracePeriod: 10 * s, PreStop: 15 * s}, 10 * s, 12 * s},
		{"a hook leaving under 2 s still leaves the app 2 s", TerminationSpec{GracePeriod: 10 * s, PreStop: 9 * s}, 9 * s, 11 * s},
		{"grace 0: SIGKILL 2 s after SIGTERM", TerminationSpec{}, 0, 2 * s},
	} {
		term, kill := Termination(tc.spec)
		if term != tc.sigterm || kill != tc.sigkil {
			t.Errorf("%s: SIGTERM at %v, SIGKILL at %v; want %v and %v", tc.name, term, kill, tc.sigterm, tc.sigkil)
		}
	}
}
