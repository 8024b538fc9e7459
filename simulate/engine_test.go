package simulate

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/scenario"
)

// base is a scenario whose blanks build fills from opts. Its client spends no CPU
// of its own, whatever its library, so that these tests time the rest exactly
// (clientcpu_test.go tests the client's work).
const base = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: test}
spec:
  duration: %s
  seed: %d
  cluster:
    proxyMode: %s
    nodes: %s
    network: {latency: 100us%s}
%s
  services:
  - name: web
    replicas: %d
    pod:
%s
%s
  clients:
  - name: caller
    target: web
    work: {perRequest: 0s, perConnection: 0s}
%s
%s
`

type opts struct {
	duration string
	seed     int64
	mode     string
	nodes    string // the node pool list; default one node of unlimited CPU
	replicas int
	pod      string // indented under pod:
	client   string // indented under the client
	cluster  string // more lines under cluster:
	service  string // more lines under the service
	network  string // more keys in the cluster's network mapping
	faults   string // spec-level lines after the clients (faults:, report:)
}

func build(t testing.TB, o opts) *Engine {
	t.Helper()
	if o.duration == "" {
		o.duration = "10s"
	}
	if o.mode == "" {
		o.mode = "iptables"
	}
	if o.nodes == "" {
		o.nodes = "[{name: worker, count: 1}]"
	}
	if o.pod == "" {
		o.pod = "      serviceTime: {distribution: exponential, mean: 1ms}"
	}
	network := ""
	if o.network != "" {
		network = ", " + o.network
	}
	src := fmt.Sprintf(base, o.duration, o.seed, o.mode, o.nodes, network, o.cluster, o.replicas, o.pod, o.service, o.client, o.faults)
	sc, _, diags := scenario.Load("test.yaml", []byte(src), nil)
	if diags.HasErrors() {
		t.Fatalf("scenario: %v\n%s", diags, src)
	}
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func run(t testing.TB, o opts) *result.Result {
	e := build(t, o)
	e.Run(nil)
	return e.Result()
}

func podCounts(r *result.Result) []int64 {
	var out []int64
	for _, p := range r.Pods {
		out = append(out, p.Requests)
	}
	return out
}

// chiSquare of counts against a uniform spread.
func chiSquare(counts []int64) float64 {
	total := int64(0)
	for _, c := range counts {
		total += c
	}
	want := float64(total) / float64(len(counts))
	x := 0.0
	for _, c := range counts {
		x += (float64(c) - want) * (float64(c) - want) / want
	}
	return x
}

// A new connection per request means an independent uniform pick per request in the
// random modes, so per-pod counts are multinomial: chi-square with n−1 = 4 degrees of
// freedom stays under 18.47 (p = 0.001) unless the pick is biased.
func TestNewConnectionPerRequestSpreadsUniformly(t *testing.T) {
	for _, mode := range []string{"iptables", "nftables"} {
		for seed := int64(1); seed <= 3; seed++ {
			r := run(t, opts{seed: seed, mode: mode, replicas: 5, client: "    threads: 4\n    library: curl-loop"})
			if r.Requests.OK < 20000 {
				t.Fatalf("%s: only %d requests", mode, r.Requests.OK)
			}
			if x := chiSquare(podCounts(r)); x > 18.47 {
				t.Errorf("%s seed %d: chi-square %.2f > 18.47 for counts %v", mode, seed, x, podCounts(r))
			}
			if r.Clients[0].ConnectionsOpened != r.Requests.OK+r.Requests.InFlight {
				t.Errorf("%s: %d connections for %d requests; curl-loop opens one per request",
					mode, r.Clients[0].ConnectionsOpened, r.Requests.OK+r.Requests.InFlight)
			}
		}
	}
}

// IPVS rr and userspace on one client node hand new connections out in strict turn:
// with one thread, per-pod counts differ by at most one.
func TestRoundRobinModesAreExact(t *testing.T) {
	for _, mode := range []string{"ipvs", "userspace"} {
		r := run(t, opts{mode: mode, replicas: 5, client: "    threads: 1\n    library: curl-loop"})
		counts := podCounts(r)
		lo, hi := counts[0], counts[0]
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		if hi-lo > 1 {
			t.Errorf("%s: counts %v differ by more than one", mode, counts)
		}
	}
}

// With k long-lived connections each pinned to a uniformly chosen pod, the number of
// pods with none has mean n(1−1/n)^k and variance n·p + n(n−1)·q − (n·p)², where
// p = (1−1/n)^k and q = (1−2/n)^k. Over S seeds the mean idle count must fall within
// 4 standard errors of the expectation (a false alarm about once in 16,000 runs).
func TestIdlePodsMatchTheOccupancyFormula(t *testing.T) {
	cases := []struct{ n, k int }{{5, 5}, {5, 3}, {5, 20}, {10, 7}}
	const seeds = 300
	for _, c := range cases {
		idle := 0
		for seed := int64(1); seed <= seeds; seed++ {
			r := run(t, opts{duration: "200ms", seed: seed, replicas: c.n,
				client: fmt.Sprintf("    threads: %d\n    library: dotnet-httpclient", c.k)})
			if got := r.Clients[0].PeakOpen; got != int64(c.k) {
				t.Fatalf("n=%d k=%d: %d connections open at peak, want exactly k", c.n, c.k, got)
			}
			for _, p := range r.Pods {
				if p.Requests == 0 {
					idle++
				}
			}
		}
		n := float64(c.n)
		p := math.Pow(1-1/n, float64(c.k))
		q := math.Pow(1-2/n, float64(c.k))
		mean := n * p
		variance := n*p + n*(n-1)*q - mean*mean
		got := float64(idle) / seeds
		if tol := 4 * math.Sqrt(variance/seeds); math.Abs(got-mean) > tol {
			t.Errorf("n=%d k=%d: mean idle pods %.3f, want %.3f ± %.3f", c.n, c.k, got, mean, tol)
		}
		if want := report.ExpectedIdle(c.n, c.k); math.Abs(want-mean) > 1e-12 {
			t.Errorf("report.ExpectedIdle(%d, %d) = %v, want %v", c.n, c.k, want, mean)
		}
	}
}

// The timing arithmetic, checked where it is exact: one thread, constant 1 ms of CPU,
// 100 µs each way. The first request pays the handshake (1.5 round trips before it
// arrives, 0.3 ms) plus 1 ms of work and 0.1 ms back: 1.4 ms; every later one costs
// 0.2 ms of network plus 1 ms of work.
func TestClosedLoopTimingIsExact(t *testing.T) {
	r := run(t, opts{duration: "1s", replicas: 1,
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    threads: 1\n    library: dotnet-httpclient"})
	// 1 s − 1.4 ms for the first leaves 998.6 ms: 832 more full 1.2 ms cycles.
	if r.Requests.OK != 833 {
		t.Errorf("%d requests in 1 s, want 833", r.Requests.OK)
	}
	// The histogram keeps 3 significant digits: 1.4 ms may read as 1.401 ms.
	if r.LatencyMS.P50 != 1.2 || math.Abs(r.LatencyMS.Max-1.4) > 0.002 {
		t.Errorf("p50 %.3f ms max %.3f ms, want 1.2 and 1.4", r.LatencyMS.P50, r.LatencyMS.Max)
	}
}

// A CPU limit is a CFS quota, not a steady cap: 4 threads, each on its own connection,
// on a pod limited to 1 core of an unlimited node, 1 ms of work each and 0.2 ms of
// network between. Unthrottled they would use 4/1.2 = 3.3 cores, so the 100 ms of
// quota runs out 30 ms into each period and all four stall until it ends: the pod
// uses exactly its core (1000 requests/s) and every period some request waits 70 ms.
func TestCPULimitIsShared(t *testing.T) {
	// The limit as pod.cpu or as resources.limits.cpu: the same CFS quota.
	for _, limit := range []string{`cpu: "1"`, `resources: {limits: {cpu: "1"}}`} {
		t.Run(limit, func(t *testing.T) {
			r := run(t, opts{duration: "10s", replicas: 1,
				pod:    "      " + limit + "\n      serviceTime: {distribution: constant, value: 1ms}",
				client: "    threads: 4\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}"})
			// Each period's quota serves 100 requests. The first period, cut short by the
			// random phase, starts with a full quota: up to 100 more over 10 s.
			if got := r.ThroughputRPS; got < 995 || got > 1010 {
				t.Errorf("throughput %.1f rps, want 1000 to 1010", got)
			}
			if u := r.Pods[0].CPUUtilization; u < 0.995 || u > 1.01 {
				t.Errorf("CPU utilisation %.3f, want 1 to 1.01", u)
			}
			// The 4 requests in progress when the quota ran out waited 70 ms: 4 of the 100
			// each period serves (4 %), so p99 includes the stall; the median did not wait.
			if r.LatencyMS.P99 < 70 || r.LatencyMS.P50 > 1.3 {
				t.Errorf("p50 %.1f ms p99 %.1f ms, want p50 about 1.2 and p99 over the 70 ms stall", r.LatencyMS.P50, r.LatencyMS.P99)
			}
			th := r.Pods[0].Throttling
			if th == nil || th.ThrottledPeriods < 95 || th.Periods > 101 {
				t.Errorf("throttling %+v, want about 100 periods, all throttled", th)
			}
		})
	}
}

func TestTimeoutsFailRequestsAndCloseConnections(t *testing.T) {
	r := run(t, opts{duration: "10s", replicas: 2,
		pod:    "      serviceTime: {distribution: constant, value: 3s}",
		client: "    threads: 1\n    timeout: 1s\n    library: dotnet-httpclient"})
	// Each try waits 1 s; the run covers [0, 10 s), so the 10th try, which would time
	// out at exactly 10 s, is still in flight.
	if r.Errors.Timeout != 9 || r.Requests.OK != 0 || r.Requests.InFlight != 1 {
		t.Errorf("%d timeouts, %d ok, %d in flight; want 9, 0, 1", r.Errors.Timeout, r.Requests.OK, r.Requests.InFlight)
	}
	// A timed-out request's connection is closed, so every try dials anew.
	if got := r.Clients[0].ConnectionsOpened; got != 10 {
		t.Errorf("%d connections opened, want one per try (10)", got)
	}
}

func TestPoolLimitsShapeConnections(t *testing.T) {
	cases := []struct {
		name       string
		client     string
		peak       int64 // exact, or -1
		minOpened  int64
		allReached bool
	}{
		{"maxPerHost caps the pool", "    threads: 5\n    library: dotnet-httpclient\n    connections: {maxPerHost: 2}", 2, 2, false},
		// Go keeps 2 idle per host: when more than 2 connections are idle at once (think
		// time makes that common), the extra ones close and later requests dial anew.
		{"go idle cap churns connections", "    threads: 5\n    thinkTime: {distribution: exponential, mean: 1ms}\n    library: go-net-http", -1, 1000, true},
		// Without think time each thread takes back the connection it just returned:
		// the same 5 connections serve the whole run.
		{"go idle cap without think time", "    threads: 5\n    library: go-net-http", 5, 5, false},
		// .NET PooledConnectionLifetime 1s: each connection is replaced about every second.
		{"maxLifetime recycles connections", "    threads: 5\n    library: dotnet-httpclient\n    connections: {maxLifetime: 1s}", 5, 45, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, opts{replicas: 5, client: c.client})
			cl := r.Clients[0]
			if c.peak >= 0 && cl.PeakOpen != c.peak {
				t.Errorf("peak open %d, want %d", cl.PeakOpen, c.peak)
			}
			if cl.ConnectionsOpened < c.minOpened {
				t.Errorf("%d connections opened, want at least %d", cl.ConnectionsOpened, c.minOpened)
			}
			if c.allReached && cl.PodsReached != 5 {
				t.Errorf("reached %d pods, want all 5", cl.PodsReached)
			}
			if !c.allReached && int64(cl.PodsReached) > cl.PeakOpen {
				t.Errorf("reached %d pods with at most %d connections", cl.PodsReached, cl.PeakOpen)
			}
		})
	}
}

// kube-proxy with no endpoints REJECTs: every connection is refused at once.
func TestNoEndpointsRefuses(t *testing.T) {
	r := run(t, opts{duration: "1s", replicas: 0, client: "    threads: 1\n    library: curl-loop"})
	if r.Requests.OK != 0 || r.Errors.ConnectionRefused == 0 || r.Errors.ConnectionRefused != r.Requests.Failed {
		t.Errorf("ok %d refused %d failed %d; want only refusals", r.Requests.OK, r.Errors.ConnectionRefused, r.Requests.Failed)
	}
}

// A pod that no longer listens: iptables picked it once and the client sees the
// refusal; the userspace proxier retries the next endpoint and the client sees none.
// Its process exits at the start and, for the whole run, its IP stays and the nodes'
// rules still list it (their update and the pod's teardown take an hour).
func TestUserspaceRetriesARefusedDial(t *testing.T) {
	for _, c := range []struct {
		mode    string
		refused bool
	}{{"iptables", true}, {"userspace", false}} {
		e := build(t, opts{mode: c.mode, replicas: 5, client: "    threads: 2\n    library: curl-loop",
			cluster: "    endpointPropagation: {latency: 1h, jitter: 0s}\n    podNetworkTeardown: 1h"})
		e.life.Exit(2)
		e.Run(nil)
		r := e.Result()
		if got := r.Errors.ConnectionRefused > 0; got != c.refused {
			t.Errorf("%s: %d refused; want refusals: %v", c.mode, r.Errors.ConnectionRefused, c.refused)
		}
		if c.mode == "iptables" {
			// One pick in five lands on the dead pod: 20 % ± 4 standard errors.
			share := float64(r.Errors.ConnectionRefused) / float64(r.Requests.Total)
			if sd := math.Sqrt(0.2 * 0.8 / float64(r.Requests.Total)); math.Abs(share-0.2) > 4*sd {
				t.Errorf("iptables: %.3f of requests refused, want 0.2 ± %.3f", share, 4*sd)
			}
		}
		if r.Pods[2].Requests != 0 {
			t.Errorf("%s: the dead pod served %d requests", c.mode, r.Pods[2].Requests)
		}
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	o := opts{duration: "5s", seed: 42, replicas: 5, client: "    threads: 7\n    library: go-net-http"}
	var a, b, c bytes.Buffer
	report.JSON(&a, run(t, o))
	report.JSON(&b, run(t, o))
	o.seed = 43
	report.JSON(&c, run(t, o))
	if a.String() != b.String() {
		t.Fatal("two runs with the same seed gave different JSON")
	}
	if a.String() == c.String() {
		t.Fatal("different seeds gave identical JSON")
	}
}

func TestOpenLoopCountsWhatCannotStart(t *testing.T) {
	// 1000/s offered to a pod that serves at most 4 at a time for 10 ms each: with
	// maxInFlight 4 the rest cannot start and must be counted, not dropped silently.
	// A slot is busy 10.2 ms (work plus the round trip), then waits for the next
	// arrival on the 1 ms grid: one request per slot every 11 ms.
	r := run(t, opts{duration: "10s", replicas: 1,
		pod:    "      concurrency: 4\n      serviceTime: {distribution: constant, value: 10ms}",
		client: "    rate: 1000/s\n    maxInFlight: 4\n    library: dotnet-httpclient"})
	sent := r.Requests.Total + r.Requests.InFlight
	if r.Requests.NotSent+sent < 9999 || r.Requests.NotSent+sent > 10001 {
		t.Errorf("%d not sent + %d sent, want the 10,000 scheduled", r.Requests.NotSent, sent)
	}
	if want := 4 / 11e-3; math.Abs(r.ThroughputRPS-want) > 0.005*want {
		t.Errorf("throughput %.1f, want %.1f", r.ThroughputRPS, want)
	}
}

func TestTextReportExplainsPinning(t *testing.T) {
	r := run(t, opts{replicas: 5, client: "    threads: 1\n    library: dotnet-httpclient"})
	var b bytes.Buffer
	report.Text(&b, r)
	for _, want := range []string{"Idle pods: 4 of 5", "chooses a pod once per connection", "maxLifetime"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
}

// Regression: a refused dial must hand the pool's room to the oldest waiter before its
// own thread tries again; otherwise one thread takes every refusal and the other
// starves until its timeout.
func TestRefusalPassesThePoolToTheWaiter(t *testing.T) {
	r := run(t, opts{duration: "5s", replicas: 0,
		client: "    threads: 2\n    timeout: 1s\n    library: dotnet-httpclient\n    connections: {maxPerHost: 1}"})
	if r.Errors.Timeout != 0 || r.Errors.ConnectionRefused == 0 {
		t.Errorf("%d timeouts, %d refused; want only refusals", r.Errors.Timeout, r.Errors.ConnectionRefused)
	}
	if r.Clients[0].ConnectionsOpened != 0 {
		t.Errorf("%d connections counted as opened; refused dials open none", r.Clients[0].ConnectionsOpened)
	}
}

// Regression: outcomes at the very last instant belong to the last timeline interval.
func TestTimelineAddsUpToTheTotals(t *testing.T) {
	cases := []opts{
		{duration: "1s", replicas: 3, client: "    threads: 20\n    timeout: 2ms\n    library: dotnet-httpclient"},
		{duration: "2500ms", replicas: 3, client: "    threads: 5\n    library: go-net-http"},
		{duration: "3s", replicas: 0, client: "    threads: 1\n    library: curl-loop"},
	}
	for _, o := range cases {
		r := run(t, o)
		var reqs, errs int64
		for _, p := range r.Timeline {
			reqs += p.Requests
			errs += p.Errors
		}
		if reqs != r.Requests.Total || errs != r.Requests.Failed {
			t.Errorf("%s: timeline has %d requests, %d errors; totals say %d, %d", o.duration, reqs, errs, r.Requests.Total, r.Requests.Failed)
		}
		if want := int(math.Ceil(r.DurationS)); len(r.Timeline) != want {
			t.Errorf("%s: %d timeline points, want %d", o.duration, len(r.Timeline), want)
		}
	}
}

// Regression: an idle connection closes when its idle timeout passes, not when the
// pool next looks at it. One request a second with a 500 ms idle timeout: every
// request dials anew and nothing is open at the end.
func TestIdleTimeoutClosesConnectionsOnTime(t *testing.T) {
	r := run(t, opts{duration: "10s", replicas: 2,
		client: "    rate: 1/s\n    library: dotnet-httpclient\n    connections: {idleTimeout: 500ms}"})
	c := r.Clients[0]
	if c.ConnectionsOpened != 10 || c.OpenAtEnd != 0 {
		t.Errorf("%d opened, %d open at the end; want 10 and 0", c.ConnectionsOpened, c.OpenAtEnd)
	}
}

// Regression: the client's per-request overhead comes before the first request too.
func TestOverheadPrecedesEveryRequest(t *testing.T) {
	r := run(t, opts{duration: "1s", replicas: 1,
		pod:    "      serviceTime: {distribution: constant, value: 1us}",
		client: "    threads: 1\n    overhead: 100ms\n    library: curl-loop"})
	// Each cycle: 100 ms overhead, then 0.3 ms handshake + 1 µs + 0.1 ms: 9 fit in 1 s.
	if r.Requests.OK != 9 {
		t.Errorf("%d requests, want 9", r.Requests.OK)
	}
}

// Memory must not grow with simulated time: a day-long run keeps at most 3,600
// timeline points by widening the interval (24 s here).
func TestTimelineStaysBoundedOverADay(t *testing.T) {
	r := run(t, opts{duration: "24h", replicas: 1,
		client: "    threads: 1\n    thinkTime: {distribution: constant, value: 10s}\n    library: dotnet-httpclient"})
	if len(r.Timeline) != 3600 || r.TimelineIntervalS != 24 {
		t.Fatalf("%d points of %g s, want 3600 of 24 s", len(r.Timeline), r.TimelineIntervalS)
	}
}

// Each per-request cost, checked where its arithmetic is exact: one client thread
// (or four for the worker queue), 100 µs each way, constant times, a 1 s run.
func TestPerRequestCostsAddUp(t *testing.T) {
	cases := []struct {
		name        string
		pod, client string
		cycle       float64 // ms per request per thread in steady state
		threads     float64
	}{
		// A new connection per request: 0.3 ms until the request arrives, 1 ms accept,
		// 1 ms work, 0.1 ms back.
		{"accept cost on every new connection",
			"      acceptCost: 1ms\n      serviceTime: {distribution: constant, value: 1ms}",
			"    threads: 1\n    library: curl-loop", 2.4, 1},
		// Off-CPU wait holds the request but not the core: 0.2 + 1 + 2.
		{"wait time after the work",
			"      serviceTime: {distribution: constant, value: 1ms}\n      waitTime: {distribution: constant, value: 2ms}",
			"    threads: 1\n    library: dotnet-httpclient", 3.2, 1},
		// Think time between answer and next request: 0.2 + 1 + 0.8.
		{"think time between requests",
			"      serviceTime: {distribution: constant, value: 1ms}",
			"    threads: 1\n    thinkTime: {distribution: constant, value: 800us}\n    library: dotnet-httpclient", 2, 1},
		// One worker thread serves four callers one at a time: 1,000 requests a second
		// in all, each caller waiting behind the other three (4 ms per cycle).
		{"one worker queues the rest",
			"      concurrency: 1\n      serviceTime: {distribution: constant, value: 1ms}",
			"    threads: 4\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}", 4, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, opts{duration: "10s", replicas: 1, pod: c.pod, client: c.client})
			want := c.threads * 1000 / c.cycle
			if math.Abs(r.ThroughputRPS-want) > 0.005*want {
				t.Errorf("throughput %.1f rps, want %.1f", r.ThroughputRPS, want)
			}
		})
	}
}
