package simulate

import (
	"context"
	"encoding/json"
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

// A slice of simulated time too dense to finish soon is cut short by the kernel:
// at 200 million requests a simulated second a 10 ms slice is two million
// requests, seconds of work at a microsecond or so each, and the run still stops
// within the second it may take, its Result whole.
func TestInterruptCutsADenseSliceShort(t *testing.T) {
	e := build(t, opts{duration: "1h", replicas: 50, client: "    replicas: 100\n    rate: 2000000/s"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	defer cancel()
	done := make(chan struct{})
	var cancelled time.Time
	go func() {
		e.RunContext(ctx, nil)
		close(done)
	}()
	<-ctx.Done()
	cancelled = time.Now()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after the interruption")
	}
	took := time.Since(cancelled)
	r := e.Result()
	// On a busy machine the first requests may not have finished: they were sent.
	if interrupted, _ := e.Interrupted(); !interrupted || r.DurationS <= 0 || r.DurationS >= 3600 || e.Requests() == 0 {
		t.Fatalf("interrupted %v, covered %v s, %d requests sent", interrupted, r.DurationS, e.Requests())
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("the Result does not encode: %v", err)
	}
	t.Logf("stopped %v after the interruption, at %v s simulated", took, r.DurationS)
	if took > time.Second {
		t.Errorf("stopped %v after the interruption, want within 1 s", took)
	}
}

// A run interrupted before it starts covers next to nothing and still encodes:
// no rate divides by zero.
func TestInterruptBeforeTheStart(t *testing.T) {
	e := build(t, opts{duration: "1h", replicas: 2, client: "    threads: 2"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.RunContext(ctx, nil)
	r := e.Result()
	if interrupted, _ := e.Interrupted(); !interrupted || r.DurationS <= 0 || r.DurationS > pollEvery.Seconds() {
		t.Errorf("interrupted %v, covered %v s; want true, at most %v s", interrupted, r.DurationS, pollEvery.Seconds())
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("the Result does not encode: %v", err)
	}
}
