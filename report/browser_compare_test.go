package report_test

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// TestComparePageInBrowser opens comparison pages in headless Chromium, as
// TestPageInBrowser does run pages: every chart panel drew each run's data, with
// the run's name in its legend, or says it has none; no script failed. It keeps a
// screenshot of the simulated runs' page.
func TestComparePageInBrowser(t *testing.T) {
	chromium := findChromium(t)
	// Runs of different lengths and scenarios, one with errors: the time charts
	// overlay shorter runs on a longer one, and every panel has something to draw.
	busy, _ := simulated(t, browserScenario, "120s")
	steady, _ := simulated(t, "r2-ab-pods-on-3-nodes.yaml", "90s")
	quiet, _ := simulated(t, quietScenario, "20s")
	if busy.Errors.Total() == 0 {
		t.Fatalf("%s no longer has errors: pick another scenario", browserScenario)
	}
	empty := &result.Result{Engine: "simulate", Scenario: "nothing"}
	charts := []string{"throughput", "errors", "latency-p99", "latency-p50", "latency-spectrum", "pod-shares"}
	cases := []struct {
		name       string
		names      []string
		rs         []*result.Result
		rendered   string // what every chart panel shows
		screenshot string
	}{
		{"runs", []string{"rapid-scaling.json", "3-nodes.json", "throttling.json"}, []*result.Result{busy, steady, quiet}, "chart", "compare-report.png"},
		{"empty", []string{"a.json", "b.json"}, []*result.Result{empty, empty}, "empty", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := report.CompareHTML(&b, c.names, c.rs); err != nil {
				t.Fatal(err)
			}
			dom := openPage(t, chromium, b.Bytes(), c.screenshot, "1400,2400")
			want := map[string]string{"compare-table": "text"}
			for _, id := range charts {
				want[id] = c.rendered
			}
			checkPanels(t, dom, want)
			if c.rendered != "chart" {
				return
			}
			// Every chart's legend names every run.
			for _, name := range c.names {
				if n := strings.Count(string(dom), `class="u-label">`+html.EscapeString(name)+"<"); n != len(charts) {
					t.Errorf("%s is in %d legends, want %d", name, n, len(charts))
				}
			}
		})
	}
}
