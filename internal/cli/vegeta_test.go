package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// mixedScenario fails requests every way simulate can, on two services and two
// methods, so that vegeta's codes, errors (in the order first seen) and bytes all
// have something to count: a POST with a body through a sidecar whose circuit
// breaker answers 503, a GET with a timeout shorter than some answers, and a GET of
// a service without pods (refused).
const mixedScenario = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: vegeta-mixed}
spec:
  duration: 3s
  seed: 7
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
      responseBytes: 1234
  - name: api
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 2ms}
  - name: gone
    replicas: 0
    pod:
      serviceTime: {distribution: constant, value: 1ms}
  clients:
  - name: poster
    target: api
    threads: 4
    request: {method: POST, bodyBytes: 1000}
    sidecar: {circuitBreakers: {maxRequests: 1, maxPendingRequests: 1}}
  - name: impatient
    target: web
    threads: 3
    timeout: 1500us
  - name: lost
    target: gone
    threads: 1
    thinkTime: {distribution: constant, value: 10ms}
`

// timeoutScenario's every request outlives its client's 2 ms timeout.
const timeoutScenario = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: all-timeouts}
spec:
  duration: 1s
  seed: 3
  services:
  - name: web
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 10ms}
  clients:
  - name: impatient
    target: web
    threads: 2
    timeout: 2ms
`

// vegetaReport is what `vegeta report -type=json` prints for a file of results:
// vegeta's own decoder, Metrics and JSON reporter (cmd/vegeta/report.go does the
// same: DecoderFor, Metrics.Add for each result, Close, NewJSONReporter).
func vegetaReport(t *testing.T, path string) (raw []byte, latencies []time.Duration) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := vegeta.DecoderFor(f)
	if dec == nil {
		t.Fatalf("%s: vegeta cannot tell its encoding", path)
	}
	var m vegeta.Metrics
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: vegeta cannot decode it: %v", path, err)
		}
		m.Add(&r)
		latencies = append(latencies, r.Latency)
	}
	m.Close()
	var b bytes.Buffer
	if err := vegeta.NewJSONReporter(&m).Report(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), latencies
}

// TestVegetaJSONAgreesWithVegetaReport runs simulate with --requests (every
// request, in vegeta's CSV) and -o vegeta-json, feeds the CSV to vegeta's own
// report, and compares the two field by field: exactly, but for the latency
// percentiles, which both estimate (see percentileWithin).
func TestVegetaJSONAgreesWithVegetaReport(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"every failure kind", []string{writeTemp(t, "mixed.yaml", mixedScenario)}},
		{"successes only", []string{"../../examples/r1-shared-client-5-threads.yaml", "--duration", "3s"}},
		{"pods removed under load", []string{"../../examples/r2-rapid-scaling.yaml", "--duration", "120s"}},
		{"HTTP/2 with request bodies", []string{"../../examples/r4-http2-vs-http1-loss.yaml", "--duration", "5s"}},
		// Every request ends at its timeout: each percentile is that exact latency,
		// not the top of its histogram bucket above it.
		{"every request at its timeout", []string{writeTemp(t, "timeouts.yaml", timeoutScenario)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			csv := filepath.Join(t.TempDir(), "requests.csv")
			code, out, errOut := runCLI(append([]string{"simulate", "-q", "-o", "vegeta-json", "--requests", csv}, c.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			raw, latencies := vegetaReport(t, csv)
			var ours, theirs vegeta.Metrics
			if err := json.Unmarshal([]byte(out), &ours); err != nil {
				t.Fatalf("ours: %v\n%s", err, out)
			}
			if err := json.Unmarshal(raw, &theirs); err != nil {
				t.Fatal(err)
			}
			if theirs.Requests == 0 {
				t.Fatal("no request: nothing compared")
			}
			exact := []struct {
				field     string
				got, want any
			}{
				{"requests", ours.Requests, theirs.Requests},
				{"latencies.total", ours.Latencies.Total, theirs.Latencies.Total},
				{"latencies.mean", ours.Latencies.Mean, theirs.Latencies.Mean},
				{"latencies.min", ours.Latencies.Min, theirs.Latencies.Min},
				{"latencies.max", ours.Latencies.Max, theirs.Latencies.Max},
				{"bytes_in", ours.BytesIn, theirs.BytesIn},
				{"bytes_out", ours.BytesOut, theirs.BytesOut},
				{"earliest", ours.Earliest.UnixNano(), theirs.Earliest.UnixNano()},
				{"latest", ours.Latest.UnixNano(), theirs.Latest.UnixNano()},
				{"end", ours.End.UnixNano(), theirs.End.UnixNano()},
				{"duration", ours.Duration, theirs.Duration},
				{"wait", ours.Wait, theirs.Wait},
				{"rate", ours.Rate, theirs.Rate},
				{"throughput", ours.Throughput, theirs.Throughput},
				{"success", ours.Success, theirs.Success},
				{"status_codes", ours.StatusCodes, theirs.StatusCodes},
				{"errors", ours.Errors, theirs.Errors},
			}
			for _, e := range exact {
				if !reflect.DeepEqual(e.got, e.want) {
					t.Errorf("%s = %v, vegeta report: %v", e.field, e.got, e.want)
				}
			}
			slices.Sort(latencies)
			for _, p := range []struct {
				name       string
				q          float64
				got, their time.Duration
			}{
				{"50th", 0.50, ours.Latencies.P50, theirs.Latencies.P50},
				{"90th", 0.90, ours.Latencies.P90, theirs.Latencies.P90},
				{"95th", 0.95, ours.Latencies.P95, theirs.Latencies.P95},
				{"99th", 0.99, ours.Latencies.P99, theirs.Latencies.P99},
			} {
				if msg := percentileWithin(latencies, p.q, p.got, p.their); msg != "" {
					t.Errorf("latencies.%s: %s", p.name, msg)
				}
				if p.got < theirs.Latencies.Min || p.got > theirs.Latencies.Max {
					t.Errorf("latencies.%s: ours %s outside the exact min %s and max %s", p.name, p.got, theirs.Latencies.Min, theirs.Latencies.Max)
				}
			}
		})
	}
}

// percentileWithin checks a q-quantile of the sorted latencies as we give it
// (ours) and as vegeta does (theirs) against the exact one, and so against each
// other. --requests holds every request, not a sample, so the exact quantile is
// known; each side's error follows from how it estimates:
//
//   - ours is the middle of the HdrHistogram bucket (3 significant digits) holding
//     the sample of rank round(q·n), a bucket at most 1/1024 of its value wide
//     (2048 sub-buckets, half of them per power of two), so within 1/2048 of it
//     (result.LatencyBetween), clamped into the exact [min, max]; then rounded to
//     the microsecond in the Result (±500 ns).
//   - theirs is a t-digest of compression δ = 100 (lib/metrics.go), interpolated
//     between the means of the two centroids around rank q·n. Its scale function
//     (influxdata/tdigest integratedLocation, k = δ·(asin(2q−1)+π/2)/π) lets a
//     centroid span one unit of k, that is a share dq/dk = (π/δ)·√(q(1−q)) of the
//     requests; the estimate lies among the samples of those two centroids, within
//     2·(π/δ)·√(q(1−q)) of rank q.
//
// Ours and theirs then differ by at most the spread of the samples over that rank
// range plus ours' bucket and rounding.
func percentileWithin(sorted []time.Duration, q float64, ours, theirs time.Duration) string {
	n := len(sorted)
	at := func(rank float64) time.Duration { // the sample of this rank (1-based), clamped
		i := min(max(int(math.Round(rank)), 1), n)
		return sorted[i-1]
	}
	exact := at(q * float64(n))
	lo, hi := exact-exact/2048-1-500, exact+exact/2048+1+500
	if ours < lo || ours > hi {
		return "ours " + ours.String() + " outside [" + lo.String() + ", " + hi.String() + "] around the exact " + exact.String()
	}
	r := 2 * math.Pi / 100 * math.Sqrt(q*(1-q)) * float64(n)
	tlo, thi := at(q*float64(n)-r-1), at(q*float64(n)+r+1)
	if theirs < tlo || theirs > thi {
		return "vegeta's " + theirs.String() + " outside its t-digest's bound [" + tlo.String() + ", " + thi.String() + "]: the tolerance's premise is wrong"
	}
	if d := (ours - theirs).Abs(); d > thi-tlo+exact/1024+1+500 {
		return "ours " + ours.String() + " and vegeta's " + theirs.String() + " differ by more than the two estimates allow"
	}
	return ""
}

// TestReportAndCompareReadVegetaResults: a real vegeta attack's results, in each
// of vegeta's encodings as its own encoders write them, are read by report and
// compare beside a simulation; a Result that cannot be is refused with exit 2,
// the file and the field named.
func TestReportAndCompareReadVegetaResults(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var attack []vegeta.Result
	for i := range 50 {
		r := vegeta.Result{Attack: "real", Seq: uint64(i), Code: 200, Timestamp: t0.Add(time.Duration(i) * 20 * time.Millisecond),
			Latency: time.Duration(1+i%7) * time.Millisecond, BytesIn: 200, Method: "GET", URL: "http://web/"}
		if i%10 == 9 {
			r.Code, r.Error, r.BytesIn = 0, `Get "http://web/": dial tcp 10.96.0.10:80: connect: connection refused`, 0
		}
		attack = append(attack, r)
	}
	encoders := map[string]func(io.Writer) vegeta.Encoder{
		"results.bin": vegeta.NewEncoder, "results.json": vegeta.NewJSONEncoder, "results.csv": vegeta.NewCSVEncoder,
	}
	sim := filepath.Join(dir, "sim.json")
	code, out, errOut := runCLI("simulate", writeTemp(t, "s.yaml", good), "-o", "json", "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(sim, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, enc := range encoders {
		var b bytes.Buffer
		e := enc(&b)
		for i := range attack {
			if err := e.Encode(&attack[i]); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"report", path}, "50, "},
			{[]string{"report", path, "-o", "json"}, `"engine": "vegeta"`},
			{[]string{"report", path, "-o", "vegeta-json"}, `"status_codes":{"0":5,"200":45},"errors":["Get \"http://web/\": dial tcp 10.96.0.10:80: connect: connection refused"]`},
			{[]string{"compare", sim, path}, name},
		} {
			code, out, errOut := runCLI(tc.args...)
			if code != exitOK || !strings.Contains(out, tc.want) {
				t.Errorf("%v: exit %d, want 0 with %q in:\n%s%s", tc.args, code, tc.want, out, errOut)
			}
		}
	}
	data, err := os.ReadFile(sim)
	if err != nil {
		t.Fatal(err)
	}
	// A run that does not sum up every request has no vegeta report to give.
	if code, _, errOut := runCLI("report", "../../resultfile/testdata/load.json", "-o", "vegeta-json"); code != exitBadInput ||
		!strings.Contains(errOut, `which this result does not keep (engine "load"`) {
		t.Errorf("vegeta-json of a load result: exit %d, %s", code, errOut)
	}
	bad := writeTemp(t, "negative.json", strings.Replace(string(data), `"p50": `, `"p50": -`, 1))
	for _, args := range [][]string{{"report", bad}, {"compare", sim, bad}} {
		code, out, errOut := runCLI(args...)
		if code != exitBadInput || !strings.Contains(errOut, bad+": latency_ms.p50: -") || out != "" {
			t.Errorf("%v: exit %d, want 2 naming the file and latency_ms.p50, and nothing printed:\n%s%s", args, code, out, errOut)
		}
	}
}

// TestReportBucketsVegetaResults: report --buckets gives a vegeta attack the hist
// table vegeta report -type=hist[...] prints, which without it says how to ask.
func TestReportBucketsVegetaResults(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	enc := vegeta.NewCSVEncoder(&b)
	for i, lat := range []time.Duration{500 * time.Microsecond, 3 * time.Millisecond, 4 * time.Millisecond, 20 * time.Millisecond} {
		if err := enc.Encode(&vegeta.Result{Attack: "a", Seq: uint64(i), Code: 200, Timestamp: t0.Add(time.Duration(i) * time.Second), Latency: lat, Method: "GET", URL: "http://web/"}); err != nil {
			t.Fatal(err)
		}
	}
	csv := writeTemp(t, "results.csv", b.String())
	code, out, errOut := runCLI("report", csv, "-o", "vegeta-hist", "--buckets", "[0,1ms,10ms]")
	if code != exitOK || !regexp.MustCompile(`\[1ms,\s+10ms\]\s+2\s+50.00%`).MatchString(out) {
		t.Errorf("exit %d, stdout:\n%s\nstderr %s\nwant 2 of 4 requests in [1ms, 10ms]", code, out, errOut)
	}
	code, _, errOut = runCLI("report", csv, "-o", "vegeta-hist")
	if code == exitOK || !strings.Contains(errOut, "--buckets") {
		t.Errorf("without --buckets: exit %d, stderr %q; want it to name --buckets", code, errOut)
	}
}
