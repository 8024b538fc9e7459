package cli

import (
	"strings"
	"testing"
)

// What emulate cannot run, or cannot run here, is bad input that says why and what
// to do; --dry-run shows the plan without root.
func TestEmulateRefusesWithReasons(t *testing.T) {
	file := writeTemp(t, "s.yaml", good)
	ipvs := writeTemp(t, "ipvs.yaml", good+"  cluster: {proxyMode: ipvs}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{ipvs}, "ipvs.yaml:15:24: spec.cluster.proxyMode: ipvs: this kernel has no IPVS"},
		{[]string{file, "--set", "spec.cluster.proxyMode=ipvs"}, "--set spec.cluster.proxyMode=ipvs: spec.cluster.proxyMode: ipvs: this kernel"},
		{[]string{"../../examples/r5-sidecar-concurrency.yaml", "--set", "spec.clients[0].sidecar.upstreamProtocol=http2"}, "spec.clients[0].sidecar.upstreamProtocol: a sidecar's HTTP/2 upstream is not emulated yet; `trafficlab simulate` runs it"},
		{[]string{"../../examples/r5-sidecar-concurrency.yaml"}, "10000 requests per second of open-loop load; emulate runs at most 5000 on one machine: try --scale 0.5"},
		{[]string{file, "--set", "spec.services[0].replicas=60"}, "the scenario has 61 pods; emulate runs at most 40 on one machine: try --scale 0.65"},
		{[]string{file, "--scale", "0"}, "--scale 0: want a factor above 0"},
		{[]string{file, "--requests", "r.csv"}, "--requests: emulate does not record single requests yet"},
		{[]string{"--cleanup", file}, "--cleanup takes no FILE"},
	} {
		code, _, stderr := runCLI(append([]string{"emulate"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("emulate %q: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestEmulateDryRunCountsInWords(t *testing.T) {
	code, stdout, _ := runCLI("emulate", "../../examples/r1-curl-loop.yaml", "--dry-run")
	if code != exitOK || !strings.Contains(stdout, ", 1 client pod, ") {
		t.Errorf("exit %d, stdout:\n%s\nwant 0 and \"1 client pod\"", code, stdout)
	}
}

func TestEmulateDryRunShowsThePlan(t *testing.T) {
	code, stdout, stderr := runCLI("emulate", "../../examples/r1-7-callers-3-threads.yaml", "--dry-run", "--scale", "0.5")
	want := []string{
		"r1-7-callers-3-threads: 2 nodes, 3 service pods, 4 client pods, kube-proxy iptables",
		"aks-0 ", "aks-1 ", "caller-3",
		"warning: spec.cluster.network.latency 100µs is not added",
	}
	for _, w := range want {
		if !strings.Contains(stdout, w) {
			t.Errorf("--dry-run output lacks %q:\n%s", w, stdout)
		}
	}
	if code != exitOK || !strings.Contains(stderr, "--scale 0.5: spec.clients[0].replicas 7 → 4") {
		t.Errorf("exit %d, stderr:\n%s\nwant 0 and the scale's changes", code, stderr)
	}
}

// The plan names cluster DNS's pod where a Service is headless, and only there.
func TestEmulateDryRunShowsClusterDNS(t *testing.T) {
	for _, c := range []struct {
		sets []string
		dns  bool
	}{{nil, false}, {[]string{"--set", "spec.services[0].clusterIP=None"}, true}} {
		code, stdout, _ := runCLI(append([]string{"emulate", "../../examples/grpc-headless-round-robin.yaml", "--dry-run"}, c.sets...)...)
		if got := strings.Contains(stdout, "cluster DNS for the headless Services: pod coredns on worker-0"); code != exitOK || got != c.dns {
			t.Errorf("%v: exit %d, stdout:\n%s\nwant the DNS pod named: %v", c.sets, code, stdout, c.dns)
		}
	}
}

// The plan lists the background pods on their nodes, the sidecars and the node
// disks a run would make, and none of them where the scenario has none.
func TestEmulateDryRunShowsDisksSidecarsAndBackground(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"../../examples/r3-noisy-neighbour.yaml", "--duration", "30s"},
			[]string{", 1 background pod, ", "pool-2       api-4, api-9, batch-writer", "node disks, throttled loop devices: pool-0 (11 MiB/s, 150 IOPS), pool-1"},
			[]string{"sidecars"}},
		{[]string{"../../fidelity/scenarios/r5-sidecar.yaml"},
			[]string{"sidecars, nginx in Envoy's place: add-0, add-1, vegeta-0"},
			[]string{"node disks", "background pod"}},
		{[]string{"../../examples/r1-curl-loop.yaml"}, nil, []string{"sidecars", "node disks", "background pod"}},
	} {
		code, stdout, stderr := runCLI(append([]string{"emulate", "--dry-run"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, stdout)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(stdout, n) {
				t.Errorf("%v: %q in\n%s", tc.args, n, stdout)
			}
		}
	}
}
