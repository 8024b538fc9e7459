package report_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// clientCPU is simulate's client CPU scenario: a load generator on a 4-core node
// of its own sends 10,000 requests a second at 100 µs of CPU each (a core's worth)
// to five pods on another node.
var clientCPU = func() string {
	b, err := os.ReadFile("../simulate/testdata/client-cpu.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// clientCPURun simulates src, a variant of clientCPU, for 5 s with sets.
func clientCPURun(t *testing.T, src string, sets ...string) *result.Result {
	return simulateSource(t, "client-cpu.yaml", []byte(src), append([]string{"spec.duration=5s"}, sets...)...)
}

// The client CPU section tables what client pods spent, and says a client fell
// behind only when it did, naming what held it: its limit or its busy node.
func TestClientCPUSection(t *testing.T) {
	for _, tc := range []struct {
		name          string
		src           string
		sets          []string
		want, wantNot []string
	}{
		{"room to spare", clientCPU, nil,
			[]string{"Client CPU:", "gen-0", "1.00", "25% of 4 cores", "0.100 ms"},
			[]string{"fell behind"}},
		{"held by its limit", clientCPU, []string{"spec.clients[0].resources.limits.cpu=500m"},
			[]string{"Not sent [client behind]", "of its 0.5-CPU limit", "gen fell behind its rate", "never sent the other", "gen-0 used 10", "measure the client here",
				"Advice: the time went outside the pods, in the network, the client or sidecars: a client fell behind its rate"},
			[]string{"node load-0 was"}},
		{"held by its node", clientCPU + "  background:\n  - {name: hog, node: load-0, cpu: \"4\"}\n", []string{"spec.clients[0].rate=30000/s"},
			[]string{"gen fell behind its rate", "Its node load-0 was 100% busy, so it got only its share"},
			[]string{"-CPU limit"}},
		{"no work modelled", clientCPU, []string{"spec.clients[0].work.perRequest=0s"},
			nil, []string{"Client CPU", "fell behind"}},
		{"room to spare: no advice about falling behind", clientCPU, []string{"spec.clients[0].rate=9000/s"},
			nil, []string{"a client fell behind its rate", "fell behind its rate at times", "own CPU was spent"}},
		{"a closed loop held by its limit", clientCPU, []string{"spec.clients[0].rate=null", "spec.clients[0].threads=4",
			"spec.clients[0].resources.limits.cpu=250m"},
			[]string{"gen's own CPU was spent: gen-0 used 10", "its requests waited for it before they were sent"}, []string{"fell behind"}},
		{"late, but caught up", clientCPU, []string{"spec.clients[0].rate=null", "spec.clients[0].phases=[{rate: 15000/s, rampTo: 1000/s, duration: 5s}]",
			"spec.clients[0].resources.limits.cpu=1"},
			[]string{"gen fell behind its rate at times", "every one in the end"}, []string{"never sent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clientCPURun(t, tc.src, tc.sets...)
			var text, page bytes.Buffer
			if err := report.Text(&text, r); err != nil {
				t.Fatal(err)
			}
			if err := report.HTML(&page, r, report.HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			flat := strings.Join(strings.Fields(text.String()), " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("text lacks %q:\n%s", w, text.String())
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(flat, w) {
					t.Errorf("text has %q:\n%s", w, text.String())
				}
			}
			if behind := strings.Contains(flat, "fell behind its rate"); behind != strings.Contains(page.String(), "fell behind its rate") {
				t.Errorf("text and page disagree on falling behind (text %v)", behind)
			}
		})
	}
}

// The proxy's CPU is reported in userspace mode only, with the nodes it shared to
// the full named only when they were; an overload on nodes whose cores went mostly
// to the proxy or to client pods is fixed by taking that work off them.
func TestProxyCPUSection(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sets          []string
		want, wantNot []string
	}{
		{"iptables", []string{"spec.cluster.proxyMode=iptables"}, nil, []string{"kube-proxy's own process"}},
		{"userspace, the client's node full", []string{"spec.cluster.proxyMode=userspace", "spec.cluster.proxyWork.perConnection=2ms",
			"spec.clients[0].connections.reuse=none", "spec.clients[0].rate=3000/s"},
			[]string{"cores on load-0", "It shared load-0 (99.99% busy), which had no core to spare, with the clients there."},
			[]string{"the same cores as the pods'"}},
		{"userspace, room on the node", []string{"spec.cluster.proxyMode=userspace", "spec.clients[0].rate=1000/s"},
			[]string{"kube-proxy's own process relayed the connections to Services (userspace mode)", "cores on load-0"},
			[]string{"none to spare"}},
		{"userspace, the entry node full", []string{"spec.cluster.proxyMode=userspace", "spec.cluster.proxyWork.perConnection=2ms",
			"spec.clients[0].connections.reuse=none", "spec.clients[0].entryNode=worker-0", "spec.clients[0].rate=5000/s"},
			[]string{"on worker-0", "pods' on worker-0 (99.98% busy), which had none to spare",
				"Of those cores its pods used 0.2", "kube-proxy's relaying 7.", "Fix: the cores went more to other work (kube-proxy's relaying 7.",
				"run kube-proxy in a mode that rewrites packets in the kernel"},
			[]string{"Fix: more cores"}},
		{"a background workload beside the client", []string{"spec.clients[0].placement.nodeSelector.role=worker", "spec.clients[0].work.perRequest=1ms",
			"spec.clients[0].rate=7000/s", "spec.clients[0].resources.requests.cpu=7", "spec.background=[{name: hog, node: worker-0, cpu: 500m}]"},
			[]string{"client pods' own work 7, other containers 0.167", "Background workloads: hog on worker-0 (0.17 cores)"}, nil},
		{"the client on the pods' node", []string{"spec.clients[0].placement.nodeSelector.role=worker", "spec.clients[0].work.perRequest=1ms",
			"spec.clients[0].rate=7000/s", "spec.clients[0].resources.requests.cpu=7"},
			[]string{"client pods' own work 7.", "give the client pods nodes of their own (clients[].placement)"},
			[]string{"kube-proxy's", "Fix: more cores"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clientCPURun(t, clientCPU, tc.sets...)
			var text bytes.Buffer
			if err := report.Text(&text, r); err != nil {
				t.Fatal(err)
			}
			flat := strings.Join(strings.Fields(text.String()), " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("text lacks %q:\n%s", w, text.String())
				}
			}
			for _, w := range append(tc.wantNot, "<nil>") {
				if strings.Contains(flat, w) {
					t.Errorf("text has %q:\n%s", w, text.String())
				}
			}
		})
	}
}

// compare shows the CPU rows only when a run modelled that CPU, and judges falling
// behind as worse.
func TestCompareCPURows(t *testing.T) {
	room := clientCPURun(t, clientCPU)
	limited := clientCPURun(t, clientCPU, "spec.clients[0].resources.limits.cpu=500m")
	none := clientCPURun(t, clientCPU, "spec.clients[0].work.perRequest=0s")
	for _, tc := range []struct {
		name          string
		a, b          *result.Result
		want, wantNot []string
	}{
		{"limited", room, limited, []string{"client CPU (cores)", "not sent, client behind", "(from 0) * worse"}, []string{"kube-proxy CPU"}},
		{"not modelled", none, none, nil, []string{"client CPU", "client behind", "kube-proxy CPU"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report.Compare(&b, []string{"a", "b"}, []*result.Result{tc.a, tc.b}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("compare lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(b.String(), w) {
					t.Errorf("compare has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
