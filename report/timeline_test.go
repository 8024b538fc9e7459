package report

import (
	"bytes"
	"encoding/csv"
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
