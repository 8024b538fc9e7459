package simulate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"trafficlab/result"
)

// nicScenario: services pinned to node a (whose NIC may be limited) or b, each
// answering 100 KiB; the client pods run on node c. Nodes a and b are tainted so the
// scheduler keeps the clients off them.
func nicScenario(bandwidth string, services [][2]string) string {
	s := `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: nic}
spec:
  duration: 10s
  cluster:
    nodes:
    - {name: a, count: 1, taints: [{key: dedicated, effect: NoSchedule}]` + bandwidth + `}
    - {name: b, count: 1, taints: [{key: dedicated, effect: NoSchedule}]}
    - {name: c, count: 1}
  services:
`
	for _, svc := range services {
		s += fmt.Sprintf(`  - name: %s
    replicas: 1
    pod:
      nodeName: %s-0
      tolerations: [{key: dedicated, operator: Exists}]
      serviceTime: {distribution: constant, value: 1ms}
      responseBytes: 100Ki
`, svc[0], svc[1])
	}
	s += "  clients:\n"
	for _, svc := range services {
		s += fmt.Sprintf("  - {name: to-%s, target: %s, rate: %s, connections: {reuse: shared}}\n", svc[0], svc[0], "RATE")
	}
	return s
}

// A 100 KiB answer is 71 segments of at most 1,448 bytes plus 52 bytes of headers
// each: 106,092 bytes on the wire, 10.61 ms at 80 Mbit/s. Alone on the NIC (20
// answers a second, never overlapping) each answer takes that much longer than
// without the limit, plus a little while slow start paces the first segments.
func TestNodeNICSerialisesAnswers(t *testing.T) {
	p50 := func(bandwidth string) float64 {
		src := nicScenario(bandwidth, [][2]string{{"web", "a"}})
		return runYAML(t, replaceRate(src, "20/s")).LatencyMS.P50
	}
	limited, free := p50(", bandwidth: 80mbit"), p50("")
	wire := 106092.0 * 8 / 80e6 * 1e3
	if d := limited - free; d < wire || d > wire+1.5 {
		t.Errorf("p50 %.3f ms at 80mbit, %.3f ms unlimited: %.3f ms more, want %.2f to %.2f", limited, free, d, wire, wire+1.5)
	}
}

// Two services on node a share its 80 Mbit/s: together they get at most 80e6 / 8 /
// 106,092 = 94.3 answers a second however much they are asked, and the NIC is busy
// all the time. Their twin on node b, asked as much, is answered in full.
func TestNodeNICIsShared(t *testing.T) {
	src := replaceRate(nicScenario(", bandwidth: 80mbit", [][2]string{{"one", "a"}, {"two", "a"}, {"twin", "b"}}), "80/s")
	r := runYAML(t, src)
	// Answers received by each client: a pod finishes a request before its answer
	// queues for the NIC.
	answered := map[string]int64{}
	for _, c := range r.Clients {
		answered[c.Target] = c.Requests - c.Errors
	}
	shared := float64(answered["one"]+answered["two"]) / r.DurationS
	capacity := 80e6 / 8 / 106092
	if shared > capacity {
		t.Errorf("node a answered %.1f/s, more than its NIC's %.1f/s", shared, capacity)
	}
	// The NIC interleaves the answers of many connections, so at the end many are
	// partly sent: answered plus in flight covers what a busy NIC sent.
	var nodeA result.Node
	for _, n := range r.Nodes {
		if n.Name == "a-0" {
			nodeA = n
		}
	}
	if sent := shared + float64(r.Requests.InFlight)/r.DurationS; sent < nodeA.NICTxUtilization*capacity {
		t.Errorf("answered %.1f/s and %.1f/s in flight: less than the %.0f%% busy NIC sent", shared,
			float64(r.Requests.InFlight)/r.DurationS, 100*nodeA.NICTxUtilization)
	}
	if twin := float64(answered["twin"]) / r.DurationS; math.Abs(twin-80) > 1 {
		t.Errorf("the twin on node b answered %.1f/s, want 80", twin)
	}
	for _, n := range r.Nodes {
		if n.Name == "a-0" && n.NICTxUtilization < 0.97 {
			t.Errorf("node a's NIC transmitted %.0f%% of the time, want all of it", 100*n.NICTxUtilization)
		}
		if n.Name != "a-0" && n.NICTxUtilization != 0 {
			t.Errorf("%s has NIC figures without a bandwidth: %+v", n.Name, n)
		}
	}
}

func replaceRate(src, rate string) string { return strings.ReplaceAll(src, "RATE", rate) }
