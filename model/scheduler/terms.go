package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// defaultMilliCPURequest is what scoring assumes a pod without a CPU request
// uses (pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest), so that
// best-effort pods still spread by load.
const defaultMilliCPURequest = 100

// podInfo is a pod with its selectors parsed, as framework.PodInfo holds them.
type podInfo struct {
	Pod
	node                      int
	milliCPU, nonZeroMilliCPU int64
	nodeSelector              labels.Selector
	// requiredNodeTerms are ORed; hasRequiredNodeTerms tells an absent
	// requiredDuringScheduling (any node) from one whose terms are all empty
	// (no node).
	hasRequiredNodeTerms bool
	requiredNodeTerms    []nodeTerm
	preferredNodeTerms   []nodeTerm
	// Inter-pod affinity terms; required ones have weight 0.
	requiredAffinity, requiredAntiAffinity   []affinityTerm
	preferredAffinity, preferredAntiAffinity []affinityTerm
	// The pod's own spread constraints, DoNotSchedule and ScheduleAnyway.
	hardSpread, softSpread []spreadConstraint
}

// nodeTerm is a parsed NodeSelectorTerm (component-helpers
// scheduling/corev1/nodeaffinity/nodeaffinity.go nodeSelectorTerm).
type nodeTerm struct {
	labels labels.Selector // nil when the term has no matchExpressions
	// names are the matchFields requirements, all on metadata.name.
	names  []corev1.NodeSelectorRequirement
	weight int64 // preferred terms only
}

// affinityTerm is a parsed PodAffinityTerm (framework.AffinityTerm).
type affinityTerm struct {
	selector    labels.Selector
	topologyKey string
	weight      int64 // preferred terms only
}

func newPodInfo(p Pod) (*podInfo, error) {
	m := milliCPU(p.CPURequest)
	pi := &podInfo{Pod: p, milliCPU: m, nonZeroMilliCPU: m, nodeSelector: labels.SelectorFromSet(p.NodeSelector)}
	if m == 0 {
		pi.nonZeroMilliCPU = defaultMilliCPURequest
	}
	var err error
	if pi.hardSpread, err = spreadConstraints(&p, corev1.DoNotSchedule); err != nil {
		return nil, err
	}
	if pi.softSpread, err = spreadConstraints(&p, corev1.ScheduleAnyway); err != nil {
		return nil, err
	}
	a := p.Affinity
	if a == nil {
		return pi, nil
	}
	if na := a.NodeAffinity; na != nil {
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			pi.hasRequiredNodeTerms = true
			for _, t := range req.NodeSelectorTerms {
				if pi.requiredNodeTerms, err = appendNodeTerm(pi.requiredNodeTerms, t, 0); err != nil {
					return nil, err
				}
			}
		}
		for _, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			// A zero weight adds nothing (nodeaffinity.go NewPreferredSchedulingTerms).
			if t.Weight == 0 {
				continue
			}
			if pi.preferredNodeTerms, err = appendNodeTerm(pi.preferredNodeTerms, t.Preference, int64(t.Weight)); err != nil {
				return nil, err
			}
		}
	}
	if pa := a.PodAffinity; pa != nil {
		if pi.requiredAffinity, err = affinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return nil, err
		}
		if pi.preferredAffinity, err = weightedAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			return nil, err
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if pi.requiredAntiAffinity, err = affinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return nil, err
		}
		if pi.preferredAntiAffinity, err = weightedAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			return nil, err
		}
	}
	return pi, nil
}

// nodeSelectorOps maps node selector operators to label selector ones
// (nodeaffinity.go nodeSelectorRequirementsAsSelector).
var nodeSelectorOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

// appendNodeTerm parses t onto terms. A term with neither expressions nor
// fields selects no node, so it is dropped (nodeaffinity.go
// isEmptyNodeSelectorTerm).
func appendNodeTerm(terms []nodeTerm, t corev1.NodeSelectorTerm, weight int64) ([]nodeTerm, error) {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return terms, nil
	}
	term := nodeTerm{names: t.MatchFields, weight: weight}
	if len(t.MatchExpressions) > 0 {
		term.labels = labels.NewSelector()
		for _, e := range t.MatchExpressions {
			op, ok := nodeSelectorOps[e.Operator]
			if !ok {
				return nil, fmt.Errorf("unsupported node selector operator %q", e.Operator)
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				return nil, err
			}
			term.labels = term.labels.Add(*r)
		}
	}
	// API validation only allows metadata.name with In or NotIn and one value.
	for _, f := range t.MatchFields {
		if f.Key != metav1.ObjectNameField || len(f.Values) != 1 ||
			(f.Operator != corev1.NodeSelectorOpIn && f.Operator != corev1.NodeSelectorOpNotIn) {
			return nil, fmt.Errorf("unsupported matchFields requirement %s %s %v", f.Key, f.Operator, f.Values)
		}
	}
	return append(terms, term), nil
}

func (t *nodeTerm) matches(n *nodeInfo) bool {
	if t.labels != nil && !t.labels.Matches(labels.Set(n.Labels)) {
		return false
	}
	for _, f := range t.names {
		if (n.Name == f.Values[0]) != (f.Operator == corev1.NodeSelectorOpIn) {
			return false
		}
	}
	return true
}

// matchesNodeAffinity is NodeAffinity's filter: the nodeSelector and one of
// the required terms (component-helpers nodeaffinity.go
// RequiredNodeAffinity.Match).
func (pi *podInfo) matchesNodeAffinity(n *nodeInfo) bool {
	if !pi.nodeSelector.Matches(labels.Set(n.Labels)) {
		return false
	}
	if !pi.hasRequiredNodeTerms {
		return true
	}
	for i := range pi.requiredNodeTerms {
		if pi.requiredNodeTerms[i].matches(n) {
			return true
		}
	}
	return false
}

func affinityTerms(terms []corev1.PodAffinityTerm) ([]affinityTerm, error) {
	var out []affinityTerm
	for i := range terms {
		t, err := newAffinityTerm(&terms[i], 0)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func weightedAffinityTerms(terms []corev1.WeightedPodAffinityTerm) ([]affinityTerm, error) {
	var out []affinityTerm
	for i := range terms {
		t, err := newAffinityTerm(&terms[i].PodAffinityTerm, int64(terms[i].Weight))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// newAffinityTerm parses the label selector as framework/types.go
// newAffinityTerm does: a nil selector matches no pod.
func newAffinityTerm(t *corev1.PodAffinityTerm, weight int64) (affinityTerm, error) {
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		return affinityTerm{}, err
	}
	return affinityTerm{selector: sel, topologyKey: t.TopologyKey, weight: weight}, nil
}

func (t *affinityTerm) matches(p *Pod) bool {
	return t.selector.Matches(labels.Set(p.Labels))
}

// matchesAll reports whether p matches every term, and there is one
// (interpodaffinity/filtering.go podMatchesAllAffinityTerms).
func matchesAll(terms []affinityTerm, p *Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].matches(p) {
			return false
		}
	}
	return true
}
