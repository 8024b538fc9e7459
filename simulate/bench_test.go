package simulate

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"trafficlab/scenario"
	"trafficlab/sim"
)

// The reference scenarios of `make bench`. "reference" is the one issue 2 sets a target
// for: 5 pods, 20 closed-loop threads with per-thread keep-alive connections, 1 ms
// exponential service time, 0.1 ms one-way latency, 60 s.
var benchScenarios = []struct {
	name, duration string
	replicas       int
	pod, client    string
	nodes          int
}{
	{"reference-60s", "60s", 5,
		"      cpu: \"1\"\n      serviceTime: {distribution: exponential, mean: 1ms}",
		"    threads: 20\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}", 3},
	{"reference-1h", "1h", 5,
		"      cpu: \"1\"\n      serviceTime: {distribution: exponential, mean: 1ms}",
		"    threads: 20\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}", 3},
	{"curl-loop-60s", "60s", 5,
		"      cpu: \"1\"\n      serviceTime: {distribution: exponential, mean: 1ms}",
		"    threads: 20\n    library: curl-loop", 3},
	{"large-1000pods-10000threads-10s", "10s", 1000,
		"      cpu: \"1\"\n      serviceTime: {distribution: exponential, mean: 1ms}",
		"    replicas: 100\n    threads: 100\n    library: dotnet-httpclient\n    connections: {reuse: per-thread}", 50},
}

const benchBase = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: %s}
spec:
  duration: %s
  seed: 1
  cluster:
    nodes: [{name: worker, count: %d, cpu: "64"}]
    network: {latency: 100us}
  services:
  - name: web
    replicas: %d
    pod:
%s
  clients:
  - name: caller
    target: web
%s
`

// BenchmarkScenarios prints simulated requests per wall second and the peak heap for
// each reference scenario. Run with -benchtime 1x: one run is one full simulation.
func BenchmarkScenarios(b *testing.B) {
	for _, bs := range benchScenarios {
		b.Run(bs.name, func(b *testing.B) {
			src := fmt.Sprintf(benchBase, bs.name, bs.duration, bs.nodes, bs.replicas, bs.pod, bs.client)
			sc, _, diags := scenario.Load(bs.name, []byte(src), nil)
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			var requests int64
			var events uint64
			var peak uint64
			var wall time.Duration
			for i := 0; i < b.N; i++ {
				runtime.GC()
				e, err := New(sc)
				if err != nil {
					b.Fatal(err)
				}
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
				events += e.Events()
			}
			b.ReportMetric(float64(requests)/wall.Seconds()/1e6, "Msimreq/s")
			b.ReportMetric(float64(events)/float64(requests), "events/req")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(requests)/float64(b.N), "requests")
		})
	}
}
