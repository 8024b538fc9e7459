package report

import (
	"bytes"
	"encoding/json"
	"html"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"trafficlab/result"
)

func writeCompare(t *testing.T, names []string, rs []*result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := CompareHTML(&b, names, rs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// overlayBlob returns the JSON document of a comparison page.
func overlayBlob(t *testing.T, page string) []byte {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="compare-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no data block")
	}
	return []byte(m[1])
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE = regexp.MustCompile(`(?s)<t([hd])([^>]*)>(.*?)</t[hd]>`)
	tagRE  = regexp.MustCompile(`<[^>]*>`)
)

// htmlRows are the body rows of the page's table: label, then cells; marked counts
// the cells of class "marked".
func htmlRows(page string) (rows [][]string, marked int) {
	body := page[strings.Index(page, "<tbody>"):strings.Index(page, "</tbody>")]
	for _, r := range rowRE.FindAllStringSubmatch(body, -1) {
		var row []string
		for _, c := range cellRE.FindAllStringSubmatch(r[1], -1) {
			row = append(row, html.UnescapeString(tagRE.ReplaceAllString(c[3], "")))
			if strings.Contains(c[2], `class="marked`) {
				marked++
			}
		}
		rows = append(rows, row)
	}
	return rows, marked
}

// textRows are the rows of Compare's table, under its two lines of heads, split
// at the runs of blanks between its columns.
func textRows(text string) (rows [][]string, marked int) {
	table, _, _ := strings.Cut(text, "\n\n")
	for _, line := range strings.Split(table, "\n")[2:] {
		row := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		for _, c := range row[1:] {
			if strings.Contains(c, " *") {
				marked++
			}
		}
		rows = append(rows, row)
	}
	return rows, marked
}

// TestCompareHTMLTable checks that the page's table is Compare's: the same rows,
// numbers, changes and '*' marks, and the same notes under it.
func TestCompareHTMLTable(t *testing.T) {
	twoServices := func() []*result.Result {
		a, b, c := simRun(), emuRun(), emuRun()
		a.Pods = append(a.Pods, withPods("api", 500, 500)...)
		b.Pods = append(b.Pods, withPods("api", 1000, 0)...)
		c.Scenario, c.DurationS, c.TCP = "clusterip-pool", 30, &result.TCP{Retransmits: 7}
		return []*result.Result{a, b, c}
	}
	cases := []struct {
		name   string
		names  []string
		rs     []*result.Result
		heads  []string
		marked int
	}{
		{"sim against emu", []string{"sim.json", "emu.json"}, []*result.Result{simRun(), emuRun()}, []string{"sim.json", "emu.json"}, 5},
		{"three columns, two services, notes", []string{"a.json", "", "c.json"}, twoServices(), []string{"a.json", "result 2", "c.json"}, 13},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := writeCompare(t, c.names, c.rs)
			var text bytes.Buffer
			if err := Compare(&text, c.names, c.rs); err != nil {
				t.Fatal(err)
			}
			got, gotMarked := htmlRows(page)
			want, wantMarked := textRows(text.String())
			if !reflect.DeepEqual(got, want) {
				t.Errorf("table rows\n%q\nwant Compare's\n%q", got, want)
			}
			if gotMarked != wantMarked || wantMarked != c.marked {
				t.Errorf("%d cells marked, Compare marks %d, want %d", gotMarked, wantMarked, c.marked)
			}
			for _, h := range c.heads {
				if !strings.Contains(page, "</span>"+h+"</th>") {
					t.Errorf("no column head %q", h)
				}
			}
			_, footer, _ := strings.Cut(text.String(), "\n\n")
			if !strings.Contains(html.UnescapeString(page), strings.TrimSpace(footer)) {
				t.Errorf("the page lacks Compare's notes:\n%s", footer)
			}
		})
	}
}

// withTimeline gives r a one-second timeline of n points: rps requests a second,
// errs of them failed at second errAt, and a p99 spike of spike ms at second spikeAt.
func withTimeline(r *result.Result, n int, rps, errs int64, errAt, spikeAt int, spike float64) *result.Result {
	r.DurationS, r.TimelineIntervalS, r.Timeline = float64(n), 1, nil
	for i := 0; i < n; i++ {
		p := result.Point{TS: float64(i), Requests: rps, P50MS: 0.5, P90MS: 1, P99MS: 2, P999MS: 4}
		if i == errAt {
			p.Errors = errs
		}
		if i == spikeAt {
			p.P99MS = spike
		}
		r.Timeline = append(r.Timeline, p)
	}
	r.LatencySpectrum = spec(0, 0.2, 0, 50, 0.5, 50, 99, 2, 99, 99.9, 4, 100, 100, 9, 100)
	return r
}

func TestOverlayData(t *testing.T) {
	long := withTimeline(simRun(), 3600, 2000, 30, 100, 1234, 900)
	short := withTimeline(emuRun(), 1800, 1900, 0, -1, -1, 0)
	short.Pods = append(short.Pods, withPods("api", 30, 10, 60)...)
	none := emuRun() // no timeline, no spectrum, no pods
	none.Pods = nil
	names := []string{"long.json", "short.json", "none.json"}
	d := overlayData(names, []*result.Result{long, short, none})

	if d.StepS != 4 || len(d.T) != 900 || d.T[1] != 4 || d.T[899] != 3596 {
		t.Fatalf("%d points of %g s from %v, want 900 of 4 s: the longest run in at most %d", len(d.T), d.StepS, d.T[:2], maxBuckets)
	}
	if len(d.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(d.Runs))
	}
	if !reflect.DeepEqual(d.Services, []string{"web", "api"}) {
		t.Errorf("services %q, want web, api", d.Services)
	}
	nan := math.NaN()
	cases := []struct {
		name string
		got  series
		at   []int     // points checked
		want []float64 // NaN: a gap
	}{
		{"long throughput", d.Runs[0].Throughput, []int{0, 25, 899}, []float64{2000, 2000 - 30.0/4, 2000}},
		{"long errors", d.Runs[0].Errors, []int{0, 25}, []float64{0, 30.0 / 4}},
		{"long p99, worst of its points", d.Runs[0].P99, []int{0, 308, 899}, []float64{2, 900, 2}},
		{"long p50", d.Runs[0].P50, []int{0}, []float64{0.5}},
		{"short throughput ends with the run", d.Runs[1].Throughput, []int{449, 450, 899}, []float64{1900, nan, nan}},
		{"short p99 ends with the run", d.Runs[1].P99, []int{449, 450}, []float64{2, nan}},
		{"no timeline: all gaps", d.Runs[2].Throughput, []int{0, 899}, []float64{nan, nan}},
		{"long web shares", d.Runs[0].Shares[0], []int{0, 1, 4}, []float64{0.4, 0.2, 0}},
		{"short api shares, largest first", d.Runs[1].Shares[1], []int{0, 1, 2}, []float64{0.6, 0.3, 0.1}},
	}
	for _, c := range cases {
		for k, i := range c.at {
			got, want := c.got[i], c.want[k]
			if !(math.Abs(got-want) <= 1e-9 || math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s at %d: %g, want %g", c.name, i, got, want)
			}
		}
	}
	for i, run := range d.Runs {
		if run.Name != names[i] {
			t.Errorf("run %d named %q, want %q", i, run.Name, names[i])
		}
		if len(run.Throughput) != len(d.T) || len(run.Errors) != len(d.T) || len(run.Shares) != len(d.Services) {
			t.Errorf("%s: %d throughput and %d error points for %d times, %d share series for %d services",
				run.Name, len(run.Throughput), len(run.Errors), len(d.T), len(run.Shares), len(d.Services))
		}
		for _, s := range run.Shares {
			if !sort.IsSorted(sort.Reverse(sort.Float64Slice(s))) {
				t.Errorf("%s: shares %v not largest first", run.Name, s)
			}
		}
	}
	if d.Runs[0].Spectrum == nil || d.Runs[2].Spectrum != nil || d.Runs[2].P99 != nil || d.Runs[2].Shares[0] != nil {
		t.Error("a run without spectrum, latency or pods must have none, and the others theirs")
	}
}

func TestOverlayWithoutTimelines(t *testing.T) {
	d := overlayData([]string{"a", "b"}, []*result.Result{simRun(), emuRun()})
	if len(d.T) != 0 || d.Runs[0].Throughput != nil || len(d.Runs[1].Shares) != 1 {
		t.Errorf("results without timelines: %d times, throughput %v; want none, and the pod shares", len(d.T), d.Runs[0].Throughput)
	}
}

// TestComparePageIsSelfContained checks that the page loads nothing, escapes the
// names and carries the overlay data as built.
func TestComparePageIsSelfContained(t *testing.T) {
	a, b := simRun(), emuRun()
	a.Scenario = hostile
	names := []string{hostile, "<b>b.json</b>"}
	page := writeCompare(t, names, []*result.Result{a, b})
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script[^>]*\bsrc=`),
		regexp.MustCompile(`<link\b`),
		regexp.MustCompile(`(?i)(src|href)="?https?://`),
		regexp.MustCompile(`<script>alert\(1\)|<b>b\.json`),
	} {
		if bad.MatchString(page) {
			t.Errorf("the page matches %s", bad)
		}
	}
	// The page's own four scripts, and no other: nothing closed one and opened another.
	if n := strings.Count(page, "<script"); n != 4 {
		t.Errorf("%d <script> tags, want 4 (data, page.js, compare.js, uPlot)", n)
	}
	var fromPage, fromData any
	if err := json.Unmarshal(overlayBlob(t, page), &fromPage); err != nil {
		t.Fatal(err)
	}
	direct, err := json.Marshal(overlayData(names, []*result.Result{a, b}))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(direct, &fromData); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromPage, fromData) {
		t.Error("the page's data block differs from the overlay data")
	}
	runs := fromPage.(map[string]any)["runs"].([]any)
	for i, r := range runs {
		if got := r.(map[string]any)["name"]; got != names[i] {
			t.Errorf("run %d is named %q in the data, want %q", i, got, names[i])
		}
	}
}

func TestThreeOneHourComparisonIsSmall(t *testing.T) {
	a, b, c := oneHour(), oneHour(), oneHour()
	b.Seed, c.Seed = 2, 3
	page := writeCompare(t, []string{"a.json", "b.json", "c.json"}, []*result.Result{a, b, c})
	t.Logf("three one-hour results: %d bytes", len(page))
	if len(page) >= 5<<20 {
		t.Errorf("page is %d bytes, want under 5 MB", len(page))
	}
	var d struct {
		T    []float64 `json:"t"`
		Runs []struct {
			Throughput []float64 `json:"throughput"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(overlayBlob(t, page), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.T) > maxBuckets || len(d.Runs) != 3 || len(d.Runs[2].Throughput) != len(d.T) {
		t.Errorf("%d time points and %d runs, want at most %d and 3 with a point each", len(d.T), len(d.Runs), maxBuckets)
	}
}

func TestCompareHTMLNeedsTwoNamedResults(t *testing.T) {
	cases := []struct {
		name  string
		names []string
		rs    []*result.Result
	}{
		{"one result", []string{"a"}, []*result.Result{simRun()}},
		{"one name for two results", []string{"a"}, []*result.Result{simRun(), emuRun()}},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := CompareHTML(&b, c.names, c.rs); err == nil || b.Len() > 0 {
			t.Errorf("%s: error %v and %d bytes, want an error and nothing written", c.name, err, b.Len())
		}
	}
}
