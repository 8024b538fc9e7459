package sweep_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/simulate"
	"trafficlab/sweep"
)

// reference is `make bench`'s reference scenario (simulate/bench_test.go) at 60 s:
// 20 closed-loop threads with per-thread keep-alive connections to 5 pods of 1 ms.
const reference = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: reference}
spec:
  duration: 60s
  seed: 1
  cluster:
    proxyMode: iptables
    nodes: [{name: worker, count: 3, cpu: "64"}]
    network: {latency: 100us}
  services:
  - name: web
    replicas: 5
    pod:
      cpu: "1"
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: caller
    target: web
    threads: 20
    library: dotnet-httpclient
    connections: {reuse: per-thread}
`

// BenchmarkSweep runs issue 6's 20-point sweep (replicas 5 to 24) one run at a time,
// then on every core, and reports both wall times and the speed-up. Run with
// -benchtime 1x and without GOMAXPROCS=1.
func BenchmarkSweep(b *testing.B) {
	axis, err := sweep.ParseSet("spec.services[0].replicas=5..24")
	if err != nil {
		b.Fatal(err)
	}
	axes := []sweep.Axis{axis}
	points := sweep.Grid(axes)
	var requests int64
	run := func(point, repeat int) (*result.Result, error) {
		sc, _, diags := scenario.Load("reference.yaml", []byte(reference), points[point].Sets)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		e, err := simulate.New(sc)
		if err != nil {
			return nil, err
		}
		e.Run(nil)
		return e.Result(), nil
	}
	wall := func(workers int) float64 {
		start := time.Now()
		sw, err := sweep.Run(context.Background(), axes, nil, points, 1, workers, run)
		if err != nil {
			b.Fatal(err)
		}
		requests = 0
		for _, p := range sw.Points {
			requests += int64(p.Mean["requests"])
		}
		return time.Since(start).Seconds()
	}
	for i := 0; i < b.N; i++ {
		serial := wall(1)
		parallel := wall(runtime.GOMAXPROCS(0))
		b.ReportMetric(serial, "serial_s")
		b.ReportMetric(parallel, "parallel_s")
		b.ReportMetric(serial/parallel, "speedup")
		b.ReportMetric(float64(requests)/parallel, "simreq/s")
		b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
	}
}
