package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"trafficlab/result"
)

// capacity is a queue whose answer is known from the math: 250 requests a second of
// 10 ms each, one worker per pod, a new connection per request (so kube-proxy spreads
// them at random). One or two pods cannot keep up (ρ = 2.5, 1.25): the queue grows
// for 20 s and requests time out at 2 s. Three pods run at ρ = 0.83, an M/D/1 queue
// whose mean wait is ρ/(2μ(1−ρ)) = 24 ms and whose p99 stays far below 1 s.
const capacity = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: capacity}
spec:
  duration: 20s
  seed: 1
  cluster:
    nodes: [{name: worker, count: 4, cpu: "4"}]
  services:
  - name: web
    replicas: 1
    pod:
      concurrency: 1
      serviceTime: {distribution: constant, value: 10ms}
  clients:
  - name: caller
    target: web
    rate: 250/s
    timeout: 2s
    library: curl-loop
`

func sweepJSON(t *testing.T, args ...string) *result.Sweep {
	t.Helper()
	code, out, errOut := runCLI(append([]string{"sweep", "-o", "json", "-q"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sw result.Sweep
	if err := json.Unmarshal([]byte(out), &sw); err != nil {
		t.Fatal(err)
	}
	return &sw
}

func TestSweepFindsTheCapacity(t *testing.T) {
	f := writeTemp(t, "capacity.yaml", capacity)
	sw := sweepJSON(t, f, "--set", "spec.services[0].replicas=1..4", "--seeds", "2",
		"--find", "min spec.services[0].replicas where p99 < 1s and errors == 0")
	if len(sw.Points) != 4 || sw.Seeds != 2 {
		t.Fatalf("%d points × %d seeds, want 4 × 2", len(sw.Points), sw.Seeds)
	}
	for i, p := range sw.Points {
		if p.Runs[0].Seed != 1 || p.Runs[1].Seed != 2 {
			t.Errorf("point %d ran seeds %d, %d; want 1, 2 like every point", i, p.Runs[0].Seed, p.Runs[1].Seed)
		}
	}
	if sw.Points[1].Min["timeout"] == 0 || sw.Points[2].Max["errors"] != 0 {
		t.Errorf("2 pods: %v timeouts (want some); 3 pods: %v errors (want none)",
			sw.Points[1].Min["timeout"], sw.Points[2].Max["errors"])
	}
	a := sw.Find.Answers
	if len(a) != 1 || a[0].Value == nil || *a[0].Value != "3" {
		t.Fatalf("find answered %+v, want 3 replicas", a)
	}
}

// A sweep's point is the same run as simulate with those --set values and seed, and
// the table does not depend on how many runs share the cores.
func TestSweepRunsAreSimulateRuns(t *testing.T) {
	f := writeTemp(t, "capacity.yaml", capacity)
	args := []string{f, "--set", "spec.services[0].replicas=3,4", "--set", "spec.clients[0].rate=200/s", "--seeds", "2"}
	one := sweepJSON(t, append(args, "-j", "1")...)
	two := sweepJSON(t, append(args, "-j", "2")...)
	a, _ := json.Marshal(one)
	b, _ := json.Marshal(two)
	if string(a) != string(b) {
		t.Error("-j 1 and -j 2 gave different sweeps")
	}
	if len(one.Fixed) != 1 || one.Fixed[0] != "spec.clients[0].rate=200/s" {
		t.Errorf("fixed %q", one.Fixed)
	}
	code, out, errOut := runCLI("simulate", f, "--set", "spec.services[0].replicas=4", "--set", "spec.clients[0].rate=200/s",
		"--seed", "2", "-o", "json")
	if code != exitOK {
		t.Fatalf("simulate: exit %d: %s", code, errOut)
	}
	var r result.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	got := one.Points[1].Runs[1].Figures
	if got["requests"] != float64(r.Requests.Total) || got["p99_ms"] != r.LatencyMS.P99 {
		t.Errorf("sweep point (4 replicas, seed 2): %v requests, p99 %v; simulate: %d, %v",
			got["requests"], got["p99_ms"], r.Requests.Total, r.LatencyMS.P99)
	}
}

func TestSweepBadInput(t *testing.T) {
	f := writeTemp(t, "capacity.yaml", capacity)
	cases := []struct {
		args []string
		want string
	}{
		// The bad value is one point among good ones: named with the file and its --set.
		{[]string{f, "--set", "spec.services[0].replicas=2,x"}, `capacity.yaml: --set spec.services[0].replicas=x: spec.services[0].replicas: expected an integer, got "x"`},
		{[]string{f, "--set", "spec.services[0].replicas=2,3", "--find", "min spec.seed where p99 < 1s"}, "spec.seed is not swept"},
		{[]string{f, "--set", "spec.services[0].replicas=3..1"}, "backwards"},
		{[]string{f, "--set", "spec.services[0].replicas=2,,4"}, "value 2 of 3 is empty"},
		{[]string{f, "--set", "spec.services[0].replicas=2,3", "--find", ""}, `want "min PATH where`},
		{[]string{f, "--set", "spec.services[0].replicas=2,3", "--find", "min spec.services[0].replicas where p99 < -1ms"}, "never negative"},
		{[]string{f, "-o", "yaml"}, "want text, json or csv"},
		{[]string{f, "--seeds", "0"}, "at least 1"},
		{[]string{f, "-j", "0"}, "at least 1"},
		{[]string{f, "--set", "spec.services[0].replicas=1..3", "--set", "spec.services[0].replicas=4,5"}, "already given by --set spec.services[0].replicas=1..3"},
		{[]string{f, "--set", "spec.seed=1,2", "--seed", "4"}, "--seed 4 and --set spec.seed=1,2 both give spec.seed"},
		{[]string{f, "--set", "spec.duration=1s", "--duration", "2s"}, "--duration 2s and --set spec.duration=1s both give spec.duration"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(append([]string{"sweep", "-q"}, c.args...)...)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
}

func TestSweepTextAndFiles(t *testing.T) {
	f := writeTemp(t, "capacity.yaml", capacity)
	dir := t.TempDir()
	code, out, errOut := runCLI("sweep", f, "--set", "spec.services[0].replicas=3,4", "--duration", "5s",
		"--csv", dir+"/runs.csv", "--json", dir+"/sweep.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Sweep of capacity: simulate, 5s simulated per run, 2 points × 1 seed", "File: " + f, "REPLICAS", "P99", "MIN POD SHARE"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "2 runs in") {
		t.Errorf("no timing line on stderr: %q", errOut)
	}
	csv := readFile(t, dir+"/runs.csv")
	if n := strings.Count(csv, "\n"); n != 3 || !strings.HasPrefix(csv, "spec.services[0].replicas,seed,requests,") {
		t.Errorf("CSV of %d lines:\n%s", n, csv)
	}
	var sw result.Sweep
	if err := json.Unmarshal([]byte(readFile(t, dir+"/sweep.json")), &sw); err != nil || len(sw.Points) != 2 || sw.File != f {
		t.Errorf("JSON file: %v, %d points, file %q", err, len(sw.Points), sw.File)
	}
}

func TestOnceLines(t *testing.T) {
	var b strings.Builder
	o := &onceLines{w: &b}
	for _, s := range []string{"a: warning\n", "b: warning\na: warning\n", "a: warning\n"} {
		if n, err := o.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if b.String() != "a: warning\nb: warning\n" {
		t.Errorf("wrote %q", b.String())
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSweepTiming(t *testing.T) {
	cases := []struct {
		runs, requests int64
		wall           time.Duration
		workers        int
		want           string
	}{
		{1, 0, 0, 1, "1 run in 0s on 1 worker"},
		{4, 2_000_000, 2 * time.Second, 2, "4 runs in 2s on 2 workers: 1.00M simulated requests per wall second"},
		// Interrupted before any run finished: the requests of unfinished runs are no rate.
		{0, 10_500_000, 3010 * time.Millisecond, 2, "0 runs in 3.01s on 2 workers"},
	}
	for _, c := range cases {
		if got := sweepTiming(c.runs, c.requests, c.wall, c.workers); got != c.want {
			t.Errorf("sweepTiming(%d, %d, %s, %d) = %q, want %q", c.runs, c.requests, c.wall, c.workers, got, c.want)
		}
	}
}

// The usage gives -j's default in words; pflag must not add a second "(default N)".
func TestSweepHelpStatesEachDefaultOnce(t *testing.T) {
	_, out, _ := runCLI("sweep", "--help")
	for _, line := range strings.Split(out, "\n") {
		if strings.Count(line, "default") > 1 {
			t.Errorf("a default stated twice: %q", line)
		}
	}
}
