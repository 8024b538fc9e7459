package report

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

func pods(counts ...int64) []result.Pod {
	var out []result.Pod
	for i, c := range counts {
		out = append(out, result.Pod{Name: string(rune('a' + i)), Service: "web", Requests: c})
	}
	return out
}

func TestUneven(t *testing.T) {
	cases := []struct {
		counts []int64
		want   bool
	}{
		{[]int64{100, 100, 100}, false},
		{[]int64{100, 0, 100}, true},  // an idle pod
		{[]int64{160, 70, 70}, true},  // busiest over 1.5 × fair (100)
		{[]int64{140, 80, 80}, false}, // within 1.5 ×
		{[]int64{0, 0, 0}, false},     // nothing to spread
		{[]int64{500}, false},         // one pod
	}
	for _, c := range cases {
		if got := Uneven(pods(c.counts...)); got != c.want {
			t.Errorf("Uneven(%v) = %v, want %v", c.counts, got, c.want)
		}
	}
}

func TestExpectedIdle(t *testing.T) {
	// R1's figure: 5 connections on 5 pods leave 1.64 idle on average.
	if got := ExpectedIdle(5, 5); math.Abs(got-1.6384) > 1e-9 {
		t.Errorf("ExpectedIdle(5, 5) = %v, want 1.6384", got)
	}
	if ExpectedIdle(5, 0) != 5 || ExpectedIdle(0, 3) != 0 {
		t.Error("no connections leave every pod idle; no pods, none idle")
	}
}

func TestExplainNamesTheCauseOnlyWhenUneven(t *testing.T) {
	r := &result.Result{Engine: "simulate", ProxyMode: kubeproxy.Iptables, Pods: pods(1000, 0, 0, 0, 0),
		Clients: []result.Client{{Name: "caller", Target: "web", ConnectionsOpened: 1, PeakOpen: 1, Requests: 1000}}}
	why := Explain(r, "web")
	for _, want := range []string{"kube-proxy (iptables)", "once per connection", "opened 1 connection (", "1 long-lived connection over", "4.00 pods", "maxLifetime"} {
		if !strings.Contains(why, want) {
			t.Errorf("explanation lacks %q: %s", want, why)
		}
	}
	r.ProxyMode, r.IPVSScheduler = kubeproxy.IPVS, "rr"
	for _, want := range []string{"ipvs rr", "in turn", "at least 4 idle"} {
		if why := Explain(r, "web"); !strings.Contains(why, want) {
			t.Errorf("ipvs rr explanation lacks %q: %s", want, why)
		}
	}
	r.IPVSScheduler = "sh"
	if why := Explain(r, "web"); !strings.Contains(why, "source hashing") {
		t.Errorf("ipvs sh explanation lacks source hashing: %s", why)
	}
	r.ProxyMode, r.IPVSScheduler = kubeproxy.Userspace, ""
	if why := Explain(r, "web"); !strings.Contains(why, "proxy process") || strings.Contains(why, "conntrack") {
		t.Errorf("userspace explanation must name the proxy process, not conntrack: %s", why)
	}
	r.Pods = pods(200, 200, 200, 200, 200)
	if why := Explain(r, "web"); why != "" {
		t.Errorf("an even spread needs no explanation, got %q", why)
	}
}

func TestTextWrapsAndShowsBars(t *testing.T) {
	r := &result.Result{Engine: "simulate", Scenario: "s", DurationS: 60, ProxyMode: kubeproxy.Iptables,
		Requests: result.Requests{Total: 1000, OK: 1000}, Pods: pods(750, 250),
		Clients: []result.Client{{Name: "caller", Target: "web", ConnectionsOpened: 2, PeakOpen: 2, Requests: 1000}}}
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, strings.Repeat("█", 23)) || !strings.Contains(out, "75.0%") {
		t.Errorf("expected a 75 %% bar of 23 blocks:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Why") && len([]rune(line)) > 92 {
			t.Errorf("explanation line longer than 92 columns: %q", line)
		}
	}
}

func f(v float64) *float64 { return &v }

// squeeze makes runs of spaces one, so that checks do not depend on column widths.
func squeeze(s string) string { return regexp.MustCompile(` +`).ReplaceAllString(s, " ") }

// scaled is a run like R2's rapid scaling: web-0 from the start, web-1 and web-2
// added at 20 s, web-1 removed at 80 s and blamed for errors, and a few refusals
// while the service had no ready endpoint.
func scaled() *result.Result {
	return &result.Result{Engine: "simulate", Scenario: "s", DurationS: 120, ProxyMode: kubeproxy.Iptables,
		Requests: result.Requests{Total: 1000, OK: 976, Failed: 24},
		Errors:   result.Errors{ConnectionRefused: 22, ConnectionReset: 2},
		Pods: []result.Pod{
			{Name: "web-0", Service: "web", Node: "n-0", Requests: 500, ReadyS: f(0)},
			{Name: "web-1", Service: "web", Node: "n-1", Requests: 200, StartS: 20, ReadyS: f(22), DeletedS: f(80), EndS: f(80),
				Errors: result.Errors{ConnectionRefused: 19, ConnectionReset: 2}},
			{Name: "web-2", Service: "web", Node: "n-2", Requests: 276, StartS: 20, ReadyS: f(22)},
		},
		Clients: []result.Client{{Name: "ab", Target: "web", Replicas: 1, Library: "ab", Reuse: "none",
			ConnectionsOpened: 1000, PeakOpen: 100, Requests: 1000, Errors: 24, RunsAborted: 1,
			Runs: []result.Run{
				{Phase: 0, Name: "ab -n 500 -c 100", StartS: 0, EndS: 48.9, Requests: 500},
				{Phase: 1, Name: "ab -n 100 -c 1", StartS: 48.9, EndS: 80.0014, Requests: 476, Errors: 1, Aborted: true},
			}}},
		TimelineIntervalS: 1,
		Timeline: []result.Point{
			{TS: 4, ReadyEndpoints: map[string]int{"web": 1}},
			{TS: 5, ReadyEndpoints: map[string]int{"web": 0}, Errors: 3},
			{TS: 6, ReadyEndpoints: map[string]int{"web": 1}},
		},
		ScaleEvents: []result.ScaleEvent{
			{TS: 20, Service: "web", From: 1, To: 3, Reason: "cpu resource above target: cpu 999m per pod (target 250m)",
				Created: []string{"web-1", "web-2"}},
			{TS: 80, Service: "web", From: 3, To: 2, Reason: "All metrics below target: cpu 110m per pod (target 250m)",
				Deleted: []string{"web-1"}},
		},
	}
}

// plainScaling is a run with errors and nothing of the scaling sections.
func plainScaling() *result.Result {
	return &result.Result{Engine: "simulate", Scenario: "s", DurationS: 60, ProxyMode: kubeproxy.Iptables,
		Requests: result.Requests{Total: 110, OK: 100, Failed: 10},
		Errors:   result.Errors{Timeout: 1, ConnectionRefused: 2, ConnectionReset: 3, ConnectionClosed: 4},
		Pods:     pods(50, 50),
		Clients:  []result.Client{{Name: "caller", Target: "web", Threads: 4, ConnectionsOpened: 4, PeakOpen: 4, Requests: 110}}}
}

// scalingCases are runs whose text must and must not have each scaling section.
var scalingCases = []struct {
	name    string
	r       func() *result.Result
	want    []string
	wantNot []string
}{
	{"nothing new: the old layout", plainScaling,
		[]string{"[timeout, refused, reset, closed]  1, 2, 3, 4", "Service web: 2 pods behind its ClusterIP",
			"POD  NODE  REQUESTS", "4 threads"},
		[]string{"LIFE", "ERRORS  ", "Retried", "Scale events", "Runs of", "Where the errors", "aborted"}},
	{"retries", func() *result.Result { r := plainScaling(); r.Requests.Retried = 7; return r },
		[]string{"Retried    [resent on a new connection]", "]  7\n"}, nil},
	{"pods' lives and errors", scaled,
		[]string{"Service web: 3 pods over the run, 2 at the end", "LIFE  READY", "ERRORS",
			"web-0  n-0   0s–     0s", "web-1  n-1  20s–80s    22s  200  20.5%  0  0%  21", "web-2  n-2     20s–    22s"},
		nil},
	{"scale events", scaled,
		[]string{"Scale events: 2 (1 out, 1 in)", "TIME  SERVICE  REPLICAS  PODS",
			"20s  web      1→3       +web-1 +web-2  cpu resource above target",
			"80s  web      3→2       −web-1         All metrics below target"},
		[]string{"omitted"}},
	{"attribution", scaled,
		[]string{"Where the errors came from: 21 of 24 failed requests caused by pods being removed",
			"- web-1, deleted at 80s by the scale-in 3→2: 19 connections refused, 2 connections reset.",
			"- not attributed to any pod: 3 connections refused.", "No ready endpoint:", "web 5s–6s.",
			"- refused: new connections were still sent to the pod after its process exited on SIGTERM",
			"- reset: requests were sent on kept-alive connections", "preStop sleep", "draining on SIGTERM"},
		[]string{"closed:", "timeout:", "userspace"}},
	// A sidecar's 503s for a removed pod count among what the removal caused, and
	// those no pod caused are listed with why.
	{"attribution, 503s", func() *result.Result {
		r := scaled()
		r.Requests.Failed, r.Requests.Total = 31, 1007
		r.Errors.HTTP503 = 7
		r.Pods[1].Errors.HTTP503 = 5
		return r
	}, []string{"Where the errors came from: 26 of 31 failed requests caused by pods being removed",
		"- web-1, deleted at 80s by the scale-in 3→2: 19 connections refused, 2 connections reset, 5 requests",
		"- not attributed to any pod: 3 connections refused, 2 requests answered 503.", "503s with no pod to blame are a sidecar's own answers"},
		nil},
	{"attribution, userspace closes", func() *result.Result {
		r := scaled()
		r.ProxyMode = kubeproxy.Userspace
		r.Errors = result.Errors{ConnectionClosed: 2}
		r.Pods[1].Errors = result.Errors{ConnectionClosed: 2}
		return r
	}, []string{"web-1, deleted at 80s by the scale-in 3→2: 2 connections closed before the answer.",
		"- closed: requests were in progress", "With the userspace proxy, resets"},
		[]string{"not attributed", "refused:"}},
	{"attribution, a pod not deleted by the autoscaler", func() *result.Result {
		r := scaled()
		r.ScaleEvents = nil
		r.Errors = result.Errors{Timeout: 1}
		r.Pods[1].DeletedS, r.Pods[1].EndS = f(80), f(110)
		r.Pods[1].Errors = result.Errors{Timeout: 1}
		return r
	}, []string{"web-1, deleted at 80s (not by the autoscaler), its process ending at 110s: 1 timeout.",
		"- timeout: connections were sent to the pod's IP after the pod was gone", "20s–110s"},
		[]string{"Scale events"}},
	{"runs", scaled,
		[]string{"Runs of ab: 2", "#              NAME  START  DURATION  REQUESTS  ERRORS  ABORTED",
			"1  ab -n 500 -c 100   0.0s   48.900s       500       0       no",
			"2    ab -n 100 -c 1  48.9s   31.101s       476       1      yes",
			"ab aborted 1 of 2 runs at a receive error; without -r", "2 runs  none (ab)"},
		[]string{"omitted"}},
}

func TestTextScalingSections(t *testing.T) {
	for _, c := range scalingCases {
		var b bytes.Buffer
		if err := Text(&b, c.r()); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range c.want {
			if !strings.Contains(squeeze(out), squeeze(want)) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, want, out)
			}
		}
		for _, not := range c.wantNot {
			if strings.Contains(squeeze(out), squeeze(not)) {
				t.Errorf("%s: output has %q:\n%s", c.name, not, out)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "Latencies") && len([]rune(line)) > 110 {
				t.Errorf("%s: line longer than 110 columns: %q", c.name, line)
			}
		}
	}
}

func TestTextLongListsShowBothEnds(t *testing.T) {
	r := scaled()
	r.ScaleEvents = nil
	for i := 0; i < 25; i++ {
		r.ScaleEvents = append(r.ScaleEvents, result.ScaleEvent{TS: float64(10 * (i + 1)), Service: "web", From: 2 + i%2, To: 3 - i%2,
			Reason: "reason " + string(rune('A'+i))})
	}
	r.Clients[0].Runs = nil
	for i := 0; i < 30; i++ {
		r.Clients[0].Runs = append(r.Clients[0].Runs, result.Run{Name: "run", StartS: float64(i), EndS: float64(i) + 0.5, Requests: 9})
	}
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	cases := []struct {
		text string
		want bool
	}{
		{"Scale events: 25 (13 out, 12 in)", true},
		{"reason A", true}, {"reason E", true}, {"reason Y", true}, {"reason U", true},
		{"reason F", false}, {"reason T", false},
		{"15 events omitted", true},
		{"Runs of ab: 30", true}, {"20 runs omitted", true},
		{"\n   5   run   4.0s", true}, {"\n  26   run  25.0s", true},
		{"\n   6   run", false}, {"\n  25   run", false},
		{"30 runs  none (ab)", true},
	}
	for _, c := range cases {
		if strings.Contains(squeeze(out), squeeze(c.text)) != c.want {
			t.Errorf("contains %q = %v, want %v:\n%s", c.text, !c.want, c.want, out)
		}
	}
}

func TestExplainComparesThePodsServingAtTheEnd(t *testing.T) {
	// A pinned client: the pod added by a scale-out gets nothing, which the
	// explanation must name; the removed pod is left out of the comparison.
	r := scaled()
	r.Errors, r.Pods[1].Errors = result.Errors{}, result.Errors{}
	r.Pods[2].Requests = 0
	r.Clients[0] = result.Client{Name: "caller", Target: "web", ConnectionsOpened: 1, PeakOpen: 1, Requests: 700}
	why := Explain(r, "web")
	for _, want := range []string{"the 2 pods serving at the end", "once per connection",
		"web-2 (ready at 22s) came after the clients' connections were open", "maxLifetime"} {
		if !strings.Contains(why, want) {
			t.Errorf("explanation lacks %q: %s", want, why)
		}
	}
	// Different lifetimes alone are not unevenness: web-0 served 120 s, web-2 98 s.
	r.Pods[2].Requests = 410
	if why := Explain(r, "web"); why != "" {
		t.Errorf("pods serving at even rates need no explanation, got %q", why)
	}
}

// The text report's totals add up, or say why not, and its words fit the run: the
// length of a real run is not "simulated", spans read as Go writes them, counts of
// one are singular, and the CPU column says what it is a share of.
func TestTotalsAndWordsFitTheRun(t *testing.T) {
	limited := &result.Throttling{Periods: 10}
	cases := []struct {
		name      string
		r         result.Result
		want, not []string
	}{
		{"nothing finished, ten in flight", result.Result{Engine: "simulate", DurationS: 10, RateRPS: 1,
			Requests: result.Requests{InFlight: 10}},
			[]string{"0, 1.00/s", "(Not in the total, only in the rate: 10 requests still in flight at the end."}, nil},
		{"all counted", result.Result{Engine: "simulate", DurationS: 10, RateRPS: 1, Requests: result.Requests{Total: 10, OK: 10}},
			nil, []string{"Not in the total"}},
		{"abandoned, pods finished more than the clients counted", result.Result{Engine: "simulate", DurationS: 10,
			Requests: result.Requests{Total: 100, OK: 100, Abandoned: 9},
			Pods:     []result.Pod{{Name: "web-0", Service: "web", Requests: 104}},
			Clients:  []result.Client{{Name: "ab", Target: "web", Library: "ab", Requests: 100, RunsAborted: 1, Threads: 1}}},
			[]string{"(Not in the total, only in the rate: 9 requests abandoned when ab aborted its runs.",
				"The pods finished 4 requests more than the clients counted, answered or failed: requests in no total that the pods finished (9 requests abandoned when ab aborted its runs)."},
			nil},
		{"pods finished fewer", result.Result{Engine: "simulate", DurationS: 10, Requests: result.Requests{Total: 100, OK: 90, Failed: 10},
			Errors:  result.Errors{ConnectionRefused: 10},
			Pods:    []result.Pod{{Name: "web-0", Service: "web", Requests: 90}},
			Clients: []result.Client{{Name: "c", Target: "web", Requests: 90, Errors: 10, Threads: 1}}},
			nil, []string{"more than the clients counted"}},
		{"a real run of a day", result.Result{Engine: "emulate", DurationS: 86400},
			[]string{"emulate · seed 0 · 24h\n"}, []string{"simulated", "1440m"}},
		{"a simulated hour and a half", result.Result{Engine: "simulate", DurationS: 5400},
			[]string{"· 1h30m simulated\n"}, []string{"90m"}},
		{"one pod, one thread, its CPU limit", result.Result{Engine: "simulate", DurationS: 1,
			Pods:    []result.Pod{{Name: "web-0", Service: "web", CPUUtilization: 0.5, Throttling: limited}},
			Clients: []result.Client{{Name: "c", Target: "web", Replicas: 1, Threads: 1}}},
			[]string{"Service web: 1 pod behind its ClusterIP", "1 thread ", "CPU: each pod's use of its CPU limit."},
			[]string{"1 pods", "1 threads", "node's cores"}},
		{"no CPU limit", result.Result{Engine: "simulate", DurationS: 1,
			Pods: []result.Pod{{Name: "web-0", Service: "web", CPUUtilization: 0.5}, {Name: "web-1", Service: "web", CPUUtilization: 0.5}}},
			[]string{"Service web: 2 pods behind", "CPU: each pod's use of its node's cores (no CPU limit)."}, []string{"CPU limit."}},
		{"TCP counts of one", result.Result{Engine: "simulate", DurationS: 1,
			TCP: &result.TCP{Connections: 1, Segments: 10, Retransmits: 3, FastRetransmits: 1, TLPEvents: 1, RTOEvents: 1}},
			[]string{"TCP: 1 connection, 10 segments, 3 retransmitted", "1 tail loss probe, 1 RTO timeout, 0 SYN retransmits."},
			[]string{"1 connections", "1 tail loss probes", "1 RTO timeouts"}},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := Text(&b, &c.r); err != nil {
			t.Fatal(err)
		}
		out := strings.Join(strings.Fields(b.String()), " ")
		for _, w := range c.want {
			if !strings.Contains(out, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("%s: the report lacks %q:\n%s", c.name, w, b.String())
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: the report says %q:\n%s", c.name, n, b.String())
			}
		}
	}
}

// The busiest pod's CPU is spent: the sentence says the others have room only for
// those that had, and names a node the busiest pod had to itself only when every
// other pod shared one (R1's 7 callers: every node busy, webapp1-0 alone on aks-1).
func TestSaturatedPodSaysWhoHadRoom(t *testing.T) {
	pod := func(name, node string, reqs int64, cpu float64) result.Pod {
		return result.Pod{Name: name, Node: node, Requests: reqs, Connections: 4, CPUUtilization: cpu}
	}
	node := func(name string, util float64, pods int) result.Node {
		return result.Node{Name: name, CPU: 2, CPUUtilization: util, Pods: pods}
	}
	for _, c := range []struct {
		name          string
		pods          []result.Pod
		nodes         []result.Node
		want, wantNot []string
	}{
		{"others have room", []result.Pod{pod("a", "n0", 300, 1), pod("b", "n1", 100, 0.5), pod("c", "n2", 100, 0.5)},
			[]result.Node{node("n0", 1, 1), node("n1", 0.5, 1), node("n2", 0.5, 1)},
			[]string{"a holds 4 of the 12 connections", "while the other pods have room"}, []string{"spent too", "to itself"}},
		{"one has room", []result.Pod{pod("a", "n0", 300, 1), pod("b", "n1", 100, 0.5), pod("c", "n1", 100, 0.5), pod("d", "n2", 90, 0.4)},
			[]result.Node{node("n0", 1, 1), node("n1", 1, 2), node("n2", 0.4, 1)},
			[]string{"while d has room"}, []string{"other pods have room", "b, ", "to itself"}},
		{"every node busy, alone on its node", []result.Pod{pod("a", "n0", 300, 0.99), pod("b", "n1", 150, 0.5), pod("c", "n1", 150, 0.5)},
			[]result.Node{node("n0", 0.99, 1), node("n1", 1, 2)},
			[]string{"every other pod's CPU is spent too", "a has the 2 cores of n0 to itself"}, []string{"have room"}},
		{"every node busy, sharing", []result.Pod{pod("a", "n0", 300, 0.5), pod("b", "n0", 150, 0.5)},
			[]result.Node{node("n0", 1, 2)},
			nil, []string{"holds"}}, // a at 50% of the node's cores: its own CPU is not spent
		{"busiest has room", []result.Pod{pod("a", "n0", 300, 0.9), pod("b", "n1", 100, 0.3)},
			[]result.Node{node("n0", 0.9, 1), node("n1", 0.3, 1)},
			nil, []string{"holds"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := saturatedPod(c.pods, c.nodes)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("%q says %q", got, w)
				}
			}
		})
	}
}
