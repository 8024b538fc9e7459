package simulate

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// The text report's advice and claims are chosen from what the run shows: each is
// checked on a run where it must appear and one where it must not.
func TestAdviceFitsTheRun(t *testing.T) {
	const (
		moreConns = "open more connections than pods"
		saturated = "wait for CPU there while the other pods have room"
		allBusy   = "every other pod's CPU is spent too"
		idle      = "Idle pods:"
		busy      = "5 pods finished no request but had 10 requests in progress at the end."
	)
	for _, c := range []struct {
		name      string
		r         func(t *testing.T) *result.Result
		want, not []string
	}{
		// 20 connections over 5 pods already; the pod holding most of them is at 100 %,
		// and so is every node: the others have no room either, and the busiest pod
		// has a node to itself (the caller's own CPU left out, so that it takes none).
		{"20 connections, 5 pods", func(t *testing.T) *result.Result {
			return runExample(t, "r1-shared-client-20-threads.yaml", "spec.duration=10s", "spec.clients[0].work.perRequest=0s").Result()
		}, []string{allBusy, "webapp1-0 has the 2 cores of aks-1 to itself", "More connections than pods are open already"}, []string{moreConns, idle, saturated}},
		// One connection for 5 pods: 4 idle, and the one pod has CPU to spare.
		{"1 connection, 5 pods", func(t *testing.T) *result.Result {
			return runExample(t, "r1-reused-client-1-thread.yaml", "spec.duration=10s").Result()
		}, []string{moreConns, "Idle pods: 4 of 5 got no request."}, []string{saturated, allBusy, "More connections than pods are open already"}},
		// A second of a run whose requests take 3 s: IPVS round robin hands each pod
		// 2 of the 10 connections, and none finishes.
		{"nothing finished yet", func(t *testing.T) *result.Result {
			return run(t, opts{replicas: 5, duration: "1s", mode: "ipvs", cluster: "    ipvsScheduler: rr",
				pod: "      serviceTime: {distribution: constant, value: 3s}", client: "    threads: 10"})
		}, []string{busy}, []string{idle}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report.Text(&b, c.r(t)); err != nil {
				t.Fatal(err)
			}
			// Paragraphs are wrapped: compare with the line breaks as spaces.
			out := strings.Join(strings.Fields(b.String()), " ")
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("the report lacks %q:\n%s", w, b.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("the report says %q:\n%s", n, b.String())
				}
			}
		})
	}
}

// Every request sent is in the total, still in flight at the end, or abandoned by
// an aborted run; and the pods can have finished more than the clients counted
// only by requests in none of the totals, which the report's note names.
func TestRequestsSentAddUp(t *testing.T) {
	for _, c := range []struct {
		name      string
		r         func(t *testing.T) *result.Result
		abandoned bool
	}{
		{"ab aborts at scale-in", func(t *testing.T) *result.Result {
			return runExample(t, "r2-rapid-scaling.yaml", "spec.clients[0].repeat=3").Result()
		}, true},
		{"overload", func(t *testing.T) *result.Result {
			return run(t, opts{replicas: 2, duration: "10s", pod: overloadPod, client: "    rate: 1200/s\n    timeout: 500ms"})
		}, false},
	} {
		r := c.r(t)
		q := r.Requests
		// RateRPS is rounded to 3 decimals.
		if sent := r.RateRPS * r.DurationS; math.Abs(sent-float64(q.Total+q.InFlight+q.Abandoned)) > 0.0005*r.DurationS+0.5 {
			t.Errorf("%s: %.1f sent, but total %d + in flight %d + abandoned %d", c.name, sent, q.Total, q.InFlight, q.Abandoned)
		}
		if got := q.Abandoned > 0; got != c.abandoned {
			t.Errorf("%s: %d abandoned, want some: %v", c.name, q.Abandoned, c.abandoned)
		}
		var finished, counted int64
		for _, p := range r.Pods {
			finished += p.Requests
		}
		for _, cl := range r.Clients {
			counted += cl.Requests + cl.Errors
		}
		if extra := finished - counted; extra > q.InFlight+q.Abandoned {
			t.Errorf("%s: pods finished %d more than the clients counted, more than the %d in flight and %d abandoned",
				c.name, extra, q.InFlight, q.Abandoned)
		}
	}
}
