package scheduler

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// zoned returns nodes named n0, n1, ... with 4 cores, each in the zone given.
func zoned(zones ...string) []Node {
	nodes := make([]Node, len(zones))
	for i, z := range zones {
		nodes[i] = Node{Name: fmt.Sprintf("n%d", i), CPU: 4}
		if z != "" {
			nodes[i].Labels = map[string]string{corev1.LabelTopologyZone: z}
		}
	}
	return nodes
}

// spread is a constraint on pods labelled app=web.
func spread(key string, maxSkew int32, when corev1.UnsatisfiableConstraintAction) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: when,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
}

// withSpread gives each pod the constraints.
func withSpread(pods []Pod, c ...corev1.TopologySpreadConstraint) []Pod {
	for i := range pods {
		pods[i].TopologySpreadConstraints = c
	}
	return pods
}

// A pod's own topologySpreadConstraints, as podtopologyspread/filtering.go
// and scoring.go apply them: placements each seed must give, or the fit
// error the last pod gets.
func TestTopologySpreadConstraints(t *testing.T) {
	honor := corev1.NodeInclusionPolicyHonor
	three := int32(3)
	tainted := func(nodes []Node, i int) []Node {
		nodes[i].Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		return nodes
	}
	for _, tc := range []struct {
		name  string
		nodes []Node
		pods  []Pod
		// perDomain counts the pods placed per value of key, for the values
		// that got any.
		key       string
		perDomain []int
		err       string
	}{
		{"zone maxSkew 1 holds the two zones level", zoned("a", "a", "b"),
			withSpread(replicas("web", 4, 0.1), spread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)),
			corev1.LabelTopologyZone, []int{2, 2}, ""},
		{"hostname maxSkew 1 levels the nodes though one is fuller", append(zoned("a", "a"), Node{Name: "n2", CPU: 64}),
			withSpread(replicas("web", 7, 0.5), spread(corev1.LabelHostname, 1, corev1.DoNotSchedule)),
			corev1.LabelHostname, []int{2, 2, 3}, ""},
		// nodeTaintsPolicy Ignore, the default: the tainted node is a domain of
		// 0 pods, so no node may take a second (the documented pitfall).
		{"a tainted node holds the minimum at 0", tainted(zoned("a", "a"), 1),
			withSpread(replicas("web", 2, 0.1), spread(corev1.LabelHostname, 1, corev1.DoNotSchedule)),
			"", nil, "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1 node(s) had untolerated taint(s)."},
		{"nodeTaintsPolicy Honor leaves the tainted node out", tainted(zoned("a", "a"), 1),
			withSpread(replicas("web", 2, 0.1), func() corev1.TopologySpreadConstraint {
				c := spread(corev1.LabelHostname, 1, corev1.DoNotSchedule)
				c.NodeTaintsPolicy = &honor
				return c
			}()),
			corev1.LabelHostname, []int{2}, ""},
		{"a node without the key is refused", zoned("a", ""),
			withSpread(replicas("web", 3, 0.1), spread(corev1.LabelTopologyZone, 5, corev1.DoNotSchedule)),
			corev1.LabelTopologyZone, []int{3}, ""},
		{"no node with the key", zoned(""),
			withSpread(replicas("web", 1, 0.1), spread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)),
			"", nil, "0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label)."},
		{"minDomains above the domains there are counts the minimum as 0", zoned("a", "b"),
			withSpread(replicas("web", 3, 0.1), func() corev1.TopologySpreadConstraint {
				c := spread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)
				c.MinDomains = &three
				return c
			}()),
			"", nil, "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints."},
		{"ScheduleAnyway prefers the emptier zone", zoned("a", "a", "a", "b"),
			withSpread(replicas("web", 4, 0.1), spread(corev1.LabelTopologyZone, 1, corev1.ScheduleAnyway)),
			corev1.LabelTopologyZone, []int{2, 2}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, seed := range seeds {
				s := newScheduler(tc.nodes, seed)
				var placed []int
				var err error
				for _, p := range tc.pods {
					var n int
					if n, err = s.Schedule(p); err != nil {
						break
					}
					placed = append(placed, n)
				}
				if tc.err != "" {
					var fit *FitError
					if !errors.As(err, &fit) || err.Error() != tc.err {
						t.Fatalf("seed %d: error %v, want %q", seed, err, tc.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				var order []string
				counts := map[string]int{}
				for _, n := range placed {
					v := s.nodes[n].Labels[tc.key]
					if _, ok := counts[v]; !ok {
						order = append(order, v)
					}
					counts[v]++
				}
				got := make([]int, 0, len(order))
				for _, v := range order {
					got = append(got, counts[v])
				}
				if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(tc.perDomain)) {
					t.Errorf("seed %d: pods per %s %v, want %v", seed, tc.key, got, tc.perDomain)
				}
			}
		})
	}
}

// matchLabelKeys count only the pods with the incoming pod's value of the key,
// so that a new revision spreads on its own.
func TestSpreadMatchLabelKeys(t *testing.T) {
	c := spread(corev1.LabelHostname, 1, corev1.DoNotSchedule)
	c.MatchLabelKeys = []string{"revision"}
	old := withSpread(replicas("web", 2, 0.1), c)
	next := withSpread(replicas("web", 2, 0.1), c)
	for i := range old {
		old[i].Labels = map[string]string{"app": "web", "revision": "1"}
		next[i].Name = fmt.Sprintf("web-new-%d", i)
		next[i].Labels = map[string]string{"app": "web", "revision": "2"}
	}
	for _, seed := range seeds {
		s := newScheduler(zoned("a", "a"), seed)
		placed := mustSchedule(t, s, append(old, next...)...)
		if placed[0] == placed[1] || placed[2] == placed[3] {
			t.Errorf("seed %d: each revision's two pods on nodes %v, want one per node", seed, placed)
		}
	}
}
