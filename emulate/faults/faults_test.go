package faults

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"trafficlab/emulate/emutest"
	"trafficlab/emulate/load"
	"trafficlab/emulate/topo"
	"trafficlab/scenario"
)

func TestScript(t *testing.T) {
	got, err := Script([]Loss{{Veth: "p0", Direction: Both, Fraction: 0.03}, {Veth: "p3", Direction: To, Fraction: 0.0001}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"add table inet trafficlab_faults\ndelete table inet trafficlab_faults\n",
		"chain pod_sends {\n\t\ttype filter hook prerouting priority -310; policy accept;\n" +
			"\t\tiifname \"p0\" numgen random mod 10000 < 300 drop\n" +
			"\t\tiifname \"p3\" numgen random mod 10000 < 1 drop\n\t}",
		"chain pod_receives {\n\t\ttype filter hook postrouting priority 310; policy accept;\n" +
			"\t\toifname \"p0\" numgen random mod 10000 < 300 drop\n\t}",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("script lacks %q:\n%s", want, got)
		}
	}
	// "to" is what the pod sends (scenario.DirectionTo): p3's loss is on its way in
	// to the node only.
	if strings.Contains(got, `oifname "p3"`) {
		t.Errorf("a loss on what p3 sends also drops what it receives:\n%s", got)
	}
	for _, bad := range []Loss{{Veth: "p0", Fraction: 1.5}, {Fraction: 0.1}, {Veth: "p0", Direction: "sideways", Fraction: 0.1}} {
		if _, err := Script([]Loss{bad}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if none, _ := Script(nil); strings.Contains(none, "chain") {
		t.Errorf("no losses still writes a chain:\n%s", none)
	}
}

// 3 % loss each way on a server pod's veth: a request and its answer are a few
// segments, so about one exchange in ten loses one, and Linux recovers a lost
// lone segment by the tail loss probe or the RTO, both at least TCP_RTO_MIN
// (200 ms, include/net/tcp.h) on a link this fast. p99 must rise past 200 ms,
// from well under a millisecond.
func TestLossRaisesP99ByTheRTOFloor(t *testing.T) {
	emutest.NeedRoot(t, "ip", "nft")
	c, err := topo.Build([]string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pod := emutest.Pod(t, "{serviceTime: {distribution: constant, value: 100us}}")
	web, err := c.AddPod("web-0", "a")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.AddrPortFrom(web.IP, 8080)
	emutest.Serve(t, topo.InNetns, web.NS, web.Name, addr, pod)
	client, err := c.AddPod("caller-0", "a")
	if err != nil {
		t.Fatal(err)
	}
	dialer, err := topo.NewDialer(client.NS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dialer.Close)

	p99 := func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		const n = 400
		rep, err := load.Run(ctx, load.Config{
			Target: fmt.Sprintf("http://%s/", addr), Duration: 40 * time.Second, Name: "caller",
			Phases: []load.Phase{{Threads: 4, Requests: n}}, Timeout: 10 * time.Second, MaxRequests: n,
			Conn: load.Connections{Reuse: scenario.ReusePerThread, Protocol: scenario.ProtocolHTTP1}, Dial: dialer.DialContext,
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Requests.OK < n-4 { // the last requests may still be in flight at n
			t.Fatalf("%d of %d answered: %+v %v", rep.Requests.OK, n, rep.Errors, rep.OtherErrors)
		}
		return rep.LatencyMS.P99
	}
	before := p99()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Apply(ctx, c.NodeNS("a"), []Loss{{Veth: web.Veth, Direction: Both, Fraction: 0.03}}); err != nil {
		t.Fatal(err)
	}
	after := p99()
	t.Logf("p99 %.3f ms without loss, %.3f ms with 3%% loss each way", before, after)
	if before >= 50 || after < before+200 {
		t.Errorf("p99 %.3f ms → %.3f ms: want under 50 ms, then at least 200 ms more", before, after)
	}
	if err := Apply(ctx, c.NodeNS("a"), nil); err != nil {
		t.Fatal(err)
	}
}
