package report

import (
	"strings"
	"testing"

	"trafficlab/result"
)

// The idle-close sentence appears for a service whose app closed connections
// under requests, with its count and timeout, and not for one that closed none.
func TestIdleClosesExplained(t *testing.T) {
	for _, c := range []struct {
		name   string
		svc    result.Service
		want   []string
		absent bool
	}{
		{"requests reset", result.Service{Name: "web", IdleTimeoutS: 5, IdleCloseResets: 22},
			[]string{"22 requests reached connections that web's app had already closed as idle (pod.idleTimeout 5s)",
				"an idle timeout under 5s"}, false},
		{"an idle timeout that reset nothing", result.Service{Name: "web", IdleTimeoutS: 5}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &result.Result{Engine: "simulate", Services: []result.Service{c.svc}}
			got := strings.Join(idleCloses(r), " ")
			if c.absent != (got == "") {
				t.Fatalf("sentence %q; want one: %v", got, !c.absent)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("sentence lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
