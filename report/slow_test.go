package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trafficlab/internal/golden"
	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// oldStyle is a result as engines made them before the slow-request diagnosis: every
// older section filled (lives and errors, runs, scale events, sidecars, buckets, TCP,
// nodes and a timeline), none of the new fields.
func oldStyle() *result.Result {
	r := scaled()
	to := 2.0
	closed := 3.5
	r.Nodes = []result.Node{{Name: "n-0", CPU: 4, CPUUtilization: 0.5, Pods: 1}, {Name: "n-1", CPU: 4, CPUUtilization: 0.25, Pods: 1},
		{Name: "n-2", CPU: 4, CPUUtilization: 0.3, Pods: 1}}
	r.Sidecars = []result.Sidecar{{Pod: "ab-0", Direction: "outbound", Workers: 2, WorkerUtilization: 0.97, CPUCores: 1.5, CPULimit: 2, CPUUtilization: 0.75}}
	r.Histogram = []result.Bucket{{FromMS: 0, ToMS: &to, Count: 900, Share: 0.9}, {FromMS: 2, Count: 76, Share: 0.1}}
	r.TCP = &result.TCP{Connections: 1000, Segments: 9000, Retransmits: 12, FastRetransmits: 2, TLPEvents: 8, RTOEvents: 2,
		WorstConnections: []result.TCPConn{{Client: "ab-0", Pod: "web-0", OpenedS: 1.25, ClosedS: &closed, Retransmits: 3, TLPEvents: 2, RTOEvents: 1}}}
	for i := range r.Timeline {
		r.Timeline[i].Requests = int64(100 * (i + 1))
	}
	return r
}

// A result without the new fields renders exactly as before they existed: the golden
// file was written by the report as it was then.
func TestOldStyleResultUnchanged(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, oldStyle()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "old-style.txt"), b.Bytes())
}

// r3 is a run like R3's noisy neighbour, by hand: 10 api pods on 5 nodes, a diurnal
// load in eight 3-hour intervals, and batch-writer on pool-2 filling that node's disk,
// so that api-4 and api-5 there block on their access-log writes.
func r3() *result.Result {
	r := &result.Result{Engine: "simulate", Scenario: "r3-noisy-neighbour", Seed: 1, DurationS: 86400, ProxyMode: kubeproxy.Iptables,
		Requests: result.Requests{Total: 162_540_000, OK: 162_540_000}, RateRPS: 1881.25, ThroughputRPS: 1881.25,
		LatencyMS:       result.Latency{Min: 0.31, Mean: 1.9, P50: 0.52, P90: 0.9, P95: 1.2, P99: 4.8, P999: 620, Max: 1450},
		Clients:         []result.Client{{Name: "users", Target: "api", Replicas: 1, RatePerPod: 2000, Reuse: "pool", ConnectionsOpened: 40, PeakOpen: 40, PodsReached: 10, Requests: 162_540_000}},
		SlowThresholdMS: 500, Slow: 202_608, SlowShare: 0.001247,
		TimelineIntervalS: 10800,
		Background:        []result.Background{{Name: "batch-writer", Node: "pool-2", CPUCores: 0.02, DiskWrittenBytes: 90_596_966_400, DiskBytesPerSecond: 1_048_576}},
	}
	// Rates per interval: 2,900 3,000 2,100 1,100 1,000 1,050 1,900 2,000 requests/s, each
	// over 10,800 s; slow shares 0.2% 0.22% 0.1% 0.03% 0.02% 0.02% 0.08% 0.1%.
	rates := []int64{2900, 3000, 2100, 1100, 1000, 1050, 1900, 2000}
	slow := []int64{62_640, 71_280, 22_680, 3_564, 2_160, 2_268, 16_416, 21_600}
	for i := range rates {
		r.Timeline = append(r.Timeline, result.Point{TS: float64(i) * 10800, Requests: rates[i] * 10800, Slow: slow[i]})
	}
	for i := 0; i < 5; i++ {
		n := result.Node{Name: fmt.Sprintf("pool-%d", i), CPU: 4, CPUUtilization: 0.31, Pods: 2, DiskUtilization: 0.04, DiskMaxWaitMS: 38}
		r.Nodes = append(r.Nodes, n)
	}
	r.Nodes[2].Pods, r.Nodes[2].CPUUtilization, r.Nodes[2].DiskUtilization, r.Nodes[2].DiskMaxWaitMS = 3, 0.32, 0.97, 1200
	for i, s := range []int64{4_100, 3_900, 190_000, 4_608, 0} {
		r.Nodes[i].Slow, r.Nodes[i].SlowShare = s, float64(s)/32_508_000
	}
	perPod := []int64{2_100, 2_000, 1_950, 1_950, 95_000, 95_000, 2_304, 2_304, 0, 0}
	for i, s := range perPod {
		p := result.Pod{Name: fmt.Sprintf("api-%d", i), Service: "api", Node: fmt.Sprintf("pool-%d", i/2), Requests: 16_254_000,
			Connections: 4, CPUUtilization: 0.2, CPUCores: 0.11, QoSClass: "Burstable", Slow: s, SlowShare: float64(s) / 16_254_000,
			WaitMS: result.Wait{Work: 0.33, Queue: 0.01, CPU: 0.03, Disk: 0.01, Network: 0.4}}
		if i == 4 || i == 5 {
			p.WaitMS.Queue, p.WaitMS.CPU, p.WaitMS.Disk, p.WaitMS.Network = 0.02, 0.05, 2.84, 0.41
			p.LogBlocked = 41_200 - int64(i-4)*330
		}
		r.Pods = append(r.Pods, p)
	}
	r.Suspects = []result.Suspect{
		{Node: "pool-2", Resource: "disk", Neighbour: "batch-writer", ShareOfTail: 0.93, SlowRequests: 188_900},
		{Node: "pool-2", Resource: "network", ShareOfTail: 0.03, SlowRequests: 1_100},
		{Node: "pool-3", Resource: "cpu", ShareOfTail: 0.012, SlowRequests: 2_304},
	}
	return r
}

func render(t *testing.T, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// flat joins a report's words with single spaces, so that checks of prose do not
// depend on where lines wrap or how columns align.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// slowSectionCases are runs and what the slow sections must and must not say of each.
var slowSectionCases = []struct {
	name string
	r    func() *result.Result
	// lines must appear as whole lines, runs of spaces squeezed; words anywhere,
	// whitespace flattened; not nowhere.
	lines, words, not []string
}{
	{"r3", r3,
		[]string{
			// 202,608 of 162,540,000 is 0.125%.
			"Slow requests: 202,608 of 162,540,000 successful requests (0.12%) took over 500 ms",
			" NODE PODS SLOW SLOW % DISK BUSY DISK MAX WAIT CPU",
			// 190,000 of 32,508,000 is 0.58%; 4,100 of it 0.013%.
			" pool-2 3 190,000 0.58% 97% 1.2 s 32%",
			" pool-0 2 4,100 0.01% 4% 38 ms 31%",
			" pool-4 2 0 0% 4% 38 ms 31%",
			"Pods with the most slow requests (5 of 8); waits are means per request answered, in ms:",
			" POD NODE SLOW SLOW % QUEUE CPU THROTTLED DISK DEPENDENCY NETWORK",
			" api-4 pool-2 95,000 0.58% 0.02 0.05 - 2.84 0.00 0.41",
			" api-6 pool-3 2,304 0.01% 0.01 0.03 - 0.01 0.00 0.40",
			"Suspects, worst first",
		},
		[]string{
			"Requests whose access-log write blocked on a full pipe: api-4 41,200, api-5 40,870.",
			// Busiest quarter: the 2,900 and 3,000 rps intervals, 63,720,000 requests in
			// 21,600 s = 2,950 rps, 62,640 + 71,280 = 133,920 slow = 0.2102%. Quietest: the
			// 1,000 and 1,050 rps ones, 22,140,000 in 21,600 s = 1,025 rps, 2,160 + 2,268 =
			// 4,428 slow = 0.0200%.
			"Slow share by load: 0.21% in the busiest quarter of the 3h intervals (2,950 rps), 0.02% in the quietest (1,025 rps): the tail grows with the load",
			"1. disk on pool-2 — 93% of the slow requests' time, the main wait of 188,900 of them; neighbour batch-writer; disk 97% busy; writes queued up to 1.2 s",
			"2. the network, client or sidecars, from pool-2 — 3.0% of the slow requests' time, the main wait of 1,100 of them 3.",
			"3. CPU on pool-3 — 1.2% of the slow requests' time, the main wait of 2,304 of them; node CPU 31% used of 4 cores",
			"Advice: keep batch-writer off pool-2 (pod anti-affinity against it, or a taint on the node that only the right pods tolerate), or give the node a faster disk: api-4 and api-5 wait for the disk behind its writes, and cheaper logging saves CPU but not this wait, since the wait is the disk.",
			"Background workloads: batch-writer on pool-2 (0.02 cores, 1.0 MB/s written).",
		},
		[]string{"api-8 pool-4 0 0%", "api-1 pool-0 2,000", "CPU throttling", "other", "omitted"}},
	{"slow intervals with failures: the share is of successful requests", func() *result.Result {
		r := r3()
		// The quietest quarter loses 5,000,000 requests to errors: 4,428 slow of
		// 17,140,000 successful is 0.026%, not the 0.020% of the 22,140,000 sent.
		r.Timeline[4].Errors = 5_000_000
		return r
	}, nil, []string{"0.03% in the quietest (1,025 rps)"}, nil},
	{"a steady load has no by-load line", func() *result.Result {
		r := r3()
		for i := range r.Timeline {
			r.Timeline[i].Requests = 2000*10800 + int64(i)*1000
		}
		return r
	}, nil, nil, []string{"Slow share by load"}},
	{"overload: intervals where every request timed out are neither quiet nor 0% slow", func() *result.Result {
		// The clients offered 1,000/s throughout; in half the intervals every request
		// timed out, in the others 782/s finished and 79% of them were slow. The load
		// was steady, so there is nothing to compare.
		r := r3()
		for i := range r.Timeline {
			pt := &r.Timeline[i]
			pt.Offered, pt.Requests, pt.Slow, pt.Errors, pt.ErrorsByKind = 1000*10800, 782*10800, 782*10800*79/100, 0, nil
			if i < 4 {
				pt.Requests, pt.Slow, pt.Errors = 1000*10800, 0, 1000*10800
				pt.ErrorsByKind = &result.Errors{Timeout: pt.Errors}
			}
		}
		return r
	}, nil, nil, []string{"Slow share by load"}},
	{"timeouts count as slow at the peak", func() *result.Result {
		r := r3()
		for i := range r.Timeline {
			pt := &r.Timeline[i]
			pt.Offered, pt.Requests, pt.Slow, pt.Errors, pt.ErrorsByKind = 1000*10800, 1000*10800, 1000*108, 0, nil
			if i < 2 {
				pt.Offered, pt.Requests, pt.Slow, pt.Errors = 3000*10800, 3000*10800, 0, 3000*10800
				pt.ErrorsByKind = &result.Errors{Timeout: pt.Errors}
			}
		}
		return r
	}, nil, []string{"Slow share by load (timeouts counted as slow): 100% in the busiest quarter of the 3h intervals " +
		"(3,000 rps offered), 1.0% in the quietest (1,000 rps offered): the tail grows with the load"}, []string{"worse when traffic is light"}},
	{"an interval with neither a success nor a timeout is left out", func() *result.Result {
		// The two busiest intervals were all refused at once: no request waited, so they
		// say nothing about the slow share; the next busiest is compared.
		r := r3()
		for i := range r.Timeline {
			pt := &r.Timeline[i]
			pt.Offered, pt.Requests, pt.Slow, pt.Errors, pt.ErrorsByKind = int64(1000+100*i)*10800, int64(1000+100*i)*10800, 0, 0, nil
			if i >= 6 {
				pt.Errors = pt.Requests
				pt.ErrorsByKind = &result.Errors{ConnectionRefused: pt.Errors}
			}
		}
		r.Timeline[4].Slow, r.Timeline[5].Slow = 10800, 10800
		return r
	}, nil, []string{"0.07% in the busiest quarter of the 3h intervals (1,500 rps offered)"}, []string{"timeouts counted", "0% in the busiest"}},
	{"a closed-loop client: its load follows the tail", func() *result.Result {
		r := r3()
		r.Clients[0].ClosedLoop = true
		return r
	}, nil, nil, []string{"Slow share by load"}},
	{"the tail worse when quiet", func() *result.Result {
		r := r3()
		r.Timeline[4].Slow, r.Timeline[5].Slow = 200_000, 200_000
		return r
	}, nil, []string{"0.21% in the busiest", "1.8% in the quietest (1,025 rps): the tail is worse when traffic is light"}, nil},
	{"the same at any load", func() *result.Result {
		r := r3()
		r.Timeline[4].Slow, r.Timeline[5].Slow = 30_000, 30_000 // 60,000 of 22,140,000: 0.27%
		return r
	}, nil, []string{"0.27% in the quietest (1,025 rps): about the same at any load"}, nil},
	{"many nodes: only those with slow requests", func() *result.Result {
		r := r3()
		for i := 5; i < 10; i++ {
			r.Nodes = append(r.Nodes, result.Node{Name: fmt.Sprintf("pool-%d", i), CPU: 4, Pods: 1})
		}
		return r
	}, []string{" pool-2 3 190,000 0.58% 97% 1.2 s 32%", "The other 6 nodes served no slow request."}, nil,
		[]string{"pool-4 2", "pool-9"}},
	{"no disk modelled: no disk columns", func() *result.Result {
		r := r3()
		for i := range r.Nodes {
			r.Nodes[i].DiskUtilization, r.Nodes[i].DiskMaxWaitMS = 0, 0
		}
		return r
	}, []string{" NODE PODS SLOW SLOW % CPU", " pool-2 3 190,000 0.58% 32%"}, nil, []string{"DISK BUSY"}},
	{"nothing slow: no slow section, no suspects", func() *result.Result {
		r := r3()
		r.Slow, r.SlowShare, r.Suspects = 0, 0, nil
		return r
	}, nil, []string{"Background workloads: batch-writer"}, []string{"Slow requests", "Suspects", "Slow share", "Advice"}},
	{"a throttled pod no suspect covers", func() *result.Result {
		r := oldStyle()
		r.Pods[0].Throttling = &result.Throttling{Periods: 1000, ThrottledPeriods: 812, ThrottledS: 61.2}
		r.Pods[2].Throttling = &result.Throttling{Periods: 1000} // never throttled
		return r
	}, nil, []string{"CPU throttling: web-0 was throttled in 812 of 1,000 periods (81%), 61 s in all: its CPU limit, not the node, set its pace."},
		[]string{"web-2 in", "Slow requests", "Suspects"}},
	{"throttled pods, worst first, and rarely", func() *result.Result {
		r := oldStyle()
		r.Pods[0].Throttling = &result.Throttling{Periods: 2000, ThrottledPeriods: 50, ThrottledS: 1.5}
		r.Pods[2].Throttling = &result.Throttling{Periods: 1000, ThrottledPeriods: 60, ThrottledS: 2}
		return r
	}, nil, []string{"CPU throttling: web-2 in 60 of 1,000 periods (6.0%, 2.0 s in all), web-0 in 50 of 2,000 periods (2.5%, 1.5 s in all): short stalls"},
		[]string{"set their pace"}},
	{"throttling a suspect covers", func() *result.Result {
		r := r3()
		r.Pods[4].Throttling = &result.Throttling{Periods: 1000, ThrottledPeriods: 812, ThrottledS: 61.2}
		r.Suspects[0].Resource, r.Suspects[0].Neighbour = "throttled", ""
		return r
	}, nil, []string{"1. the CPU limit (throttling) on pool-2 — 93%",
		// api-4 alone ran out of quota: api-5 beside it has no limit to raise.
		"Advice: raise or remove the CPU limit of api-4. Once a container has spent its CFS quota for a 100 ms period"},
		[]string{"CPU throttling:"}},
}

func TestSlowSections(t *testing.T) {
	cases := slowSectionCases
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := render(t, c.r())
			lines := map[string]bool{}
			for _, l := range strings.Split(out, "\n") {
				lines[squeeze(l)] = true
				if !strings.HasPrefix(l, "Latencies") && !strings.HasPrefix(l, "TCP:") && len([]rune(l)) > 110 {
					t.Errorf("line longer than 110 columns: %q", l)
				}
			}
			for _, w := range c.lines {
				if !lines[squeeze(w)] {
					t.Errorf("report lacks the line %q:\n%s", w, out)
				}
			}
			for _, w := range c.words {
				if !strings.Contains(flat(out), flat(w)) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.not {
				if strings.Contains(flat(out), flat(w)) {
					t.Errorf("report has %q:\n%s", w, out)
				}
			}
		})
	}
}

// The advice follows the top suspect's resource.
func TestAdviceByResource(t *testing.T) {
	cases := []struct {
		resource, neighbour string
		tcp                 bool
		want                string
	}{
		{"disk", "batch-writer", false, "keep batch-writer off pool-2 (pod anti-affinity"},
		{"disk", "", false, "the pods' own writes fill pool-2's disk"},
		{"throttled", "", false, "raise or remove the CPU limit of api-4 and api-5"},
		{"cpu", "indexer", false, "CFS shares them by weights taken from the pods' CPU requests: raise the CPU request of api-4 and api-5, or move indexer to another node."},
		{"cpu", "", false, "or spread the pods over more nodes."},
		{"queue", "", false, "give the app more workers or the service more replicas"},
		{"dependency", "", false, "its latency, not this node, sets the tail"},
		{"network", "", true, "see the TCP section below."},
		{"network", "", false, "the pods answered in time."},
		{"work", "", false, "the requests' own CPU work is the tail"},
	}
	for _, c := range cases {
		r := r3()
		r.Suspects = []result.Suspect{{Node: "pool-2", Resource: c.resource, Neighbour: c.neighbour, ShareOfTail: 0.9}}
		if c.tcp {
			r.TCP = &result.TCP{Connections: 40, Segments: 1000}
		}
		out := flat(render(t, r))
		if !strings.Contains(out, flat(c.want)) {
			t.Errorf("%s (neighbour %q): advice lacks %q:\n%s", c.resource, c.neighbour, c.want, out)
		}
		if n := strings.Count(out, "Advice:"); n != 1 {
			t.Errorf("%s: %d pieces of advice, want 1", c.resource, n)
		}
	}
}

// The advice names every pod it applies to, and advises CPU requests only where
// another workload competes for the node's cores.
func TestAdviceFitsThePods(t *testing.T) {
	throttle := func(r *result.Result, nodes ...string) {
		r.Suspects = nil
		for _, n := range nodes {
			r.Suspects = append(r.Suspects, result.Suspect{Node: n, Resource: "throttled", ShareOfTail: 0.2})
		}
		for i := range r.Pods {
			r.Pods[i].Throttling = &result.Throttling{Periods: 600, ThrottledPeriods: 600}
		}
	}
	cpu := func(r *result.Result, nodes ...string) {
		r.Suspects, r.Background = nil, nil
		for _, n := range nodes {
			r.Suspects = append(r.Suspects, result.Suspect{Node: n, Resource: "cpu", ShareOfTail: 0.2})
		}
	}
	cases := []struct {
		name      string
		edit      func(r *result.Result)
		want, not []string
	}{
		{"every pod throttled on every node", func(r *result.Result) {
			throttle(r, "pool-2", "pool-0", "pool-1", "pool-3", "pool-4")
		}, []string{"raise or remove the CPU limit of all 10 pods of api."}, []string{"api-4 and api-5"}},
		{"throttled on one node: its pods only", func(r *result.Result) {
			throttle(r, "pool-2")
		}, []string{"raise or remove the CPU limit of api-4 and api-5."}, []string{"all 10 pods", "limit of api-0", "api-5 and api-6"}},
		{"throttling without cpu.stat: the slow pods of the node", func(r *result.Result) {
			r.Suspects = []result.Suspect{{Node: "pool-2", Resource: "throttled", ShareOfTail: 0.2}}
		}, []string{"raise or remove the CPU limit of api-4 and api-5."}, nil},
		{"the service's own pods fill the cores: no request advice", func(r *result.Result) {
			cpu(r, "pool-2", "pool-3")
		}, []string{"the cores of pool-2 and pool-3 went to api's own pods alone", "They need more cores: add nodes or faster cores."},
			[]string{"raise the CPU request", "give the pods CPU requests"}},
		{"BestEffort pods of one service fill the cores: requests would spread them", func(r *result.Result) {
			cpu(r, "pool-2")
			for i := range r.Pods {
				r.Pods[i].QoSClass = "BestEffort"
			}
		}, []string{"They need more cores: add nodes, or give the pods CPU requests so that the scheduler spreads them"},
			[]string{"raise the CPU request"}},
		{"another service's pod competes on the node", func(r *result.Result) {
			cpu(r, "pool-2")
			r.Pods = append(r.Pods, result.Pod{Name: "search-0", Service: "search", Node: "pool-2"})
		}, []string{"raise the CPU request of api-4 and api-5, or spread the pods over more nodes."}, []string{"own pods alone"}},
		{"a busy background workload competes on the node", func(r *result.Result) {
			cpu(r, "pool-2")
			r.Background = []result.Background{{Name: "batch", Node: "pool-2", CPUCores: 1.5}}
		}, []string{"raise the CPU request of api-4 and api-5"}, []string{"own pods alone"}},
		{"many slow pods on the node: all named", func(r *result.Result) {
			cpu(r, "pool-2")
			r.Suspects[0].Neighbour = "indexer"
			for i := range r.Pods[:6] {
				r.Pods[i].Node = "pool-2"
			}
		}, []string{"raise the CPU request of api-4, api-5, api-0, api-1, api-2 and api-3, or move indexer to another node."},
			[]string{"more pods"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := r3()
			c.edit(r)
			out := flat(render(t, r))
			for _, w := range c.want {
				if !strings.Contains(out, flat(w)) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.not {
				if strings.Contains(out, flat(w)) {
					t.Errorf("report has %q:\n%s", w, out)
				}
			}
		})
	}
}

// An old-style result, and one with the new fields present but nothing to report,
// print none of the new sections and the same bytes as the golden file.
func TestOldStyleResultHasNoNewSections(t *testing.T) {
	quiet := oldStyle()
	quiet.SlowThresholdMS = 500
	for i := range quiet.Pods {
		quiet.Pods[i].QoSClass = "Burstable"
		quiet.Pods[i].WaitMS = result.Wait{Work: 0.3, Network: 0.1}
		quiet.Pods[i].Throttling = &result.Throttling{Periods: 100}
	}
	quiet.Nodes[0].DiskUtilization, quiet.Nodes[0].DiskMaxWaitMS = 0.2, 15
	want, err := os.ReadFile(filepath.Join("testdata", "old-style.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*result.Result{"old": oldStyle(), "nothing slow": quiet} {
		out := render(t, r)
		for _, s := range []string{"Slow requests", "Slow share", "Suspects", "Advice:", "CPU throttling", "Background workloads"} {
			if strings.Contains(out, s) {
				t.Errorf("%s: report has %q", name, s)
			}
		}
		if out != string(want) {
			t.Errorf("%s: report differs from the old layout:\n%s", name, out)
		}
	}
}

func TestPct(t *testing.T) {
	cases := map[float64]string{0: "0%", 0.93: "93%", 0.0996: "10%", 0.053: "5.3%", 0.00999: "1.0%", 0.0021: "0.21%",
		0.0002: "0.02%", 0.00004: "0.004%", 1: "100%"}
	for x, want := range cases {
		if got := pct(x); got != want {
			t.Errorf("pct(%v) = %q, want %q", x, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 162540000: "162,540,000", -1234: "-1,234"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
