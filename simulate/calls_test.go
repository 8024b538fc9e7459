package simulate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"trafficlab/result"
	"trafficlab/resultfile"
)

// graph runs a scenario of services that call services: services and clients are
// the spec's lists, indented as under spec.
func graph(t *testing.T, seed int64, duration, nodes, services, clients string) *result.Result {
	t.Helper()
	src := fmt.Sprintf(`apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: calls}
spec:
  duration: %s
  seed: %d
  cluster:
    nodes: %s
  services:
%s
  clients:
%s
`, duration, seed, nodes, services, clients)
	e := buildYAML(t, src)
	e.Run(nil)
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	return e.Result()
}

func edgeOf(t *testing.T, r *result.Result, from, to string) result.Edge {
	t.Helper()
	for _, e := range r.Edges {
		if e.From == from && e.To == to {
			return e
		}
	}
	t.Fatalf("no edge %s → %s in %+v", from, to, r.Edges)
	return result.Edge{}
}

func serviceOf(t *testing.T, r *result.Result, name string) result.Service {
	t.Helper()
	for _, s := range r.Services {
		if s.Name == name && s.LatencyMS != nil {
			return s
		}
	}
	t.Fatalf("no figures of service %s in %+v", name, r.Services)
	return result.Service{}
}

// tQuantile999 is Student's t at 0.9995 (two-sided 99.9 %) for 7 degrees of freedom.
const tQuantile999 = 5.408

// Two processor-sharing pods in tandem under Poisson load: each a single pod alone on
// a one-core node, every request first on the front's core, then a call to the back
// one. A Jackson network (BCMP with processor sharing): the mean end-to-end latency
// is 1/(μ1−λ) + 1/(μ2−λ), the network being instant. Eight seeds give eight
// independent means; their spread, with Student's t, bounds the distance to the
// formula, and that bound must itself be tight (under 3 %) for the test to mean
// anything.
func TestTandemMatchesJackson(t *testing.T) {
	const lambda, mu1, mu2 = 500.0, 1000.0, 800.0
	want := 1e3/(mu1-lambda) + 1e3/(mu2-lambda) // ms
	services := `  - name: front
    replicas: 1
    pod:
      nodeName: worker-0
      serviceTime: {distribution: exponential, mean: 1ms}
      calls: [{service: back}]
  - name: back
    replicas: 1
    pod:
      nodeName: worker-1
      serviceTime: {distribution: exponential, mean: 1250us}`
	clients := `  - name: load
    target: front
    rate: 500/s
    arrival: poisson`
	var means []float64
	for seed := int64(1); seed <= 8; seed++ {
		r := graph(t, seed, "60s", "[{name: worker, count: 2, cpu: '1'}]", services, clients)
		if r.Errors.Total() != 0 {
			t.Fatalf("seed %d: errors %+v", seed, r.Errors)
		}
		means = append(means, r.LatencyMS.Mean)
	}
	m, sd := meanSD(means)
	tol := tQuantile999 * sd / math.Sqrt(float64(len(means)))
	t.Logf("mean end-to-end %.3f ms over 8 seeds (sd %.3f), Jackson %.3f ms, tolerance %.3f ms", m, sd, want, tol)
	if tol > 0.03*want {
		t.Fatalf("the seeds' spread allows ±%.3f ms, over 3 %% of %.3f ms: the test could not tell", tol, want)
	}
	if math.Abs(m-want) > tol {
		t.Errorf("mean end-to-end %.3f ms, want %.3f ± %.3f ms (Jackson)", m, want, tol)
	}
}

func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)-1))
}

// A page that calls k services at once, each answering after an exponential time
// with no queueing (unlimited cores and workers): the step lasts the maximum of k
// independent exponentials, whose mean is m·H_k and whose p-quantile is
// −m·ln(1−p^(1/k)). Requests are independent, so the mean's standard error is the
// maximum's σ = m·√(Σ 1/i²) over √N, and the p99's is √(p(1−p)/N)/f(x99), f the
// maximum's density; both are allowed 5 standard errors and half a histogram bucket.
func TestFanOutIsTheMaximumOfItsCalls(t *testing.T) {
	const k, m = 4, 10.0 // callees, their mean in ms
	services := `  - name: page
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1us}
      calls:
      - parallel: [{service: a}, {service: b}, {service: c}, {service: d}]`
	for _, name := range []string{"a", "b", "c", "d"} {
		services += fmt.Sprintf(`
  - name: %s
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 10ms}`, name)
	}
	r := graph(t, 1, "100s", "[{name: worker, count: 1}]", services, `  - name: load
    target: page
    rate: 200/s
    arrival: poisson`)
	page := serviceOf(t, r, "page")
	n := float64(page.Requests)
	hk, inv2 := 0.0, 0.0
	for i := 1; i <= k; i++ {
		hk += 1 / float64(i)
		inv2 += 1 / float64(i*i)
	}
	wantMean := m*hk + 0.001 // the page's own 1 µs
	seMean := m * math.Sqrt(inv2) / math.Sqrt(n)
	if d := math.Abs(page.LatencyMS.Mean - wantMean); d > 5*seMean+wantMean/2048 {
		t.Errorf("page mean %.3f ms, want %.3f ms (m·H_%d) ± %.3f", page.LatencyMS.Mean, wantMean, k, 5*seMean)
	}
	const p = 0.99
	x99 := -m * math.Log(1-math.Pow(p, 1.0/k))
	u := math.Exp(-x99 / m)
	density := k * math.Pow(1-u, k-1) * u / m
	se99 := math.Sqrt(p*(1-p)/n) / density
	if d := math.Abs(page.LatencyMS.P99 - x99); d > 5*se99+x99/2048 {
		t.Errorf("page p99 %.3f ms, want %.3f ms ± %.3f", page.LatencyMS.P99, x99, 5*se99)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		ed := edgeOf(t, r, "page", name)
		if se := m / math.Sqrt(float64(ed.Requests)); math.Abs(ed.LatencyMS.Mean-m) > 5*se+m/2048 {
			t.Errorf("page → %s: mean %.3f ms, want %.1f ± %.3f", name, ed.LatencyMS.Mean, m, 5*se)
		}
		// Every answered page ended its calls; a page still in progress may have
		// ended some.
		if ed.Requests < int64(n) || ed.Requests > int64(n)+r.Requests.InFlight {
			t.Errorf("page → %s: %d calls for %d page requests answered, %d in progress", name, ed.Requests, int64(n), r.Requests.InFlight)
		}
	}
}

// Calls that fail independently with probability p, retried n times: an attempt
// times out when its callee's exponential service time (no queueing) exceeds the
// timeout T, so p = e^(−T/m). Attempts per call are then (1−p^(n+1))/(1−p) and the
// calls that still fail p^(n+1), each failing the request with a 503; optional
// calls fail no request. Tolerances are 5 standard errors: attempts per call is a
// truncated geometric count with its own variance, failures a binomial count.
func TestRetriesFollowTheGeometricLaw(t *testing.T) {
	const m, p, n = 10.0, 0.3, 2
	timeout := -m * math.Log(p) // ms
	for _, optional := range []bool{false, true} {
		services := fmt.Sprintf(`  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1us}
      calls: [{service: back, retries: %d, timeout: %dus, optional: %t}]
  - name: back
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 10ms}`, n, int(math.Round(timeout*1e3)), optional)
		r := graph(t, 3, "100s", "[{name: worker, count: 1}]", services, `  - name: load
    target: front
    rate: 200/s
    arrival: poisson
    timeout: 10s`)
		ed := edgeOf(t, r, "front", "back")
		calls := float64(ed.Requests)
		// Attempts A of one call: P(A=i) = p^(i−1)(1−p) for i ≤ n, P(A=n+1) = p^n.
		var ea, ea2 float64
		for i := 1; i <= n+1; i++ {
			pr := math.Pow(p, float64(i-1)) * (1 - p)
			if i == n+1 {
				pr = math.Pow(p, n)
			}
			ea += float64(i) * pr
			ea2 += float64(i*i) * pr
		}
		if want := (1 - math.Pow(p, n+1)) / (1 - p); math.Abs(ea-want) > 1e-12 {
			t.Fatalf("the test's own law: E[A] %.6f, formula %.6f", ea, want)
		}
		perCall := float64(ed.Attempts) / calls
		if se := math.Sqrt((ea2 - ea*ea) / calls); math.Abs(perCall-ea) > 5*se {
			t.Errorf("optional %t: %.4f attempts per call, want %.4f ± %.4f", optional, perCall, ea, 5*se)
		}
		pf := math.Pow(p, n+1)
		failed := float64(ed.Errors.Total())
		if se := math.Sqrt(calls * pf * (1 - pf)); math.Abs(failed-calls*pf) > 5*se {
			t.Errorf("optional %t: %v failed calls of %v, want %.0f ± %.0f", optional, failed, calls, calls*pf, 5*se)
		}
		// Attempts are first attempts and retries; the calls still out at the end
		// (one per request in progress) have not ended.
		if out := ed.Attempts - ed.Retries - ed.Requests; ed.Errors.Timeout != ed.Errors.Total() || out < 0 || out > r.Requests.InFlight {
			t.Errorf("optional %t: errors %+v, retries %d of %d attempts for %d calls, %d requests in progress",
				optional, ed.Errors, ed.Retries, ed.Attempts, ed.Requests, r.Requests.InFlight)
		}
		front := serviceOf(t, r, "front")
		switch {
		case optional && (r.Errors.Total() != 0 || front.Errors != 0):
			t.Errorf("optional calls failed %d requests (%+v)", front.Errors, r.Errors)
		case !optional && (r.Errors.HTTP503 != int64(failed) || front.Errors != int64(failed)):
			t.Errorf("%v failed calls, but the front answered %d 503s and the client saw %+v", failed, front.Errors, r.Errors)
		}
	}
}

// A downstream scale-in, from 3 pods to 1, under calls that open a connection each:
// with iptables the front's node keeps sending new connections to the deleted pods
// until its rules change, they refuse them, and the front answers its client 503s,
// each blamed on a deleted back pod; the userspace proxy retries the next endpoint
// and no call fails (as TestScaleInErrorsByProxyMode for a client). The proxy's own
// CPU is left out: it moves when calls end, and one can then be in progress when its
// pod exits, which is not what this test is about.
func TestDownstreamScaleInFailsCallsByProxyMode(t *testing.T) {
	for _, c := range []struct {
		mode, cluster string
		fails         bool
	}{{"iptables", "", true}, {"userspace", "proxyWork: {perConnection: 0s, perRequest: 0s, perKiB: 0s}", false}} {
		src := fmt.Sprintf(`apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: calls}
spec:
  duration: 10s
  cluster:
    proxyMode: %s
    %s
    endpointPropagation: {latency: 300ms, jitter: 0s}
    network: {latency: 100us}
  services:
  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
      calls: [{service: back}]
      client: {library: curl-loop}
  - name: back
    replicas: 3
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: load
    target: front
    threads: 1
`, c.mode, c.cluster)
		e := buildYAML(t, src)
		e.k.Run(5 * sec)
		e.deployments.Scale(1, 1, "test")
		e.Run(nil)
		r := e.Result()
		ed := edgeOf(t, r, "front", "back")
		t.Logf("%s: %d calls, failed %+v", c.mode, ed.Requests, ed.Errors)
		if got := ed.Errors.Total() > 0; got != c.fails {
			t.Errorf("%s: calls failed %+v, want failures: %v", c.mode, ed.Errors, c.fails)
		}
		if r.Errors.HTTP503 != ed.Errors.Total() || r.Errors.Total() != r.Errors.HTTP503 {
			t.Errorf("%s: the client saw %+v for %d failed calls; want a 503 each", c.mode, r.Errors, ed.Errors.Total())
		}
		var blamed int64
		for _, p := range r.Pods {
			blamed += p.Errors.Total()
			if p.Errors.Total() > 0 && (p.DeletedS == nil || p.Name[:4] != "back") {
				t.Errorf("%s: pod %s caused %+v, but only deleted back pods can", c.mode, p.Name, p.Errors)
			}
		}
		if blamed != ed.AttemptErrors.Total() {
			t.Errorf("%s: pods blamed for %d of %d failed attempts", c.mode, blamed, ed.AttemptErrors.Total())
		}
		// The report names the scale event behind each blamed pod.
		text := folded(t, r)
		if scaled := strings.Contains(text, "by the scale-in 3→1"); scaled != c.fails {
			t.Errorf("%s: the report blames the scale-in: %v, want %v:\n%s", c.mode, scaled, c.fails, text)
		}
	}
}

// Calls out of a pod with a sidecar leave through the pod's Envoy, which balances
// each request over the callee's endpoints: one thread's calls, which a pooled
// client without a sidecar keeps on one connection and so on one pod, reach every
// pod of the callee. The pod's envoy relays both ways on the same workers.
func TestSidecarBalancesCallsPerRequest(t *testing.T) {
	services := `  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 200us}
      calls: [{service: back}]
      client: {library: dotnet-httpclient}%s
  - name: back
    replicas: 5
    pod:
      serviceTime: {distribution: exponential, mean: 200us}`
	clients := `  - name: load
    target: front
    threads: 1
    library: dotnet-httpclient`
	for _, c := range []struct {
		sidecar string
		busy    int // back pods that served calls
	}{{"", 1}, {"\n    sidecar: {concurrency: 2}", 5}} {
		r := graph(t, 1, "10s", "[{name: worker, count: 3}]", fmt.Sprintf(services, c.sidecar), clients)
		busy := 0
		var calls int64
		for _, p := range r.Pods {
			if p.Service == "back" && p.Requests > 0 {
				busy++
				calls += p.Requests
			}
		}
		if busy != c.busy {
			t.Errorf("sidecar %q: %d back pods served calls, want %d", c.sidecar, busy, c.busy)
		}
		ed := edgeOf(t, r, "front", "back")
		if ed.Requests == 0 || ed.Errors.Total() != 0 || calls < ed.Requests {
			t.Errorf("sidecar %q: edge %+v, back pods served %d", c.sidecar, ed, calls)
		}
		if c.sidecar != "" {
			if len(r.Sidecars) != 1 || r.Sidecars[0].Direction != "both" || r.Sidecars[0].Requests < 2*ed.Requests {
				t.Errorf("the front pod's sidecar: %+v, want one relaying both ways, its requests in and its calls out", r.Sidecars)
			}
		}
	}
}

// The slow requests' critical path takes, at each step of calls, the call that ended
// last: with constant times and an instant network, a front with 1 ms of work that
// calls a 1 ms and a 20 ms service at once spends 1/21 of its time on its own work
// and 20/21 waiting for the slow one, the fast call being off the path; made one
// after another, both calls are on it (1/22, 1/22, 20/22).
func TestSlowPathFollowsTheLastCallOfEachStep(t *testing.T) {
	for _, c := range []struct {
		calls string
		want  map[string]float64 // caller/service/part → share
	}{
		{"[{parallel: [{service: fast}, {service: slow}]}]",
			map[string]float64{"/front/work": 1.0 / 21, "front/slow/work": 20.0 / 21}},
		{"[{service: fast}, {service: slow}]",
			map[string]float64{"/front/work": 1.0 / 22, "front/fast/work": 1.0 / 22, "front/slow/work": 20.0 / 22}},
	} {
		services := fmt.Sprintf(`  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1ms}
      calls: %s
  - name: fast
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1ms}
  - name: slow
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 20ms}`, c.calls)
		// Every request is slow: 10 ms is under each one's 21 ms.
		r := graph(t, 1, "10s", "[{name: worker, count: 1}]", services, `  - name: load
    target: front
    threads: 2
  report: {slowThreshold: 10ms}`)
		got := map[string]float64{}
		for _, p := range r.SlowPath {
			got[p.Caller+"/"+p.Service+"/"+p.Part] = p.ShareOfTail
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: slow path %+v, want %v", c.calls, r.SlowPath, c.want)
		}
		for k, want := range c.want {
			if math.Abs(got[k]-want) > 1e-3 {
				t.Errorf("%s: %s is %.4f of the slow time, want %.4f", c.calls, k, got[k], want)
			}
		}
	}
}

// propagateDeadline gives each attempt at most the time its request has left before
// its caller gives up, as gRPC does: a 100 ms callee behind a 50 ms client timeout
// is called with 1 s to spare and answers (the client having long given up), or
// with the client's deadline and times out with it, failing after about 50 ms.
func TestPropagatedDeadlineCutsTheCall(t *testing.T) {
	for _, propagate := range []bool{false, true} {
		services := fmt.Sprintf(`  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1ms}
      calls: [{service: back, timeout: 1s, retries: 2}]
      client: {propagateDeadline: %t}
  - name: back
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 100ms}`, propagate)
		r := graph(t, 1, "5s", "[{name: worker, count: 1}]", services, `  - name: load
    target: front
    threads: 1
    timeout: 50ms`)
		ed := edgeOf(t, r, "front", "back")
		switch {
		case r.Errors.Timeout < 90 || r.Requests.OK != 0: // 5 s of 50 ms requests: about 100
			t.Errorf("propagate %t: the client saw %+v, want every request timed out", propagate, r.Errors)
		case !propagate && (ed.Errors.Total() != 0 || ed.LatencyMS.Mean < 100):
			t.Errorf("without propagation the calls should take 100 ms and succeed: %+v", ed)
		case propagate && (ed.Requests == 0 || ed.Errors.Timeout != ed.Requests):
			t.Errorf("with propagation every call should time out at the client's deadline: %+v", ed)
		case propagate && ed.Retries != 0:
			// No time is left for a retry: none is sent, none counted.
			t.Errorf("with propagation %d retries were counted of %d attempts for %d calls", ed.Retries, ed.Attempts, ed.Requests)
		}
		if err := resultfile.Check(r); err != nil {
			t.Errorf("propagate %t: %v", propagate, err)
		}
	}
}

// A pod that exits while its requests wait for their calls: the kernel closes the
// clients' connections (each reads EOF, none waits for its timeout), the calls out
// count as failed, closed, and no call the dying pod still queued is sent: one
// connection to the back (maxPerHost 1) carries the first call; the room it frees
// when the pod dies goes to none of the two calls queued behind it. The run ends
// before the front's replacement is ready (2 s after the kill).
func TestCallsEndWithTheirPod(t *testing.T) {
	src := `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: calls}
spec:
  duration: 2s
  cluster:
    nodes: [{name: worker, count: 2}]
    network: {latency: 100us}
  services:
  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1ms}
      calls: [{service: back}]
      client: {connections: {maxPerHost: 1}}
  - name: back
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1s}
  clients:
  - name: load
    target: front
    threads: 3
    timeout: 10s
  faults: [{kind: pod-kill, start: 500ms, target: {pod: front-0}}]
`
	r := runYAML(t, src)
	if r.Errors.ConnectionClosed != 3 || r.Errors.Timeout != 0 {
		t.Errorf("the clients saw %+v, want 3 connections closed by the exiting pod, no timeout", r.Errors)
	}
	ed := edgeOf(t, r, "front", "back")
	if ed.Attempts != 3 || ed.Requests != 3 || ed.Errors.ConnectionClosed != 3 {
		t.Errorf("front → back: %d attempts, %d calls ended, errors %+v; want 3 tried (2 of them waiting for the connection) and 3 cut", ed.Attempts, ed.Requests, ed.Errors)
	}
	for _, p := range r.Pods {
		if p.Service == "back" && p.Requests > 1 {
			t.Errorf("%s answered %d calls; the dying front sent 1", p.Name, p.Requests)
		}
	}
	if err := resultfile.Check(r); err != nil {
		t.Error(err)
	}
}

// A service pod's sidecar balances each service it calls on its own, as Envoy does
// per destination cluster: with ROUND_ROBIN and one worker, calls to a and b in
// turn still reach both pods of each, half each.
func TestSidecarBalancesEachServiceItCalls(t *testing.T) {
	services := `  - name: front
    replicas: 1
    sidecar: {concurrency: 1, lbPolicy: ROUND_ROBIN}
    pod:
      serviceTime: {distribution: exponential, mean: 100us}
      calls: [{service: a}, {service: b}]`
	for _, name := range []string{"a", "b"} {
		services += fmt.Sprintf(`
  - name: %s
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 100us}`, name)
	}
	r := graph(t, 1, "5s", "[{name: worker, count: 2}]", services, `  - name: load
    target: front
    threads: 1`)
	for _, p := range r.Pods {
		if p.Service == "front" {
			continue
		}
		calls := edgeOf(t, r, "front", p.Service).Requests
		if d := p.Requests - calls/2; d < -1 || d > 1 {
			t.Errorf("%s answered %d of %s's %d calls, want half", p.Name, p.Requests, p.Service, calls)
		}
	}
}

// HTTP/2 calls run on the network model, as a client's HTTP/2 does: a call that
// times out resets its stream there (it used to find no network and panic).
func TestHTTP2CallsThatTimeOut(t *testing.T) {
	const src = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: calls}
spec:
  duration: 2s
  cluster:
    network: {latency: 100us}
  services:
  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 300us}
      calls: [{service: back, timeout: 20ms}]
      client: {library: go-net-http, connections: {protocol: http2}}
  - name: back
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 30ms}
  clients:
  - name: users
    target: front
    rate: 100/s
    timeout: 100ms
`
	r := runYAML(t, src)
	if ed := edgeOf(t, r, "front", "back"); ed.AttemptErrors.Timeout == 0 {
		t.Errorf("no call timed out: %+v", ed.AttemptErrors)
	}
}
