package sweep

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"trafficlab/report"
	"trafficlab/result"
)

// RunFunc runs points[point] with its repeat-th seed (0, 1, ...) and returns the
// result; a result marked interrupted did not finish. It is called from several
// goroutines at once.
type RunFunc func(point, repeat int) (*result.Result, error)

// Run runs every point seeds times on workers goroutines and tabulates the figures.
// Each run's seed is fixed by its point and repeat, never by which worker took it or
// when, so a sweep gives the same table on any number of cores. The first failure
// stops the sweep: runs under way finish, no new one starts. When ctx is done no
// new run starts either, and the sweep keeps the points every seed of which
// finished, marked interrupted.
func Run(ctx context.Context, axes []Axis, fixed []string, points []Point, seeds, workers int, run RunFunc) (*result.Sweep, error) {
	if seeds < 1 || workers < 1 {
		return nil, fmt.Errorf("sweep: %d seeds on %d workers", seeds, workers)
	}
	type job struct{ point, repeat int }
	jobs := make(chan job)
	o := newOutcomes(points, seeds)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := run(j.point, j.repeat)
				o.add(j.point, j.repeat, r, err)
			}
		}()
	}
dispatch:
	for p := range points {
		for k := range seeds {
			if o.failed() || ctx.Err() != nil {
				break dispatch
			}
			select {
			case jobs <- job{p, k}:
			case <-ctx.Done():
				break dispatch
			}
		}
	}
	close(jobs)
	wg.Wait()
	if o.err != nil {
		return nil, o.err
	}
	return o.sweep(axes, fixed), nil
}

// outcomes gathers the runs' figures as the workers finish them.
type outcomes struct {
	points  []Point
	seeds   int
	mu      sync.Mutex
	runs    [][]result.SweepRun // by point, then repeat
	done    []int               // runs of each point that finished
	first   *result.Result      // of the first finished run in grid order: names the sweep
	firstAt int
	err     error // the first run's failure
}

func newOutcomes(points []Point, seeds int) *outcomes {
	o := &outcomes{points: points, seeds: seeds, runs: make([][]result.SweepRun, len(points)),
		done: make([]int, len(points)), firstAt: len(points) * seeds}
	for i := range o.runs {
		o.runs[i] = make([]result.SweepRun, seeds)
	}
	return o
}

// add records a run's figures, or its failure when it is the first; an interrupted
// run counts as neither.
func (o *outcomes) add(point, repeat int, r *result.Result, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("%s: %w", describe(o.points[point]), err)
	}
	if err == nil && !r.Interrupted {
		o.runs[point][repeat] = result.SweepRun{Seed: r.Seed, Figures: figures(r)}
		o.done[point]++
		if at := point*o.seeds + repeat; at < o.firstAt {
			o.first, o.firstAt = r, at
		}
	}
}

// failed says whether a run has failed, which stops the sweep.
func (o *outcomes) failed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err != nil
}

// sweep tabulates the points every seed of which finished; fewer than planned
// marks the sweep interrupted.
func (o *outcomes) sweep(axes []Axis, fixed []string) *result.Sweep {
	sw := &result.Sweep{Fixed: fixed, Seeds: o.seeds}
	if o.first != nil {
		sw.Engine, sw.Scenario, sw.DurationS = o.first.Engine, o.first.Scenario, o.first.DurationS
	}
	for _, a := range axes {
		sw.Parameters = append(sw.Parameters, a.Path)
	}
	for i, p := range o.points {
		if o.done[i] < o.seeds {
			continue // interrupted: a point is kept only with every seed
		}
		sp := aggregate(o.runs[i])
		sp.Values = p.Values
		sw.Points = append(sw.Points, sp)
	}
	if len(sw.Points) < len(o.points) {
		sw.Interrupted, sw.PlannedPoints = true, len(o.points)
	}
	return sw
}

func describe(p Point) string {
	if len(p.Sets) == 0 {
		return "the scenario"
	}
	return fmt.Sprintf("the point %v", p.Sets)
}

// figures are a run's figures: every one of report.Figures, and when its services
// call services, theirs (report.GraphFigures).
func figures(r *result.Result) map[string]float64 {
	out := make(map[string]float64, len(report.Figures))
	for _, f := range slices.Concat(report.Figures, report.GraphFigures(r)) {
		out[f.Name] = f.Of(r)
	}
	return out
}

// aggregate sums a point's runs up: the mean, the sample standard deviation (n−1,
// since the seeds are a sample of the runs the point could have had), min and max.
func aggregate(runs []result.SweepRun) result.SweepPoint {
	sp := result.SweepPoint{Runs: runs, Mean: map[string]float64{}, SD: map[string]float64{},
		Min: map[string]float64{}, Max: map[string]float64{}}
	n := float64(len(runs))
	for _, f := range report.Figures {
		aggregateFigure(&sp, runs, f.Name, n)
	}
	// A point's runs share their scenario, and so their services and calls.
	var graph []string
	for name := range runs[0].Figures {
		if _, static := sp.Mean[name]; !static {
			graph = append(graph, name)
		}
	}
	slices.Sort(graph)
	for _, name := range graph {
		aggregateFigure(&sp, runs, name, n)
	}
	return sp
}

// aggregateFigure sums up one figure over a point's runs.
func aggregateFigure(sp *result.SweepPoint, runs []result.SweepRun, name string, n float64) {
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, r := range runs {
		v := r.Figures[name]
		sum += v
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	mean := sum / n
	ss := 0.0
	for _, r := range runs {
		d := r.Figures[name] - mean
		ss += d * d
	}
	sd := 0.0 // exactly, when every run agrees: no ±0.0µs of rounding
	if n > 1 && hi > lo {
		sd = math.Sqrt(ss / (n - 1))
	}
	sp.Mean[name], sp.SD[name], sp.Min[name], sp.Max[name] = mean, sd, lo, hi
}
