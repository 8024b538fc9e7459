package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// maxNodeScore is what every plugin's scores are normalised to
// (kube-scheduler framework MaxNodeScore).
const maxNodeScore = 100

// Score weights of the default profile (apis/config/v1/default_plugins.go).
// NodeResourcesBalancedAllocation (1) and ImageLocality (1) give every node
// the same score here, so they are left out.
const (
	weightTaintToleration  = 3
	weightNodeAffinity     = 2
	weightNodeResourcesFit = 1
	weightTopologySpread   = 2
	weightInterPodAffinity = 2
)

// hardPodAffinityWeight is InterPodAffinityArgs.HardPodAffinityWeight's
// default (apis/config/v1/defaults.go): how much a bound pod's required
// affinity to the incoming pod counts in scoring.
const hardPodAffinityWeight = 1

// System default topology spread constraints (podtopologyspread/plugin.go
// systemDefaultConstraints), both ScheduleAnyway: they only score.
const (
	maxSkewHostname = 3
	maxSkewZone     = 5
)

// score returns the weighted sum of the plugin scores of each feasible node
// (framework/runtime/framework.go RunScorePlugins).
func (s *Scheduler) score(p *podInfo, feasible []int) []int64 {
	nodes := make([]*nodeInfo, len(feasible))
	for k, i := range feasible {
		nodes[k] = s.nodes[i]
	}
	total := make([]int64, len(nodes))
	add := func(weight int64, scores []int64) {
		for k, sc := range scores {
			total[k] += weight * sc
		}
	}
	add(weightTaintToleration, taintScores(p, nodes))
	add(weightNodeAffinity, nodeAffinityScores(p, nodes))
	add(weightNodeResourcesFit, leastAllocatedScores(p, nodes))
	add(weightTopologySpread, s.spreadScores(p, nodes))
	add(weightInterPodAffinity, s.interPodScores(p, nodes))
	return total
}

// taintScores counts the PreferNoSchedule taints p does not tolerate,
// fewer being better (tainttoleration/taint_toleration.go Score and
// NormalizeScore). taint_toleration.go first keeps the tolerations with an
// empty or PreferNoSchedule effect; ToleratesTaint checks the effect anyway.
func taintScores(p *podInfo, nodes []*nodeInfo) []int64 {
	scores := make([]int64, len(nodes))
	for k, n := range nodes {
		for i := range n.Taints {
			if n.Taints[i].Effect == corev1.TaintEffectPreferNoSchedule && !tolerates(p.Tolerations, &n.Taints[i]) {
				scores[k]++
			}
		}
	}
	defaultNormalize(scores, true)
	return scores
}

// nodeAffinityScores sums the weights of the preferred node affinity terms
// each node matches (nodeaffinity/node_affinity.go Score, component-helpers
// nodeaffinity.go PreferredSchedulingTerms.Score).
func nodeAffinityScores(p *podInfo, nodes []*nodeInfo) []int64 {
	scores := make([]int64, len(nodes))
	for k, n := range nodes {
		for i := range p.preferredNodeTerms {
			if p.preferredNodeTerms[i].matches(n) {
				scores[k] += p.preferredNodeTerms[i].weight
			}
		}
	}
	defaultNormalize(scores, false)
	return scores
}

// leastAllocatedScores is NodeResourcesFit's default LeastAllocated score
// on CPU alone (noderesources/least_allocated.go, resource_allocation.go):
// the share of the node left once p is added, counting pods without a
// request as defaultMilliCPURequest. The default strategy weighs CPU and
// memory 1:1 and averages them; memory is not modelled.
func leastAllocatedScores(p *podInfo, nodes []*nodeInfo) []int64 {
	scores := make([]int64, len(nodes))
	for k, n := range nodes {
		requested := n.nonZeroRequested + p.nonZeroMilliCPU
		if n.allocatable == 0 || requested > n.allocatable {
			continue
		}
		scores[k] = (n.allocatable - requested) * maxNodeScore / n.allocatable
	}
	return scores
}

// interPodScores is InterPodAffinity's score (interpodaffinity/scoring.go):
// per topology domain, the weights of p's preferred terms matching bound
// pods there, and of the bound pods' terms matching p (required affinity
// at hardPodAffinityWeight), anti-affinity counting negatively; then
// min-max normalised over the feasible nodes.
func (s *Scheduler) interPodScores(p *podInfo, nodes []*nodeInfo) []int64 {
	domain := map[topologyPair]int64{}
	add := func(n *nodeInfo, t affinityTerm, q *Pod, weight int64) {
		if !t.matches(q) {
			return
		}
		if v, ok := n.Labels[t.topologyKey]; ok {
			domain[topologyPair{t.topologyKey, v}] += weight
		}
	}
	for _, n := range s.nodes {
		for _, e := range n.pods {
			for _, t := range p.preferredAffinity {
				add(n, t, &e.Pod, t.weight)
			}
			for _, t := range p.preferredAntiAffinity {
				add(n, t, &e.Pod, -t.weight)
			}
			for _, t := range e.requiredAffinity {
				add(n, t, &p.Pod, hardPodAffinityWeight)
			}
			for _, t := range e.preferredAffinity {
				add(n, t, &p.Pod, t.weight)
			}
			for _, t := range e.preferredAntiAffinity {
				add(n, t, &p.Pod, -t.weight)
			}
		}
	}
	scores := make([]int64, len(nodes))
	for k, n := range nodes {
		for key, v := range n.Labels {
			scores[k] += domain[topologyPair{key, v}]
		}
	}
	minScore, maxScore := int64(math.MaxInt64), int64(math.MinInt64)
	for _, sc := range scores {
		minScore = min(minScore, sc)
		maxScore = max(maxScore, sc)
	}
	for k := range scores {
		if maxScore == minScore {
			scores[k] = 0
			continue
		}
		scores[k] = int64(maxNodeScore * float64(scores[k]-minScore) / float64(maxScore-minScore))
	}
	return scores
}

// defaultNormalize scales scores to 0..maxNodeScore by their maximum,
// reversed if asked (helper/normalize_score.go DefaultNormalizeScore).
func defaultNormalize(scores []int64, reverse bool) {
	var maxScore int64
	for _, sc := range scores {
		maxScore = max(maxScore, sc)
	}
	for k := range scores {
		switch {
		case maxScore == 0 && reverse:
			scores[k] = maxNodeScore
		case maxScore == 0:
		case reverse:
			scores[k] = maxNodeScore - maxNodeScore*scores[k]/maxScore
		default:
			scores[k] = maxNodeScore * scores[k] / maxScore
		}
	}
}
