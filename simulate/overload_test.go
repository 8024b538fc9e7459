package simulate

import (
	"bytes"
	"html"
	"math"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// overloadPod is 2 ms of CPU a request under a 1-core limit: a pod serves 500/s.
const overloadPod = "      serviceTime: {distribution: exponential, mean: 2ms}\n      resources: {limits: {cpu: \"1\"}}"

// An open-loop client offering more than the pods can serve is diagnosed as
// overload: offered against served rate, the CPU that ran out, and the replicas
// that would carry the load; a service that keeps up, a scale-in's errors and a
// sidecar's cap are not. The text and the page say what the Result says.
func TestOverloadIsDiagnosed(t *testing.T) {
	for _, c := range []struct {
		name     string
		r        func(t *testing.T) *result.Result
		overload bool
		// what saturated, the offered and served rates, the CPU per request (ms)
		saturated               string
		offered, served, cpuReq float64
	}{
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
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r(t)
			var text, page bytes.Buffer
			if err := report.Text(&text, r); err != nil {
				t.Fatal(err)
			}
			if err := report.HTML(&page, r, report.HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, out := range []string{text.String(), explanationPanel(t, page.String())} {
				if got := strings.Contains(out, "Overload: web was offered"); got != c.overload {
					t.Errorf("overload section: %v, want %v:\n%s", got, c.overload, text.String())
				}
			}
			if got := len(r.Overloads) > 0; got != c.overload {
				t.Fatalf("overloads %+v, want overload: %v", r.Overloads, c.overload)
			}
			if !c.overload {
				return
			}
			if strings.Contains(text.String(), "caused by pods being removed") {
				t.Errorf("an overload is blamed on pod removal:\n%s", text.String())
			}
			o := r.Overloads[0]
			// Poisson arrivals: N = rate × 10 s of them, a relative standard deviation
			// of 1/√N; 4 of them allowed. The pods serve at capacity, within the same
			// sampling error of the mean service time.
			near := func(name string, got, want float64) {
				if math.Abs(got-want) > 4*want/math.Sqrt(10*c.served) {
					t.Errorf("%s %.4g, want %.4g within 4σ", name, got, want)
				}
			}
			near("offered", o.OfferedRPS, c.offered)
			near("served", o.ServedRPS, c.served)
			near("CPU per request (ms)", o.CPUPerRequestMS, c.cpuReq)
			if len(o.Saturated) != 1 || o.Saturated[0] != c.saturated {
				t.Errorf("overload %+v: want %s saturated", o, c.saturated)
			}
			if c.saturated == "node_cpu" {
				if o.ReplicasNeeded != 0 || o.Sweep != "" || !strings.Contains(text.String(), "Fix: more cores.") {
					t.Errorf("overload %+v: want more cores, not more replicas", o)
				}
				return
			}
			// CPU: 1,200/s × 2 ms = 2.4 cores at 1 core a pod; workers: 5.05 at 2 a
			// pod. Either way ⌊x⌋+1 = 3 pods.
			if o.ReplicasNeeded != 3 || o.Replicas != 2 {
				t.Errorf("overload %+v: want 3 replicas needed of 2", o)
			}
			want := "trafficlab sweep FILE --set 'spec.services[0].replicas=3..4' --find 'min spec.services[0].replicas where errors == 0'"
			if o.Sweep != want || !strings.Contains(text.String(), want) {
				t.Errorf("sweep %q, want %q", o.Sweep, want)
			}
		})
	}
}

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
