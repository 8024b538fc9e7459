package emulate

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/scenario"
	"trafficlab/simulate"
)

// unsupported is the first part of sc that emulate cannot run for real yet, as an
// error at its scenario path (so the CLI points at its line), or nil. simulate runs
// all of them.
func unsupported(sc *scenario.Scenario) error {
	spec := &sc.Spec
	not := func(path, what string) error {
		return &scenario.FieldError{Path: path, Err: fmt.Errorf("%s not emulated yet; `trafficlab simulate` runs it", what)}
	}
	if err := unemulated(spec.Cluster.ProxyMode); err != nil {
		return &scenario.FieldError{Path: "spec.cluster.proxyMode", Err: err}
	}
	for i := range spec.Cluster.Nodes {
		pool := &spec.Cluster.Nodes[i]
		switch {
		case pool.Bandwidth != nil:
			return not(fmt.Sprintf("spec.cluster.nodes[%d].bandwidth", i), "a node's bandwidth is")
		}
	}
	if err := unsupportedNetwork(&spec.Cluster.Network); err != nil {
		return err
	}
	for i := range spec.Services {
		s := &spec.Services[i]
		path := fmt.Sprintf("spec.services[%d]", i)
		switch {
		case s.Sidecar != nil && len(s.Pod.Calls) > 0:
			return not(path+".sidecar", "a sidecar on a service that calls services is")
		case s.Sidecar != nil && !grpcCallers(sc, s.Name) && http2Callers(sc, s.Name):
			return not(path+".sidecar", "a sidecar in front of HTTP/2 or gRPC is")
		case s.Sidecar != nil && grpcCallers(sc, s.Name):
			return not(path+".sidecar", "a sidecar in front of HTTP/2 or gRPC is")
		case s.Pod.Client != nil && s.Pod.Client.PropagateDeadline:
			return not(path+".pod.client.propagateDeadline", "a deadline propagated with the calls is")
		case s.Pod.Client != nil && s.Pod.Client.Connections.MaxLifetime != nil && s.Pod.Client.Connections.MaxLifetime.Duration > 0:
			return not(path+".pod.client.connections.maxLifetime", "a connection lifetime of the calls' pools is")
		case s.Autoscaler != nil && len(s.Rollouts) > 0:
			return not(path+".rollouts", "a rollout of an autoscaled service is")
		case grpcCallers(sc, s.Name) && mixedCallers(sc, s.Name):
			return not(path, "a service called over both gRPC and plain HTTP/2 is")
		case s.Pod.GRPC != nil && !grpcCallers(sc, s.Name):
			return not(path+".pod.grpc", "a gRPC server's settings, for clients that do not speak gRPC, are")
		}
	}
	for i := range spec.Clients {
		c := &spec.Clients[i]
		if c.Sidecar != nil && c.Connections.Protocol != scenario.ProtocolHTTP1 {
			return not(fmt.Sprintf("spec.clients[%d].sidecar", i), "a sidecar in front of HTTP/2 or gRPC is")
		}
		if c.Sidecar != nil && sc.Spec.Services[serviceIndex(sc, c.Target)].Headless() {
			return not(fmt.Sprintf("spec.clients[%d].sidecar", i), "a sidecar calling a headless Service is")
		}
		if c.EntryNode != "" {
			return not(fmt.Sprintf("spec.clients[%d].entryNode", i), "a client's entry node (ExternalIP or NodePort traffic) is")
		}
	}
	for i, f := range spec.Faults {
		if f.Kind == scenario.FaultPodKill && killsAutoscaled(sc, &f.Target) {
			return not(fmt.Sprintf("spec.faults[%d].target", i), "a pod-kill of an autoscaled service's pods is")
		}
	}
	if err := unsupportedFaults(sc); err != nil {
		return err
	}
	if err := unsupportedSidecars(sc); err != nil {
		return err
	}
	return nil
}

// unsupportedSidecars: a sidecar is emulated by nginx (emulate/sidecar), with
// Istio's default retries and circuit breakers, over HTTP/1.1; Check also wants its
// pods to stay as they started.
func unsupportedSidecars(sc *scenario.Scenario) error {
	for i := range sc.Spec.Services {
		if s := sc.Spec.Services[i].Sidecar; s != nil {
			if err := unsupportedSidecar(s, fmt.Sprintf("spec.services[%d].sidecar", i)); err != nil {
				return err
			}
		}
	}
	for i := range sc.Spec.Clients {
		if s := sc.Spec.Clients[i].Sidecar; s != nil {
			if err := unsupportedSidecar(s, fmt.Sprintf("spec.clients[%d].sidecar", i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// sidecarPath is the first sidecar of sc, or "" if it has none.
func sidecarPath(sc *scenario.Scenario) string {
	for i := range sc.Spec.Services {
		if sc.Spec.Services[i].Sidecar != nil {
			return fmt.Sprintf("spec.services[%d].sidecar", i)
		}
	}
	for i := range sc.Spec.Clients {
		if sc.Spec.Clients[i].Sidecar != nil {
			return fmt.Sprintf("spec.clients[%d].sidecar", i)
		}
	}
	return ""
}

func unsupportedSidecar(s *scenario.Sidecar, path string) error {
	not := func(field, what string) error {
		return &scenario.FieldError{Path: path + "." + field, Err: fmt.Errorf("%s not emulated yet; `trafficlab simulate` runs it", what)}
	}
	switch {
	case s.UpstreamProtocol != scenario.ProtocolHTTP1:
		return not("upstreamProtocol", "a sidecar's HTTP/2 upstream is")
	case !s.CircuitBreakers.Unlimited():
		return not("circuitBreakers", "a sidecar's circuit breakers are")
	case s.Retries.PerTryTimeout != nil:
		return not("retries.perTryTimeout", "a sidecar's per-try timeout is")
	case !s.Retries.IstioRetryOn():
		return not("retries.retryOn", "retry conditions other than Istio's default are")
	}
	return nil
}

// unsupportedNetwork: of the pod network, emulate applies loss, per pod veth
// (emulate/faults); delay is left to the veths' own (a warning says so).
func unsupportedNetwork(n *scenario.Network) error {
	not := func(path, what string) error {
		return &scenario.FieldError{Path: "spec.cluster.network." + path, Err: fmt.Errorf("%s not emulated yet; `trafficlab simulate` runs it", what)}
	}
	if err := unsupportedLink(n.Bandwidth, n.Correlation, n.GilbertElliott, "", not); err != nil {
		return err
	}
	for i := range n.Links {
		l := &n.Links[i]
		path := fmt.Sprintf("links[%d]", i)
		switch {
		case l.Peer != nil:
			return not(path+".peer", "a link between two sets of pods is")
		case n.Loss != nil && l.Link.Loss != nil:
			return not(path+".link.loss", "a link's loss over the cluster's is")
		case delayed(n.Latency.Duration, n.Jitter) && (l.Link.Latency != nil || l.Link.Jitter != nil):
			return not(path+".link.latency", "a link's delay over the cluster's is")
		}
		if err := unsupportedLink(l.Link.Bandwidth, l.Link.Correlation, l.Link.GilbertElliott, path+".link.", not); err != nil {
			return err
		}
	}
	return nil
}

func unsupportedLink(bw *scenario.Bandwidth, corr *scenario.Percent, ge *scenario.GilbertElliott, path string, not func(path, what string) error) error {
	switch {
	case bw != nil:
		return not(path+"bandwidth", "a bandwidth limit is")
	case corr != nil:
		return not(path+"correlation", "loss correlation is")
	case ge != nil:
		return not(path+"gilbertElliott", "the Gilbert-Elliott loss model is")
	}
	return nil
}

// warnings are the differences between what sc asks for and what emulate runs
// that do not stop a run but change what it measures.
func warnings(sc *scenario.Scenario) []string {
	var out []string
	n := &sc.Spec.Cluster.Network
	if d := n.Latency.Duration; d > 0 && !delayed(d, n.Jitter) {
		out = append(out, fmt.Sprintf("spec.cluster.network.latency %v is not added: under %v, the userspace relay that delays packets (emulate/delay) would add about as much error as delay; veths and the kernel's forwarding take about 10-30us a hop", d, minDelay))
	}
	for i, l := range n.Links {
		if l.Link.Latency != nil && !delayed(l.Link.Latency.Duration, l.Link.Jitter) {
			out = append(out, fmt.Sprintf("spec.cluster.network.links[%d].link.latency %v is not added: under %v", i, l.Link.Latency.Duration, minDelay))
		}
	}
	for i := range sc.Spec.Services {
		svc := &sc.Spec.Services[i]
		if svc.Pod.IdleTimeout.Duration > 0 && http2Callers(sc, svc.Name) {
			out = append(out, fmt.Sprintf("spec.services[%d].pod.idleTimeout: the app (Go's net/http) closes idle HTTP/2 connections too, with GOAWAY; simulate applies it to HTTP/1.1 only", i))
		}
	}
	for i, pool := range sc.Spec.Cluster.Nodes {
		if d := pool.Disk; d != nil && (d.WriteBytesPerSecond != nil || d.IOPS > 0) && accessLogs(sc) {
			out = append(out, fmt.Sprintf("spec.cluster.nodes[%d].disk: the access logs go through the node's page cache, as containerd writes them, and wait for the disk only when the kernel throttles writers whose dirty pages pass this machine's limits (vm.dirty_ratio of its memory); simulate has every log write wait behind the writes queued for the disk", i))
		}
	}
	for i, b := range sc.Spec.Background {
		if b.DiskIOBytes != nil && *b.DiskIOBytes > 0 {
			out = append(out, fmt.Sprintf("spec.background[%d].diskIOBytes %d is not played: the workload's chunks go through the page cache, and the kernel's writeback decides the sizes of the I/Os", i, *b.DiskIOBytes))
		}
	}
	cores := 0.0
	for _, pool := range sc.Spec.Cluster.Nodes {
		if pool.CPU == nil {
			continue
		}
		cores += pool.CPU.AsApproximateFloat64() * float64(pool.Count)
	}
	if cores > float64(runtime.NumCPU()) {
		out = append(out, fmt.Sprintf("the nodes have %g cores in all, this machine %d: pods share its cores, node CPU is not enforced", cores, runtime.NumCPU()))
	}
	if used := simulatedCores(sc); used > machineShare*float64(runtime.NumCPU()) {
		what := "the pods"
		if sidecarPath(sc) != "" {
			what = "the pods and their sidecars"
		}
		out = append(out, fmt.Sprintf("simulate has %s using %.1f cores; this machine has %d, shared with the load generator: the run will measure this machine's CPU, and get less throughput and more latency than simulate (--scale or fewer threads fit it)", what, used, runtime.NumCPU()))
	}
	return out
}

// accessLogs tells whether any service's pods write an access log.
func accessLogs(sc *scenario.Scenario) bool {
	return slices.ContainsFunc(sc.Spec.Services, func(s scenario.Service) bool { return s.Pod.AccessLog != nil })
}

// minDelay is the smallest latency emulate adds. The userspace relay that delays
// packets (emulate/delay) never lets one go early, and comes late by its timer
// thread's wake-up beyond the median one plus the verdict call: about 0.1 ms on
// this machine, and more under load, where one wake-up in ten took 0.2–0.5 ms
// (TestDelayOnAVeth logs it): below 1 ms that error is as large as the delay.
const minDelay = time.Millisecond

// delayed tells whether a link's latency and jitter are emulated: any jitter, or a
// latency of at least minDelay.
func delayed(latency time.Duration, jitter *metav1.Duration) bool {
	return latency >= minDelay || jitter != nil
}

// machineShare is the share of this machine's cores the pods may use before the
// run measures the machine: the load generator and the kernel's forwarding need
// the rest.
const machineShare = 0.6

// simulatedCores is the cores sc's service pods and sidecars use in a simulation of
// its first 30 s (a fraction of a second to run): what the emulated pods will ask
// of this machine.
func simulatedCores(sc *scenario.Scenario) float64 {
	short := *sc
	short.Spec.Duration.Duration = min(short.Spec.Duration.Duration, 30*time.Second)
	e, err := simulate.New(&short)
	if err != nil {
		return 0 // Check reports the error itself
	}
	e.Run(nil)
	used := 0.0
	r := e.Result()
	for _, p := range r.Pods {
		used += p.CPUCores
	}
	for _, s := range r.Sidecars {
		used += s.CPUCores
	}
	return used
}

// killsAutoscaled tells whether a pod-kill's target may hold pods of a service
// with an autoscaler, whose ReplicaSet emulate runs live without replacing killed
// pods yet.
func killsAutoscaled(sc *scenario.Scenario, t *scenario.Selector) bool {
	for _, s := range sc.Spec.Services {
		if s.Autoscaler == nil {
			continue
		}
		if t.Node != "" || t.Service == s.Name || strings.HasPrefix(t.Pod, s.Name+"-") {
			return true
		}
	}
	return false
}

// grpcCallers tells whether a client speaks gRPC to the service named name: its
// pods then answer on grpc-go's server.
func grpcCallers(sc *scenario.Scenario, name string) bool {
	return sc.SpokenTo(name, func(p string) bool { return p == scenario.ProtocolGRPC })
}

// mixedCallers tells whether a client speaks plain HTTP/2 to the service named
// name, whose HTTP/2 connections its gRPC server would take.
func mixedCallers(sc *scenario.Scenario, name string) bool {
	return sc.SpokenTo(name, func(p string) bool { return p == scenario.ProtocolHTTP2 })
}

// http2Callers tells whether a client speaks HTTP/2 to the service named name.
func http2Callers(sc *scenario.Scenario, name string) bool {
	return sc.SpokenTo(name, scenario.Multiplexed)
}
