package simulate

import (
	"fmt"
	"math"
	"testing"

	"trafficlab/examples"
	"trafficlab/scenario"
)

func runExample(t *testing.T, name string, sets ...string) *Engine {
	t.Helper()
	data, err := examples.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	sc, _, diags := scenario.Load(name, data, sets)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	e.Run(nil)
	return e
}

// R2: 100 concurrent requests, a new connection each, 1 ms of CPU, three 2-core nodes.
// Random picks give every pod the same request rate, so the slowest pods set the
// pace: throughput = pods × the rate of a pod on the most crowded node, where a node
// with m pods gives each min(2, 2/m) cores. With 100 requests in flight every pod is
// saturated, so the closed loop runs within a few per cent below that bound; above it
// only by the luck of the draws: a pod's sample mean of N exponential service times
// has a relative standard error of 1/√N, and 3 of those are allowed.
func TestR2ThroughputFollowsTheMostCrowdedNode(t *testing.T) {
	for pods := 1; pods <= 6; pods++ {
		crowded := math.Ceil(float64(pods) / 3)
		want := float64(pods) * 1000 * math.Min(2, 2/crowded)
		e := runExample(t, "r2-ab-pods-on-3-nodes.yaml", fmt.Sprintf("spec.services[0].replicas=%d", pods), "spec.duration=10s")
		got := e.Result().ThroughputRPS
		perPod := got * 10 / float64(pods)
		if got > want*(1+3/math.Sqrt(perPod)) || got < 0.95*want {
			t.Errorf("%d pods: %.0f rps, want just under %.0f", pods, got, want)
		}
	}
}

// R1: one reused connection pins all traffic to one pod; a curl loop spreads it.
func TestR1ReuseDecidesTheSpread(t *testing.T) {
	one := runExample(t, "r1-reused-client-1-thread.yaml", "spec.duration=5s").Result()
	busy := 0
	for _, p := range one.Pods {
		if p.Requests > 0 {
			busy++
		}
	}
	if busy != 1 {
		t.Errorf("one reused connection reached %d pods, want 1", busy)
	}
	curl := runExample(t, "r1-curl-loop.yaml", "spec.duration=60s").Result()
	if x := chiSquare(podCounts(curl)); x > 18.47 {
		t.Errorf("curl loop: chi-square %.1f over 18.47 (df 4, p = 0.001): %v", x, podCounts(curl))
	}
}
