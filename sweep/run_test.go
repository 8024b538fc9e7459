package sweep

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"trafficlab/result"
)

// fake stands in for an engine: its figures name the point and repeat it ran.
func fake(point, repeat int) (*result.Result, error) {
	return &result.Result{Engine: "fake", Scenario: "s", DurationS: 60, Seed: int64(100*point + repeat),
		Requests:  result.Requests{Total: int64(1000 * (point + 1))},
		LatencyMS: result.Latency{P99: float64(10*point + repeat)}}, nil
}

func TestRunPlacesEveryRunAndIgnoresScheduling(t *testing.T) {
	axes := []Axis{{"a", []string{"1", "2", "3"}}, {"b", []string{"x", "y"}}}
	points := Grid(axes)
	one, err := Run(context.Background(), axes, []string{"c=1"}, points, 3, 1, fake)
	if err != nil {
		t.Fatal(err)
	}
	many, err := Run(context.Background(), axes, []string{"c=1"}, points, 3, 4, fake)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, many) {
		t.Error("1 worker and 4 workers tabulated different sweeps")
	}
	if len(many.Points) != 6 || many.Seeds != 3 || many.Engine != "fake" || !reflect.DeepEqual(many.Parameters, []string{"a", "b"}) {
		t.Fatalf("sweep %+v", many)
	}
	for i, p := range many.Points {
		if !reflect.DeepEqual(p.Values, points[i].Values) {
			t.Errorf("point %d values %q, want %q", i, p.Values, points[i].Values)
		}
		for k, r := range p.Runs {
			if r.Seed != int64(100*i+k) || r.Figures["p99_ms"] != float64(10*i+k) {
				t.Errorf("point %d run %d: seed %d p99 %v", i, k, r.Seed, r.Figures["p99_ms"])
			}
		}
	}
}

func TestRunStopsAtTheFirstFailure(t *testing.T) {
	points := Grid([]Axis{{"a", []string{"1", "2", "3", "4", "5", "6", "7", "8"}}})
	var calls atomic.Int32
	_, err := Run(context.Background(), []Axis{{"a", nil}}, nil, points, 1, 1, func(point, repeat int) (*result.Result, error) {
		calls.Add(1)
		if point == 1 {
			return nil, errors.New("no nodes")
		}
		return fake(point, repeat)
	})
	if err == nil || !strings.Contains(err.Error(), "[a=2]: no nodes") {
		t.Fatalf("error %v, want the failing point named", err)
	}
	// One worker: the failure is recorded before the worker takes point 2, and the
	// sweep checks for failures before handing out point 3. 3 calls at most, not 8.
	if n := calls.Load(); n > 3 {
		t.Errorf("%d runs started after a failure", n)
	}
}

func TestAggregate(t *testing.T) {
	var runs []result.SweepRun
	for _, v := range []float64{1, 2, 3, 4} {
		runs = append(runs, result.SweepRun{Figures: map[string]float64{"p99_ms": v}})
	}
	p := aggregate(runs)
	// Sample standard deviation of 1..4: sqrt((2.25+0.25+0.25+2.25)/3).
	if p.Mean["p99_ms"] != 2.5 || math.Abs(p.SD["p99_ms"]-math.Sqrt(5.0/3)) > 1e-12 ||
		p.Min["p99_ms"] != 1 || p.Max["p99_ms"] != 4 {
		t.Errorf("aggregate %v %v %v %v", p.Mean["p99_ms"], p.SD["p99_ms"], p.Min["p99_ms"], p.Max["p99_ms"])
	}
	if one := aggregate(runs[:1]); one.SD["p99_ms"] != 0 || one.Mean["p99_ms"] != 1 {
		t.Errorf("one seed: sd %v mean %v, want 0 and 1", one.SD["p99_ms"], one.Mean["p99_ms"])
	}
}

// An interrupted sweep keeps the points every seed of which finished, in grid
// order, and says how many were planned; a run started after the interruption
// stops at once, as an engine watching the context does, and is not kept.
func TestInterruptedSweepKeepsTheFinishedPoints(t *testing.T) {
	axes := []Axis{{"a", []string{"1", "2", "3", "4", "5", "6"}}}
	points := Grid(axes)
	for _, workers := range []int{1, 3} {
		ctx, cancel := context.WithCancel(context.Background())
		sw, err := Run(ctx, axes, nil, points, 2, workers, func(point, repeat int) (*result.Result, error) {
			if point == 3 && repeat == 1 {
				cancel()
			}
			if ctx.Err() != nil {
				return &result.Result{Interrupted: true}, nil
			}
			return fake(point, repeat)
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !sw.Interrupted || sw.PlannedPoints != len(points) || sw.Engine != "fake" {
			t.Errorf("%d workers: interrupted %v, planned %d, engine %q; want true, %d, fake", workers, sw.Interrupted, sw.PlannedPoints, sw.Engine, len(points))
		}
		var kept []string
		for _, p := range sw.Points {
			kept = append(kept, p.Values[0])
			if len(p.Runs) != 2 || p.Runs[1].Seed != p.Runs[0].Seed+1 {
				t.Errorf("%d workers: point %v kept with runs %+v", workers, p.Values, p.Runs)
			}
		}
		// One worker runs in grid order: points 1 to 3 finished, point 4 was cut
		// short. Several may have left any earlier run unfinished too, but never keep
		// point 4 nor put the kept ones out of order.
		if workers == 1 && !reflect.DeepEqual(kept, []string{"1", "2", "3"}) {
			t.Errorf("1 worker: kept %v, want [1 2 3]", kept)
		}
		if slices.Contains(kept, "4") || !slices.IsSorted(kept) {
			t.Errorf("%d workers: kept %v", workers, kept)
		}
	}
}

// A sweep whose context ends after its last run finished is whole, not interrupted.
func TestSweepDoneBeforeTheInterruptionIsWhole(t *testing.T) {
	axes := []Axis{{"a", []string{"1", "2"}}}
	ctx, cancel := context.WithCancel(context.Background())
	sw, err := Run(ctx, axes, nil, Grid(axes), 1, 1, func(point, repeat int) (*result.Result, error) {
		if point == 1 {
			cancel() // the last run, finishing
		}
		return fake(point, repeat)
	})
	cancel()
	if err != nil || sw.Interrupted || sw.PlannedPoints != 0 || len(sw.Points) != 2 {
		t.Errorf("err %v, interrupted %v, planned %d, %d points; want a whole sweep of 2", err, sw.Interrupted, sw.PlannedPoints, len(sw.Points))
	}
}
