package sidecar

import "math/rand/v2"

// ConcurrencyUnset stands for a ProxyConfig without concurrency, the recommended and
// default case (istio/api mesh/v1alpha1/proxy.proto, ProxyConfig.concurrency: "If unset …
// automatically determined based on CPU requests/limits").
const ConcurrencyUnset = -1

// Concurrency is the number of Envoy worker threads of an Istio sidecar, Istio ≥ 1.18
// (commit 97baf44e "Fix proxy concurrency detection", release note fix-concurrency.yaml):
//
//   - configured > 0 (ProxyConfig.concurrency, mesh-wide or the proxy.istio.io/config
//     annotation): that many.
//   - configured == 0: pilot-agent passes no --concurrency (pkg/envoy/proxy.go, only when
//     > 0) and Envoy runs std::thread::hardware_concurrency() workers, one per host CPU,
//     whatever the limit (source/server/options_impl.cc, the --concurrency default).
//   - unset: the injector sets ISTIO_CPU_LIMIT from the istio-proxy container's limits.cpu
//     through the downward API with divisor 1 (injection-template.yaml), which the kubelet
//     rounds up to whole cores (pkg/api/v1/resource/helpers.go,
//     convertResourceCPUToString: ceil(milliCPU / 1000)), and pilot-agent uses it
//     (pilot/cmd/pilot-agent/config/config.go, ConstructProxyConfig). A container without a
//     CPU limit reads the node's allocatable CPU instead (pkg/kubelet/kubelet_resources.go,
//     defaultPodLimitsForDownwardAPI). With Istio's default sidecar limit of 2000m this
//     gives 2.
//
// cpuLimitMilli is the istio-proxy container's CPU limit in millicores (0: none);
// nodeAllocatableMilli the node's allocatable CPU; hostCPUs the CPUs the host shows Envoy.
// Before 1.18 ProxyConfig defaulted to 2 (pkg/config/mesh/mesh.go, DefaultProxyConfig),
// which is where the folklore "2 workers" comes from.
func Concurrency(configured int, cpuLimitMilli, nodeAllocatableMilli int64, hostCPUs int) int {
	switch {
	case configured > 0:
		return configured
	case configured == 0:
		return max(hostCPUs, 1)
	}
	limit := cpuLimitMilli
	if limit <= 0 {
		limit = nodeAllocatableMilli
	}
	if limit <= 0 { // ISTIO_CPU_LIMIT 0: concurrency stays unset, Envoy's default
		return max(hostCPUs, 1)
	}
	return int((limit + 999) / 1000)
}

// AssignWorker returns the worker (0..workers-1) that accepts a new downstream connection.
// Envoy leaves this to the kernel: a listener has no connection_balance_config unless set,
// and then "Envoy will not attempt to balance active connections between worker threads"
// (api/envoy/config/listener/v3/listener.proto, connection_balance_config; docs
// intro/arch_overview/intro/threading_model, "Listener connection balancing"). With
// enable_reuse_port, which defaults to true, every worker has its own SO_REUSEPORT socket
// (listener.proto, enable_reuse_port) and Linux picks the socket from a hash of the
// connection's 4-tuple, which for connections from distinct source ports is modelled here
// as a uniform draw. Istio sets no balancer on sidecars unless the proxy metadata
// INBOUND_LISTENER_EXACT_BALANCE / OUTBOUND_LISTENER_EXACT_BALANCE asks for exact_balance
// (pilot/pkg/networking/core/listener.go and listener_inbound.go). The connection keeps its
// worker for its whole life.
func AssignWorker(rng *rand.Rand, workers int) int {
	if workers <= 1 {
		return 0
	}
	return rng.IntN(workers)
}
