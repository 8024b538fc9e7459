package resultfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// The testdata runs are simulate's own output (see testdata/README).
var runs = []string{"simulate-r1.json", "simulate-mixed.json", "simulate-r2.json", "load.json"}

func readRun(t *testing.T, name string) *result.Result {
	t.Helper()
	r, err := Read(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunsPassTheirCheck(t *testing.T) {
	for _, name := range append(runs, "vegeta-mixed.csv") {
		readRun(t, name)
	}
}

// TestCheckRefusesWhatNoRunProduces: each case breaks one field of a real run and
// must be refused with that field named.
func TestCheckRefusesWhatNoRunProduces(t *testing.T) {
	cases := []struct {
		field string
		bad   func(r *result.Result)
	}{
		{"engine", func(r *result.Result) { r.Engine = "simulator" }},
		{"duration_s", func(r *result.Result) { r.DurationS = -1 }},
		{"latency_ms.p50", func(r *result.Result) { r.LatencyMS.P50 = -0.5 }},
		{"latency_ms.p90", func(r *result.Result) { r.LatencyMS.P90 = r.LatencyMS.P50 / 2 }},
		{"latency_ms.max", func(r *result.Result) { r.LatencyMS.Max = r.LatencyMS.P999 / 2 }},
		{"latency_ms.mean", func(r *result.Result) { r.LatencyMS.Mean = r.LatencyMS.Max * 2 }},
		{"latency_ms", func(r *result.Result) { r.Requests.Total -= r.Requests.OK; r.Requests.OK = 0 }},
		{"requests.ok", func(r *result.Result) { r.Requests.OK = -1 }},
		{"requests.total", func(r *result.Result) { r.Requests.Total++ }},
		{"errors", func(r *result.Result) { r.Errors.Timeout += r.Requests.Failed + 1 }},
		{"errors.http_503", func(r *result.Result) { r.Errors.HTTP503 = -3 }},
		{"slow", func(r *result.Result) { r.Slow = r.Requests.OK + 1 }},
		{"slow_share", func(r *result.Result) { r.SlowShare = 1.5 }},
		{"throughput_rps", func(r *result.Result) { r.ThroughputRPS = -2 }},
		{"latency_spectrum[1]", func(r *result.Result) {
			r.LatencySpectrum = []result.Percentile{{Percentile: 50, MS: 2, Count: 10}, {Percentile: 90, MS: 1, Count: 18}}
		}},
		{"timeline[0].p90_ms", func(r *result.Result) { r.Timeline[0].P90MS = r.Timeline[0].P50MS - 1 }},
		{"timeline[0].requests", func(r *result.Result) { r.Timeline[0].Requests = -1 }},
		{"pods[0].requests", func(r *result.Result) { r.Pods[0].Requests = -7 }},
		{"pods[0].cpu_utilization", func(r *result.Result) { r.Pods[0].CPUUtilization = math.Inf(1) }},
		{"ended.latency_ms.p99", func(r *result.Result) { r.Ended.LatencyMS.P99 = r.Ended.LatencyMS.P95 / 2 }},
		{"ended.latency_min_ns", func(r *result.Result) { r.Ended.LatencyMinNS = r.Ended.LatencyMaxNS + 1 }},
		{"ended.latency_sum_ns", func(r *result.Result) { r.Ended.LatencySumNS = r.Ended.LatencyMaxNS*r.Requests.Total + 1 }},
		{"ended.last_sent_ns", func(r *result.Result) { r.Ended.LastEndNS = r.Ended.LastSentNS - 1 }},
		{"ended.bytes_in", func(r *result.Result) { r.Ended.BytesIn = -1 }},
		{"ended.status_codes", func(r *result.Result) { r.Ended.StatusCodes["200"]++ }},
		{"ended.errors[0]", func(r *result.Result) { r.Ended.Errors = []result.EndedError{{}} }},
		// Every number, wherever it is.
		{"samples[2].latency_ms", func(r *result.Result) { r.Samples[2].LatencyMS = -1 }},
		{"clients[1].replicas", func(r *result.Result) { r.Clients[1].Replicas = -2 }},
		{"timeline[0].replicas.web", func(r *result.Result) { r.Timeline[0].Replicas["web"] = -1 }},
		{"nodes[0].cpu_utilization", func(r *result.Result) { r.Nodes[0].CPUUtilization = math.NaN() }},
		// Latencies over the hour the engines' histograms end at.
		{"latency_ms.max", func(r *result.Result) { r.LatencyMS.Max = 1e308 }},
		{"latency_spectrum[0].ms", func(r *result.Result) { r.LatencySpectrum[0].MS = 4e6 }},
	}
	for _, c := range cases {
		r := readRun(t, "simulate-mixed.json")
		c.bad(r)
		err := Check(r)
		e, ok := err.(*Error)
		if !ok || e.Field != c.field {
			t.Errorf("%s broken: Check = %v, want an error naming %s", c.field, err, c.field)
		}
	}
}

// TestReadNamesFileAndField: what report and compare print for a file they refuse.
func TestReadNamesFileAndField(t *testing.T) {
	negative := strings.Replace(mustRead(t, "simulate-r1.json"), `"p50": `, `"p50": -`, 1)
	cases := []struct {
		name, body, want string
	}{
		{"negative p50", negative, `BAD: latency_ms.p50: -`},
		{"empty", "", "BAD: empty"},
		{"not JSON", "{engine", "BAD: not a trafficlab result (-o json)"},
		{"no engine", `{"requests": {}}`, "BAD: not a trafficlab result (-o json): no engine field"},
		{"a sweep", `{"engine": "simulate", "points": []}`, "BAD: a sweep's result"},
		{"a vegeta report", `{"latencies": {}, "requests": 3}`, "BAD: a vegeta report (vegeta report -type=json)"},
		{"an old load report", `{"target": "http://x/", "pool": {}}`, "BAD: a load report of an older trafficlab"},
		{"another engine", `{"engine": "k6"}`, `BAD: engine: "k6" is not an engine this version reads`},
		{"NaN", `{"engine": "simulate", "duration_s": NaN}`, "BAD: not a trafficlab result (-o json): invalid character"},
		{"text", "Requests [total]\n", "BAD: neither a trafficlab result (-o json) nor vegeta's results"},
	}
	for _, c := range cases {
		_, err := Decode("BAD", strings.NewReader(c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to start %q", c.name, err, c.want)
		}
	}
}

func mustRead(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResultRoundTrips: a Result read is the Result written, Ended included.
func TestResultRoundTrips(t *testing.T) {
	raw := mustRead(t, "simulate-mixed.json")
	r := readRun(t, "simulate-mixed.json")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	if b.String() != raw {
		t.Error("the Result read differs from the one written")
	}
	if r.Ended == nil || len(r.Ended.Errors) != 3 {
		t.Errorf("ended: %+v", r.Ended)
	}
}

// A Result reads whatever proxy_mode it was written with: a mode this version models
// comes back with its traits, no mode (load, vegeta) or a mode it does not know reads
// and writes back as it was.
func TestReadsAnyProxyMode(t *testing.T) {
	raw := mustRead(t, "simulate-r1.json")
	const was = `"proxy_mode": "iptables"`
	if !strings.Contains(raw, was) {
		t.Fatalf("simulate-r1.json has no %s", was)
	}
	for _, mode := range []string{"iptables", "userspace", "", "ebpf"} {
		doc := strings.Replace(raw, was, `"proxy_mode": "`+mode+`"`, 1)
		r, err := Decode("r.json", strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		if r.ProxyMode.String() != mode || r.ProxyMode.Known() != slices.Contains(kubeproxy.Names(), mode) {
			t.Errorf("%q read as %q (known %v)", mode, r.ProxyMode, r.ProxyMode.Known())
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil || b.String() != doc {
			t.Errorf("%q: written back differently (%v)", mode, err)
		}
	}
	if r, _ := Decode("r.json", strings.NewReader(strings.Replace(raw, was, `"proxy_mode": "userspace"`, 1))); !r.ProxyMode.Relays() {
		t.Error("userspace read without its traits")
	}
}

// TestCheckHoldsNumbersToWhatARunCanGive: each number against what the engines can
// produce from the run's other numbers; the cases with no field are at the edge of
// what a run can give and must pass. The run lasted 2 s on nodes of 2 cores.
func TestCheckHoldsNumbersToWhatARunCanGive(t *testing.T) {
	cases := []struct {
		name  string
		field string // "" when the Result must pass
		bad   func(r *result.Result)
	}{
		// Pods finish at most the requests sent: those ended, and in flight at the end.
		{"the pods finished every request sent", "", func(r *result.Result) { r.Pods[0].Requests += unfinished(r) }},
		{"one request more than were sent", "pods", func(r *result.Result) { r.Pods[0].Requests += unfinished(r) + 1 }},
		{"a resent request reaches two pods", "", func(r *result.Result) { r.Requests.Retried = 1; r.Pods[0].Requests += unfinished(r) + 1 }},
		{"1e12 requests on a pod", "pods", func(r *result.Result) { r.Pods[0].Requests = 1e12 }},
		// Rates are counts over the duration, rounded to 3 decimals.
		{"throughput above the rate", "throughput_rps", func(r *result.Result) { r.ThroughputRPS = 1e308 }},
		{"both rates huge", "rate_rps", func(r *result.Result) { r.ThroughputRPS, r.RateRPS = 1e308, 1e308 }},
		{"rate rounded up", "", func(r *result.Result) {
			r.RateRPS = float64(r.Requests.Total+r.Requests.InFlight)/r.DurationS + 0.0005
		}},
		{"rate of one request more", "rate_rps", func(r *result.Result) {
			r.RateRPS = float64(r.Requests.Total+r.Requests.InFlight+1) / r.DurationS
		}},
		{"no duration beside rates", "duration_s", func(r *result.Result) { r.DurationS = 0 }},
		// CPU: a share of what the cores allow, a quota period over a 2 s life at most.
		{"a pod at its quota plus two periods", "", func(r *result.Result) { r.Pods[0].CPUUtilization = 1 + 2*0.1/2 }},
		{"a pod beyond its quota", "pods[0].cpu_utilization", func(r *result.Result) { r.Pods[0].CPUUtilization = 1.2 }},
		{"1e9 CPU", "pods[0].cpu_utilization", func(r *result.Result) { r.Pods[0].CPUUtilization = 1e9 }},
		{"more cores than the node has", "pods[0].cpu_cores", func(r *result.Result) { r.Pods[0].CPUCores = 3 }},
		{"a node over its cores", "nodes[0].cpu_utilization", func(r *result.Result) { r.Nodes[0].CPUUtilization = 1.5 }},
		// Every share, wherever it is, is at most 1.
		{"a disk busy more than all the time", "nodes[1].disk_utilization", func(r *result.Result) { r.Nodes[1].DiskUtilization = 1.01 }},
		// The timeline: at most the points an engine writes.
		{"a full timeline", "", func(r *result.Result) {
			r.Timeline = append(r.Timeline, make([]result.Point, MaxTimelinePoints-len(r.Timeline))...)
		}},
		{"a point too many", "timeline", func(r *result.Result) {
			r.Timeline = append(r.Timeline, make([]result.Point, MaxTimelinePoints+1-len(r.Timeline))...)
		}},
	}
	for _, c := range cases {
		r := readRun(t, "simulate-r1.json")
		c.bad(r)
		err := Check(r)
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: Check = %v, want it to pass", c.name, err)
			}
			continue
		}
		if e, ok := err.(*Error); !ok || e.Field != c.field {
			t.Errorf("%s: Check = %v, want an error naming %s", c.name, err, c.field)
		}
	}
}

// TestReadBoundsWhatItHolds: a Result is read whole, so its size and its timeline
// are bounded before it is decoded; a vegeta latency beyond the histograms' hour is
// refused (one of 2⁶³ ns printed a negative duration).
func TestReadBoundsWhatItHolds(t *testing.T) {
	points := "[" + strings.Repeat("{},", MaxTimelinePoints) + "{}]"
	huge := io.MultiReader(strings.NewReader(`{"engine": "simulate", "scenario": "`),
		io.LimitReader(repeatReader('x'), MaxResultBytes), strings.NewReader(`"}`))
	maxLatency, err := os.Open(filepath.Join("testdata", "vegeta-max-latency.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer maxLatency.Close()
	cases := []struct {
		name string
		body io.Reader
		want string
	}{
		{"a long timeline", strings.NewReader(`{"engine": "simulate", "timeline": ` + points + `}`),
			fmt.Sprintf("BAD: timeline: %d points; no engine writes more than %d", MaxTimelinePoints+1, MaxTimelinePoints)},
		{"a huge file", huge, "BAD: over 64 MB"},
		{"a vegeta latency of 2⁶³ ns", maxLatency, "BAD: vegeta result 1: latency 2562047h47m16.854775807s is over the hour"},
	}
	for _, c := range cases {
		_, err := Decode("BAD", c.body)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to start %q", c.name, err, c.want)
		}
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// unfinished is how many of the requests sent no pod finished.
func unfinished(r *result.Result) int64 {
	n := r.Requests.Total + r.Requests.InFlight
	for _, p := range r.Pods {
		n -= p.Requests
	}
	return n
}
