package simulate

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/node"
	"trafficlab/placement"
	"trafficlab/sim"
)

// cpuWeight is the cpu.weight kubelet gives a container with these resources.
func cpuWeight(r *corev1.ResourceRequirements) float64 {
	return float64(node.CPUWeight(milli(placement.CPURequest(r))))
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
