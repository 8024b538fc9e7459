package sweep

import (
	"context"
	"fmt"
	"math"
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
	runs := make([][]result.SweepRun, len(points))
	done := make([]int, len(points)) // runs of each point that finished
	for i := range runs {
		runs[i] = make([]result.SweepRun, seeds)
	}
	var (
		mu       sync.Mutex
		firstErr error
		first    *result.Result // of the first finished run in grid order: names the sweep
		firstAt  = len(points) * seeds
		wg       sync.WaitGroup
	)
	stopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil || ctx.Err() != nil
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := run(j.point, j.repeat)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("%s: %w", describe(points[j.point]), err)
				}
				if err == nil && !r.Interrupted {
					runs[j.point][j.repeat] = result.SweepRun{Seed: r.Seed, Figures: figures(r)}
					done[j.point]++
					if at := j.point*seeds + j.repeat; at < firstAt {
						first, firstAt = r, at
					}
				}
				mu.Unlock()
			}
		}()
	}
dispatch:
	for p := range points {
		for k := range seeds {
			if stopped() {
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
	if firstErr != nil {
		return nil, firstErr
	}
	sw := &result.Sweep{Fixed: fixed, Seeds: seeds}
	if first != nil {
		sw.Engine, sw.Scenario, sw.DurationS = first.Engine, first.Scenario, first.DurationS
	}
	for _, a := range axes {
		sw.Parameters = append(sw.Parameters, a.Path)
	}
	for i, p := range points {
		if done[i] < seeds {
			continue // interrupted: a point is kept only with every seed
		}
		sp := aggregate(runs[i])
		sp.Values = p.Values
		sw.Points = append(sw.Points, sp)
	}
	if len(sw.Points) < len(points) {
		sw.Interrupted, sw.PlannedPoints = true, len(points)
	}
	return sw, nil
}

func describe(p Point) string {
	if len(p.Sets) == 0 {
		return "the scenario"
	}
	return fmt.Sprintf("the point %v", p.Sets)
}

func figures(r *result.Result) map[string]float64 {
	out := make(map[string]float64, len(report.Figures))
	for _, f := range report.Figures {
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
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, r := range runs {
			v := r.Figures[f.Name]
			sum += v
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		mean := sum / n
		ss := 0.0
		for _, r := range runs {
			d := r.Figures[f.Name] - mean
			ss += d * d
		}
		sd := 0.0 // exactly, when every run agrees: no ±0.0µs of rounding
		if n > 1 && hi > lo {
			sd = math.Sqrt(ss / (n - 1))
		}
		sp.Mean[f.Name], sp.SD[f.Name], sp.Min[f.Name], sp.Max[f.Name] = mean, sd, lo, hi
	}
	return sp
}
