package simulate

import (
	"math"
	"testing"
)

// TestProxyCPU: in userspace mode kube-proxy's process spends its work per
// relayed connection, per request and per KiB copied on the node the connection entered by,
// and a request waits for it; the other modes spend none.
func TestProxyCPU(t *testing.T) {
	const conn, perReq, perKiB = 300e-6, 50e-6, 2e-6
	// 200 header bytes, no body, a 1,848-byte answer: 2 KiB copied per request.
	base := []string{"spec.clients[0].rate=null", "spec.clients[0].threads=1", "spec.clients[0].work.perRequest=0s",
		"spec.clients[0].connections.reuse=none", "spec.services[0].pod.responseBytes=1848"}
	userspace := append([]string{"spec.cluster.proxyMode=userspace"}, base...)
	free := runYAML(t, clientCPUScenario, append(userspace, "spec.cluster.proxyWork.perConnection=0s", "spec.cluster.proxyWork.perRequest=0s", "spec.cluster.proxyWork.perKiB=0s")...)
	for _, tc := range []struct {
		name  string
		sets  []string
		work  float64 // the proxy's CPU per request
		entry string  // the node that spends it
	}{
		{"iptables spends none", base, 0, ""},
		{"userspace, on the client's node", append(userspace, "spec.cluster.proxyWork.perConnection=300us", "spec.cluster.proxyWork.perRequest=50us", "spec.cluster.proxyWork.perKiB=2us"),
			conn + perReq + 2*perKiB, "load-0"},
		{"userspace, on the entry node", append(userspace, "spec.cluster.proxyWork.perConnection=300us", "spec.cluster.proxyWork.perRequest=50us", "spec.cluster.proxyWork.perKiB=2us",
			"spec.clients[0].entryNode=worker-0"), conn + perReq + 2*perKiB, "worker-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runYAML(t, clientCPUScenario, tc.sets...)
			for _, n := range r.Nodes {
				want := 0.0
				if n.Name == tc.entry {
					want = r.ThroughputRPS * tc.work
				}
				if math.Abs(n.ProxyCPUCores-want) > 1e-3 {
					t.Errorf("node %s: proxy %.4f cores, want %.4f", n.Name, n.ProxyCPUCores, want)
				}
			}
			if tc.work == 0 {
				return
			}
			// On an idle proxy the work adds to each request's cycle exactly.
			cycle, freeCycle := 1/r.ThroughputRPS, 1/free.ThroughputRPS
			if math.Abs(cycle-freeCycle-tc.work) > 1e-6 {
				t.Errorf("cycle %.1f µs, %.1f µs without the proxy's work; want %.1f µs more", cycle*1e6, freeCycle*1e6, tc.work*1e6)
			}
		})
	}
}
