package emulate

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"trafficlab/examples"
	"trafficlab/model/kubeproxy"
	"trafficlab/scenario"
)

func example(t *testing.T, name string, sets ...string) *scenario.Scenario {
	t.Helper()
	data, err := examples.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	sc, _, diags := scenario.Load(name, data, sets)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return sc
}

// What emulate cannot run is refused at the scenario path that asks for it.
func TestUnsupportedNamesThePath(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		path string
	}{
		{"r1-curl-loop.yaml", []string{"spec.cluster.proxyMode=ipvs"}, "spec.cluster.proxyMode"},
		{"r5-sidecar-concurrency.yaml", []string{"spec.clients[0].sidecar.upstreamProtocol=http2"}, "spec.clients[0].sidecar.upstreamProtocol"},
		{"r5-sidecar-concurrency.yaml", []string{"spec.clients[0].sidecar.circuitBreakers.maxRequests=100"}, "spec.clients[0].sidecar.circuitBreakers"},
		{"r5-sidecar-concurrency.yaml", []string{"spec.clients[0].sidecar.retries.retryOn=[5xx]"}, "spec.clients[0].sidecar.retries.retryOn"},
		{"hpa-scale-out-pooled-clients.yaml", []string{"spec.services[0].sidecar={}"}, "spec.services[0].sidecar"},
		{"r1-curl-loop.yaml", []string{"spec.cluster.network.bandwidth=1gbit"}, "spec.cluster.network.bandwidth"},
		{"r1-curl-loop.yaml", []string{"faults"}, "spec.faults[1].kind"},
		{"r2-ab-pods-on-3-nodes.yaml", nil, "spec.clients[0].entryNode"},
		{"r1-curl-loop.yaml", []string{"spec.clients[0].connections.protocol=http2", "spec.services[0].pod.grpc={maxConnectionAge: 30s}"}, "spec.services[0].pod.grpc"},
	} {
		var sc *scenario.Scenario
		if slices.Equal(tc.sets, []string{"faults"}) {
			data, _ := examples.Get(tc.name)
			// A pod-kill is emulated (replayed); a bandwidth fault is not yet.
			data = append(data, "  faults: [{kind: pod-kill, start: 1s, target: {pod: webapp1-0}}, {kind: bandwidth, start: 2s, rate: 1mbit, target: {service: webapp1}}]\n"...)
			var diags scenario.Diagnostics
			if sc, _, diags = scenario.Load(tc.name, data, nil); diags.HasErrors() {
				t.Fatal(diags)
			}
		} else {
			sc = example(t, tc.name, tc.sets...)
		}
		_, err := Check(sc)
		var fe *scenario.FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path || !strings.Contains(fe.Err.Error(), "simulate") {
			t.Errorf("%s %v: %v, want a refusal at %s pointing to simulate", tc.name, tc.sets, err, tc.path)
		}
	}
	if plan, err := Check(example(t, "r1-curl-loop.yaml")); err != nil || len(plan.Warnings) != 2 {
		t.Errorf("r1-curl-loop: %v, plan %+v; want it accepted with the latency and cores warnings", err, plan)
	}
	plan, err := Check(example(t, "r3-noisy-neighbour.yaml", "spec.duration=60s"))
	if err != nil || !slices.ContainsFunc(plan.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "spec.cluster.nodes[0].disk: the access logs go through the node's page cache")
	}) {
		t.Errorf("r3-noisy-neighbour: %v, plan %+v; want it accepted, warned that the logs go through the page cache", err, plan)
	}
}

// Every mode model/kubeproxy knows is run by its rules, its process or refused: a
// mode added to the model without rules here is refused, not run as another.
func TestEveryModeIsRunOrRefused(t *testing.T) {
	for _, m := range append(kubeproxy.Modes(), kubeproxy.Parse("ebpf")) {
		err := unemulated(m)
		switch m {
		case kubeproxy.Iptables, kubeproxy.Nftables, kubeproxy.Userspace:
			if err != nil {
				t.Errorf("%s: refused: %v", m, err)
			}
		default:
			if err == nil || !strings.Contains(err.Error(), "simulate") {
				t.Errorf("%s: %v; want a refusal pointing to simulate", m, err)
			}
		}
	}
}

// A scenario over a limit is refused with a --scale that brings it under.
func TestSizeLimitSuggestsAScale(t *testing.T) {
	for _, tc := range []struct {
		sets  []string
		what  string
		scale float64
	}{
		{[]string{"spec.services[0].replicas=50"}, "pods", 0.78},                                   // 51 pods
		{[]string{"spec.clients[0].threads=1000"}, "closed-loop threads", 0.25},                    // 1000 threads
		{[]string{"spec.clients[0].threads=0", "spec.clients[0].rate=20000/s"}, "open-loop", 0.25}, // 20,000/s
	} {
		tc.sets = append(tc.sets, "spec.duration=5s")
		_, err := Check(example(t, "r1-curl-loop.yaml", tc.sets...))
		var se *SizeError
		if !errors.As(err, &se) || !strings.Contains(se.What, tc.what) || se.Scale != tc.scale {
			t.Errorf("%v: %v, want %s over the limit and --scale %g", tc.sets, err, tc.what, tc.scale)
			continue
		}
		sc := example(t, "r1-curl-loop.yaml", tc.sets...)
		Scale(sc, se.Scale)
		if _, err := Check(sc); err != nil {
			t.Errorf("%v at --scale %g: still %v", tc.sets, se.Scale, err)
		}
	}
}

// Scale keeps the ratios: counts round to at least 1, and a client's load lost to
// rounding its replicas is made up per pod.
func TestScaleKeepsTheLoadPerPod(t *testing.T) {
	sc := example(t, "r1-7-callers-3-threads.yaml")
	changes := Scale(sc, 0.5)
	spec := &sc.Spec
	// 3 nodes → 2 (1.5 rounds up), 5 replicas → 3 (2.5 up), 7 callers → 4 (3.5 up)
	// whose 3 threads each carry 3.5/4 of the load: round(2.625) = 3.
	if spec.Cluster.Nodes[0].Count != 2 || spec.Services[0].Replicas != 3 || spec.Clients[0].Replicas != 4 || spec.Clients[0].Threads != 3 {
		t.Errorf("scaled: %d nodes, %d replicas, %d×%d callers; want 2, 3, 4×3", spec.Cluster.Nodes[0].Count,
			spec.Services[0].Replicas, spec.Clients[0].Replicas, spec.Clients[0].Threads)
	}
	if len(changes) != 3 {
		t.Errorf("changes %q, want the three counts", changes)
	}
	// One open-loop client pod cannot shrink: its rate does.
	sc = example(t, "r1-curl-loop.yaml", "spec.clients[0].threads=0", "spec.clients[0].rate=1000/s")
	Scale(sc, 0.1)
	if r := sc.Spec.Clients[0].Rate.PerSecond; math.Abs(r-100) > 1e-9 || sc.Spec.Clients[0].Replicas != 1 || sc.Spec.Services[0].Replicas != 1 {
		t.Errorf("rate %g/s with %d client pods, %d replicas; want 100/s, 1, 1", r, sc.Spec.Clients[0].Replicas, sc.Spec.Services[0].Replicas)
	}
}

// Versions due at one instant are delivered in any order; a node keeps the newest,
// as a watch never goes back (a rollout's new pod ready and old pod deleted at
// once must not leave the deleted pod in a node's rules).
func TestNodeKeepsTheNewestEndpoints(t *testing.T) {
	ep := &endpoints{}
	n := &nodeProxy{pending: true} // a sync is already waiting: delivery only records
	ep.nodes = []*nodeProxy{n}
	newer, older := version{seq: 2}, version{seq: 1}
	ep.deliver(n, newer)
	ep.deliver(n, older)
	if n.delivered.seq != 2 {
		t.Errorf("node holds version %d after 2 then 1 arrived; want 2", n.delivered.seq)
	}
}
