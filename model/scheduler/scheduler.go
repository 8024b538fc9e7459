// Package scheduler places pods on nodes the way kube-scheduler's default
// profile does, as a deterministic function of the bound pods and a seeded rng.
//
// It mirrors kubernetes/kubernetes v1.36.3, pkg/scheduler:
//   - apis/config/v1/default_plugins.go: which plugins run, in which order,
//     and the score weights (TaintToleration 3, NodeAffinity 2,
//     NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2,
//     NodeResourcesBalancedAllocation 1, ImageLocality 1);
//   - schedule_one.go: schedulePod (filter, a single feasible node is taken
//     without scoring, otherwise score and pick the best);
//   - framework/runtime/framework.go: RunFilterPlugins (a node keeps the
//     reason of the first filter that rejects it) and RunScorePlugins
//     (each plugin's scores are normalised to 0..100, weighted, summed);
//   - framework/types.go: FitError.Error, the "0/N nodes are available" text;
//   - framework/plugins/...: one file per rule, cited where it is modelled.
//
// What is not modelled, and why it may be left out:
//   - Memory, ephemeral storage, extended resources and the pod count limit:
//     only CPU is simulated. NodeResourcesFit scores CPU alone where the
//     default LeastAllocated strategy averages CPU and memory.
//   - NodeResourcesBalancedAllocation: with a single resource the standard
//     deviation of the usage fractions is 0, so every node scores the same
//     (75 in balanced_allocation.go) and the plugin cannot change the choice.
//   - ImageLocality: images are not modelled, every node scores 0.
//   - NodeUnschedulable, NodePorts, the volume plugins, DRA, scheduling gates,
//     priorities, preemption (DefaultPreemption's PostFilter message is not
//     appended to errors), nominated nodes, extenders, percentageOfNodesToScore
//     (all nodes are evaluated, which kube-scheduler also does below 100 nodes).
//   - Namespaces: all pods share one, so namespace fields of affinity terms
//     are ignored. matchLabelKeys/mismatchLabelKeys of pod affinity terms are
//     ignored too: the API server merges them into labelSelector at creation.
//   - The system default spreading selects the pods of the same Owner, where
//     kube-scheduler selects by the Services and ReplicaSets matching the pod
//     (see systemDefaultConstraints).
//   - Ties: the best node is drawn uniformly with the given rng (see selectHost).
//   - Invalid selectors are an error from Schedule; the API server would have
//     rejected such a pod.
package scheduler

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Node is a schedulable node.
type Node struct {
	Name string
	// Labels; New adds kubernetes.io/hostname=Name when it is missing, as the
	// kubelet does, since the default spreading and most affinity terms use it.
	Labels map[string]string
	Taints []corev1.Taint
	// CPU is the allocatable CPU in cores; 0 means unlimited: no fit check,
	// and a NodeResourcesFit score of 0 (least_allocated.go skips resources
	// with no allocatable amount).
	CPU float64
}

// Pod is a pod to place.
type Pod struct {
	Name string
	// Owner is the Deployment (or background workload) the pod belongs to.
	// The default topology spreading counts the pods of the same Owner; ""
	// disables it, as for a pod no Service or ReplicaSet selects.
	Owner  string
	Labels map[string]string
	// CPURequest in cores.
	CPURequest float64
	// NodeName pins the pod (spec.nodeName). The node must still pass the
	// filters, as the NodeName plugin leaves it the only candidate.
	NodeName     string
	NodeSelector map[string]string
	Affinity     *corev1.Affinity
	Tolerations  []corev1.Toleration
	// TopologySpreadConstraints are the pod's own; without any, the system
	// defaults spread the Owner's pods.
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
}

// Scheduler holds the nodes and the pods bound to them.
type Scheduler struct {
	nodes []*nodeInfo
	pods  map[string]*podInfo
	rng   *rand.Rand
}

// nodeInfo is a node with what the bound pods use of it.
type nodeInfo struct {
	Node
	allocatable int64 // milli-CPU, 0 = unlimited
	// requested sums the bound pods' requests (NodeResourcesFit's filter);
	// nonZeroRequested counts pods without a request as
	// defaultMilliCPURequest (its score, resource_allocation.go).
	requested, nonZeroRequested int64
	pods                        []*podInfo
}

// ErrNoNodes is kube-scheduler's ErrNoNodesAvailable (scheduler.go).
var ErrNoNodes = errors.New("no nodes available to schedule pods")

// FitError is returned when no node passes the filters.
type FitError struct {
	NumAllNodes int
	// Reasons counts the nodes rejected for each reason.
	Reasons map[string]int
}

// Error formats as framework/types.go FitError.Error: "count reason"
// entries sorted as strings.
func (e *FitError) Error() string {
	parts := make([]string, 0, len(e.Reasons))
	for reason, n := range e.Reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, reason))
	}
	slices.Sort(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", e.NumAllNodes, strings.Join(parts, ", "))
}

// New returns a scheduler for nodes, with no pods bound. rng breaks ties
// between equally good nodes and must not be nil.
func New(nodes []Node, rng *rand.Rand) *Scheduler {
	s := &Scheduler{pods: map[string]*podInfo{}, rng: rng}
	for _, n := range nodes {
		lbls := make(map[string]string, len(n.Labels)+1)
		for k, v := range n.Labels {
			lbls[k] = v
		}
		if _, ok := lbls[corev1.LabelHostname]; !ok {
			lbls[corev1.LabelHostname] = n.Name
		}
		n.Labels = lbls
		s.nodes = append(s.nodes, &nodeInfo{Node: n, allocatable: milliCPU(n.CPU)})
	}
	return s
}

// Schedule picks a node for p, binds p to it and returns its index in the
// nodes given to New. The error is a *FitError when no node fits.
func (s *Scheduler) Schedule(p Pod) (int, error) {
	if _, ok := s.pods[p.Name]; ok {
		return -1, fmt.Errorf("pod %q is already bound", p.Name)
	}
	if len(s.nodes) == 0 {
		return -1, ErrNoNodes
	}
	pi, err := newPodInfo(p)
	if err != nil {
		return -1, fmt.Errorf("pod %q: %w", p.Name, err)
	}
	feasible, reasons := s.filter(pi)
	if len(feasible) == 0 {
		return -1, &FitError{NumAllNodes: len(s.nodes), Reasons: reasons}
	}
	node := feasible[0]
	if len(feasible) > 1 {
		node = s.selectHost(feasible, s.score(pi, feasible))
	}
	pi.node = node
	n := s.nodes[node]
	n.pods = append(n.pods, pi)
	n.requested += pi.milliCPU
	n.nonZeroRequested += pi.nonZeroMilliCPU
	s.pods[p.Name] = pi
	return node, nil
}

// Remove unbinds the named pod; unknown names are ignored.
func (s *Scheduler) Remove(name string) {
	pi, ok := s.pods[name]
	if !ok {
		return
	}
	delete(s.pods, name)
	n := s.nodes[pi.node]
	n.pods = slices.DeleteFunc(n.pods, func(q *podInfo) bool { return q == pi })
	n.requested -= pi.milliCPU
	n.nonZeroRequested -= pi.nonZeroMilliCPU
}

// selectHost returns the feasible node with the highest score, drawing
// uniformly among ties by reservoir sampling, as schedule_one.go selectHost
// does in v1.34. (v1.36 pops a heap instead, whose tie-break only uses
// random numbers when extenders score; otherwise it follows the order in
// which the parallel filters found the nodes, which is arbitrary too.)
func (s *Scheduler) selectHost(feasible []int, scores []int64) int {
	best, ties := 0, 1
	for k := 1; k < len(feasible); k++ {
		switch {
		case scores[k] > scores[best]:
			best, ties = k, 1
		case scores[k] == scores[best]:
			ties++
			if s.rng.IntN(ties) == 0 {
				best = k
			}
		}
	}
	return feasible[best]
}

// milliCPU converts cores to milli-cores, rounding up as
// resource.Quantity.MilliValue does, after forgiving float noise (0.1*1000
// is not exactly 100).
func milliCPU(cores float64) int64 {
	return int64(math.Ceil(cores*1000 - 1e-6))
}
