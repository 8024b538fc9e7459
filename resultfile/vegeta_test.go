package resultfile

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"trafficlab/report"
	"trafficlab/result"
)

// attack is a vegeta attack's results as its attacker records them
// (lib/attack.go, Attacker.hit): answers with a code and a body, failures of Go's
// http.Client with code 0 and its error, an error status with its status line.
func attack() []vegeta.Result {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	res := func(seq uint64, at, lat time.Duration, code uint16, in, out uint64, err string) vegeta.Result {
		return vegeta.Result{Attack: "checkout", Seq: seq, Code: code, Timestamp: t0.Add(at), Latency: lat,
			BytesIn: in, BytesOut: out, Error: err, Method: "POST", URL: "http://10.0.0.5:8080/cart",
			Headers: http.Header{"X-Trafficlab-Pod": []string{"web-0"}}}
	}
	return []vegeta.Result{
		res(0, 0, 2*ms, 200, 120, 64, ""),
		res(1, 10*ms, 3*ms, 200, 120, 64, ""),
		// Results come in the order they end, not the order they were sent.
		res(3, 30*ms, 1*ms, 302, 0, 64, ""),
		res(2, 20*ms, 30*ms, 0, 0, 0, `Post "http://10.0.0.5:8080/cart": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`),
		res(4, 40*ms, 5*ms, 503, 19, 64, "503 Service Unavailable"),
		res(5, 50*ms, 100*time.Microsecond, 0, 0, 0, `Post "http://10.0.0.5:8080/cart": dial tcp 10.0.0.5:8080: connect: connection refused`),
		res(6, 60*ms, 4*ms, 500, 21, 64, "500 Internal Server Error"),
		res(7, 70*ms, 2*ms, 0, 0, 0, `Post "http://10.0.0.5:8080/cart": read tcp 10.0.0.9:40000->10.0.0.5:8080: read: connection reset by peer`),
		res(8, 80*ms, 2*ms, 0, 0, 0, `Post "http://10.0.0.5:8080/cart": EOF`),
		res(9, 90*ms, 6*ms, 200, 120, 64, ""),
	}
}

// encodings are vegeta's three, each with vegeta's own encoder.
var encodings = []struct {
	name string
	enc  func(*bytes.Buffer) vegeta.Encoder
}{
	{"gob", func(b *bytes.Buffer) vegeta.Encoder { return vegeta.NewEncoder(b) }},
	{"json", func(b *bytes.Buffer) vegeta.Encoder { return vegeta.NewJSONEncoder(b) }},
	{"csv", func(b *bytes.Buffer) vegeta.Encoder { return vegeta.NewCSVEncoder(b) }},
}

func encoded(t testing.TB, enc func(*bytes.Buffer) vegeta.Encoder, rs []vegeta.Result) []byte {
	var b bytes.Buffer
	e := enc(&b)
	for i := range rs {
		if err := e.Encode(&rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestReadsVegetaResults(t *testing.T) {
	rs := attack()
	for _, e := range encodings {
		t.Run(e.name, func(t *testing.T) {
			r, err := Decode("results."+e.name, bytes.NewReader(encoded(t, e.enc, rs)))
			if err != nil {
				t.Fatal(err)
			}
			// Counts by outcome as vegeta counts a success (a code from 200 to 399),
			// errors by the kind their message names; a 500 is failed, of no kind.
			want := result.Requests{Total: 10, OK: 4, Failed: 6}
			if r.Engine != "vegeta" || r.Scenario != "checkout" || r.Requests != want {
				t.Errorf("engine %q, scenario %q, requests %+v; want vegeta, checkout, %+v", r.Engine, r.Scenario, r.Requests, want)
			}
			if want := (result.Errors{Timeout: 1, ConnectionRefused: 1, ConnectionReset: 1, ConnectionClosed: 1, HTTP503: 1}); r.Errors != want {
				t.Errorf("errors %+v, want %+v", r.Errors, want)
			}
			// The Result's latencies are the successes' (1, 2, 3, 6 ms), to HdrHistogram's
			// 3 significant digits as every engine's (a bucket 1/1024 of its value wide);
			// Ended's are every request's.
			if l := r.LatencyMS; l.Min != 1 || l.Mean != 3 || l.Max < 6 || l.Max > 6*(1+1.0/1024) {
				t.Errorf("latency_ms %+v: want min 1, mean 3, max 6", l)
			}
			x := r.Ended
			if x.LatencyMinNS != int64(100*time.Microsecond) || x.LatencyMaxNS != int64(30*time.Millisecond) || x.LatencySumNS != int64(55100*time.Microsecond) {
				t.Errorf("ended latencies min %d, max %d, sum %d", x.LatencyMinNS, x.LatencyMaxNS, x.LatencySumNS)
			}
			if x.FirstSentNS != 0 || x.LastSentNS != int64(90*time.Millisecond) || x.LastEndNS != int64(96*time.Millisecond) {
				t.Errorf("window %d, %d, %d; want 0, 90 ms, 96 ms", x.FirstSentNS, x.LastSentNS, x.LastEndNS)
			}
			// Duration: the window and the wait; vegeta's rate and throughput.
			if r.DurationS != 0.096 || r.RateRPS != result.Round(10/0.09, 3) || r.ThroughputRPS != result.Round(4/0.096, 3) {
				t.Errorf("duration %v, rate %v, throughput %v", r.DurationS, r.RateRPS, r.ThroughputRPS)
			}
			if len(r.Pods) != 0 || len(r.Clients) != 0 || len(r.Timeline) != 0 || len(r.Nodes) != 0 {
				t.Errorf("vegeta measures no pods, clients, timeline or nodes: %d, %d, %d, %d", len(r.Pods), len(r.Clients), len(r.Timeline), len(r.Nodes))
			}
		})
	}
}

// TestVegetaJSONOfVegetaResults: what -o vegeta-json prints for an attack read
// from its results is what vegeta report prints for them, but the percentiles,
// which vegeta estimates with a t-digest (compared in internal/cli's
// TestVegetaJSONAgreesWithVegetaReport).
func TestVegetaJSONOfVegetaResults(t *testing.T) {
	rs := attack()
	var m vegeta.Metrics
	for i := range rs {
		m.Add(&rs[i])
	}
	m.Close()
	var theirs bytes.Buffer
	if err := vegeta.NewJSONReporter(&m).Report(&theirs); err != nil {
		t.Fatal(err)
	}
	for _, e := range encodings {
		r, err := Decode("results."+e.name, bytes.NewReader(encoded(t, e.enc, rs)))
		if err != nil {
			t.Fatal(err)
		}
		var ours bytes.Buffer
		if err := report.VegetaJSON(&ours, r); err != nil {
			t.Fatal(err)
		}
		a, b := withoutPercentiles(t, ours.Bytes()), withoutPercentiles(t, theirs.Bytes())
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: ours\n%v\nvegeta report\n%v", e.name, a, b)
		}
	}
}

func withoutPercentiles(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	lat := m["latencies"].(map[string]any)
	for _, k := range []string{"50th", "90th", "95th", "99th"} {
		delete(lat, k)
	}
	return m
}

func TestVegetaResultsThatCannotBe(t *testing.T) {
	rs := attack()
	rs[3].Latency = -time.Millisecond
	for _, e := range encodings {
		_, err := Decode("bad."+e.name, bytes.NewReader(encoded(t, e.enc, rs)))
		if err == nil || !strings.Contains(err.Error(), "bad."+e.name+": vegeta result 4: latency -1ms is negative") {
			t.Errorf("%s: err = %v", e.name, err)
		}
	}
}

// TestVegetaGobClaimingHugeHeaders: a gob stream whose one result claims 2²⁴
// headers and holds one is refused with little memory, as vegeta's own decoder
// did not: encoding/gob sizes a map by the count claimed, about a GB here.
func TestVegetaGobClaimingHugeHeaders(t *testing.T) {
	rs := attack()[:1]
	rs[0].Headers = http.Header{"A": {"b"}}
	stream := encoded(t, encodings[0].enc, rs)
	// The map is its count, 1, then key "A" and value ["b"], each string its
	// length first; 2²⁴ as a gob uint is its byte count negated, then big-endian.
	huge := withinGobMessage(t, stream, []byte("\x01\x01A\x01\x01b"), []byte("\xfc\x01\x00\x00\x00\x01A\x01\x01b"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode("huge.gob", bytes.NewReader(huge))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.HasPrefix(err.Error(), "huge.gob: ") {
		t.Errorf("err = %v, want it refused", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("reading it allocated %d MB", grew>>20)
	}
}

// withinGobMessage replaces old by new in the one message of a gob stream that
// holds it, and rewrites that message's length: a stream is messages, each a
// gob uint length and that many bytes (encoding/gob doc.go).
func withinGobMessage(t *testing.T, stream, old, new []byte) []byte {
	var out []byte
	replaced := false
	for rest := stream; len(rest) > 0; {
		n, size := gobUint(rest)
		msg := rest[size : size+n]
		rest = rest[size+n:]
		if bytes.Contains(msg, old) {
			msg = bytes.Replace(msg, old, new, 1)
			replaced = true
		}
		out = append(appendGobUint(out, len(msg)), msg...)
	}
	if !replaced {
		t.Fatalf("%q is in no message of the stream", old)
	}
	return out
}

func gobUint(b []byte) (n, size int) {
	if b[0] < 0x80 {
		return int(b[0]), 1
	}
	size = 1 + int(-int8(b[0]))
	for _, c := range b[1:size] {
		n = n<<8 | int(c)
	}
	return n, size
}

func appendGobUint(b []byte, n int) []byte {
	if n < 0x80 {
		return append(b, byte(n))
	}
	var be []byte
	for ; n > 0; n >>= 8 {
		be = append([]byte{byte(n)}, be...)
	}
	return append(append(b, byte(-int8(len(be)))), be...)
}

// TestVegetaLatenciesAreExactAtTheirEnds: a single request of exactly 1.5 ms is
// 1.5 ms at every figure, not its histogram bucket's edges (1.499 and 1.500 ms).
func TestVegetaLatenciesAreExactAtTheirEnds(t *testing.T) {
	rs := attack()[:1]
	rs[0].Code, rs[0].Error, rs[0].Latency = 200, "", 1500*time.Microsecond
	r, err := Decode("one.csv", bytes.NewReader(encoded(t, encodings[2].enc, rs)))
	if err != nil {
		t.Fatal(err)
	}
	want := result.Latency{Min: 1.5, Mean: 1.5, P50: 1.5, P90: 1.5, P95: 1.5, P99: 1.5, P999: 1.5, Max: 1.5}
	if r.LatencyMS != want || r.Ended.LatencyMS != want {
		t.Errorf("latency_ms %+v, ended %+v; want 1.5 ms throughout", r.LatencyMS, r.Ended.LatencyMS)
	}
}

// TestBucketsAsVegetaCountsThem: --buckets on vegeta's results gives the counts
// vegeta's own Histogram gives for the same results (every request, failed ones
// too); a trafficlab Result keeps only its own histogram and says how to get
// another. The bounds read as vegeta reads them.
func TestBucketsAsVegetaCountsThem(t *testing.T) {
	parse := []struct {
		in   string
		want []time.Duration
		err  string
	}{
		{"[0,1ms,10ms]", []time.Duration{0, time.Millisecond, 10 * time.Millisecond}, ""},
		{"[2ms, 5ms]", []time.Duration{0, 2 * time.Millisecond, 5 * time.Millisecond}, ""}, // vegeta adds the 0
		{"0,1ms", nil, "bad buckets"},
		{"[0,x]", nil, "invalid duration"},
		{"[0,2ms,1ms]", nil, "1ms is not above 2ms"},
	}
	for _, c := range parse {
		got, err := ParseBuckets(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseBuckets(%q): %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseBuckets(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}

	bounds, _ := ParseBuckets("[0,1ms,2ms,5ms]")
	rs := attack()
	theirs := vegeta.Histogram{Buckets: bounds}
	for i := range rs {
		theirs.Add(&rs[i])
	}
	r, err := DecodeBucketed("a.csv", bytes.NewReader(encoded(t, encodings[2].enc, rs)), bounds)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Histogram) != len(bounds) {
		t.Fatalf("%d buckets, want %d", len(r.Histogram), len(bounds))
	}
	for i, b := range r.Histogram {
		if b.Count != int64(theirs.Counts[i]) || b.FromMS != result.MS(int64(bounds[i])) {
			t.Errorf("bucket %d: %+v, vegeta counts %d from %s", i, b, theirs.Counts[i], bounds[i])
		}
	}

	_, err = ReadBucketed(filepath.Join("testdata", "simulate-r1.json"), bounds)
	if err == nil || !strings.Contains(err.Error(), "run it again with --set 'spec.report.histogram=[0s, 1ms, 2ms, 5ms]'") {
		t.Errorf("a Result without those buckets: %v", err)
	}
}
