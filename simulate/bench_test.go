package simulate

import (
	"runtime"
	"testing"
	"time"

	"trafficlab/sim"
)

// The reference scenarios of `make bench`. "reference" is the one issue 2 sets a target
// for: 5 pods, 20 closed-loop threads with per-thread keep-alive connections, 1 ms
// exponential service time, 0.1 ms one-way latency, 60 s.
const benchPod = "      cpu: \"1\"\n      serviceTime: {distribution: exponential, mean: 1ms}"

var benchScenarios = []struct {
	name string
	opts opts
}{
	{"reference-60s", opts{duration: "60s", seed: 1, nodes: `[{name: worker, count: 3, cpu: "64"}]`, replicas: 5, pod: benchPod,
		client: "    threads: 20\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}"}},
	{"reference-1h", opts{duration: "1h", seed: 1, nodes: `[{name: worker, count: 3, cpu: "64"}]`, replicas: 5, pod: benchPod,
		client: "    threads: 20\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}"}},
	{"curl-loop-60s", opts{duration: "60s", seed: 1, nodes: `[{name: worker, count: 3, cpu: "64"}]`, replicas: 5, pod: benchPod,
		client: "    threads: 20\n    library: curl-loop"}},
	// Load ramps 5,000 → 40,000 rps and back over 10 minutes; the HPA follows it with
	// pods that start, get ready, drain and go, and the client recycles connections.
	{"hpa-ramp-10m", opts{duration: "10m", seed: 1, nodes: `[{name: worker, count: 20, cpu: "16"}]`, replicas: 8,
		pod: benchPod + "\n      onSigterm: {action: drain}\n      lifecycle: {preStop: {sleep: {seconds: 5}}}",
		service: "    autoscaler:\n      minReplicas: 4\n      maxReplicas: 100\n" +
			"      controller: {downscaleStabilization: 30s}\n" +
			"      metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]",
		client: "    library: dotnet-httpclient\n    connections: {maxLifetime: 10s}\n    phases:\n" +
			"    - {duration: 5m, rate: 5000/s, rampTo: 40000/s}\n    - {duration: 5m, rate: 40000/s, rampTo: 5000/s}"}},
	{"large-1000pods-10000threads-10s", opts{duration: "10s", seed: 1, nodes: `[{name: worker, count: 50, cpu: "64"}]`, replicas: 1000, pod: benchPod,
		client: "    replicas: 100\n    threads: 100\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}"}},
}

// BenchmarkScenarios prints simulated requests per wall second and the peak heap for
// each reference scenario. Run with -benchtime 1x: one run is one full simulation.
func BenchmarkScenarios(b *testing.B) {
	for _, bs := range benchScenarios {
		b.Run(bs.name, func(b *testing.B) { measure(b, func() *Engine { return build(b, bs.opts) }) })
	}
}

// The published investigations at their full length: R5 is 3 million requests through
// two proxies; R4 is 15 minutes at 1,000 requests a second over 3 % loss, every
// segment modelled.
var benchExamples = []struct {
	name, file string
	sets       []string
}{
	{"r5-both-sidecars-300s", "r5-sidecar-concurrency.yaml", nil},
	{"r5-concurrency-16-300s", "r5-sidecar-concurrency.yaml", []string{"spec.clients[0].sidecar.concurrency=16"}},
	{"r4-loss-3pct-http1-15m", "r4-http2-vs-http1-loss.yaml", []string{"spec.duration=15m", "spec.clients[0].sidecar.upstreamProtocol=http1"}},
	{"r4-loss-3pct-http2-15m", "r4-http2-vs-http1-loss.yaml", []string{"spec.duration=15m"}},
	// Issue 5's budget: R3 for 24 simulated hours in under 5 minutes on one core, the
	// heap no bigger than after 1 hour.
	{"r3-noisy-neighbour-1h", "r3-noisy-neighbour.yaml", []string{"spec.duration=1h"}},
	{"r3-noisy-neighbour-24h", "r3-noisy-neighbour.yaml", nil},
	// Issue 19's budget: the three-tier shop (4 hops a request) at its peak rate, at
	// least 1.5 M hops per wall second on one core, the heap flat with simulated time
	// but for the per-second timeline, which stops growing at 3,600 points (1 h).
	{"shop-600rps-10s", "calls-three-tier-shop.yaml", shopSteady("10s")},
	{"shop-600rps-1h", "calls-three-tier-shop.yaml", shopSteady("1h")},
	{"shop-600rps-2h", "calls-three-tier-shop.yaml", shopSteady("2h")},
}

// shopSteady is the shop at a steady 600 requests a second for duration.
func shopSteady(duration string) []string {
	return []string{"spec.duration=" + duration, "spec.clients[0].phases=[{rate: 600/s, duration: " + duration + "}]"}
}

func BenchmarkExamples(b *testing.B) {
	for _, be := range benchExamples {
		b.Run(be.name, func(b *testing.B) { measure(b, func() *Engine { return buildExample(b, be.file, be.sets...) }) })
	}
}

func measure(b *testing.B, make func() *Engine) {
	var requests, hops int64
	var events uint64
	var peak uint64
	var wall time.Duration
	var scaleEvents int
	for i := 0; i < b.N; i++ {
		runtime.GC()
		e := make()
		start := time.Now()
		var ms runtime.MemStats
		tick := 0
		e.Run(func(now, end sim.Time) {
			// Sampling the heap costs a stop-the-world; every 60 simulated seconds is enough.
			if tick++; tick%60 == 0 || now == end {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		})
		wall += time.Since(start)
		r := e.Result()
		requests += r.Requests.Total
		hops += e.Requests()
		scaleEvents = len(r.ScaleEvents)
		events += e.Events()
	}
	b.ReportMetric(float64(requests)/wall.Seconds()/1e6, "Msimreq/s")
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s")
	b.ReportMetric(float64(events)/float64(requests), "events/req")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(requests)/float64(b.N), "requests")
	if hops > requests+requests/10 {
		// Services call services: every request at a pod, the calls' included.
		b.ReportMetric(float64(hops)/wall.Seconds()/1e6, "Mhops/s")
	}
	if scaleEvents > 0 {
		b.ReportMetric(float64(scaleEvents), "scale-events")
	}
}
