package scheduler

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// Filter failure reasons, worded as the plugins word them.
const (
	// nodename/node_name.go ErrReason.
	reasonNodeName = "node(s) didn't match the requested node name"
	// tainttoleration/taint_toleration.go Filter (v1.34 still named the
	// taint: "node(s) had untolerated taint {key: value}").
	reasonTaint = "node(s) had untolerated taint(s)"
	// nodeaffinity/node_affinity.go ErrReasonPod.
	reasonNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	// noderesources/fit.go fitsRequest.
	reasonCPU = "Insufficient cpu"
	// interpodaffinity/filtering.go ErrReason*.
	reasonAffinity             = "node(s) didn't match pod affinity rules"
	reasonAntiAffinity         = "node(s) didn't match pod anti-affinity rules"
	reasonExistingAntiAffinity = "node(s) didn't satisfy existing pods anti-affinity rules"
)

// filter returns the nodes p may go to and, for the others, how many were
// rejected for each reason. A node keeps the reason of the first filter that
// rejects it, the filters running in default_plugins.go order.
func (s *Scheduler) filter(p *podInfo) (feasible []int, reasons map[string]int) {
	counts := s.interPodCounts(p)
	spread := s.spreadFilter(p)
	reasons = map[string]int{}
	for i, n := range s.nodes {
		if r := filterNode(p, n, spread, counts); r != "" {
			reasons[r]++
			continue
		}
		feasible = append(feasible, i)
	}
	return feasible, reasons
}

// filterNode returns why p cannot go to n, or "".
func filterNode(p *podInfo, n *nodeInfo, spread *spreadFilter, counts *interPodCounts) string {
	switch {
	case p.NodeName != "" && p.NodeName != n.Name:
		return reasonNodeName
	case untolerated(p.Tolerations, n.Taints):
		return reasonTaint
	case !p.matchesNodeAffinity(n):
		return reasonNodeAffinity
	case !fitsCPU(p, n):
		return reasonCPU
	}
	if r := spread.filter(p, n); r != "" {
		return r
	}
	return counts.filter(p, n)
}

// noLogger is handed to Toleration.ToleratesTaint, which only logs for the
// Lt and Gt toleration operators. They are off here, as their feature gate
// TaintTolerationComparisonOperators is alpha (pkg/features/kube_features.go).
var noLogger = logr.Discard()

// untolerated reports whether a NoSchedule or NoExecute taint is tolerated
// by none of the tolerations (tainttoleration/taint_toleration.go Filter,
// helper/taint.go DoNotScheduleTaintsFilterFunc).
func untolerated(tolerations []corev1.Toleration, taints []corev1.Taint) bool {
	for i := range taints {
		if e := taints[i].Effect; e != corev1.TaintEffectNoSchedule && e != corev1.TaintEffectNoExecute {
			continue
		}
		if !tolerates(tolerations, &taints[i]) {
			return true
		}
	}
	return false
}

func tolerates(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(noLogger, taint, false) {
			return true
		}
	}
	return false
}

// fitsCPU is NodeResourcesFit's filter on CPU (noderesources/fit.go
// fitsRequest): a pod without a request fits anywhere.
func fitsCPU(p *podInfo, n *nodeInfo) bool {
	return p.milliCPU == 0 || n.allocatable == 0 || p.milliCPU <= n.allocatable-n.requested
}

// topologyPair is a topology domain: a node label key and value.
type topologyPair struct{ key, value string }

// interPodCounts is what InterPodAffinity's PreFilter counts per topology
// domain over all bound pods (interpodaffinity/filtering.go preFilterState).
type interPodCounts struct {
	// affinity: pods matching all of p's required affinity terms.
	affinity map[topologyPair]int
	// antiAffinity: pods matching one of p's required anti-affinity terms,
	// once per term.
	antiAffinity map[topologyPair]int
	// existingAntiAffinity: required anti-affinity terms of bound pods that
	// match p (the symmetric rule).
	existingAntiAffinity map[topologyPair]int
}

func (s *Scheduler) interPodCounts(p *podInfo) *interPodCounts {
	c := &interPodCounts{
		affinity:             map[topologyPair]int{},
		antiAffinity:         map[topologyPair]int{},
		existingAntiAffinity: map[topologyPair]int{},
	}
	add := func(m map[topologyPair]int, n *nodeInfo, key string) {
		if v, ok := n.Labels[key]; ok {
			m[topologyPair{key, v}]++
		}
	}
	for _, n := range s.nodes {
		for _, e := range n.pods {
			if matchesAll(p.requiredAffinity, &e.Pod) {
				for _, t := range p.requiredAffinity {
					add(c.affinity, n, t.topologyKey)
				}
			}
			for _, t := range p.requiredAntiAffinity {
				if t.matches(&e.Pod) {
					add(c.antiAffinity, n, t.topologyKey)
				}
			}
			for _, t := range e.requiredAntiAffinity {
				if t.matches(&p.Pod) {
					add(c.existingAntiAffinity, n, t.topologyKey)
				}
			}
		}
	}
	return c
}

// filter is InterPodAffinity's Filter (interpodaffinity/filtering.go
// satisfyPodAffinity, satisfyPodAntiAffinity,
// satisfyExistingPodsAntiAffinity): the reason n is rejected, or "".
func (c *interPodCounts) filter(p *podInfo, n *nodeInfo) string {
	allDomainsMatch := true
	for _, t := range p.requiredAffinity {
		v, ok := n.Labels[t.topologyKey]
		if !ok {
			return reasonAffinity
		}
		if c.affinity[topologyPair{t.topologyKey, v}] == 0 {
			allDomainsMatch = false
		}
	}
	// The first pod of a group with affinity to itself may go anywhere:
	// no bound pod matches the terms yet, but the pod itself does.
	if !allDomainsMatch && (len(c.affinity) > 0 || !matchesAll(p.requiredAffinity, &p.Pod)) {
		return reasonAffinity
	}
	for _, t := range p.requiredAntiAffinity {
		if v, ok := n.Labels[t.topologyKey]; ok && c.antiAffinity[topologyPair{t.topologyKey, v}] > 0 {
			return reasonAntiAffinity
		}
	}
	for k, v := range n.Labels {
		if c.existingAntiAffinity[topologyPair{k, v}] > 0 {
			return reasonExistingAntiAffinity
		}
	}
	return ""
}
