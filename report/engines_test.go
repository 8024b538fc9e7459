package report

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"trafficlab/result"
	"trafficlab/resultfile"
)

// engineResult is one of resultfile's test inputs, read as report and compare read
// it; emulate's is simulate's with its engine changed, the same shape.
func engineResult(t *testing.T, engine string) *result.Result {
	t.Helper()
	file := map[string]string{"simulate": "simulate-r1.json", "emulate": "simulate-r1.json",
		"load": "load.json", "vegeta": "vegeta-mixed.csv"}[engine]
	r, err := resultfile.Read(filepath.Join("..", "resultfile", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	r.Engine = engine
	return r
}

// engineHeaders are what the text, the page and compare's column head say of run r.
func engineHeaders(t *testing.T, r *result.Result) (text, page, column string) {
	t.Helper()
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	text = b.String()
	head := regexp.MustCompile(`<p class="run">(.*?)</p>`).FindStringSubmatch(write(t, r, HTMLOptions{}))
	if head == nil {
		t.Fatal("the page has no run line")
	}
	b.Reset()
	if err := Compare(&b, []string{"a", "b"}, []*result.Result{engineResult(t, "simulate"), r}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	cells := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(lines[1]), -1)
	return text, head[1], cells[len(cells)-1]
}

// Every header says only what its engine knows: a seed and kube-proxy's mode for the
// engines that ran a scenario in a cluster, "simulated" for the simulation alone; a
// pods table has a NODE and a CPU column only where the engine measured them, and
// says "behind its ClusterIP" only where a Service was.
func TestHeadersSayOnlyWhatTheEngineKnows(t *testing.T) {
	for _, c := range []struct {
		engine             string
		cluster, simulated bool
		pods               bool // the Result has pods
	}{
		{"simulate", true, true, true},
		{"emulate", true, false, true},
		{"load", false, false, true},
		{"vegeta", false, false, false},
	} {
		t.Run(c.engine, func(t *testing.T) {
			text, page, column := engineHeaders(t, engineResult(t, c.engine))
			header, _, _ := strings.Cut(text, "\n")
			for _, h := range []struct{ where, s string }{{"text", header}, {"page", page}, {"compare", column}} {
				if !strings.Contains(h.s, c.engine) {
					t.Errorf("%s header %q does not name the engine", h.where, h.s)
				}
				if got := strings.Contains(h.s, "seed"); got != c.cluster {
					t.Errorf("%s header %q: seed shown %v, want %v", h.where, h.s, got, c.cluster)
				}
				if got := strings.Contains(h.s, " ·  · ") || strings.HasPrefix(h.s, " · ") || strings.HasSuffix(h.s, " "); got {
					t.Errorf("%s header %q has an empty part", h.where, h.s)
				}
			}
			for _, h := range []struct{ where, s string }{{"text", header}, {"page", page}} {
				if got := strings.Contains(h.s, "kube-proxy"); got != c.cluster {
					t.Errorf("%s header %q: kube-proxy shown %v, want %v", h.where, h.s, got, c.cluster)
				}
			}
			if got := strings.Contains(header, "simulated"); got != c.simulated {
				t.Errorf("header %q: 'simulated' %v, want %v", header, got, c.simulated)
			}
			table := regexp.MustCompile(`(?m)^ +POD .*$`).FindString(text)
			if (table != "") != c.pods {
				t.Fatalf("pods table %q, want one: %v\n%s", table, c.pods, text)
			}
			for _, col := range []string{"NODE", "CPU"} {
				if c.pods && strings.Contains(table, col) != c.cluster {
					t.Errorf("pods table %q: %s column %v, want %v", table, col, !c.cluster, c.cluster)
				}
			}
			if got := strings.Contains(write(t, engineResult(t, c.engine), HTMLOptions{}), "The scenario was not recorded"); got != c.cluster {
				t.Errorf("the page says the scenario was not recorded: %v, want %v", got, c.cluster)
			}
			if got := strings.Contains(text, "ClusterIP"); got != (c.cluster && c.pods) {
				t.Errorf("'behind its ClusterIP' %v, want %v:\n%s", got, c.cluster && c.pods, text)
			}
		})
	}
}

// The Errors line lists every kind the Result counts, 503 too without a sidecar,
// and a note says what the failed requests of no kind are: here the statuses vegeta
// recorded. Runs whose kinds add up get no note.
func TestEveryFailureIsAccountedFor(t *testing.T) {
	other := engineResult(t, "vegeta")
	other.Errors.HTTP503 -= 12
	other.Ended.StatusCodes["503"] -= 12
	other.Ended.StatusCodes["500"] += 11
	other.Ended.StatusCodes["404"] += 1
	unnamed := engineResult(t, "vegeta")
	unnamed.Errors.HTTP503 -= 5
	unnamed.Ended = nil
	for _, c := range []struct {
		name   string
		r      *result.Result
		errors string // the Errors line's kinds and counts
		note   string // "" when none may appear
	}{
		{"vegeta, 503s without a sidecar", engineResult(t, "vegeta"), "[timeout, refused, reset, closed, 503]  9, 2, 0, 0, 242", ""},
		{"load", engineResult(t, "load"), "[timeout, refused, reset, closed]  107, 0, 0, 0", ""},
		{"simulate, no failure", engineResult(t, "simulate"), "[timeout, refused, reset, closed]  0, 0, 0, 0", ""},
		{"other statuses", other, "9, 2, 0, 0, 230",
			"(12 of the 253 failed requests are of none of these kinds: 1 answered 404 and 11 answered 500.)"},
		{"no status codes", unnamed, "9, 2, 0, 0, 237",
			"(5 of the 253 failed requests are of none of these kinds: another error status, or an error no kind describes.)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Text(&b, c.r); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			line := regexp.MustCompile(`(?m)^Errors .*$`).FindString(text)
			if norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }; !strings.HasSuffix(norm(line), norm(c.errors)) {
				t.Errorf("Errors line %q, want it to end %q", line, c.errors)
			}
			page := write(t, c.r, HTMLOptions{})
			joined := strings.Join(strings.Fields(text), " ")
			if c.note == "" {
				if strings.Contains(text, "of none of these kinds") || strings.Contains(page, "of none of these kinds") {
					t.Errorf("a note on failures of no kind where the kinds add up:\n%s", text)
				}
				return
			}
			if !strings.Contains(joined, c.note) {
				t.Errorf("no note %q in\n%s", c.note, text)
			}
			if !strings.Contains(page, c.note) {
				t.Errorf("the page lacks the note %q", c.note)
			}
			// compare's rows of kinds add up to its errors row.
			b.Reset()
			if err := Compare(&b, []string{"a", "b"}, []*result.Result{engineResult(t, "vegeta"), c.r}); err != nil {
				t.Fatal(err)
			}
			if row := regexp.MustCompile(`(?m)^  of no kind +0 +(\d+)`).FindStringSubmatch(b.String()); row == nil ||
				row[1] != strings.Fields(c.note)[0][1:] {
				t.Errorf("compare has no row of the %s failures of no kind:\n%s", strings.Fields(c.note)[0][1:], b.String())
			}
		})
	}
}

// A share that is not exactly all or none never reads 100% or 0%, at any of the
// report's precisions; exact ones read as they are.
func TestPercentagesNeverRoundToAllOrNone(t *testing.T) {
	for _, c := range []struct {
		x        float64
		decimals int
		want     string
	}{
		{1 - 19.0/552586, 2, "99.997%"}, // r2-rapid-scaling's success: 19 errors
		{1, 2, "100.00%"},
		{0, 2, "0.00%"},
		{0.5, 2, "50.00%"},
		{1.0 / 300000, 1, "0.0003%"},
		{0.9996, 0, "99.96%"},
		{0.004, 0, "0.4%"},
		{1e-20, 2, "1e-18%"},
		{1.00001, 0, "100.001%"},
	} {
		if got := percent(c.x, c.decimals); got != c.want {
			t.Errorf("percent(%v, %d) = %s, want %s", c.x, c.decimals, got, c.want)
		}
	}
	for _, c := range []struct {
		x    float64
		want string
	}{{0.9996, "99.96%"}, {0.99949, "99.9%"}, {0.93, "93%"}, {0.00004, "0.004%"}, {1, "100%"}} {
		if got := pct(c.x); got != c.want {
			t.Errorf("pct(%v) = %s, want %s", c.x, got, c.want)
		}
	}
	// r2-rapid-scaling's totals, and a pod at 99.96% of its cores.
	r := engineResult(t, "simulate")
	r.Requests.Total, r.Requests.OK, r.Requests.Failed, r.Errors.Timeout = 552586, 552567, 19, 19
	r.Pods[0].CPUUtilization = 0.9996
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"99.997%", "99.96%"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %s:\n%s", want, text)
		}
	}
	if page := write(t, r, HTMLOptions{}); !strings.Contains(page, "<dt>success</dt><dd>99.997%</dd>") {
		t.Errorf("the page's success tile is not 99.997%%")
	}
}

// The origin, what the run was asked to run, is a line under the single run's
// header in the text and on the page, as compare shows it; nothing when the Result
// did not record it.
func TestOriginIsShownWhenRecorded(t *testing.T) {
	seed := int64(7)
	for _, c := range []struct {
		name   string
		origin *result.Origin
		want   string
	}{
		{"file and overrides", &result.Origin{File: "examples/r1.yaml", Sets: []string{"spec.duration=2s"}, Seed: &seed},
			"Ran examples/r1.yaml with --set spec.duration=2s --seed 7"},
		{"the built-in example", &result.Origin{}, "Ran the built-in example"},
		{"not recorded", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := engineResult(t, "simulate")
			r.Origin = c.origin
			var b bytes.Buffer
			if err := Text(&b, r); err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitN(b.String(), "\n", 3)
			page := write(t, r, HTMLOptions{})
			if c.want == "" {
				if lines[1] != "" || strings.Contains(page, "Ran ") {
					t.Errorf("an origin line where none was recorded: %q", lines[1])
				}
				return
			}
			if lines[1] != c.want {
				t.Errorf("line under the header %q, want %q", lines[1], c.want)
			}
			if !strings.Contains(page, `<p class="run origin">`+c.want+`</p>`) {
				t.Errorf("the page lacks the origin %q", c.want)
			}
		})
	}
}

// singularAsPlural is a count of one with a plural noun: "1 periods", "1 of 1 runs".
var singularAsPlural = regexp.MustCompile(`(^|[^0-9.,])1 (period|run|event|node|repair|pod|point|request|connection|seed|thread|worker|segment|retransmit)s\b`)

// Counts of one read in the singular, in every section that counts: throttling,
// TCP repairs, aborted runs. The same sections with larger counts stay plural.
func TestOneIsSingular(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int64
		want []string
	}{
		{"one", 1, []string{"throttled in 1 of 1 period (100%)", "(1 of 1 repair)", "1 connection, 1 segment, 1 retransmitted", "aborted 1 of 1 run "}},
		{"two", 2, []string{"throttled in 2 of 2 periods (100%)", "(2 of 2 repairs)", "2 connections, 2 segments, 2 retransmitted", "aborted 2 of 2 runs "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := engineResult(t, "simulate")
			r.Pods[0].Throttling = &result.Throttling{Periods: c.n, ThrottledPeriods: c.n, ThrottledS: 0.1}
			r.TCP = &result.TCP{Connections: c.n, Segments: c.n, Retransmits: c.n, RTOEvents: c.n}
			r.Clients[0].RunsAborted = c.n
			for range c.n {
				r.Clients[0].Runs = append(r.Clients[0].Runs, result.Run{Aborted: true, Requests: 1})
			}
			var b bytes.Buffer
			if err := Text(&b, r); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(strings.Fields(b.String()), " ")
			for _, want := range c.want {
				if !strings.Contains(text, want) {
					t.Errorf("no %q in\n%s", want, b.String())
				}
			}
			if m := singularAsPlural.FindAllString(text, -1); len(m) > 0 {
				t.Errorf("a count of one in the plural: %q", m)
			}
		})
	}
}

// compare names what each column ran: a run of no scenario says so, rather than
// "none" as if a scenario had that name.
func TestCompareNamesRunsOfNoScenario(t *testing.T) {
	rs := []*result.Result{engineResult(t, "simulate"), engineResult(t, "load"), engineResult(t, "vegeta")}
	var b bytes.Buffer
	if err := Compare(&b, []string{"a", "b", "c"}, rs); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(b.String()), " ")
	want := "these results are of different scenarios (r1-shared-client-5-threads, no scenario (load), no scenario (vegeta))"
	if !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, b.String())
	}
	page := writeCompare(t, []string{"a", "b", "c"}, rs)
	if want := "3 results of r1-shared-client-5-threads, no scenario (load), no scenario (vegeta), compared"; !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
	// Two simulations of one scenario get no such note.
	b.Reset()
	if err := Compare(&b, []string{"a", "b"}, rs[:1:1]); err == nil {
		t.Fatal("compare of one result did not fail")
	}
	if err := Compare(&b, []string{"a", "b"}, []*result.Result{rs[0], engineResult(t, "emulate")}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "different scenarios") {
		t.Errorf("a note on different scenarios for runs of one:\n%s", b.String())
	}
}

// A latency of successful requests under the Result's microsecond reads "<0.5µs",
// not 0.0µs, which no request takes; a run with no success, or whose Result
// recorded no latency, keeps its zeros.
func TestSubMicrosecondLatencyIsNotZero(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   int64
		want string
		none bool // no latency recorded
	}{{"a success under 0.5 µs", 10, "<0.5µs, 619.0µs", false}, {"no success", 0, "0.0µs, 619.0µs", false},
		{"no latency recorded", 10, "0.0µs, 0.0µs", true}} {
		t.Run(c.name, func(t *testing.T) {
			r := engineResult(t, "simulate")
			r.LatencyMS.Min, r.Requests.OK = 0, c.ok
			if c.none {
				r.LatencyMS = result.Latency{}
			}
			var b bytes.Buffer
			if err := Text(&b, r); err != nil {
				t.Fatal(err)
			}
			if line := regexp.MustCompile(`(?m)^Latencies .*$`).FindString(b.String()); !strings.Contains(line, "]  "+c.want) {
				t.Errorf("Latencies line %q, want it to begin %q", line, c.want)
			}
		})
	}
}
