package cluster

import (
	"fmt"
	"strings"

	"trafficlab/scenario"
)

// unplayed says, for each of sc's inputs that the cluster engine does not carry
// out, what the run has instead. The cluster's own network carries the traffic,
// so nothing the scenario adds to it is added; trafficlab changes no node and
// injects no fault; its pods run without a proxy beside them.
func unplayed(sc *scenario.Scenario) []string {
	var out []string
	say := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if added := networkAdds(&sc.Spec.Cluster.Network); len(added) > 0 {
		say("spec.cluster.network: the cluster's own network carries the traffic, without the scenario's %s", strings.Join(added, ", "))
	}
	for i := range sc.Spec.Services {
		s := &sc.Spec.Services[i]
		if s.Sidecar != nil {
			say("service %s: its pods run without the sidecar proxy the scenario gives them", s.Name)
		}
	}
	for i := range sc.Spec.Clients {
		if c := &sc.Spec.Clients[i]; c.Sidecar != nil {
			say("client %s: its pods run without the sidecar proxy the scenario gives them", c.Name)
		}
	}
	for i := range sc.Spec.Faults {
		f := &sc.Spec.Faults[i]
		name := f.Name
		if name == "" {
			name = fmt.Sprintf("spec.faults[%d]", i)
		}
		say("fault %s (%s at %v) is not injected: the cluster engine injects no faults", name, f.Kind, f.Start.Duration)
	}
	for i := range sc.Spec.Background {
		say("background workload %s is not run: its CPU and disk use are the nodes' own", sc.Spec.Background[i].Name)
	}
	return out
}

// networkAdds names what a scenario's network adds to its links.
func networkAdds(n *scenario.Network) []string {
	var out []string
	if n.Latency.Duration > 0 {
		out = append(out, fmt.Sprintf("latency %v", n.Latency.Duration))
	}
	if n.Jitter != nil {
		out = append(out, fmt.Sprintf("jitter %v", n.Jitter.Duration))
	}
	if n.Bandwidth != nil {
		out = append(out, "bandwidth limit")
	}
	if n.Loss != nil && n.Loss.Fraction > 0 || n.GilbertElliott != nil {
		out = append(out, "loss")
	}
	if len(n.Links) > 0 {
		out = append(out, fmt.Sprintf("%d link override(s)", len(n.Links)))
	}
	return out
}
