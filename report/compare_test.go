package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"trafficlab/internal/golden"
	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// withPods gives each count to a pod of svc, named svc-0, svc-1, ...
func withPods(svc string, counts ...int64) []result.Pod {
	var out []result.Pod
	for i, c := range counts {
		out = append(out, result.Pod{Name: svc + "-" + string(rune('0'+i)), Service: svc, Node: "worker-0", Requests: c})
	}
	return out
}

// simRun and emuRun are R1 (one pinned connection too many on one pod) as the
// simulator predicts it and as the emulator measures it: fewer requests, 50 resets,
// a longer tail, the same idle pod.
func simRun() *result.Result {
	return &result.Result{Engine: "simulate", Scenario: "clusterip-reuse", Seed: 1, DurationS: 60, ProxyMode: kubeproxy.Iptables,
		Requests: result.Requests{Total: 120_000, OK: 120_000}, ThroughputRPS: 2000, RateRPS: 2000,
		LatencyMS:       result.Latency{Min: 0.21, Mean: 0.7, P50: 0.52, P90: 1.1, P95: 1.4, P99: 1.9, P999: 4.1, Max: 12.3},
		SlowThresholdMS: 10, Slow: 12, SlowShare: 0.0001,
		Pods: withPods("web", 48_000, 24_000, 24_000, 24_000, 0)}
}

func emuRun() *result.Result {
	return &result.Result{Engine: "emulate", Scenario: "clusterip-reuse", Seed: 1, DurationS: 60, ProxyMode: kubeproxy.Iptables,
		Requests: result.Requests{Total: 118_200, OK: 118_150, Failed: 50}, ThroughputRPS: 1969.17, RateRPS: 1970,
		Errors:          result.Errors{ConnectionReset: 50},
		LatencyMS:       result.Latency{Min: 0.25, Mean: 0.8, P50: 0.61, P90: 1.2, P95: 1.6, P99: 2.4, P999: 4.3, Max: 35},
		SlowThresholdMS: 10, Slow: 95, SlowShare: 0.000804,
		Pods: withPods("web", 47_000, 23_650, 23_500, 24_000, 0)}
}

func TestMarked(t *testing.T) {
	cases := []struct {
		name string
		k    changeRule
		a, b float64
		want bool
	}{
		{"equal counts", countRule, 120, 120, false},
		{"errors appear", countRule, 0, 3, true},
		{"errors vanish", countRule, 3, 0, true},
		{"count within 10%", countRule, 1000, 1100, false},
		{"count beyond 10%", countRule, 1000, 1101, true},
		{"count down beyond 10%", countRule, 1000, 899, true},
		{"idle pods: one more", exactRule, 1, 2, true},
		{"idle pods: same", exactRule, 1, 1, false},
		{"latency beyond both", latencyRule, 1.9, 2.4, true},
		{"latency +17% but under 0.1 ms", latencyRule, 0.52, 0.61, false},
		{"latency +0.2 ms but under 10%", latencyRule, 4.1, 4.3, false},
		{"latency from 0", latencyRule, 0, 0.5, true},
		{"latency from 0, under the floor", latencyRule, 0, 0.05, false},
		{"share +15%, 3 points", shareRule, 0.20, 0.23, true},
		{"share doubles, 0.005 points", shareRule, 0.00005, 0.0001, false},
		{"slow share 0.01% to 0.08%", shareRule, 0.0001, 0.0008, true},
		{"share from 0, 0.5 points", shareRule, 0, 0.005, true},
		{"share -4%", shareRule, 0.40, 0.385, false},
	}
	for _, c := range cases {
		if got := marked(c.k, c.a, c.b); got != c.want {
			t.Errorf("%s: marked(%v, %v) = %v, want %v", c.name, c.a, c.b, got, c.want)
		}
	}
}

func TestRelative(t *testing.T) {
	cases := []struct {
		a, b float64
		want string
	}{
		{12.3, 12.3, "="}, {0, 0, "="}, {0, 5, "from 0"},
		{8.7, 12.3, "+41%"}, {100, 96.8, "−3.2%"}, {1, 3.5, "+250%"}, {3, 0, "−100%"},
	}
	for _, c := range cases {
		if got := relative(c.a, c.b); got != c.want {
			t.Errorf("relative(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// rowsOf renders each row's cells, keyed by label.
func rowsOf(rs []*result.Result) map[string][]string {
	out := map[string][]string{}
	for _, m := range compareRows(rs) {
		for _, c := range compareCells(m, rs) {
			out[m.label] = append(out[m.label], c.String())
		}
	}
	return out
}

func TestCompareRows(t *testing.T) {
	twoServices := func() []*result.Result {
		a, b := simRun(), emuRun()
		a.Pods = append(a.Pods, withPods("api", 500, 500)...)
		b.Pods = append(b.Pods, withPods("api", 1000, 0)...)
		b.Slow, b.SlowShare = 0, 0
		a.Slow, a.SlowShare = 0, 0
		return []*result.Result{a, b}
	}
	withTCP := func() []*result.Result {
		a, b, c := simRun(), simRun(), emuRun()
		a.TCP = &result.TCP{Retransmits: 40}
		b.Seed, b.TCP = 2, &result.TCP{Retransmits: 43}
		return []*result.Result{a, b, c}
	}
	cases := []struct {
		name    string
		rs      func() []*result.Result
		want    map[string][]string
		missing []string
	}{
		{"sim against emu", func() []*result.Result { return []*result.Result{simRun(), emuRun()} },
			map[string][]string{
				"requests":           {"120,000", "118,200 (−1.5%)"},
				"throughput (rps)":   {"2,000", "1,969 (−1.5%)"},
				"latency p50":        {"520.0µs", "610.0µs (+17%)"}, // under the 0.1 ms floor: no mark
				"latency p99":        {"1.900ms", "2.400ms (+26%) * worse"},
				"latency p99.9":      {"4.100ms", "4.300ms (+4.9%)"},
				"latency max":        {"12.300ms", "35.000ms (+185%) * worse"},
				"errors":             {"0", "50 (from 0) * worse"},
				"  connection_reset": {"0", "50 (from 0) * worse"},
				"slow share":         {"0.01%", "0.08% (+704%) * worse"},
				"idle pods":          {"1 of 5", "1 of 5 (=)"},
				"max pod share":      {"40%", "40% (−0.55%)"},
				"min pod share":      {"0%", "0% (=)"},
			},
			[]string{"  timeout", "  connection_refused", "  connection_closed", "  http_503", "tcp retransmits", "idle pods (web)"}},
		{"two services, none slow", twoServices,
			map[string][]string{
				"idle pods (web)":     {"1 of 5", "1 of 5 (=)"},
				"idle pods (api)":     {"0 of 2", "1 of 2 (from 0) * worse"},
				"max pod share (api)": {"50%", "100% (+100%) * worse"},
				"min pod share (api)": {"50%", "0% (−100%) * worse"},
			},
			[]string{"slow share", "idle pods", "max pod share"}},
		{"three columns, TCP in two", withTCP,
			map[string][]string{
				"requests":        {"120,000", "120,000 (=)", "118,200 (−1.5%)"},
				"tcp retransmits": {"40", "43 (+7.5%)", "-"},
			}, nil},
		{"a service missing in the baseline", func() []*result.Result {
			a, b := simRun(), emuRun()
			b.Pods = append(b.Pods, withPods("api", 10, 30)...)
			return []*result.Result{a, b}
		}, map[string][]string{
			"idle pods (api)":     {"-", "0 of 2"},
			"max pod share (api)": {"-", "75%"},
		}, nil},
	}
	for _, c := range cases {
		rows := rowsOf(c.rs())
		for label, want := range c.want {
			got, ok := rows[label]
			if !ok {
				t.Errorf("%s: no row %q", c.name, label)
				continue
			}
			if strings.Join(got, " | ") != strings.Join(want, " | ") {
				t.Errorf("%s: row %q = %q, want %q", c.name, label, got, want)
			}
		}
		for _, label := range c.missing {
			if _, ok := rows[label]; ok {
				t.Errorf("%s: unexpected row %q", c.name, label)
			}
		}
	}
}

func TestCompareNotes(t *testing.T) {
	other := emuRun()
	other.Scenario, other.DurationS = "clusterip-pool", 30
	var b bytes.Buffer
	if err := Compare(&b, []string{"a.json", "b.json"}, []*result.Result{simRun(), other}); err != nil {
		t.Fatal(err)
	}
	out := flat(b.String())
	for _, want := range []string{"different scenarios (clusterip-reuse, clusterip-pool)", "different times (1m, 30s)",
		"emulate · clusterip-pool · seed 1 · 30s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Compare(&b, []string{"a.json", "b.json"}, []*result.Result{simRun(), emuRun()}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Note:") {
		t.Errorf("same scenario and duration need no note:\n%s", b.String())
	}
}

func TestCompareNeedsTwoNamedResults(t *testing.T) {
	var b bytes.Buffer
	if err := Compare(&b, []string{"a"}, []*result.Result{simRun()}); err == nil {
		t.Error("one result: want an error")
	}
	if err := Compare(&b, []string{"a"}, []*result.Result{simRun(), emuRun()}); err == nil {
		t.Error("one name for two results: want an error")
	}
}

// The whole table for R1, simulated against emulated; -update rewrites it.
func TestCompareGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Compare(&b, []string{"sim.json", "emu.json"}, []*result.Result{simRun(), emuRun()}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "compare-sim-emu.txt"), b.Bytes())
}
