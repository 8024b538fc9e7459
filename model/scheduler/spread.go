package scheduler

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// PodTopologySpread (framework/plugins/podtopologyspread): a pod's own
// topologySpreadConstraints, DoNotSchedule ones filtering and ScheduleAnyway
// ones scoring; a pod without any is scored by the system defaults.

// Filter failure reasons of podtopologyspread/filtering.go.
const (
	reasonSpread             = "node(s) didn't match pod topology spread constraints"
	reasonSpreadMissingLabel = reasonSpread + " (missing required label)"
)

// spreadConstraint is a parsed constraint (podtopologyspread/common.go
// topologySpreadConstraint).
type spreadConstraint struct {
	maxSkew     int32
	topologyKey string
	minDomains  int32
	// counts tells which bound pods count toward the skew: those its label
	// selector matches, or, for a system default, the pods of the same Owner.
	counts func(q *podInfo) bool
	// honorAffinity and honorTaints are the node inclusion policies: whether
	// nodes the pod's node affinity, or its tolerations, rule out are left out
	// of the domains (defaults Honor and Ignore).
	honorAffinity, honorTaints bool
}

// spreadConstraints parses p's constraints of the given action. The label
// selector gets matchLabelKeys' values from p's labels, as the API server
// merges them in (MatchLabelKeysInPodTopologySpreadSelectorMerge, on by
// default since 1.34); a key p lacks is ignored.
func spreadConstraints(p *Pod, action corev1.UnsatisfiableConstraintAction) ([]spreadConstraint, error) {
	var out []spreadConstraint
	for i := range p.TopologySpreadConstraints {
		c := &p.TopologySpreadConstraints[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("topologySpreadConstraints[%d]: %w", i, err)
		}
		for _, key := range c.MatchLabelKeys {
			v, ok := p.Labels[key]
			if !ok {
				continue
			}
			r, err := labels.NewRequirement(key, selection.In, []string{v})
			if err != nil {
				return nil, fmt.Errorf("topologySpreadConstraints[%d].matchLabelKeys: %w", i, err)
			}
			sel = sel.Add(*r)
		}
		sc := spreadConstraint{maxSkew: c.MaxSkew, topologyKey: c.TopologyKey, minDomains: 1,
			counts:        func(q *podInfo) bool { return sel.Matches(labels.Set(q.Labels)) },
			honorAffinity: c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor,
			honorTaints:   c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor,
		}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		out = append(out, sc)
	}
	return out, nil
}

// systemDefaultConstraints are podtopologyspread/plugin.go's
// systemDefaultConstraints, both ScheduleAnyway, for a pod with none of its
// own: its Owner's pods spread over hostnames (maxSkew 3) and zones (5).
// kube-scheduler selects them by the Services, ReplicaSets and StatefulSets
// matching the pod (helper/spread.go DefaultSelector); here they are the pods
// of the same Owner, and a pod with no Owner has none (common.go
// buildDefaultConstraints).
func systemDefaultConstraints(p *podInfo) []spreadConstraint {
	if p.Owner == "" {
		return nil
	}
	sameOwner := func(q *podInfo) bool { return q.Owner == p.Owner }
	return []spreadConstraint{
		{maxSkew: maxSkewHostname, topologyKey: corev1.LabelHostname, counts: sameOwner, honorAffinity: true},
		{maxSkew: maxSkewZone, topologyKey: corev1.LabelTopologyZone, counts: sameOwner, honorAffinity: true},
	}
}

// includes tells whether n's pods count in c's domains (common.go
// matchNodeInclusionPolicies).
func (c *spreadConstraint) includes(p *podInfo, n *nodeInfo) bool {
	if c.honorAffinity && !p.matchesNodeAffinity(n) {
		return false
	}
	return !c.honorTaints || !untolerated(p.Tolerations, n.Taints)
}

// matching counts n's pods that c counts.
func (c *spreadConstraint) matching(n *nodeInfo) int {
	count := 0
	for _, q := range n.pods {
		if c.counts(q) {
			count++
		}
	}
	return count
}

// hasTopologyKeys tells whether n has every constraint's topology key
// (common.go nodeLabelsMatchSpreadConstraints).
func hasTopologyKeys(n *nodeInfo, constraints []spreadConstraint) bool {
	for i := range constraints {
		if _, ok := n.Labels[constraints[i].topologyKey]; !ok {
			return false
		}
	}
	return true
}

// spreadFilter is PodTopologySpread's PreFilter state for p's DoNotSchedule
// constraints (filtering.go calPreFilterState): per constraint, the matching
// pods in each domain of the nodes that have every topology key and pass the
// inclusion policies, and the smallest of those counts.
type spreadFilter struct {
	constraints []spreadConstraint
	domains     []map[string]int
	minMatch    []int
}

func (s *Scheduler) spreadFilter(p *podInfo) *spreadFilter {
	f := &spreadFilter{constraints: p.hardSpread}
	for i := range f.constraints {
		c := &f.constraints[i]
		domains := map[string]int{}
		for _, n := range s.nodes {
			if hasTopologyKeys(n, f.constraints) && c.includes(p, n) {
				domains[n.Labels[c.topologyKey]] += c.matching(n)
			}
		}
		least := math.MaxInt32 // no eligible domain: every node passes
		for _, num := range domains {
			least = min(least, num)
		}
		f.domains = append(f.domains, domains)
		f.minMatch = append(f.minMatch, least)
	}
	return f
}

// filter is PodTopologySpread's Filter (filtering.go Filter): n is rejected
// if it lacks a topology key, or if placing p there would make a domain
// exceed the global minimum by more than maxSkew. With fewer domains than
// minDomains the global minimum counts as 0.
func (f *spreadFilter) filter(p *podInfo, n *nodeInfo) string {
	for i := range f.constraints {
		c := &f.constraints[i]
		v, ok := n.Labels[c.topologyKey]
		if !ok {
			return reasonSpreadMissingLabel
		}
		minMatch := f.minMatch[i]
		if int32(len(f.domains[i])) < c.minDomains {
			minMatch = 0
		}
		self := 0
		if c.counts(p) {
			self = 1
		}
		if f.domains[i][v]+self-minMatch > int(c.maxSkew) {
			return reasonSpread
		}
	}
	return ""
}

// spreadScores is PodTopologySpread's score (podtopologyspread/scoring.go),
// over p's ScheduleAnyway constraints or, when p has none of its own, the
// system defaults: per constraint, the matching pods in the node's domain
// times a log weight, plus maxSkew-1; normalised so that the emptiest domains
// score highest. With constraints of its own, a node lacking one of their
// topology keys is ignored and scores 0; the system defaults do not require
// the keys, and a node without a zone label is scored on the hostname alone.
func (s *Scheduler) spreadScores(p *podInfo, nodes []*nodeInfo) []int64 {
	scores := make([]int64, len(nodes))
	constraints, requireAll := p.softSpread, true
	if len(p.TopologySpreadConstraints) == 0 {
		constraints, requireAll = systemDefaultConstraints(p), false
	}
	if len(constraints) == 0 {
		return scores // PreScore skips
	}
	// The domains are those of the scored nodes, a missing label counting as
	// the domain "" (initPreScoreState); per-node counts are taken in Score.
	ignored := make([]bool, len(nodes))
	domains := make([]map[string]int, len(constraints))
	for i := range domains {
		domains[i] = map[string]int{}
	}
	scored := 0
	for k, n := range nodes {
		if requireAll && !hasTopologyKeys(n, constraints) {
			ignored[k] = true
			continue
		}
		scored++
		for i := range constraints {
			if constraints[i].topologyKey != corev1.LabelHostname {
				domains[i][n.Labels[constraints[i].topologyKey]] = 0
			}
		}
	}
	// Pods are counted on every node of a domain that the inclusion policies
	// accept (PreScore).
	for _, n := range s.nodes {
		if requireAll && !hasTopologyKeys(n, constraints) {
			continue
		}
		for i := range constraints {
			c := &constraints[i]
			if _, ok := domains[i][n.Labels[c.topologyKey]]; ok && c.includes(p, n) {
				domains[i][n.Labels[c.topologyKey]] += c.matching(n)
			}
		}
	}
	weights := make([]float64, len(constraints))
	for i := range constraints {
		size := len(domains[i])
		if constraints[i].topologyKey == corev1.LabelHostname {
			size = scored
		}
		weights[i] = topologyNormalizingWeight(size)
	}
	minScore, maxScore := int64(math.MaxInt64), int64(0)
	for k, n := range nodes {
		if ignored[k] {
			continue
		}
		score := 0.0
		for i := range constraints {
			c := &constraints[i]
			v, ok := n.Labels[c.topologyKey]
			if !ok {
				continue
			}
			count := domains[i][v]
			if c.topologyKey == corev1.LabelHostname {
				count = c.matching(n)
			}
			score += float64(count)*weights[i] + float64(c.maxSkew-1)
		}
		scores[k] = int64(math.Round(score))
		minScore = min(minScore, scores[k])
		maxScore = max(maxScore, scores[k])
	}
	for k := range scores {
		switch {
		case ignored[k]:
			scores[k] = 0
		case maxScore == 0:
			scores[k] = maxNodeScore
		default:
			scores[k] = maxNodeScore * (maxScore + minScore - scores[k]) / maxScore
		}
	}
	return scores
}

// topologyNormalizingWeight keeps counts in small topologies from being
// watered down by big ones (scoring.go topologyNormalizingWeight).
func topologyNormalizingWeight(domains int) float64 {
	return math.Log(float64(domains + 2))
}
