package report_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"trafficlab/examples"
	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// browserEnv set to "require" makes a missing Chromium fail the browser test
// instead of skipping it: CI (test.sh) installs Chromium and sets it.
const browserEnv = "TRAFFICLAB_BROWSER_TEST"

// browserScenario has an autoscaler that scales out and in, errors at the scale-in
// and three nodes: every panel has something to draw. Its first 120 s hold all of
// that (the scale-in at 80 s, the errors right after it, the last scale-in at 100 s).
// quietScenario has one node and no errors: the panels that are then empty or absent.
// callsScenario's services call services: the call graph and each service's time.
const (
	browserScenario = "r2-rapid-scaling.yaml"
	quietScenario   = "cpu-limit-throttling.yaml"
	callsScenario   = "calls-retry-storm.yaml"
)

// TestPageInBrowser opens pages in headless Chromium, from disk, and checks in the
// DOM the browser built that every chart panel drew its data (page.js marks each
// panel once uPlot has drawn it), that panels without data say so, and that no
// script failed. It keeps a screenshot of the simulated run's page for people to
// look at.
func TestPageInBrowser(t *testing.T) {
	chromium := findChromium(t)
	r, src := simulated(t, browserScenario, "120s")
	if len(r.ScaleEvents) == 0 || r.Errors.Total() == 0 || len(r.Nodes) < 2 {
		t.Fatalf("%s no longer has scale events (%d), errors (%d) and several nodes (%d): pick another scenario",
			browserScenario, len(r.ScaleEvents), r.Errors.Total(), len(r.Nodes))
	}
	quiet, quietSrc := simulated(t, quietScenario, "20s")
	calls, callsSrc := simulated(t, callsScenario, "20s")
	cases := []struct {
		name       string
		r          *result.Result
		scenario   []byte
		explained  bool // errors, slow requests, uneven load or throttling to explain
		screenshot string
	}{
		{"busy", r, src, true, "html-report.png"},
		{"quiet", quiet, quietSrc, true, ""}, // its pod is throttled
		{"calls", calls, callsSrc, true, "html-report-calls.png"},
		{"empty", &result.Result{Engine: "simulate", Scenario: "nothing"}, nil, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := report.HTML(&b, c.r, report.HTMLOptions{Scenario: c.scenario}); err != nil {
				t.Fatal(err)
			}
			dom := openPage(t, chromium, b.Bytes(), c.screenshot, "1400,5000")
			checkDOM(t, dom, c.r, c.explained, c.scenario != nil)
		})
	}
}

// openPage writes page to a file, opens it in chromium and returns the DOM once its
// scripts have run; with shot named, it also keeps a screenshot of the window size
// as a test artifact.
func openPage(t *testing.T, chromium string, page []byte, shot, size string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("page: %d bytes", len(page))
	var wg sync.WaitGroup
	if shot != "" {
		shot = filepath.Join(artifacts(t), shot)
		wg.Go(func() {
			if _, err := runChromium(t, chromium, path, "--screenshot="+shot, "--window-size="+size); err != nil {
				t.Error(err)
				return
			}
			t.Logf("screenshot: %s", shot)
		})
	}
	dom, err := runChromium(t, chromium, path, "--dump-dom")
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return dom
}

// simulated runs the first part of an example scenario.
func simulated(t *testing.T, name, duration string) (*result.Result, []byte) {
	src, err := examples.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return simulateSource(t, name, src, "spec.duration="+duration), src
}

// simulateSource runs scenario src, named name, with --set overrides sets.
func simulateSource(t *testing.T, name string, src []byte, sets ...string) *result.Result {
	t.Helper()
	sc, _, diags := scenario.Load(name, src, sets)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := simulate.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	e.Run(nil)
	return e.Result()
}

// checkDOM checks each panel's data-rendered: "chart" with points drawn where r
// has the data for it, "empty" only where it truly has none.
func checkDOM(t *testing.T, dom []byte, r *result.Result, explained, hasScenario bool) {
	is := func(have bool, yes string) string {
		if have {
			return yes
		}
		return "empty"
	}
	var perPod, replicas, latency bool
	for _, p := range r.Timeline {
		perPod = perPod || len(p.PodRequests) > 0
		replicas = replicas || p.Replicas != nil
		latency = latency || p.P50MS > 0
	}
	served := false
	for _, p := range r.Pods {
		served = served || p.Requests > 0
	}
	want := map[string]string{
		"explanation":       is(explained, "text"),
		"pods":              is(served, "chart"),
		"pods-over-time":    is(perPod, "chart"),
		"replicas":          is(replicas, "chart"),
		"errors":            is(r.Errors.Total() > 0, "chart"),
		"latency-over-time": is(latency, "chart"),
		"samples":           is(len(r.Samples) > 0, "chart"),
		"latency-histogram": is(len(r.LatencySpectrum) > 0 || len(r.Histogram) > 0, "chart"),
		"latency-spectrum":  is(len(r.LatencySpectrum) > 0, "chart"),
		"scenario":          is(hasScenario, "text"),
		"text-report":       "text",
	}
	if len(r.Nodes) > 1 {
		want["nodes"] = "chart"
	}
	if len(r.Edges) > 0 {
		want["call-graph"] = "chart"
		want["service-latency"] = "chart"
	}
	checkPanels(t, dom, want)
}

// checkPanels checks the page's script ran without error and that each panel
// (section) says what want expects of it: "chart" with points drawn, "text", or
// "empty". A panel the test does not name fails it, so new panels get checked too.
// It returns the panels' attributes by id.
func checkPanels(t *testing.T, dom []byte, want map[string]string) map[string]map[string]string {
	t.Helper()
	if body := tagAttrs(dom, "body"); len(body) == 0 || body[0]["data-error"] != "" {
		t.Errorf("the page's script failed: %q", body)
	}
	sections := map[string]map[string]string{}
	for _, a := range tagAttrs(dom, "section") {
		sections[a["id"]] = a
	}
	for id, rendered := range want {
		a, ok := sections[id]
		switch {
		case !ok:
			t.Errorf("panel %s is missing", id)
		case a["data-rendered"] != rendered:
			t.Errorf("panel %s: data-rendered=%q, want %q", id, a["data-rendered"], rendered)
		case rendered == "chart":
			if n, _ := strconv.Atoi(a["data-points"]); n <= 0 {
				t.Errorf("panel %s drew %q points, want some", id, a["data-points"])
			}
		}
	}
	for id := range sections {
		if _, ok := want[id]; !ok {
			t.Errorf("panel %s is not checked: add it to the test", id)
		}
	}
	return sections
}

func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv(browserEnv) == "require" {
		t.Fatalf("no chromium on PATH and %s=require (apt-get install chromium)", browserEnv)
	}
	t.Skipf("no chromium on PATH (apt-get install chromium; %s=require makes this a failure)", browserEnv)
	return ""
}

// artifacts is where the screenshot stays after the test: $TRAFFICLAB_ARTIFACTS,
// else trafficlab-artifacts in the temp directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("TRAFFICLAB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "trafficlab-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runChromium opens page in headless Chromium with args and returns its stdout.
// Each run gets its own profile so that two can run at once; virtual time lets the
// page's scripts finish before the DOM is dumped or the screenshot taken.
func runChromium(t *testing.T, chromium, page string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=10000"}, args...)
	all = append(all, (&url.URL{Scheme: "file", Path: page}).String())
	cmd := exec.CommandContext(ctx, chromium, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

var (
	attrRE   = regexp.MustCompile(`([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:="([^"]*)")?`)
	scriptRE = regexp.MustCompile(`(?s)<script\b.*?</script>`)
)

// tagAttrs returns the attributes of every start tag named tag in a DOM that
// Chromium serialized (attribute values double-quoted, with &quot; and &amp;),
// outside scripts, whose text may mention tags.
func tagAttrs(dom []byte, tag string) []map[string]string {
	re := regexp.MustCompile(`<` + tag + `\b([^>]*)>`)
	var out []map[string]string
	for _, m := range re.FindAllSubmatch(scriptRE.ReplaceAll(dom, nil), -1) {
		attrs := map[string]string{}
		for _, a := range attrRE.FindAllSubmatch(m[1], -1) {
			attrs[string(a[1])] = strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(string(a[2]))
		}
		out = append(out, attrs)
	}
	return out
}
