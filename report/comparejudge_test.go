package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"trafficlab/result"
)

func TestVerdict(t *testing.T) {
	cases := []struct {
		d    better
		a, b float64
		want string
	}{
		{higher, 100, 150, "better"},
		{higher, 100, 50, "worse"},
		{higher, 0, 5, "better"},
		{lower, 1.9, 2.4, "worse"},
		{lower, 2.4, 1.9, "better"},
		{lower, 50, 0, "better"},
		{lower, 3, 3, ""},
		{neither, 100, 150, ""},
		{neither, 100, 50, ""},
	}
	for _, c := range cases {
		if got := c.d.verdict(c.a, c.b); got != c.want {
			t.Errorf("direction %d: verdict(%v, %v) = %q, want %q", c.d, c.a, c.b, got, c.want)
		}
	}
}

// Each row's direction: what a reader would call an improvement. Every row a
// result can have is here, so a new row must say which way it improves.
func TestCompareRowDirections(t *testing.T) {
	a, b := simRun(), emuRun()
	b.Errors = result.Errors{Timeout: 1, ConnectionRefused: 1, ConnectionReset: 1, ConnectionClosed: 1, HTTP503: 1}
	a.TCP = &result.TCP{Retransmits: 3}
	a.Pods = append(a.Pods, withPods("api", 1, 2)...)
	want := map[string]better{
		"requests": neither, "throughput (rps)": higher,
		"latency p50": lower, "latency p99": lower, "latency p99.9": lower, "latency max": lower,
		"errors": lower, "  timeout": lower, "  connection_refused": lower, "  connection_reset": lower,
		"  connection_closed": lower, "  http_503": lower, "  of no kind": lower, "slow share": lower,
		"idle pods (web)": lower, "max pod share (web)": lower, "min pod share (web)": higher,
		"idle pods (api)": lower, "max pod share (api)": lower, "min pod share (api)": higher,
		"tcp retransmits": lower,
	}
	rows := compareRows([]*result.Result{a, b})
	if len(rows) != len(want) {
		t.Errorf("%d rows, %d with a direction here", len(rows), len(want))
	}
	for _, m := range rows {
		d, ok := want[m.label]
		if !ok {
			t.Errorf("row %q has no direction in this test", m.label)
		} else if m.better != d {
			t.Errorf("row %q: direction %d, want %d", m.label, m.better, d)
		}
	}
}

// cellClasses maps each body row's label to the class attributes of its cells,
// the label's first.
func cellClasses(page string) map[string][]string {
	out := map[string][]string{}
	body := page[strings.Index(page, "<tbody>"):strings.Index(page, "</tbody>")]
	classRE := regexp.MustCompile(`class="([^"]*)"`)
	for _, r := range rowRE.FindAllStringSubmatch(body, -1) {
		label := html.UnescapeString(tagRE.ReplaceAllString(r[1][:strings.Index(r[1], "</th>")], ""))
		for _, c := range cellRE.FindAllStringSubmatch(r[1], -1) {
			class := ""
			if m := classRE.FindStringSubmatch(c[2]); m != nil {
				class = m[1]
			}
			out[label] = append(out[label], class)
		}
	}
	return out
}

// A gain in throughput is drawn green, a longer tail red, a change in requests
// (neither better nor worse) neither; the text says the same words.
func TestCompareDrawsChangesByDirection(t *testing.T) {
	a, b := simRun(), simRun()
	b.Requests.Total, b.ThroughputRPS = 180_000, 3000
	b.LatencyMS.P99 = 3.8
	rs := []*result.Result{a, b}
	classes := cellClasses(writeCompare(t, []string{"a", "b"}, rs))
	for label, want := range map[string]string{
		"requests":         "marked",
		"throughput (rps)": "marked better",
		"latency p99":      "marked worse",
		"latency p50":      "",
	} {
		if got := classes[label]; len(got) != 3 || got[2] != want {
			t.Errorf("row %q: classes %q, want the last %q", label, got, want)
		}
	}
	rows := rowsOf(rs)
	for label, want := range map[string]string{
		"requests":         "180,000 (+50%) *",
		"throughput (rps)": "3,000 (+50%) * better",
		"latency p99":      "3.800ms (+100%) * worse",
	} {
		if got := rows[label][1]; got != want {
			t.Errorf("row %q: text %q, want %q", label, got, want)
		}
	}
}

// The head of the comparison says what each run was asked for: its file and the
// overrides as typed, and how much of its planned time an interrupted run covered;
// text and page alike. Results that recorded no origin have no such rows.
func TestCompareHeadSaysWhatRan(t *testing.T) {
	seed := int64(7)
	a, b, c := simRun(), simRun(), simRun()
	a.Origin = &result.Origin{File: "examples/r1.yaml"}
	b.Origin = &result.Origin{File: "examples/r1.yaml", Sets: []string{"spec.services[0].replicas=8", "spec.cluster.proxyMode=ipvs"}, Seed: &seed, DurationS: 30}
	c.Interrupted, c.DurationS, c.PlannedDurationS = true, 12.5, 3600
	rs := []*result.Result{a, b, c}
	var text bytes.Buffer
	if err := Compare(&text, []string{"a.json", "b.json", "c.json"}, rs); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(writeCompare(t, []string{"a.json", "b.json", "c.json"}, rs))
	for _, want := range []string{
		"examples/r1.yaml", "none", "--set spec.services[0].replicas=8 --set spec.cluster.proxyMode=ipvs --seed 7 --duration 30s",
		"interrupted after 12.5s of 1h",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page's head lacks %q", want)
		}
	}
	lines := strings.Split(text.String(), "\n")
	for i, want := range []string{
		"simulate · clusterip-reuse · seed 1 · 12.5s of 1h, interrupted",
		"file ", "overrides ",
	} {
		if !strings.Contains(lines[i+1], want) {
			t.Errorf("line %d of the text is %q, want it to hold %q", i+2, lines[i+1], want)
		}
	}
	for _, want := range []string{"--set spec.services[0].replicas=8 --set spec.cluster.proxyMode=ipvs --seed 7 --duration 30s",
		"Note: c.json was interrupted: its figures cover the first 12.5s of the 1h planned."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}
	var plain bytes.Buffer
	if err := Compare(&plain, []string{"a", "b"}, []*result.Result{simRun(), simRun()}); err != nil {
		t.Fatal(err)
	}
	if s := plain.String(); strings.Contains(s, "\nfile ") || strings.Contains(s, "\noverrides ") || strings.Contains(s, "interrupted") {
		t.Errorf("results without an origin, not interrupted, have origin rows or a note:\n%s", s)
	}
}

// A run where no request succeeded has no latency and no slow share: its cells say
// so, and a change to or from them is neither marked nor judged, in either order,
// on the page as in the text. Failures and throughput are still compared.
func TestCompareRunWithoutSuccesses(t *testing.T) {
	failed := func() *result.Result {
		r := simRun()
		r.Errors = result.Errors{ConnectionRefused: r.Requests.Total}
		r.Requests.OK, r.Requests.Failed = 0, r.Requests.Total
		r.ThroughputRPS, r.LatencyMS, r.Slow, r.SlowShare = 0, result.Latency{}, 0, 0
		return r
	}
	slow := simRun()
	slow.Slow, slow.SlowShare = slow.Requests.OK/2, 0.5
	noSuccessRows := []string{"latency p50", "latency p99", "latency p99.9", "latency max", "slow share"}
	for _, order := range []struct {
		name   string
		rs     []*result.Result
		failed int
	}{
		{"to", []*result.Result{slow, failed()}, 1},
		{"from", []*result.Result{failed(), slow}, 0},
	} {
		rows := rowsOf(order.rs)
		classes := cellClasses(writeCompare(t, []string{"a", "b"}, order.rs))
		for _, label := range noSuccessRows {
			if got := rows[label][order.failed]; got != noSuccesses {
				t.Errorf("%s: row %q of the failed run: %q, want %q", order.name, label, got, noSuccesses)
			}
			if got := rows[label][1-order.failed]; strings.Contains(got, "*") {
				t.Errorf("%s: row %q of the other run: %q, a change judged against no latency", order.name, label, got)
			}
			if got := classes[label]; len(got) != 3 || got[2] != "" {
				t.Errorf("%s: row %q: page classes %q, want none on the last", order.name, label, got)
			}
		}
		if got := rows["throughput (rps)"][1]; !strings.Contains(got, "*") {
			t.Errorf("%s: throughput %q, want its change marked", order.name, got)
		}
	}
}
