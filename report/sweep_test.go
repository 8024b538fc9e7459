package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"path/filepath"
	"testing"

	"trafficlab/internal/golden"
	"trafficlab/result"
)

func TestFigures(t *testing.T) {
	r := &result.Result{
		Requests:      result.Requests{Total: 1010, OK: 1000, Failed: 10},
		ThroughputRPS: 100,
		LatencyMS:     result.Latency{P50: 1, P99: 9, P999: 20},
		Errors:        result.Errors{Timeout: 3, ConnectionReset: 7},
		Slow:          10,
		Pods: []result.Pod{
			{Service: "a", Requests: 600}, {Service: "a", Requests: 300}, {Service: "a", Requests: 100},
			{Service: "b", Requests: 50}, {Service: "b", Requests: 50}, {Service: "b", Requests: 0},
		},
	}
	want := map[string]float64{
		"requests": 1010, "throughput_rps": 100, "p50_ms": 1, "p99_ms": 9, "p999_ms": 20,
		"errors": 10, "timeout": 3, "connection_reset": 7, "connection_refused": 0,
		"slow_share": 0.01, "idle_pods": 1,
		// a's busiest pod has 60% of a's requests; b's quietest has 0% of b's.
		"max_pod_share": 0.6, "min_pod_share": 0,
	}
	for _, f := range Figures {
		w, ok := want[f.Name]
		if !ok {
			continue
		}
		if got := f.Of(r); math.Abs(got-w) > 1e-12 {
			t.Errorf("%s = %v, want %v", f.Name, got, w)
		}
	}
	if _, ok := FigureNamed("p99_ms"); !ok {
		t.Error("FigureNamed(p99_ms) not found")
	}
}

// sweepFixture is a two-by-two sweep with three seeds, errors at one point, and a
// --find answered for one value of threads but not the other.
func sweepFixture() *result.Sweep {
	run := func(seed int64, p99, errs, share float64) result.SweepRun {
		f := map[string]float64{}
		for _, fig := range Figures {
			f[fig.Name] = 0
		}
		f["requests"], f["throughput_rps"], f["p50_ms"], f["p99_ms"], f["p999_ms"] = 60000, 1000, 0.5, p99, 2*p99
		f["errors"], f["connection_refused"], f["max_pod_share"], f["min_pod_share"] = errs, errs, share, 1-share
		return result.SweepRun{Seed: seed, Figures: f}
	}
	pt := func(values []string, runs ...result.SweepRun) result.SweepPoint {
		p := result.SweepPoint{Values: values, Runs: runs, Mean: map[string]float64{}, SD: map[string]float64{},
			Min: map[string]float64{}, Max: map[string]float64{}}
		for name := range runs[0].Figures {
			var sum, lo, hi float64 = 0, math.Inf(1), math.Inf(-1)
			for _, r := range runs {
				sum += r.Figures[name]
				lo, hi = math.Min(lo, r.Figures[name]), math.Max(hi, r.Figures[name])
			}
			p.Mean[name], p.Min[name], p.Max[name] = sum/float64(len(runs)), lo, hi
			p.SD[name] = (hi - lo) / 2 // not a real SD: only its writing is tested here
		}
		return p
	}
	two, third := "2", 2
	return &result.Sweep{Engine: "simulate", Scenario: "capacity", DurationS: 60, Seeds: 3,
		Parameters: []string{"spec.services[0].replicas", "spec.clients[0].threads"},
		Fixed:      []string{"spec.cluster.proxyMode=nftables"},
		Points: []result.SweepPoint{
			pt([]string{"1", "5"}, run(1, 80, 2, 1), run(2, 90, 0, 1), run(3, 85, 1, 1)),
			pt([]string{"1", "20"}, run(1, 300, 0, 1), run(2, 310, 0, 1), run(3, 305, 0, 1)),
			pt([]string{"2", "5"}, run(1, 20, 0, 0.55), run(2, 22, 0, 0.5), run(3, 21, 0, 0.6)),
			pt([]string{"2", "20"}, run(1, 60, 0, 0.5), run(2, 70, 0, 0.52), run(3, 65, 0, 0.51)),
		},
		Find: &result.Find{Query: "min spec.services[0].replicas where p99 < 50ms and errors == 0",
			Parameter: "spec.services[0].replicas", Figures: []string{"p99_ms", "errors"},
			Answers: []result.FindAnswer{{Others: []string{"5"}, Value: &two, Point: &third}, {Others: []string{"20"}}}},
	}
}

func TestSweepText(t *testing.T) {
	var b bytes.Buffer
	if err := SweepText(&b, sweepFixture()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "sweep.txt"), b.Bytes())
}

func TestSweepCSVHasEveryRunAndFigure(t *testing.T) {
	var b bytes.Buffer
	sw := sweepFixture()
	if err := SweepCSV(&b, sw); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+4*3 || len(rows[0]) != 2+1+len(Figures) {
		t.Fatalf("%d rows of %d columns, want 13 of %d", len(rows), len(rows[0]), 3+len(Figures))
	}
	if rows[0][0] != "spec.services[0].replicas" || rows[0][2] != "seed" || rows[0][3] != Figures[0].Name {
		t.Errorf("header %q", rows[0])
	}
	// The third point's second seed: replicas 2, threads 5, seed 2, p99 22.
	row := rows[1+2*3+1]
	p99 := 3
	for i, f := range Figures {
		if f.Name == "p99_ms" {
			p99 += i
		}
	}
	if row[0] != "2" || row[1] != "5" || row[2] != "2" || row[p99] != "22" {
		t.Errorf("row %q", row)
	}
}
