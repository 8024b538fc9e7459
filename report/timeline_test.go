package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"

	"trafficlab/result"
)

// The timeline CSV gives each row its interval's length (the last is cut by the run's
// end) and leaves p99_ms empty where no request succeeded, rather than writing 0.
func TestTimelineCSVLatencyAndInterval(t *testing.T) {
	r := &result.Result{DurationS: 2.5, TimelineIntervalS: 1, Timeline: []result.Point{
		{TS: 0, Requests: 10, P99MS: 1.25, Replicas: map[string]int{"web": 2}},
		{TS: 1, Requests: 10, Errors: 10, ErrorsByKind: &result.Errors{Timeout: 10}, Replicas: map[string]int{"web": 2}},
		{TS: 2, Requests: 4, Errors: 1, ErrorsByKind: &result.Errors{ConnectionRefused: 1}, P99MS: 3, Replicas: map[string]int{"web": 1}},
	}}
	r.Pods = []result.Pod{{Name: "web-0", Service: "web"}}
	var b bytes.Buffer
	if err := TimelineCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, b.String())
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	want := []struct{ interval, p99, errors string }{{"1", "1.25", "0"}, {"1", "", "10"}, {"0.5", "3", "1"}}
	if len(rows) != 1+len(want) {
		t.Fatalf("%d rows, want a header and %d:\n%s", len(rows), len(want), b.String())
	}
	for i, w := range want {
		row := rows[i+1]
		if row[col["interval_s"]] != w.interval || row[col["p99_ms"]] != w.p99 || row[col["errors"]] != w.errors {
			t.Errorf("row %d: interval_s %q, p99_ms %q, errors %q; want %q, %q, %q",
				i, row[col["interval_s"]], row[col["p99_ms"]], row[col["errors"]], w.interval, w.p99, w.errors)
		}
	}
}

// The page and the compare overlay draw no latency for an interval in which no
// request succeeded: null, a gap in the chart, not 0 ms, and not the percentiles an
// engine left in such a point; nor after a trip through the Result's JSON, which
// writes them as null.
func TestLatencyChartsLeaveGapsWhereNothingSucceeded(t *testing.T) {
	tl := []result.Point{
		{TS: 0, Requests: 10, P50MS: 1, P99MS: 1.25},
		{TS: 1, Requests: 10, Errors: 10, P50MS: 7, P99MS: 7}, // no success: no latency
		{TS: 2, Requests: 4, Errors: 1, P50MS: 2, P99MS: 3},
		{TS: 3, Requests: 3, Errors: 3},
	}
	in := &result.Result{Engine: "simulate", DurationS: 4, TimelineIntervalS: 1, Timeline: tl}
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	back := &result.Result{}
	if err := json.Unmarshal(js, back); err != nil {
		t.Fatal(err)
	}
	const p50, p99 = "[1,null,2,null]", "[1.25,null,3,null]"
	for name, r := range map[string]*result.Result{"in memory": in, "read back": back} {
		t.Run(name, func(t *testing.T) {
			var page struct {
				Latency []struct {
					Name   string
					Values json.RawMessage
				}
			}
			if err := json.Unmarshal(blob(t, write(t, r, HTMLOptions{})), &page); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, l := range page.Latency {
				got[l.Name] = string(l.Values)
			}
			if got["p50"] != p50 || got["p99"] != p99 {
				t.Errorf("page: p50 %s, p99 %s; want %s, %s", got["p50"], got["p99"], p50, p99)
			}
			var overlay struct {
				Runs []struct{ P50, P99 json.RawMessage }
			}
			if err := json.Unmarshal(overlayBlob(t, writeCompare(t, []string{"a", "b"}, []*result.Result{r, r})), &overlay); err != nil {
				t.Fatal(err)
			}
			for _, run := range overlay.Runs {
				if string(run.P50) != p50 || string(run.P99) != p99 {
					t.Errorf("overlay: p50 %s, p99 %s; want %s, %s", run.P50, run.P99, p50, p99)
				}
			}
		})
	}
}
