package cluster

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/scheduler"
	"trafficlab/placement"
	"trafficlab/scenario"
)

// Fit places the run's pods, every service's replicas and client's pods, on the
// cluster's schedulable nodes with the scheduler all engines share (their labels,
// taints and allocatable CPU, the pods' selectors, affinity, tolerations and CPU
// requests), and says in sentences what cannot be placed, or is placed otherwise
// than the scenario says: the scenario's node pools are not the cluster's, which
// trafficlab never changes. The nodes are taken as empty, so a fit here may still
// wait for room beside the cluster's other pods.
func Fit(nodes []corev1.Node, sc *scenario.Scenario) []string {
	var out []string
	var ready []scheduler.Node
	for _, n := range nodes {
		if n.Spec.Unschedulable || !nodeReady(&n) {
			continue
		}
		ready = append(ready, scheduler.Node{Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints,
			CPU: n.Status.Allocatable.Cpu().AsApproximateFloat64()})
	}
	// The scheduler's ties are broken at random; which node wins does not matter
	// here, only whether one does.
	s := scheduler.New(ready, rand.New(rand.NewPCG(1, 2)))
	try := func(what string, pods []scheduler.Pod) {
		unplaced := 0
		var why error
		for _, p := range pods {
			if _, err := s.Schedule(p); err != nil {
				unplaced++
				why = err
			}
		}
		if unplaced > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d pods fit no node of the cluster (%v): they will wait Pending", what, unplaced, len(pods), why))
		}
	}
	for i := range sc.Spec.Services {
		svc := &sc.Spec.Services[i]
		if svc.Pod.NodeName != "" {
			out = append(out, fmt.Sprintf("service %s: its pods are pinned to the scenario's node %s; on the cluster its scheduler places them", svc.Name, svc.Pod.NodeName))
		}
		var pods []scheduler.Pod
		for k := range svc.Replicas {
			p := placement.ServicePod(svc, placement.Name(svc.Name, k))
			p.NodeName = "" // not in the Deployment: the cluster's scheduler decides
			pods = append(pods, p)
		}
		try("service "+svc.Name, pods)
	}
	for i := range sc.Spec.Clients {
		c := &sc.Spec.Clients[i]
		var pods []scheduler.Pod
		for k := range c.Replicas {
			pods = append(pods, placement.ClientPod(c, placement.Name(c.Name, k)))
		}
		try("client "+c.Name, pods)
	}
	return out
}

// nodeReady says n's Ready condition is true.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
