package sweep

import (
	"fmt"
	"math"
	"sync"

	"trafficlab/report"
	"trafficlab/result"
)

// RunFunc runs points[point] with its repeat-th seed (0, 1, ...) and returns the
// result. It is called from several goroutines at once.
type RunFunc func(point, repeat int) (*result.Result, error)

// Run runs every point seeds times on workers goroutines and tabulates the figures.
// Each run's seed is fixed by its point and repeat, never by which worker took it or
// when, so a sweep gives the same table on any number of cores. The first failure
// stops the sweep: runs under way finish, no new one starts.
func Run(axes []Axis, fixed []string, points []Point, seeds, workers int, run RunFunc) (*result.Sweep, error) {
	if seeds < 1 || workers < 1 {
		return nil, fmt.Errorf("sweep: %d seeds on %d workers", seeds, workers)
	}
	type job struct{ point, repeat int }
	jobs := make(chan job)
	runs := make([][]result.SweepRun, len(points))
	for i := range runs {
		runs[i] = make([]result.SweepRun, seeds)
	}
	var (
		mu       sync.Mutex
		firstErr error
		first    *result.Result // of the first point's first run: names the sweep
		wg       sync.WaitGroup
	)
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
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
				if err == nil {
					runs[j.point][j.repeat] = result.SweepRun{Seed: r.Seed, Figures: figures(r)}
					if j.point == 0 && j.repeat == 0 {
						first = r
					}
				}
				mu.Unlock()
			}
		}()
	}
	for p := range points {
		for k := range seeds {
			if failed() {
				break
			}
			jobs <- job{p, k}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	sw := &result.Sweep{Engine: first.Engine, Scenario: first.Scenario, DurationS: first.DurationS, Fixed: fixed, Seeds: seeds}
	for _, a := range axes {
		sw.Parameters = append(sw.Parameters, a.Path)
	}
	for i, p := range points {
		sp := aggregate(runs[i])
		sp.Values = p.Values
		sw.Points = append(sw.Points, sp)
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
