package node

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/sim"
)

// MilliCPUToQuota is the CFS bandwidth kubelet gives a container with a CPU limit in
// millicores (0 = no limit, the zero Quota), per period (0 = QuotaPeriod; other
// periods need kubelet's cpuCFSQuotaPeriod and the CustomCPUCFSQuotaPeriod gate).
// Like cm.MilliCPUToQuota (pkg/kubelet/cm/helpers_linux.go) it works in whole
// microseconds, as cpu.max does: quota = milliCPU × period / 1000, at least 1 ms. The
// Offset is left to the caller.
func MilliCPUToQuota(milliCPU int64, period sim.Time) Quota {
	if milliCPU <= 0 {
		return Quota{}
	}
	if period <= 0 {
		period = QuotaPeriod
	}
	periodUS := int64(period / 1000)
	quotaUS := milliCPU * periodUS / 1000
	if quotaUS < int64(MinQuota/1000) {
		quotaUS = int64(MinQuota / 1000)
	}
	return Quota{Runtime: sim.Time(quotaUS) * 1000, Period: sim.Time(periodUS) * 1000}
}

// cgroup v1 cpu.shares bounds, the kernel's MIN_SHARES and MAX_SHARES
// (kernel/sched/sched.h), as kubelet's cm.MinShares and cm.MaxShares.
const (
	minShares = 2
	maxShares = 262144
)

// MilliCPUToShares is kubelet's cm.MilliCPUToShares (pkg/kubelet/cm/helpers_linux.go):
// a CPU request in millicores as cgroup v1 cpu.shares, 1024 per core rounded down,
// within [2, 262144]. No request gets 2, the least, not the kernel default 1024.
func MilliCPUToShares(milliCPU int64) int64 {
	if milliCPU <= 0 {
		return minShares
	}
	return min(max(milliCPU*1024/1000, minShares), maxShares)
}

// SharesToWeight converts cpu.shares to cgroup v2 cpu.weight linearly, mapping
// [2, 262144] onto [1, 10000]: 1 + (shares−2)·9999/262142 in integers. Kubelet writes
// this weight on the pod and QoS cgroups (getCPUWeight, pkg/kubelet/cm/
// cgroup_manager_linux.go), and runc up to 1.3.1 on the container's cgroup
// (ConvertCPUSharesToCgroupV2Value, then in opencontainers/cgroups utils.go).
func SharesToWeight(shares int64) int64 {
	shares = min(max(shares, minShares), maxShares)
	return 1 + (shares-minShares)*9999/(maxShares-minShares)
}

// CPUWeight is the cpu.weight of the pod cgroup kubelet makes for a single-container
// pod with a CPU request in millicores (0 = none): SharesToWeight(MilliCPUToShares).
// It is the weight with which pods compete for a busy node: 1 core gets 39, 100m 4,
// no request 1.
func CPUWeight(milliCPU int64) int64 { return SharesToWeight(MilliCPUToShares(milliCPU)) }

// ContainerCPUWeight is the cpu.weight that current OCI runtimes write on the
// container's own cgroup, inside the pod's: since opencontainers/cgroups v0.0.3 (runc
// 1.3.2; crun likewise, containers/crun#1721) ConvertCPUSharesToCgroupV2Value maps
// shares to weight by a quadratic in log2(shares) that also sends the kernel default
// 1024 to 100: ⌈10^((l² + 125·l)/612 − 7/34)⌉ with l = log2(shares), within
// [1, 10000]. It only matters between containers of one pod
// (kubernetes/kubernetes#131216).
func ContainerCPUWeight(milliCPU int64) int64 {
	shares := MilliCPUToShares(milliCPU)
	switch {
	case shares <= minShares:
		return 1
	case shares >= maxShares:
		return 10000
	}
	l := math.Log2(float64(shares))
	e := (float64(l*l)+float64(125*l))/612 - 7.0/34 // unfused, as on every machine
	return int64(math.Ceil(math.Pow(10, e)))
}

// QOSClass is the QoS class of a single-container pod with these requests and limits,
// as ComputePodQOS decides it (pkg/apis/core/v1/helper/qos/qos.go) once the API server
// has defaulted each missing request to its limit (SetDefaults_Pod,
// pkg/apis/core/v1/defaults.go). Only positive CPU and memory quantities count:
// Guaranteed when both have limits and requests equal to them, BestEffort when
// neither has anything, else Burstable.
func QOSClass(requests, limits corev1.ResourceList) corev1.PodQOSClass {
	var nReq, nLim, equal int
	for _, name := range [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		lim, hasLim := limits[name]
		req, hasReq := requests[name]
		if !hasReq && hasLim {
			req = lim
		}
		r, l := req.Sign() > 0, lim.Sign() > 0
		if r {
			nReq++
		}
		if l {
			nLim++
		}
		if r && l && req.Cmp(lim) == 0 {
			equal++
		}
	}
	switch {
	case nReq == 0 && nLim == 0:
		return corev1.PodQOSBestEffort
	case nLim == 2 && nReq == 2 && equal == 2:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
