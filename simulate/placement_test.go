package simulate

import (
	"reflect"
	"testing"
)

func TestPlacementSpreadsThenBalancesRequests(t *testing.T) {
	type pod struct {
		owner string
		cpu   float64
	}
	cases := []struct {
		name  string
		nodes int
		pods  []pod
		want  []int
	}{
		{"six pods on three nodes: two each, in turn", 3,
			[]pod{{"a", 1}, {"a", 1}, {"a", 1}, {"a", 1}, {"a", 1}, {"a", 1}}, []int{0, 1, 2, 0, 1, 2}},
		// A second Deployment spreads on its own, but prefers the emptier nodes.
		{"second deployment avoids the busiest node", 3,
			[]pod{{"a", 1}, {"a", 1}, {"b", 0.5}, {"b", 0.5}}, []int{0, 1, 2, 0}},
		{"client pods without requests spread too", 2,
			[]pod{{"web", 1}, {"caller", 0}, {"caller", 0}}, []int{0, 1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPlacement(c.nodes)
			var got []int
			for _, x := range c.pods {
				got = append(got, p.place(x.owner, x.cpu))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("placed on %v, want %v", got, c.want)
			}
		})
	}
}
