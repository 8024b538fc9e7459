package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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

// endedRun is a run whose Ended vegeta's figures come from: 4 requests sent over
// 2.5 s, the last ending 0.3 s after it was sent.
func endedRun() *result.Result {
	r := simRun()
	r.Requests = result.Requests{Total: 4, OK: 2, Failed: 2}
	r.Errors = result.Errors{Timeout: 1, HTTP503: 1}
	r.Ended = &result.Ended{
		LatencyMS:    result.Latency{Min: 0.2, Mean: 100.5, P50: 1.5, P90: 300, P95: 300, P99: 300, P999: 300, Max: 300},
		LatencySumNS: 402_000_001, LatencyMinNS: 200_000, LatencyMaxNS: 300_000_000,
		FirstSentNS: 500_000_000, LastSentNS: 3_000_000_000, LastEndNS: 3_300_000_000,
		BytesOut: 2000, BytesIn: 1234,
		StatusCodes: map[string]int64{"200": 1, "302": 1, "503": 1, "0": 1},
		Errors: []result.EndedError{{Kind: "http_503", Service: "api", Method: "POST"},
			{Kind: "timeout", Service: "web", Method: "GET"}},
	}
	return r
}

func TestVegetaJSONUnits(t *testing.T) {
	raw, m := vegetaOf(t, endedRun())
	if strings.Count(raw, "\n") != 1 || !strings.HasSuffix(raw, "\n") {
		t.Errorf("want one line, as vegeta's encoder writes:\n%s", raw)
	}
	lat := m["latencies"].(map[string]any)
	// Exact sums and extremes in ns; the mean truncated as a float64 converted to a
	// Duration is; percentiles from milliseconds.
	for key, want := range map[string]string{"total": "402000001", "mean": "100500000", "50th": "1500000", "90th": "300000000",
		"95th": "300000000", "99th": "300000000", "max": "300000000", "min": "200000"} {
		if got := lat[key].(json.Number).String(); got != want {
			t.Errorf("latencies.%s = %s, want %s", key, got, want)
		}
	}
	if _, ok := lat["99.9th"]; ok || len(lat) != 8 {
		t.Errorf("latencies has vegeta's eight fields only: %v", lat)
	}
	// The window is the requests' own: 2.5 s of sending and 0.3 s of waiting; rate
	// over the sending, throughput (codes 200 to 399) over both.
	for key, want := range map[string]any{
		"earliest": "2026-01-01T00:00:00.5Z", "latest": "2026-01-01T00:00:03Z", "end": "2026-01-01T00:00:03.3Z",
		"duration": json.Number("2500000000"), "wait": json.Number("300000000"), "requests": json.Number("4"),
		"rate": json.Number("1.6"), "throughput": json.Number("0.7142857142857143"), "success": json.Number("0.5"),
	} {
		if got := m[key]; got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	for key, want := range map[string]map[string]any{
		"bytes_in":  {"total": json.Number("1234"), "mean": json.Number("308.5")},
		"bytes_out": {"total": json.Number("2000"), "mean": json.Number("500")},
	} {
		if got := m[key]; !reflect.DeepEqual(got, any(want)) {
			t.Errorf("%s = %v, want %v", key, got, want)
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

func TestVegetaJSONEdges(t *testing.T) {
	// Metrics.Close leaves every figure zero without requests, and divides by
	// nothing when every request was sent at one instant.
	none := &result.Result{Ended: &result.Ended{}}
	_, m := vegetaOf(t, none)
	for key, want := range map[string]any{"earliest": "0001-01-01T00:00:00Z", "duration": json.Number("0"), "rate": json.Number("0"),
		"success": json.Number("0"), "status_codes": map[string]any{}, "errors": []any{}} {
		if got := m[key]; !reflect.DeepEqual(got, want) {
			t.Errorf("no requests: %s = %v, want %v", key, got, want)
		}
	}
	once := &result.Result{Requests: result.Requests{Total: 3, OK: 3}, Ended: &result.Ended{LastEndNS: 5e6, LatencySumNS: 15e6,
		StatusCodes: map[string]int64{"200": 3}}}
	_, m = vegetaOf(t, once)
	for key, want := range map[string]any{"duration": json.Number("0"), "wait": json.Number("5000000"),
		"rate": json.Number("3"), "throughput": json.Number("3")} {
		if got := m[key]; got != want {
			t.Errorf("one instant: %s = %v, want %v", key, got, want)
		}
	}
	if err := VegetaJSON(io.Discard, simRun()); !errors.Is(err, ErrNotEveryRequest) {
		t.Errorf("a result without Ended: err = %v, want ErrNotEveryRequest", err)
	}
}

func TestVegetaErrors(t *testing.T) {
	cases := []struct {
		name   string
		errors []result.EndedError
		want   []string
	}{
		{"none", nil, []string{}},
		{"each kind as Go words it, in the order first seen", []result.EndedError{
			{Kind: "connection_closed", Service: "web", Method: "GET"},
			{Kind: "timeout", Service: "web", Method: "GET"},
			{Kind: "connection_refused", Service: "api", Method: "POST"},
			{Kind: "connection_reset", Service: "web", Method: "DELETE"},
			{Kind: "http_503", Service: "web", Method: "GET"}},
			[]string{`Get "http://web/": EOF`,
				`Get "http://web/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
				`Post "http://api/": dial tcp api:80: connect: connection refused`,
				`Delete "http://web/": read tcp web:80: read: connection reset by peer`,
				"503 Service Unavailable"}},
		{"a client's own message is kept", []result.EndedError{{Message: "500 Internal Server Error"}, {Kind: "timeout", Message: "Get \"http://10.0.0.1/\": i/o timeout"}},
			[]string{"500 Internal Server Error", `Get "http://10.0.0.1/": i/o timeout`}},
		{"messages are unique", []result.EndedError{{Kind: "http_503", Service: "a", Method: "GET"}, {Kind: "http_503", Service: "b", Method: "GET"}},
			[]string{"503 Service Unavailable"}},
		{"no method reads as a GET", []result.EndedError{{Kind: "timeout", Service: "web"}},
			[]string{`Get "http://web/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`}},
	}
	for _, c := range cases {
		if got := vegetaErrors(&result.Ended{Errors: c.errors}); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %#v, want %#v", c.name, got, c.want)
		}
	}
}

func histogramRun() *result.Result {
	two, four := 2.0, 4.0
	r := endedRun()
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
