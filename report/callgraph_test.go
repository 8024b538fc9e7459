package report

import (
	"fmt"
	"strings"
	"testing"

	"trafficlab/result"
)

// Each service sits one column right of its furthest caller: db, called by the
// frontend and by the cart the frontend calls, goes right of the cart, and the
// frontend's line to it arcs over the cart's box.
func TestGraphColumnsFollowTheLongestPath(t *testing.T) {
	r := &result.Result{
		DurationS: 10,
		Clients:   []result.Client{{Name: "users", Target: "frontend", Requests: 100}},
		Edges: []result.Edge{
			{From: "frontend", To: "cart", Requests: 100},
			{From: "frontend", To: "db", Requests: 100},
			{From: "cart", To: "db", Requests: 200, Errors: result.Errors{Timeout: 3}},
		},
	}
	g := graphOf(r)
	col := map[string]int{}
	for _, n := range g.Nodes {
		col[n.Name] = (n.X - margin) / (nodeW + colGap)
	}
	want := map[string]int{"users": 0, "frontend": 1, "cart": 2, "db": 3}
	for n, c := range want {
		if col[n] != c {
			t.Errorf("%s in column %d, want %d (columns %v)", n, col[n], c, col)
		}
	}
	for _, e := range g.Edges {
		var x1, y1, cx1, cy1 int
		if _, err := fmt.Sscanf(e.D, "M%d %d C%d %d", &x1, &y1, &cx1, &cy1); err != nil {
			t.Fatalf("%s: path %q: %v", e.Title, e.D, err)
		}
		skips := strings.HasPrefix(e.Title, "frontend → db")
		if arcs := cy1 < y1; arcs != skips {
			t.Errorf("%s: path %s arcs above its ends: %v, want %v", e.Title, e.D, arcs, skips)
		}
		if strings.HasPrefix(e.Title, "cart → db") && (e.Class != "bad" || e.Width != "8.0") {
			t.Errorf("cart → db, the busiest line with 1.5 %% failed: class %s, width %s", e.Class, e.Width)
		}
	}
	if graphOf(&result.Result{Clients: r.Clients}) != nil {
		t.Error("a run without calls has a call graph")
	}
}
