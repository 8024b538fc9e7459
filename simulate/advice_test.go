package simulate

import (
	"bytes"
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
		idle      = "Idle pods:"
		busy      = "5 pods finished no request but had 10 requests in progress at the end."
	)
	for _, c := range []struct {
		name      string
		r         func(t *testing.T) *result.Result
		want, not []string
	}{
		// 20 connections over 5 pods already; the pod holding most of them is at 100 %.
		{"20 connections, 5 pods", func(t *testing.T) *result.Result {
			return runExample(t, "r1-shared-client-20-threads.yaml", "spec.duration=10s").Result()
		}, []string{saturated, "More connections than pods are open already"}, []string{moreConns, idle}},
		// One connection for 5 pods: 4 idle, and the one pod has CPU to spare.
		{"1 connection, 5 pods", func(t *testing.T) *result.Result {
			return runExample(t, "r1-reused-client-1-thread.yaml", "spec.duration=10s").Result()
		}, []string{moreConns, "Idle pods: 4 of 5 got no request."}, []string{saturated, "More connections than pods are open already"}},
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
