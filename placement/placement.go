// Package placement is how both engines put a scenario's pods on its nodes: the
// nodes its pools make, kube-scheduler's view (model/scheduler) of each kind of pod,
// and the Layout a run starts from. simulate places every pod with it; emulate
// builds its cluster from the Layout of the simulation it replays, and places the
// pods its live autoscalers create with the same views and the same seed.
package placement

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/scheduler"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Pods are named for the scheduler by kind ("service/", "client/", "background/"),
// so a background workload may share a name with a pod.

// Name is the name of the i-th node of a node pool, or of the i-th pod a service
// or client created: owner-i. Both engines name them so (where Kubernetes gives a
// Deployment's pods random suffixes), so that runs of one scenario name the same
// things alike.
func Name(owner string, i int) string { return fmt.Sprintf("%s-%d", owner, i) }

// NewScheduler is the scheduler a run of spec starts with: its pools' nodes, in
// order, named pool-0, pool-1, ..., no pod bound yet.
func NewScheduler(spec *scenario.Spec) *scheduler.Scheduler {
	var nodes []scheduler.Node
	for _, pool := range spec.Cluster.Nodes {
		cores := 0.0
		if pool.CPU != nil {
			cores = pool.CPU.AsApproximateFloat64()
		}
		for i := 0; i < pool.Count; i++ {
			nodes = append(nodes, scheduler.Node{Name: Name(pool.Name, i),
				Labels: pool.Labels, Taints: pool.Taints, CPU: cores})
		}
	}
	return scheduler.New(nodes, sim.Stream(spec.Seed, "scheduler"))
}

// ServicePod is the scheduler's view of a pod of svc named name.
func ServicePod(svc *scenario.Service, name string) scheduler.Pod {
	pod := &svc.Pod
	p := schedulerPod("service/"+name, "service/"+svc.Name, withApp(svc.Name, pod.Labels), &pod.Resources)
	p.NodeName, p.NodeSelector, p.Affinity, p.Tolerations = pod.NodeName, pod.NodeSelector, pod.Affinity, pod.Tolerations
	p.TopologySpreadConstraints = pod.TopologySpreadConstraints
	return p
}

// ClientPod is the scheduler's view of a client pod named name of Deployment c.
func ClientPod(c *scenario.Client, name string) scheduler.Pod {
	p := schedulerPod("client/"+name, "client/"+c.Name, withApp(c.Name, nil), &c.Resources)
	if pl := c.Placement; pl != nil {
		p.NodeSelector, p.Affinity, p.Tolerations = pl.NodeSelector, pl.Affinity, pl.Tolerations
	}
	return p
}

// BackgroundPod is the scheduler's view of background workload b: pinned to its
// node, or placed by its constraints.
func BackgroundPod(b *scenario.Background) scheduler.Pod {
	p := schedulerPod("background/"+b.Name, "background/"+b.Name, withApp(b.Name, b.Labels), &b.Resources)
	if b.Node != "" {
		p.NodeName = b.Node
	} else if pl := b.Placement; pl != nil {
		p.NodeSelector, p.Affinity, p.Tolerations = pl.NodeSelector, pl.Affinity, pl.Tolerations
	}
	return p
}

// Unschedulable explains a pod the scheduler could not place.
func Unschedulable(pod string, err error) error {
	return fmt.Errorf("pod %s cannot be scheduled: %v", pod, err)
}

// CPURequest is a container's CPU request in cores; 0 when it has none.
func CPURequest(r *corev1.ResourceRequirements) float64 {
	if q, ok := r.Requests[corev1.ResourceCPU]; ok {
		return q.AsApproximateFloat64()
	}
	return 0
}

// schedulerPod is the scheduler's view of a pod with these resources.
func schedulerPod(name, owner string, labels map[string]string, r *corev1.ResourceRequirements) scheduler.Pod {
	return scheduler.Pod{Name: name, Owner: owner, Labels: labels, CPURequest: CPURequest(r)}
}

// withApp is a pod's labels: its own plus app: name, as a Deployment's template has.
func withApp(name string, labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	if _, ok := out["app"]; !ok {
		out["app"] = name
	}
	return out
}
