package report

import (
	"fmt"
	"testing"

	"trafficlab/result"
)

// holders names each client pod's connections by pod, sorted, with a count where
// there are several, and counts the client pods past the eighth; a client with no
// Held (short-lived connections) is left out.
func TestHolders(t *testing.T) {
	held := func(n int) []result.HeldConnections {
		var out []result.HeldConnections
		for i := range n {
			out = append(out, result.HeldConnections{Pod: fmt.Sprintf("c-%d", i), To: map[string]int64{"web-1": 2, "web-0": 1}})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		clients []result.Client
		want    string
	}{
		{"one", []result.Client{{Name: "c", Target: "web", Held: held(1)}},
			"Connections by client pod: c-0 → web-0, web-1 (2). "},
		{"past eight", []result.Client{{Name: "c", Target: "web", Held: held(10)}},
			"Connections by client pod: c-0 → web-0, web-1 (2); c-1 → web-0, web-1 (2); c-2 → web-0, web-1 (2); c-3 → web-0, web-1 (2); " +
				"c-4 → web-0, web-1 (2); c-5 → web-0, web-1 (2); c-6 → web-0, web-1 (2); c-7 → web-0, web-1 (2); 2 more client pods. "},
		{"short-lived", []result.Client{{Name: "c", Target: "web"}}, ""},
		{"another service's", []result.Client{{Name: "c", Target: "api", Held: held(1)}}, ""},
	} {
		if got := holders(&result.Result{Clients: c.clients}, "web"); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}
