package simulate

import (
	"fmt"
	"maps"
	"math"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/node"
	"trafficlab/model/scheduler"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Pods are placed by model/scheduler, kube-scheduler's default profile. Its names are
// prefixed by kind, so a background workload may share a name with a pod.

// newScheduler builds the scheduler's view of the nodes.
func newScheduler(spec *scenario.Spec) *scheduler.Scheduler {
	var nodes []scheduler.Node
	for _, pool := range spec.Cluster.Nodes {
		cores := 0.0
		if pool.CPU != nil {
			cores = pool.CPU.AsApproximateFloat64()
		}
		for i := 0; i < pool.Count; i++ {
			nodes = append(nodes, scheduler.Node{Name: fmt.Sprintf("%s-%d", pool.Name, i),
				Labels: pool.Labels, Taints: pool.Taints, CPU: cores})
		}
	}
	return scheduler.New(nodes, sim.Stream(spec.Seed, "scheduler"))
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

// cpuRequest is a container's CPU request in cores; 0 when it has none.
func cpuRequest(r *corev1.ResourceRequirements) float64 {
	if q, ok := r.Requests[corev1.ResourceCPU]; ok {
		return q.AsApproximateFloat64()
	}
	return 0
}

// servicePod is the scheduler's view of a new pod of service si.
func (e *Engine) servicePod(si int32, name string) scheduler.Pod {
	return ServicePod(e.services[si].spec, name)
}

// ServicePod is the scheduler's view of a pod of svc named name, as a run places
// it; emulate's autoscaled services place their new pods with it.
func ServicePod(svc *scenario.Service, name string) scheduler.Pod {
	pod := &svc.Pod
	p := schedulerPod("service/"+name, "service/"+svc.Name, withApp(svc.Name, pod.Labels), &pod.Resources)
	p.NodeName, p.NodeSelector, p.Affinity, p.Tolerations = pod.NodeName, pod.NodeSelector, pod.Affinity, pod.Tolerations
	return p
}

// ClientPod is the scheduler's view of a client pod named name of Deployment client.
func ClientPod(client, name string) scheduler.Pod {
	return scheduler.Pod{Name: "client/" + name, Owner: "client/" + client, Labels: withApp(client, nil)}
}

// NewScheduler is the scheduler a run of sc starts with, no pod bound yet.
func NewScheduler(sc *scenario.Scenario) *scheduler.Scheduler { return newScheduler(&sc.Spec) }

// unschedulable explains a pod the scheduler could not place.
func unschedulable(pod string, err error) error {
	return fmt.Errorf("pod %s cannot be scheduled: %v", pod, err)
}

// schedulerPod is the scheduler's view of a pod with these resources.
func schedulerPod(name, owner string, labels map[string]string, r *corev1.ResourceRequirements) scheduler.Pod {
	return scheduler.Pod{Name: name, Owner: owner, Labels: labels, CPURequest: cpuRequest(r)}
}

// cpuWeight is the cpu.weight kubelet gives a container with these resources.
func cpuWeight(r *corev1.ResourceRequirements) float64 {
	return float64(node.CPUWeight(milli(cpuRequest(r))))
}

// cpuQuota is the CFS bandwidth of container name with these resources.
func (e *Engine) cpuQuota(r *corev1.ResourceRequirements, name string) node.Quota {
	q, ok := r.Limits[corev1.ResourceCPU]
	if !ok {
		return node.Quota{}
	}
	return e.limitQuota(q.AsApproximateFloat64(), name)
}

// limitQuota is the CFS bandwidth of container name's CPU limit in cores (0 = none).
// Its periods' phase is set when its cgroup first runs (start_cfs_bandwidth,
// kernel/sched/fair.c), so containers started at different moments are out of step:
// a uniform phase per container, from a stream of its own.
func (e *Engine) limitQuota(cores float64, name string) node.Quota {
	q := node.MilliCPUToQuota(milli(cores), 0)
	if q.Runtime > 0 {
		q.Offset = sim.Time(sim.Stream(e.sc.Spec.Seed, "cfs-period/"+name).Int64N(int64(q.Period)))
	}
	return q
}

// milli is cores in whole millicores, rounded up as Quantity.MilliValue does.
func milli(cores float64) int64 { return int64(math.Ceil(cores*1000 - 1e-9)) }
