package simulate

import (
	"context"
	"reflect"
	"testing"
	"time"

	"trafficlab/sim"
)

// An interrupted run ends at the simulated time reached and its Result is the one
// a run of that length gives: the same requests, latencies and pods, rates over
// the time run and not over the time planned.
func TestInterruptedRunCoversTheTimeRun(t *testing.T) {
	for _, stopAt := range []time.Duration{3 * time.Second, 7 * time.Second} {
		ctx, cancel := context.WithCancel(context.Background())
		e := build(t, opts{duration: "10s", replicas: 3, client: "    threads: 4"})
		e.RunContext(ctx, func(now, end sim.Time) {
			if now >= sim.Duration(stopAt) {
				cancel()
			}
		})
		cancel()
		got := e.Result()
		want := run(t, opts{duration: stopAt.String(), replicas: 3, client: "    threads: 4"})

		interrupted, planned := e.Interrupted()
		if !interrupted || planned != sim.Duration(10*time.Second) {
			t.Errorf("stopped at %v: Interrupted() = %v, %v; want true, 10s", stopAt, interrupted, planned)
		}
		if got.DurationS != stopAt.Seconds() {
			t.Errorf("stopped at %v: duration_s %v", stopAt, got.DurationS)
		}
		if got.Requests.Total == 0 {
			t.Fatalf("stopped at %v: no request ran", stopAt)
		}
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"requests", got.Requests, want.Requests},
			{"throughput", got.ThroughputRPS, want.ThroughputRPS},
			{"rate", got.RateRPS, want.RateRPS},
			{"latency", got.LatencyMS, want.LatencyMS},
			{"pods", podCounts(got), podCounts(want)},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("stopped at %v: %s %+v, a run of that length %+v", stopAt, f.name, f.got, f.want)
			}
		}
	}
}

// A run that is not interrupted says so, however the run is sliced.
func TestUninterruptedRunIsNotMarked(t *testing.T) {
	e := build(t, opts{duration: "2s", replicas: 2, client: "    threads: 2"})
	e.RunContext(context.Background(), nil)
	if interrupted, _ := e.Interrupted(); interrupted || e.Result().DurationS != 2 {
		t.Errorf("Interrupted() = %v, duration_s %v; want false, 2", interrupted, e.Result().DurationS)
	}
}
