package report

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// writeProxyCPU says what kube-proxy's own process spent relaying connections in
// userspace mode, node by node, and which of those nodes it shared to the full.
func writeProxyCPU(b *strings.Builder, r *result.Result) {
	var on, full []string
	withPods := false
	for _, n := range r.Nodes {
		if n.ProxyCPUCores == 0 {
			continue
		}
		on = append(on, fmt.Sprintf("%s on %s", cores(n.ProxyCPUCores), n.Name))
		if n.CPU > 0 && n.CPUUtilization >= 0.9 {
			full = append(full, fmt.Sprintf("%s (%s busy)", n.Name, percent(n.CPUUtilization, 0)))
			withPods = withPods || n.Pods > 0
		}
	}
	if len(on) == 0 {
		return
	}
	s := fmt.Sprintf("kube-proxy's own process relayed the connections to Services (%s mode), copying each request and answer: %s.",
		r.ProxyMode, strings.Join(on, ", "))
	switch {
	case len(full) > 0 && withPods:
		s += fmt.Sprintf(" Its CPU came out of the same cores as the pods' on %s, which had none to spare.", strings.Join(full, ", "))
	case len(full) > 0:
		s += fmt.Sprintf(" It shared %s, which had no core to spare, with the clients there.", strings.Join(full, ", "))
	}
	fmt.Fprintf(b, "\n%s\n", wrap(s, 92))
}
