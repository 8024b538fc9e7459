package fidelity

import (
	"math"
	"strings"
	"testing"
	"time"

	"trafficlab/cluster/manifests"
	"trafficlab/emulate"
	"trafficlab/result"
)

func run(requests ...int64) *result.Result {
	r := &result.Result{}
	for _, n := range requests {
		r.Pods = append(r.Pods, result.Pod{Requests: n})
	}
	return r
}

// Shares are compared by rank: which pod is busy is chance, how busy is not.
func TestShareErrorComparesRankedShares(t *testing.T) {
	sim := []*result.Result{run(50, 50, 0), run(0, 50, 50)} // 50 %, 50 %, 0 by rank
	emu := []*result.Result{run(60, 40, 0), run(40, 0, 60)} // 60 %, 40 %, 0 by rank
	if got := shareError(sim, emu); math.Abs(got-0.10) > 1e-9 {
		t.Errorf("share error %g, want 0.10", got)
	}
	if got := shareError(sim, sim); got != 0 {
		t.Errorf("a run against itself: %g", got)
	}
}

// Every case loads, emulate takes it, and it runs as written: a case that emulate
// would run without one of its inputs (a latency under 1 ms), or on too small a
// machine, would compare two different scenarios. Check needs no root.
func TestEveryCaseRunsAsWritten(t *testing.T) {
	for _, c := range Cases {
		sc, err := Load(c, 2, 5*time.Second)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		plan, err := emulate.Check(sc)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		for _, w := range plan.Warnings {
			if strings.Contains(w, "is not added") || strings.Contains(w, "measure this machine") {
				t.Errorf("%s: %s", c.Name, w)
			}
		}
	}
}

// Every case the cluster runs makes its objects; every case it does not run
// says why.
func TestEveryClusterCaseBuilds(t *testing.T) {
	for _, c := range Cases {
		if c.NotOnCluster != "" {
			continue
		}
		sc, err := Load(c, 2, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if _, _, err := manifests.Build(sc, manifests.Run{ID: "test", Image: "trafficlab.local/trafficlab:v1"}); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

func TestTableShowsRelativeDifferences(t *testing.T) {
	sim := &result.Result{ThroughputRPS: 100, LatencyMS: result.Latency{P50: 1, P99: 2}}
	emu := &result.Result{ThroughputRPS: 90, LatencyMS: result.Latency{P50: 1.5, P99: 2}}
	var b strings.Builder
	if err := Table(&b, []Row{{Case: Case{Name: "x"}, Sim: []*result.Result{sim}, Emu: []*result.Result{emu}}}, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| x | 0.0 pts | 0 / 0 | 100/s / 90/s (-10%) | 1ms / 1.5ms (+50%) | 2ms / 2ms (+0%) | 0 / 0 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// With a row run on the cluster, every column has a third value, its difference
// relative to simulate's, and a row the cluster did not run has "–" there.
func TestTableWithTheCluster(t *testing.T) {
	sim := &result.Result{ThroughputRPS: 100, LatencyMS: result.Latency{P50: 1, P99: 2}}
	emu := &result.Result{ThroughputRPS: 90, LatencyMS: result.Latency{P50: 1.5, P99: 2}}
	clu := &result.Result{ThroughputRPS: 120, LatencyMS: result.Latency{P50: 0.5, P99: 4}}
	clu.Errors.Add(result.ErrorConnectionRefused, 3)
	one := []*result.Result{sim}
	rows := []Row{
		{Case: Case{Name: "x"}, Sim: one, Emu: []*result.Result{emu}, Cluster: []*result.Result{clu}},
		{Case: Case{Name: "y", NotOnCluster: "no reason"}, Sim: one, Emu: []*result.Result{emu}},
	}
	var b strings.Builder
	if err := Table(&b, rows, true); err != nil {
		t.Fatal(err)
	}
	NotOnCluster(&b, rows)
	for _, want := range []string{
		"| scenario | share error emu / cluster | idle pods sim / emu / cluster | throughput sim / emu / cluster |",
		"| x | 0.0 / 0.0 pts | 0 / 0 / 0 | 100/s / 90/s (-10%) / 120/s (+20%) | 1ms / 1.5ms (+50%) / 0.5ms (-50%) | 2ms / 2ms (+0%) / 4ms (+100%) | 0 / 0 / 3 |",
		"| y | 0.0 / – pts | 0 / 0 / – | 100/s / 90/s (-10%) / – |",
		"- y: not on the cluster, as no reason.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// A check is a ratio of two cases' means, or one case's figure, in each engine,
// and a check whose cases did not run is left out.
func TestCheckTable(t *testing.T) {
	client := func(cores float64, sent, due int64) *result.Result {
		return &result.Result{ThroughputRPS: float64(sent), Clients: []result.Client{{CPUCores: cores, Sent: sent, Due: due}}}
	}
	rows := []Row{
		{Case: Case{Name: "R1 reused client, 1 thread"}, Sim: []*result.Result{client(0.6, 0, 0)}, Emu: []*result.Result{client(0.3, 0, 0), client(0.5, 0, 0)}},
		{Case: Case{Name: "R1 new client per request"}, Sim: []*result.Result{client(0.1, 0, 0)}, Emu: []*result.Result{client(0.2, 0, 0)}},
		{Case: Case{Name: "R5 client CPU-bound, 60m limit"}, Sim: []*result.Result{client(0.06, 500, 1000)}, Emu: []*result.Result{client(0.06, 400, 1000)}},
	}
	var b strings.Builder
	if err := CheckTable(&b, rows, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| R1 caller CPU, reused client over a new client per request | 6× | 2× | 5.75× (69 % over 12 %) |",
		"| R5 share of its schedule a CPU-bound client sent | 50% | 40% |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("checks lack %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "R2") {
		t.Errorf("a check whose cases did not run is shown:\n%s", b.String())
	}

	// With the cluster's runs of some cases, a column of its own, "–" where it did
	// not run a check's cases.
	rows[0].Cluster = []*result.Result{client(0.4, 0, 0)}
	rows[1].Cluster = []*result.Result{client(0.1, 0, 0)}
	b.Reset()
	if err := CheckTable(&b, rows, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| check | simulate | emulate | cluster | field report |",
		"| R1 caller CPU, reused client over a new client per request | 6× | 2× | 4× | 5.75× (69 % over 12 %) |",
		"| R5 share of its schedule a CPU-bound client sent | 50% | 40% | – |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("checks lack %q:\n%s", want, b.String())
		}
	}
}
