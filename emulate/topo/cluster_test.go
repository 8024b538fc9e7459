package topo

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"testing"
	"time"

	"trafficlab/emulate/emutest"
	"trafficlab/emulate/load"
	"trafficlab/emulate/proxyrules"
	"trafficlab/scenario"
)

// TestClusterIPThroughRealRules is the emulator's pieces together, as issue 7 asks
// its first real tests to be: three `serve` pods on two nodes behind a ClusterIP,
// kube-proxy's rules in each node's namespace, and `load` in a client pod. A new
// connection per request spreads over every pod (each connection's first packet
// meets the statistic match or numgen); one reused connection stays on one pod
// (conntrack pins it).
func TestClusterIPThroughRealRules(t *testing.T) {
	emutest.NeedRoot(t, "ip", "nft", "iptables-restore")
	for _, mode := range []proxyrules.Mode{proxyrules.Iptables, proxyrules.Nftables} {
		t.Run(mode.String(), func(t *testing.T) { clusterIP(t, mode) })
	}
}

// serviceOnTwoNodes builds nodes a and b, a Service of 3 pods (one on a, two on b)
// with mode's rules on both nodes, and a caller pod on a; it returns the caller's
// dialer.
func serviceOnTwoNodes(t *testing.T, mode proxyrules.Mode) *Dialer {
	c, err := Build([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	pod := emutest.Pod(t, "{serviceTime: {distribution: constant, value: 200us}}")
	var endpoints []netip.AddrPort
	for i, node := range []string{"a", "b", "b"} {
		p, err := c.AddPod(fmt.Sprintf("web-%d", i), node)
		if err != nil {
			t.Fatal(err)
		}
		addr := netip.AddrPortFrom(p.IP, 8080)
		emutest.Serve(t, InNetns, p.NS, p.Name, addr, pod)
		endpoints = append(endpoints, addr)
	}
	rules := proxyrules.Rules{Services: []proxyrules.Service{{Name: "web", ClusterIP: ServiceIP(0), Port: 80, Endpoints: endpoints}}}
	for _, node := range []string{"a", "b"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := proxyrules.Apply(ctx, c.NodeNS(node), mode, rules)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	client, err := c.AddPod("caller-0", "a")
	if err != nil {
		t.Fatal(err)
	}
	dialer, err := NewDialer(client.NS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dialer.Close)
	return dialer
}

// runThroughClusterIP sends requests from one thread through the Service's
// ClusterIP, with connections reused as reuse says, and requires every one answered.
func runThroughClusterIP(t *testing.T, dialer *Dialer, reuse string, requests int64) *load.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := load.Run(ctx, load.Config{
		Target: fmt.Sprintf("http://%s:80/", ServiceIP(0)), Duration: 20 * time.Second, Name: "caller",
		Phases: []load.Phase{{Threads: 1, Requests: requests}}, Timeout: 2 * time.Second,
		Conn: load.Connections{Reuse: reuse, Protocol: scenario.ProtocolHTTP1}, Dial: dialer.DialContext, MaxRequests: requests,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests.OK != requests || rep.Requests.Failed != 0 {
		t.Fatalf("%s: %d answered, %d failed of %d: %+v %v", reuse, rep.Requests.OK, rep.Requests.Failed, requests, rep.Errors, rep.OtherErrors)
	}
	return rep
}

// clusterIP: new connections through mode's rules spread over the 3 pods; one
// reused connection stays on one pod.
func clusterIP(t *testing.T, mode proxyrules.Mode) {
	dialer := serviceOnTwoNodes(t, mode)
	// Each pod's count is binomial(300, 1/3): mean 100, σ = √(300·⅓·⅔) = 8.2; ±4σ.
	const n = 300
	spread := runThroughClusterIP(t, dialer, scenario.ReuseNone, n)
	if len(spread.Pods) != 3 {
		t.Fatalf("new connections reached %d pods, want all 3: %+v", len(spread.Pods), spread.Pods)
	}
	sigma := math.Sqrt(n * (1.0 / 3) * (2.0 / 3))
	t.Logf("%d new connections: %+v", n, spread.Pods)
	for _, p := range spread.Pods {
		if math.Abs(float64(p.Requests)-n/3.0) > 4*sigma {
			t.Errorf("%s got %d of %d new connections, want %d ± %.0f", p.Name, p.Requests, n, n/3, 4*sigma)
		}
	}
	if spread.Connections.Opened != n {
		t.Errorf("reuse none opened %d connections for %d requests", spread.Connections.Opened, n)
	}

	pinned := runThroughClusterIP(t, dialer, scenario.ReusePerThread, 100)
	if len(pinned.Pods) != 1 || pinned.Connections.Opened != 1 {
		t.Errorf("one reused connection reached %d pods over %d connections, want 1 and 1: %+v",
			len(pinned.Pods), pinned.Connections.Opened, pinned.Pods)
	}
}
