package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"trafficlab/result"
)

// vegetaOf renders r with VegetaJSON and decodes it, numbers kept exact.
func vegetaOf(t *testing.T, r *result.Result) (raw string, m map[string]any) {
	t.Helper()
	var b bytes.Buffer
	if err := VegetaJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(b.String()))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	return b.String(), m
}

func TestVegetaJSONUnits(t *testing.T) {
	r := simRun()
	raw, m := vegetaOf(t, r)
	if strings.Count(raw, "\n") != 1 || !strings.HasSuffix(raw, "\n") {
		t.Errorf("want one line, as vegeta's encoder writes:\n%s", raw)
	}
	lat := m["latencies"].(map[string]any)
	// Milliseconds become integer nanoseconds; total is mean × successes.
	for key, want := range map[string]string{"total": "84000000000", "mean": "700000", "50th": "520000", "90th": "1100000",
		"95th": "1400000", "99th": "1900000", "max": "12300000", "min": "210000"} {
		if got := lat[key].(json.Number).String(); got != want {
			t.Errorf("latencies.%s = %s, want %s", key, got, want)
		}
	}
	if _, ok := lat["99.9th"]; ok || len(lat) != 8 {
		t.Errorf("latencies has vegeta's eight fields only: %v", lat)
	}
	for key, want := range map[string]any{
		"earliest": "2026-01-01T00:00:00Z", "latest": "2026-01-01T00:01:00Z", "end": "2026-01-01T00:01:00Z",
		"duration": json.Number("60000000000"), "wait": json.Number("0"), "requests": json.Number("120000"),
		"rate": json.Number("2000"), "throughput": json.Number("2000"), "success": json.Number("1"),
	} {
		if got := m[key]; got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	for _, key := range []string{"bytes_in", "bytes_out"} {
		if got := m[key].(map[string]any); got["total"] != json.Number("0") || got["mean"] != json.Number("0") {
			t.Errorf("%s = %v, want zeros: the Result has no byte counts", key, got)
		}
	}
	// vegeta's field order: its Metrics struct's.
	last := -1
	for _, key := range []string{"latencies", "bytes_in", "bytes_out", "earliest", "latest", "end", "duration", "wait",
		"requests", "rate", "throughput", "success", "status_codes", "errors"} {
		i := strings.Index(raw, `"`+key+`":`)
		if i < last {
			t.Errorf("%q out of vegeta's order:\n%s", key, raw)
		}
		last = i
	}
	if strings.Contains(raw, "buckets") {
		t.Errorf("no histogram, no buckets:\n%s", raw)
	}
}

func TestVegetaJSONFractionalDuration(t *testing.T) {
	r := &result.Result{DurationS: 12.5, Requests: result.Requests{Total: 4, OK: 3, Failed: 1},
		Errors: result.Errors{Timeout: 1}}
	_, m := vegetaOf(t, r)
	if m["latest"] != "2026-01-01T00:00:12.5Z" || m["duration"] != json.Number("12500000000") || m["success"] != json.Number("0.75") {
		t.Errorf("latest %v, duration %v, success %v", m["latest"], m["duration"], m["success"])
	}
}

func TestVegetaStatusCodesAndErrors(t *testing.T) {
	cases := []struct {
		name   string
		ok     int64
		errs   result.Errors
		codes  map[string]any
		errors []any
	}{
		{"all ok", 10, result.Errors{}, map[string]any{"200": json.Number("10")}, []any{}},
		{"nothing", 0, result.Errors{}, map[string]any{}, []any{}},
		{"connection errors have no code", 10, result.Errors{Timeout: 1, ConnectionRefused: 2, ConnectionReset: 3, ConnectionClosed: 4},
			map[string]any{"200": json.Number("10"), "0": json.Number("10")},
			[]any{`Get "http://web/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
				`Get "http://web/": dial tcp web:80: connect: connection refused`,
				`Get "http://web/": read tcp web:80: read: connection reset by peer`,
				`Get "http://web/": EOF`}},
		{"a sidecar's 503", 5, result.Errors{HTTP503: 7, ConnectionReset: 1},
			map[string]any{"200": json.Number("5"), "503": json.Number("7"), "0": json.Number("1")},
			[]any{`Get "http://web/": read tcp web:80: read: connection reset by peer`, "503 Service Unavailable"}},
	}
	for _, c := range cases {
		r := &result.Result{DurationS: 1, Requests: result.Requests{Total: c.ok + c.errs.Total(), OK: c.ok, Failed: c.errs.Total()},
			Errors: c.errs, Pods: withPods("web", 1)}
		_, m := vegetaOf(t, r)
		if got := m["status_codes"]; !reflect.DeepEqual(got, c.codes) {
			t.Errorf("%s: status_codes = %v, want %v", c.name, got, c.codes)
		}
		if got := m["errors"]; !reflect.DeepEqual(got, c.errors) {
			t.Errorf("%s: errors = %#v, want %#v", c.name, got, c.errors)
		}
	}
}

func TestVegetaHost(t *testing.T) {
	cases := []struct {
		name string
		r    *result.Result
		want string
	}{
		{"the clients' one target", &result.Result{Clients: []result.Client{{Target: "api"}, {Target: "api"}}, Pods: withPods("web", 1)}, "api"},
		{"no client, one service", &result.Result{Pods: withPods("web", 1)}, "web"},
		{"several targets", &result.Result{Clients: []result.Client{{Target: "api"}, {Target: "web"}}}, "service"},
		{"nothing", &result.Result{}, "service"},
	}
	for _, c := range cases {
		if got := vegetaHost(c.r); got != c.want {
			t.Errorf("%s: vegetaHost = %q, want %q", c.name, got, c.want)
		}
	}
}

func histogramRun() *result.Result {
	two, four := 2.0, 4.0
	r := simRun()
	r.Histogram = []result.Bucket{{FromMS: 0, ToMS: &two, Count: 900, Share: 0.9}, {FromMS: 2, ToMS: &four, Count: 75, Share: 0.075},
		{FromMS: 4, Count: 25, Share: 0.025}}
	return r
}

func TestVegetaJSONBuckets(t *testing.T) {
	raw, _ := vegetaOf(t, histogramRun())
	// Lower bounds in nanoseconds, in bucket order, between latencies and bytes_in.
	if !strings.Contains(raw, `},"buckets":{"0":900,"2000000":75,"4000000":25},"bytes_in":`) {
		t.Errorf("buckets as vegeta -buckets writes them expected:\n%s", raw)
	}
}

func TestVegetaHist(t *testing.T) {
	var b bytes.Buffer
	if err := VegetaHist(&b, histogramRun()); err != nil {
		t.Fatal(err)
	}
	// vegeta's layout: bounds as Go durations, the last open to +Inf, two spaces
	// between columns, a bar of int(share × 75) '#'.
	want := "Bucket         #    %       Histogram\n" +
		"[0s,    2ms]   900  90.00%  " + strings.Repeat("#", 67) + "\n" +
		"[2ms,   4ms]   75   7.50%   " + strings.Repeat("#", 5) + "\n" +
		"[4ms,   +Inf]  25   2.50%   " + strings.Repeat("#", 1) + "\n"
	if got := b.String(); got != want {
		t.Errorf("hist:\n%s\nwant:\n%s", got, want)
	}
	if err := VegetaHist(&b, simRun()); !errors.Is(err, ErrNoHistogram) {
		t.Errorf("no histogram: err = %v, want ErrNoHistogram", err)
	}
}
