package simulate

import (
	"fmt"
	"math"
	"testing"

	"trafficlab/sim"
)

// A sidecar's worker threads cap throughput at concurrency ÷ worker time per request
// when its CPU is not the limit, and the CPU limit ÷ CPU per request when it is.
func TestSidecarThroughputCap(t *testing.T) {
	cases := []struct {
		name    string
		sidecar string
		want    float64 // requests per second
		// extra is what a CFS quota may give beyond its average: the first period,
		// cut short by the random phase, starts with a full quota (50 ms of a 500m
		// limit, 50 requests of 1 ms over 5 s: 10/s).
		extra float64
	}{
		{"2 workers", "{concurrency: 2, perRequestCPU: 1ms}", 2000, 0},
		{"4 workers", "{concurrency: 4, perRequestCPU: 1ms}", 4000, 0},
		{"2 workers under half a core", "{concurrency: 2, cpu: 500m, perRequestCPU: 1ms}", 500, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, opts{duration: "5s", replicas: 5,
				pod:    "      serviceTime: {distribution: constant, value: 10us}",
				client: "    threads: 64\n    library: go-net-http\n    connections: {maxIdlePerHost: 64}\n    sidecar: " + tc.sidecar})
			// Saturated workers serve at exactly the cap; the only loss is the first
			// requests' pipeline filling, well under 1 %.
			if got := r.ThroughputRPS; got > tc.want*1.0001+tc.extra || got < tc.want*0.99 {
				t.Errorf("throughput %.0f/s, want %.0f/s (-1%%)", got, tc.want)
			}
			sc := r.Sidecars[len(r.Sidecars)-1]
			if sc.Direction != "outbound" || sc.WorkerUtilization < 0.99 {
				t.Errorf("client sidecar %+v: want outbound with workers busy", sc)
			}
		})
	}
}

// A client that pins one connection sends everything to one pod through kube-proxy;
// through its sidecar the same client's requests spread over every pod, because
// Envoy picks a pod per request. With one request in flight every pod has 0 active
// requests, so LEAST_REQUEST's two draws tie and the first wins: a uniform pick,
// whose counts pass a chi-square test (4 degrees of freedom, p = 0.001: 18.47).
func TestSidecarBalancesPerRequest(t *testing.T) {
	o := opts{duration: "10s", replicas: 5,
		pod:    "      serviceTime: {distribution: constant, value: 100us}",
		client: "    threads: 1\n    library: dotnet-httpclient"}
	pinned := run(t, o)
	busy := 0
	for _, c := range podCounts(pinned) {
		if c > 0 {
			busy++
		}
	}
	if busy != 1 {
		t.Fatalf("without a sidecar %d pods got requests, want the 1 the connection is pinned to", busy)
	}
	o.client += "\n    sidecar: {}"
	spread := run(t, o)
	counts := podCounts(spread)
	if x := chiSquare(counts); x > 18.47 {
		t.Errorf("through the sidecar: counts %v, chi-square %.1f > 18.47", counts, x)
	}
}

// Inbound sidecars add their worker time and two loopback hops to every request, and
// count the connections the pod accepts.
func TestInboundSidecarAddsItsTime(t *testing.T) {
	o := opts{duration: "2s", replicas: 1,
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    threads: 1\n    library: dotnet-httpclient"}
	plain := run(t, o)
	o.service = "    sidecar: {perRequestCPU: 400us}"
	with := run(t, o)
	// 400 µs of worker time and two loopback hops each way of 20 µs.
	want := plain.LatencyMS.P50 + 0.4 + 0.04
	if math.Abs(with.LatencyMS.P50-want) > 0.002 {
		t.Errorf("p50 %.3f ms with the sidecar, want %.3f (%.3f + 0.44)", with.LatencyMS.P50, want, plain.LatencyMS.P50)
	}
	if with.Pods[0].Connections != 1 || len(with.Sidecars) != 1 || with.Sidecars[0].Direction != "inbound" {
		t.Errorf("connections %d, sidecars %+v; want 1 connection and one inbound sidecar", with.Pods[0].Connections, with.Sidecars)
	}
}

// A connection refused by a deleted pod is a connect-failure: Istio's sidecar
// retries it on another pod, so the app sees no error where it would without one.
func TestSidecarRetriesConnectFailures(t *testing.T) {
	o := opts{duration: "20s", replicas: 4,
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    threads: 4\n    connections: {reuse: none}",
		faults: "  faults: [{kind: pod-kill, start: 5s, target: {pod: web-0}}]"}
	plain := run(t, o)
	if plain.Errors.Total() == 0 {
		t.Fatal("without a sidecar, killing a pod caused no error: the test shows nothing")
	}
	o.client = "    threads: 4\n    connections: {reuse: none}\n    sidecar: {}"
	with := run(t, o)
	if n := with.Errors.Total(); n > plain.Errors.Total()/4 {
		t.Errorf("with a sidecar %d errors (%+v), without %d: the retries should absorb most", n, with.Errors, plain.Errors.Total())
	}
	if with.Sidecars[0].Retries == 0 {
		t.Errorf("sidecar %+v retried nothing", with.Sidecars[0])
	}
}

// Bookkeeping survives chaos: pods killed under load every 10 s, a 3 ms client
// timeout that abandons requests at every stage, loss and a partition on the segment
// model, HTTP/2 and HTTP/1.1 upstreams, and a circuit breaker that overflows. Every
// envoy's Connections count equals the upstream connections its pools hold, and the
// jobs in use do not grow from the middle of the run to its end: what is left is
// work in flight, not leaks.
func TestSidecarBookkeepingUnderChaos(t *testing.T) {
	kills := "  faults:\n  - {kind: partition, start: 10s, end: 20s, target: {pod: web-2}, direction: both}\n"
	for i, pod := range []string{"web-0", "web-1", "web-4", "web-2", "web-5", "web-6"} {
		kills += fmt.Sprintf("  - {kind: pod-kill, start: %ds, target: {pod: %s}}\n", 5+10*i, pod)
	}
	for _, proto := range []string{"http1", "http2"} {
		t.Run(proto, func(t *testing.T) {
			e := build(t, opts{duration: "60s", replicas: 4, network: `loss: "2%"`,
				pod:     "      serviceTime: {distribution: exponential, mean: 500us}",
				service: "    sidecar: {concurrency: 2}",
				client: "    threads: 16\n    timeout: 3ms\n    library: go-net-http\n" +
					"    sidecar: {concurrency: 2, upstreamProtocol: " + proto + ", circuitBreakers: {maxConnections: 2, maxPendingRequests: 8}}",
				faults: kills})
			check := func() int {
				if err := e.mesh.Audit(); err != nil {
					t.Errorf("t=%v %v", e.k.Now(), err)
				}
				live := 0
				for _, j := range e.jobs {
					if j.state != jobFree {
						live++
					}
				}
				return live
			}
			// A TCP queue behind a loss can hold a few hundred jobs for a moment, so
			// compare the floors of two stretches: leaks raise the floor, bursts do not.
			floor := func(from, to sim.Time) int {
				least := math.MaxInt
				for at := from; at <= to; at += 5 * sec {
					e.k.Run(at)
					least = min(least, check())
				}
				return least
			}
			first, second := floor(30*sec, 45*sec), floor(45*sec, 60*sec)
			e.Run(nil)
			check()
			r := e.Result()
			if r.Requests.OK == 0 || r.Errors.Total() == 0 {
				t.Fatalf("ok %d, errors %+v: the run should both serve and fail", r.Requests.OK, r.Errors)
			}
			// Pods are killed at 35, 45 and 55 s; a leak of even one job per kill and
			// stage would show.
			if second > first+16 {
				t.Errorf("jobs in use: at least %d from 30 to 45 s, %d from 45 to 60 s: jobs leak", first, second)
			}
		})
	}
}

// A per-try timeout cuts an attempt to a slow pod short and retries on another: with
// web-0 behind 50 ms each way and a 20 ms per-try timeout (retried on reset), every
// request ends within 20 ms + Envoy's first backoff (under 25 ms) + a fast attempt,
// where without it the requests sent to web-0 take over 100 ms.
func TestSidecarPerTryTimeout(t *testing.T) {
	o := opts{duration: "5s", replicas: 2, network: "links: [{target: {pod: web-0}, link: {latency: 50ms}}]",
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    rate: 100/s\n    library: go-net-http\n    sidecar: {lbPolicy: ROUND_ROBIN}"}
	slow := run(t, o)
	if slow.LatencyMS.P90 < 100 {
		t.Fatalf("without a per-try timeout p90 %.1f ms: half the requests should cross the 50 ms link", slow.LatencyMS.P90)
	}
	o.client = "    rate: 100/s\n    library: go-net-http\n    sidecar: {lbPolicy: ROUND_ROBIN, retries: {perTryTimeout: 20ms, retryOn: [reset]}}"
	cut := run(t, o)
	if cut.Errors.Total() != 0 || cut.LatencyMS.Max > 50 {
		t.Errorf("with a 20 ms per-try timeout: errors %+v, max %.1f ms; want none and under 50 ms", cut.Errors, cut.LatencyMS.Max)
	}
	if sc := cut.Sidecars[len(cut.Sidecars)-1]; sc.Retries < cut.Requests.OK/4 {
		t.Errorf("sidecar retried %d of %d requests; about half went to the slow pod first", sc.Retries, cut.Requests.OK)
	}
}

// A partitioned pod never answers the SYN: Envoy gives up at Istio's 10 s connect
// timeout and retries the connect-failure on another pod, so the app sees a slow
// answer, not an error (its 30 s timeout is far off; Linux alone would retry SYNs
// for 127 s).
func TestSidecarConnectTimeout(t *testing.T) {
	r := run(t, opts{duration: "20s", replicas: 2,
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    rate: 10/s\n    connections: {reuse: none}\n    sidecar: {lbPolicy: ROUND_ROBIN}",
		faults: "  faults: [{kind: partition, start: 0s, target: {pod: web-0}, direction: both}]"})
	if r.Errors.Total() != 0 || r.Requests.OK == 0 {
		t.Fatalf("errors %+v, %d ok: want every request answered", r.Errors, r.Requests.OK)
	}
	// The first request to web-0 waits out the connect timeout, then retries.
	if r.LatencyMS.Max < 10000 || r.LatencyMS.Max > 10100 {
		t.Errorf("max latency %.1f ms, want the 10 s connect timeout plus a retry", r.LatencyMS.Max)
	}
}

// An envoy's attempt is on its way to its pod until it arrives or its job ends: a
// job freed at a pod that is gone, its ID then reused, is over, so the connect
// timeout does not fail an attempt that already reached the pod.
func TestAttemptOnItsWay(t *testing.T) {
	e := build(t, opts{replicas: 1, client: "    threads: 1"})
	up := meshUpstream{e}
	ui := e.newJob(job{slot: -1, attempt: true, state: jobWire})
	serial := e.jobs[ui].serial
	if !up.OnItsWay(ui, serial) {
		t.Errorf("a job just sent is not on its way")
	}
	e.jobs[ui].delivered = true
	if up.OnItsWay(ui, serial) {
		t.Errorf("a job that arrived is still on its way")
	}
	e.freeJob(ui)
	if reused := e.newJob(job{slot: -1, state: jobWire}); reused != ui || up.OnItsWay(ui, serial) {
		t.Errorf("job %d reused as %d: the ended attempt is on its way: %v", ui, reused, up.OnItsWay(ui, serial))
	}
}
