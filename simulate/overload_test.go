package simulate

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"regexp"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// overloadPod is 2 ms of CPU a request under a 1-core limit: a pod serves 500/s.
const overloadPod = "      serviceTime: {distribution: exponential, mean: 2ms}\n      resources: {limits: {cpu: \"1\"}}"

// pooledPod holds a request 21 ms, 1 ms of it on CPU, with no bound on workers.
const pooledPod = "      serviceTime: {distribution: constant, value: 1ms}\n      waitTime: {distribution: constant, value: 20ms}"

// pooledClient offers 1,000/s through one Go client pod whose pool holds n
// connections to the Service: 1,000/s × 21 ms = 21 busy at once (Little's law).
func pooledClient(n int) string {
	return fmt.Sprintf("    rate: 1000/s\n    timeout: 500ms\n    library: go-net-http\n    connections: {maxPerHost: %d}", n)
}

// overloadCases are runs that must and must not be diagnosed as overloaded.
type overloadCase struct {
	name     string
	r        func(t *testing.T) *result.Result
	overload bool
	// what saturated, the offered rate, the rate the pods finished, the CPU per
	// request (ms)
	saturated                 string
	offered, finished, cpuReq float64
}

var overloadCases = []overloadCase{
	// 2 pods carry 1,000/s; 1,200/s arrive (ρ = 1.2).
	{"overloaded", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "10s", pod: overloadPod, client: "    rate: 1200/s\n    timeout: 500ms"})
	}, true, "cpu", 1200, 1000, 2},
	// 2 workers a pod, each request holding one for 10 ms off CPU and 0.1 ms on:
	// 2 pods serve 2 × 2 / 10.1 ms = 396/s; 500/s arrive. 500/s × 10.1 ms = 5.05
	// busy workers at 2 a pod: 3 pods.
	{"workers", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "10s",
			pod: "      concurrency: 2\n      serviceTime: {distribution: constant, value: 100us}\n" +
				"      waitTime: {distribution: constant, value: 10ms}",
			client: "    rate: 500/s\n    timeout: 500ms"})
	}, true, "workers", 500, 2 * 2 / 0.0101, 0.1},
	// No CPU limit: 4 pods share a 2-core node, which serves 1,000/s; more
	// replicas on it would share the same cores, so none is proposed.
	{"node cores", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 4, duration: "10s", nodes: `[{name: worker, count: 1, cpu: "2"}]`,
			pod: "      serviceTime: {distribution: exponential, mean: 2ms}", client: "    rate: 1200/s\n    timeout: 500ms"})
	}, true, "node_cpu", 1200, 1000, 2},
	// 2 pods with room, behind a pool of 10 connections that carries at most
	// 10 / 21 ms = 476/s: the pool ran out, not the pods.
	{"client pool", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "10s", pod: pooledPod, client: pooledClient(10)})
	}, true, "pool", 1000, 0, 1},
	// The overloaded pods behind a pool of 10 connections: the requests hold
	// their connections through the pods' queue and the pools fill, but it is
	// the pods' CPU that ran out, and more connections would not help.
	{"pods slow behind a pool", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "10s", pod: overloadPod,
			client: "    rate: 1200/s\n    timeout: 500ms\n    library: go-net-http\n    connections: {maxPerHost: 10}"})
	}, true, "cpu", 1200, 1000, 2},
	// The same with 40 connections: 21 of them busy, and no overload.
	{"pool with room", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "10s", pod: pooledPod, client: pooledClient(40)})
	}, false, "", 0, 0, 0},
	// 1,200/s need 2.4 pods of 1 core, 3 pods, but a 2-core node takes only 2
	// pods requesting 1 core each: more nodes, and no replicas sweep.
	{"no room for replicas", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "10s", nodes: `[{name: worker, count: 1, cpu: "2"}]`,
			pod:    "      serviceTime: {distribution: exponential, mean: 2ms}\n      resources: {requests: {cpu: \"1\"}, limits: {cpu: \"1\"}}",
			client: "    rate: 1200/s\n    timeout: 500ms"})
	}, true, "cpu", 1200, 1000, 2},
	// 1,500/s need 3 pods of 1 core, 4; the autoscaler has 2 until it scales
	// out at 30 s, to 4, by when the queue has built: more replicas from the
	// start, not a higher maxReplicas.
	{"scaled out late", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "60s",
			pod: "      serviceTime: {distribution: exponential, mean: 2ms}\n      resources: {requests: {cpu: \"1\"}, limits: {cpu: \"1\"}}",
			service: "    autoscaler:\n      minReplicas: 2\n      maxReplicas: 10\n      metrics:\n      - type: Resource\n" +
				"        resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}",
			client: "    rate: 1500/s\n    timeout: 500ms"})
	}, true, "cpu", 1500, 0, 2},
	// 600/s against the same pods (ρ = 0.6): no overload, and no error.
	{"keeps up", func(t *testing.T) *result.Result {
		return run(t, opts{replicas: 2, duration: "10s", pod: overloadPod, client: "    rate: 600/s\n    timeout: 500ms"})
	}, false, "", 0, 0, 0},
	// Errors from pods removed at scale-in, pods at half their CPU.
	{"scale-in", func(t *testing.T) *result.Result {
		return runExample(t, "r2-rapid-scaling.yaml", "spec.clients[0].repeat=3").Result()
	}, false, "", 0, 0, 0},
	// Timeouts behind a client sidecar's two workers; the pods are idle.
	{"sidecar cap", func(t *testing.T) *result.Result {
		return runExample(t, "r5-sidecar-concurrency.yaml", "spec.duration=5s").Result()
	}, false, "", 0, 0, 0},
}

// An open-loop client offering more than the pods can serve is diagnosed as
// overload: offered against served rate, the CPU that ran out, and the replicas
// that would carry the load; a service that keeps up, a scale-in's errors and a
// sidecar's cap are not. The text and the page say what the Result says.
func TestOverloadIsDiagnosed(t *testing.T) {
	for _, c := range overloadCases {
		t.Run(c.name, func(t *testing.T) {
			r := c.r(t)
			text := overloadShown(t, r, c.overload)
			if c.overload {
				checkOverload(t, &c, r, text)
			}
		})
	}
}

// overloadShown checks that the text, the page and the Result show an overload
// when there was one and only then, and returns the text.
func overloadShown(t *testing.T, r *result.Result, overload bool) string {
	t.Helper()
	var text, page bytes.Buffer
	if err := report.Text(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := report.HTML(&page, r, report.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), explanationPanel(t, page.String())} {
		if got := strings.Contains(out, "Overload: web was offered"); got != overload {
			t.Errorf("overload section: %v, want %v:\n%s", got, overload, text.String())
		}
	}
	if got := len(r.Overloads) > 0; got != overload {
		t.Fatalf("overloads %+v, want overload: %v", r.Overloads, overload)
	}
	// A run with scale events lists where the errors came from: none of them
	// from pods being removed.
	if overload && blamed.MatchString(text.String()) {
		t.Errorf("an overload is blamed on pod removal:\n%s", text.String())
	}
	return text.String()
}

// checkOverload checks the figures and the fix of an overloaded run.
func checkOverload(t *testing.T, c *overloadCase, r *result.Result, text string) {
	t.Helper()
	o := r.Overloads[0]
	// Poisson arrivals: N = rate × 10 s of them, a relative standard deviation
	// of 1/√N; 4 of them allowed. The pods serve at capacity, within the same
	// sampling error of the mean service time.
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 4*want/math.Sqrt(10*c.offered) {
			t.Errorf("%s %.4g, want %.4g within 4σ", name, got, want)
		}
	}
	near("offered", o.OfferedRPS, c.offered)
	near("CPU per request (ms)", o.CPUPerRequestMS, c.cpuReq)
	if len(o.Saturated) != 1 || o.Saturated[0] != c.saturated {
		t.Errorf("overload %+v: want %s saturated", o, c.saturated)
	}
	// Served counts only the answers in time; the pods also finish requests
	// their clients gave up on.
	if o.ServedRPS > o.OfferedRPS*(1-0.05) || o.ServedRPS > o.FinishedRPS {
		t.Errorf("served %.4g/s of %.4g/s offered, %.4g/s finished: want under 95%% of offered and at most finished",
			o.ServedRPS, o.OfferedRPS, o.FinishedRPS)
	}
	switch {
	case c.saturated == "node_cpu":
		if o.ReplicasNeeded != 0 || o.Sweep != nil || !strings.Contains(text, "Fix: more cores.") {
			t.Errorf("overload %+v: want more cores, not more replicas", o)
		}
	case c.saturated == "pool":
		poolOverload(t, o, text)
	case c.name == "scaled out late":
		want := result.OverloadSweep{Path: "spec.services[0].replicas", From: 4, To: 5}
		if o.Replicas != 4 || o.ReplicasNeeded != 4 || o.ReplicasPath != want.Path || o.Sweep == nil || *o.Sweep != want {
			t.Errorf("overload %+v, sweep %+v: want 4 replicas needed, 4 at the end, a sweep %+v", o, o.Sweep, want)
		}
		if !strings.Contains(text, "Fix: more replicas from the start (spec.services[0].replicas).") ||
			strings.Contains(text, "maxReplicas") {
			t.Errorf("want more replicas from the start, not a higher maxReplicas:\n%s", text)
		}
	default:
		near("finished", o.FinishedRPS, c.finished)
		checkPodsRanOut(t, c, r, text)
	}
}

// checkPodsRanOut checks the advice when the pods' CPU or workers ran out: 3
// replicas, and a sweep from 3 when they fit on the nodes, more nodes when not.
func checkPodsRanOut(t *testing.T, c *overloadCase, r *result.Result, text string) {
	t.Helper()
	o := r.Overloads[0]
	// The server queue holds requests their clients gave up on: only the
	// others can be among those still in flight at the client.
	if live := o.QueuedAtEnd - o.QueuedAbandonedAtEnd; o.QueuedAbandonedAtEnd < 0 || live < 0 || live > r.Requests.InFlight {
		t.Errorf("queued at the end %d, %d of them abandoned, %d in flight: the live ones must be in flight",
			o.QueuedAtEnd, o.QueuedAbandonedAtEnd, r.Requests.InFlight)
	}
	if strings.Contains(text, "Fix: more connections") {
		t.Errorf("advises connections when the pods ran out:\n%s", text)
	}
	// CPU: 1,200/s × 2 ms = 2.4 cores at 1 core a pod; workers: 5.05 at 2 a
	// pod. Either way ⌈x⌉ = 3 pods.
	if o.ReplicasNeeded != 3 || o.Replicas != 2 {
		t.Errorf("overload %+v: want 3 replicas needed of 2", o)
	}
	if c.name == "no room for replicas" {
		// 1 pod more, 1 core of request, on nodes of 2 cores: 1 node.
		if o.PodsFit != 2 || o.NodesNeeded != 1 || o.Sweep != nil {
			t.Errorf("overload %+v: want 2 pods fit, 1 node more, no sweep", o)
		}
		for _, w := range []string{"Fix: more nodes.", "takes only 2 such pods", "1 more node of 2 cores"} {
			if !strings.Contains(text, w) {
				t.Errorf("lacks %q:\n%s", w, text)
			}
		}
		if strings.Contains(text, "trafficlab sweep") {
			t.Errorf("a replicas sweep that cannot answer:\n%s", text)
		}
		return
	}
	want := result.OverloadSweep{Path: "spec.services[0].replicas", From: 3, To: 4}
	if o.Sweep == nil || *o.Sweep != want || o.NodesNeeded != 0 {
		t.Fatalf("sweep %+v, want %+v", o.Sweep, want)
	}
	if cmd := report.SweepCommand(nil, o.Sweep); !strings.Contains(text, cmd) {
		t.Errorf("the text lacks the sweep %q", cmd)
	}
}

// poolOverload checks a client pool's overload: a request held its connection for
// the pods' 21 ms and the network's round trips, so the offered load needs
// ⌈λ·hold⌉ connections; the fix is more of them, not replicas.
func poolOverload(t *testing.T, o result.Overload, text string) {
	t.Helper()
	if o.PoolHoldMS < 21 || o.PoolHoldMS > 22 || o.PoolConnections != 10 {
		t.Errorf("pool %+v: want 10 connections, each held 21 ms and a few 100 µs trips", o)
	}
	if want := int(math.Ceil(o.OfferedRPS * o.PoolHoldMS / 1e3)); o.ConnectionsNeeded != want || o.MaxPerHostNeeded != want {
		t.Errorf("connections needed %d (%d a pool), want %d", o.ConnectionsNeeded, o.MaxPerHostNeeded, want)
	}
	if o.PoolWaited == 0 || o.ReplicasNeeded != 0 {
		t.Errorf("pool %+v: want waits for a connection, and no replicas", o)
	}
	path := "spec.clients[0].connections.maxPerHost"
	if o.Sweep == nil || o.Sweep.Path != path || o.Sweep.From != 11 || o.Sweep.To < o.MaxPerHostNeeded {
		t.Errorf("sweep %+v, want %s from 11 to %d at least", o.Sweep, path, o.MaxPerHostNeeded)
	}
	for _, w := range []string{"client pools: their 10 connections (maxPerHost) were all busy", "Fix: more connections (" + path + "), not more replicas"} {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "Fix: more replicas") {
		t.Errorf("advises replicas for a client pool:\n%s", text)
	}
}

// blamed matches a report that blames some failed requests on pods being removed.
var blamed = regexp.MustCompile(`[1-9][0-9,]* of [0-9,]+ failed requests caused by pods being removed`)

// explanationPanel is the page's "What happened" panel, unescaped: the page also
// holds the whole text report, collapsed, which says nothing of the panel.
func explanationPanel(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `id="explanation"`)
	panel, _, ok2 := strings.Cut(rest, "</section>")
	if !ok || !ok2 {
		t.Fatal("the page has no explanation panel")
	}
	return html.UnescapeString(panel)
}

// A request that draws no CPU work still runs on its pod's CPU: on a saturated,
// throttled pod it waits its turn like any other. Requests that skipped the CPU
// took exactly the network's round trip (2 × 100 µs), the minimum the Result
// printed: every success must take longer than that.
func TestNoRequestSkipsItsPodsCPU(t *testing.T) {
	r := run(t, opts{replicas: 1, duration: "5s",
		pod:    "      serviceTime: {distribution: empirical, samples: [0s, 4ms]}\n      resources: {limits: {cpu: \"1\"}}",
		client: "    rate: 600/s\n    timeout: 500ms"})
	const roundTrip = 2 * 100_000 // ns: the base scenario's 100 µs each way
	if r.Requests.OK == 0 || r.Ended == nil {
		t.Fatalf("no success to measure: %+v", r.Requests)
	}
	if r.Ended.LatencyMinNS <= roundTrip {
		t.Errorf("the fastest request took %d ns, no more than the network's round trip (%d ns): it skipped the CPU",
			r.Ended.LatencyMinNS, roundTrip)
	}
}
