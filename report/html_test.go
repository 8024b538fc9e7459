package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"trafficlab/result"
)

const hostile = `</script><script>alert(1)</script>`

// blob returns the JSON document of a page.
func blob(t *testing.T, page string) []byte {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no data block")
	}
	return []byte(m[1])
}

func write(t *testing.T, r *result.Result, opts HTMLOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, r, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestUserInputIsEscaped(t *testing.T) {
	r := &result.Result{Engine: "simulate", Scenario: hostile, Seed: 1, DurationS: 2, TimelineIntervalS: 1,
		Pods:  []result.Pod{{Name: hostile, Service: "<b>web</b>", Node: "n&1", Requests: 10}},
		Nodes: []result.Node{{Name: hostile, CPU: 2}, {Name: "n&1", CPU: 2}},
		Timeline: []result.Point{
			{TS: 0, Requests: 5, PodRequests: map[string]int64{hostile: 5}, NodeCPUCores: map[string]float64{hostile: 1}},
			{TS: 1, Requests: 5, PodRequests: map[string]int64{hostile: 5}},
		},
		ScaleEvents: []result.ScaleEvent{{TS: 1, Service: "<b>web</b>", From: 1, To: 2, Reason: hostile}},
	}
	page := write(t, r, HTMLOptions{Scenario: []byte("metadata: {name: '" + hostile + "'}\n")})
	if strings.Contains(page, "<script>alert(1)") || strings.Contains(page, "<b>web</b>") {
		t.Error("user input reached the page unescaped")
	}
	// The page's own three scripts, and no other: nothing closed one and opened another.
	if n := strings.Count(page, "<script"); n != 3 {
		t.Errorf("%d <script> tags, want 3 (data, page, uPlot)", n)
	}
	for _, want := range []string{
		"<title>trafficlab: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>",
		"<td>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>", // the nodes table
		"metadata: {name: &#39;&lt;/script&gt;",                         // the scenario
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	var d struct {
		Pods   []podBar `json:"pods"`
		Events []event  `json:"events"`
	}
	if err := json.Unmarshal(blob(t, page), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Pods) != 1 || d.Pods[0].Name != hostile || d.Events[0].Reason != hostile {
		t.Errorf("names did not survive the round trip: %+v", d)
	}
}

// TestDataRoundTrips checks that the page carries exactly the chart data, as JSON
// the browser parses back.
func TestDataRoundTrips(t *testing.T) {
	r := oneHour()
	var fromPage, fromData any
	if err := json.Unmarshal(blob(t, write(t, r, HTMLOptions{})), &fromPage); err != nil {
		t.Fatal(err)
	}
	direct, err := json.Marshal(chartData(r))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(direct, &fromData); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromPage, fromData) {
		t.Error("the page's data block differs from the chart data")
	}
}

// oneHour is a long, wide run: 3,600 one-second points, 200 pods on 20 nodes,
// 10,000 samples, errors of two kinds, and a latency spike at 1,234 s.
func oneHour() *result.Result {
	const points, pods, nodes = 3600, 200, 20
	r := &result.Result{Engine: "simulate", Scenario: "one-hour", Seed: 1, DurationS: points, TimelineIntervalS: 1,
		Requests: result.Requests{Total: points * 1000, OK: points * 1000}, ThroughputRPS: 1000}
	for n := 0; n < nodes; n++ {
		r.Nodes = append(r.Nodes, result.Node{Name: fmt.Sprintf("pool-%d", n), CPU: 8, CPUUtilization: 0.4, Pods: pods / nodes})
	}
	for p := 0; p < pods; p++ {
		r.Pods = append(r.Pods, result.Pod{Name: fmt.Sprintf("api-%d", p), Service: []string{"api", "web"}[p%2],
			Node: fmt.Sprintf("pool-%d", p%nodes), Requests: int64(points * (5 + p%7))})
	}
	for i := 0; i < points; i++ {
		pt := result.Point{TS: float64(i), Requests: 1000, P50MS: 2, P90MS: 5, P99MS: 20, P999MS: 50,
			Replicas:        map[string]int{"api": 100 + i/600, "web": 100},
			DesiredReplicas: map[string]int{"api": 100 + i/600, "web": 100},
			ReadyEndpoints:  map[string]int{"api": 100 + i/600, "web": 100},
			PodRequests:     map[string]int64{}, NodeCPUCores: map[string]float64{}}
		if i == 1234 {
			pt.P999MS = 5000
		}
		if i%300 == 0 {
			pt.Errors = 3
			pt.ErrorsByKind = &result.Errors{ConnectionRefused: 2, Timeout: 1}
		}
		for _, p := range r.Pods {
			pt.PodRequests[p.Name] = p.Requests / points
		}
		for _, n := range r.Nodes {
			pt.NodeCPUCores[n.Name] = 3 + math.Sin(float64(i)/300)
		}
		r.Timeline = append(r.Timeline, pt)
	}
	for i := 0; i < 10000; i++ {
		s := result.Sample{TS: float64(i) * 0.36, LatencyMS: 1 + float64(i%97)}
		if i%1000 == 0 {
			s.Error = "timeout"
		}
		r.Samples = append(r.Samples, s)
	}
	for i := 0; i <= 100; i++ {
		q := 100 * (1 - math.Pow(0.5, float64(i)/5))
		if i == 100 {
			q = 100
		}
		r.LatencySpectrum = append(r.LatencySpectrum, result.Percentile{Percentile: q, MS: 0.5 * math.Pow(1.1, float64(i)),
			Count: int64(q / 100 * float64(r.Requests.OK))})
	}
	for i := 1; i <= 5; i++ {
		r.ScaleEvents = append(r.ScaleEvents, result.ScaleEvent{TS: float64(600 * i), Service: "api", From: 99 + i, To: 100 + i})
	}
	return r
}

func TestOneHourPageIsSmallAndKeepsTheTail(t *testing.T) {
	r := oneHour()
	page := write(t, r, HTMLOptions{})
	t.Logf("one-hour page: %d bytes", len(page))
	if len(page) >= 5<<20 {
		t.Errorf("one-hour page is %d bytes, want under 5 MB", len(page))
	}
	d := chartData(r)
	if len(d.T) > maxBuckets || d.StepS != 4 {
		t.Errorf("%d time points of %g s, want at most %d", len(d.T), d.StepS, maxBuckets)
	}
	worst := 0.0
	for _, v := range d.Latency[3].Values {
		worst = max(worst, v)
	}
	if d.Latency[3].Name != "p99.9" || worst != 5000 {
		t.Errorf("%s peaks at %g ms, want the 5000 ms spike kept", d.Latency[3].Name, worst)
	}
	if len(d.PodSeries) != topPods+1 || d.PodSeries[topPods].Name != "others" {
		t.Errorf("%d pod series, want the %d busiest and others", len(d.PodSeries), topPods)
	}
	// Counts survive the merge: per-second rates times the bucket width add up.
	total := 0.0
	for _, l := range d.PodSeries {
		for _, v := range l.Values {
			total += v * d.StepS
		}
	}
	want := 0.0
	for _, p := range r.Pods {
		want += float64(p.Requests / 3600 * 3600)
	}
	if math.Abs(total-want) > 1e-6*want {
		t.Errorf("pod series hold %g requests, want %g", total, want)
	}
	if got := len(d.Replicas[0].T); got != 8 { // start, 5 changes, end; web: start, end
		t.Errorf("api replicas at %d instants, want 8 (start, five changes, end)", got)
	}
	if len(d.NodeCPU) != topNodes {
		t.Errorf("%d node series, want the %d busiest", len(d.NodeCPU), topNodes)
	}
}

func TestSampledKeepsFailuresAndTheSlowest(t *testing.T) {
	var in []result.Sample
	for i := 0; i < 3*maxSamples; i++ {
		s := result.Sample{TS: float64(3*maxSamples - i), LatencyMS: 1}
		switch {
		case i%500 == 0:
			s.Error = "connection_reset"
		case i == 777:
			s.LatencyMS = 10000
		}
		in = append(in, s)
	}
	s := sampled(in)
	if len(s.T) > maxSamples || s.Of != len(in) {
		t.Fatalf("kept %d of %d, want at most %d", len(s.T), s.Of, maxSamples)
	}
	failed, slowest := 0, 0.0
	for i := range s.T {
		if s.Kind[i] >= 0 {
			failed++
		}
		slowest = max(slowest, s.MS[i])
		if i > 0 && s.T[i] < s.T[i-1] {
			t.Fatal("samples out of time order")
		}
	}
	if failed != 3*maxSamples/500 || slowest != 10000 || !reflect.DeepEqual(s.Kinds, []string{"connection_reset"}) {
		t.Errorf("kept %d failures (want %d) and a slowest of %g ms (want 10000)", failed, 3*maxSamples/500, slowest)
	}
}

// spec builds a spectrum from (percentile, ms, count) triples.
func spec(v ...float64) []result.Percentile {
	var out []result.Percentile
	for i := 0; i+2 < len(v); i += 3 {
		out = append(out, result.Percentile{Percentile: v[i], MS: v[i+1], Count: int64(v[i+2])})
	}
	return out
}

func TestSpectrumHistogram(t *testing.T) {
	cases := []struct {
		name  string
		spec  []result.Percentile
		edges []float64 // want, in ms
		count []float64
	}{
		{"one value", spec(0, 1, 10, 100, 1, 10), []float64{1, 1.25}, []float64{10}},
		{"spread evenly in log space", spec(0, 1, 0, 100, 1.6, 100), []float64{1, 1.25, 1.6, 2}, []float64{47, 53, 0}},
		{"over decades", spec(0, 0.9, 5, 50, 0.9, 50, 100, 12, 100),
			[]float64{0.8, 1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8, 10, 12.5}, nil},
		{"nothing", nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := spectrumHistogram(c.spec)
			if c.edges == nil {
				if h != nil {
					t.Fatalf("got %+v, want none", h)
				}
				return
			}
			edges := append(append([]float64(nil), h.From...), h.To[len(h.To)-1])
			for i := range edges {
				edges[i] = math.Round(edges[i]*1000) / 1000
			}
			if !reflect.DeepEqual(edges, c.edges) {
				t.Errorf("edges %v, want %v", edges, c.edges)
			}
			if c.count != nil && !reflect.DeepEqual([]float64(h.Counts), c.count) {
				t.Errorf("counts %v, want %v", h.Counts, c.count)
			}
			sum := 0.0
			for _, n := range h.Counts {
				sum += n
			}
			if last := float64(c.spec[len(c.spec)-1].Count); math.Abs(sum-last) > float64(len(h.Counts)) {
				t.Errorf("buckets hold %g requests, want %g", sum, last)
			}
		})
	}
}

func TestNumbersAreCompact(t *testing.T) {
	b, err := json.Marshal(struct {
		S series
		T times
	}{series{0, 1234.567, 0.0123456, 98765.4, math.NaN(), -2.5}, times{0.0004, 3599.1234}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"S":[0,1235,0.01235,98765,null,-2.5],"T":[0,3599.123]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestFormats(t *testing.T) {
	cases := []struct{ got, want string }{
		{GoDuration(120), "2m"},
		{GoDuration(90), "1m30s"},
		{GoDuration(3600), "1h"},
		{GoDuration(4), "4s"},
		{GoDuration(6.355097987), "6.355s"}, // an interrupted run, to the millisecond
		{GoDuration(0.0003), "300µs"},       // under a second: not 0s
		{GoDuration(0.0255), "25.5ms"},
		{GoDuration(1.5e-7), "150ns"},
		{perSecond(4612.96), "4,613.0/s"},
		{perSecond(0.04), "0.0/s"},
		{count(1754311), "1,754,311"},
		{count(-1000), "-1,000"},
		{ms(0.85), "850.0µs"},
		{ms(1200), "1.200s"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestSections(t *testing.T) {
	del := 5.0
	quiet := &result.Result{Engine: "simulate", Requests: result.Requests{Total: 10, OK: 10}, Pods: []result.Pod{{Name: "web-0", Service: "web", Requests: 10}}}
	if got := sections(quiet); len(got) != 0 {
		t.Errorf("a run without errors or slow requests: sections %+v", got)
	}
	r := &result.Result{Engine: "simulate", Requests: result.Requests{Total: 10, OK: 9, Failed: 1},
		Errors: result.Errors{ConnectionRefused: 1},
		Pods:   []result.Pod{{Name: "web-0", Service: "web", Requests: 9, DeletedS: &del, Errors: result.Errors{ConnectionRefused: 1}}}}
	got := sections(r)
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, "Where the errors came from: 1 of 1 failed request") || strings.HasSuffix(got[0].Text, "\n") {
		t.Errorf("sections %+v, want the attribution alone, trimmed", got)
	}
}

// The page says only what the run shows: the histogram's caption names what it
// counts (the scenario's buckets count every request, failures included; derived
// buckets only successes), and a run none of whose sections explains anything is
// called uneventful only when no request failed or was slow.
func TestPageSaysWhatItCounts(t *testing.T) {
	to := 10.0
	buckets := []result.Bucket{{FromMS: 0, ToMS: &to, Count: 5}, {FromMS: 10, Count: 5}}
	spectrum := []result.Percentile{{Percentile: 50, MS: 1, Count: 3}, {Percentile: 100, MS: 2, Count: 5}}
	cases := []struct {
		name      string
		r         *result.Result
		want, not []string
	}{
		{"buckets with timeouts", &result.Result{Errors: result.Errors{Timeout: 5}, Histogram: buckets},
			[]string{"every request, the 5 failed ones among them at their time to failure",
				"No section of the text report explains this run, although 5 requests failed."},
			[]string{"How many successful requests", "Nothing to explain"}},
		{"derived buckets with timeouts", &result.Result{Errors: result.Errors{Timeout: 5}, LatencySpectrum: spectrum},
			[]string{"How many successful requests took how long (the 5 failed requests are not counted)."},
			[]string{"every request", "no request failed"}},
		{"no failures", &result.Result{Histogram: buckets},
			[]string{"every request (none failed)", "Nothing to explain: the load was spread evenly, and no request failed or was slow."},
			[]string{"successful requests took"}},
	}
	for _, c := range cases {
		c.r.Engine, c.r.Scenario = "simulate", "s"
		page := write(t, c.r, HTMLOptions{})
		for _, w := range c.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page lacks %q", c.name, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(page, n) {
				t.Errorf("%s: the page says %q", c.name, n)
			}
		}
	}
}

// spectrumHistogramHolds checks that the histogram of a spectrum counts its
// requests in increasing buckets, without panicking whatever the spectrum.
func spectrumHistogramHolds(t *testing.T, spec []result.Percentile) {
	t.Helper()
	h := spectrumHistogram(spec)
	if h == nil {
		return
	}
	sum := 0.0
	for k := range h.Counts {
		sum += h.Counts[k]
		if !(h.From[k] < h.To[k]) {
			t.Errorf("bucket %d is [%g, %g)", k, h.From[k], h.To[k])
		}
	}
	last := 0.0 // the requests up to the slowest finite latency
	for _, p := range spec {
		if p.MS > 0 && !math.IsInf(p.MS, 1) {
			last = float64(p.Count)
		}
	}
	if last > 0 && math.Abs(sum-last) > float64(len(h.Counts)) {
		t.Errorf("buckets hold %g requests, want %g", sum, last)
	}
}

// Extreme spectra, which resultfile.Check refuses but a Result in memory may hold,
// are drawn without a panic: a latency of 1e308 ms, the largest float, infinity,
// the smallest float, and many decades apart.
func TestSpectrumHistogramOfExtremes(t *testing.T) {
	for _, s := range [][]result.Percentile{
		spec(0, 1e308, 1, 100, 1e308, 10),
		spec(0, 1, 1, 100, 1e308, 10),
		spec(0, 1, 1, 100, math.MaxFloat64, 10),
		spec(0, 1, 1, 50, 2, 5, 100, math.Inf(1), 10),
		spec(0, 5e-324, 1, 100, 1, 10),
		spec(0, 1e-300, 1, 100, 1e300, 10),
		spec(0, 1000, 5, 100, 1000, 10),
	} {
		spectrumHistogramHolds(t, s)
		write(t, &result.Result{Engine: "simulate", LatencySpectrum: s}, HTMLOptions{})
	}
}

func FuzzSpectrumHistogram(f *testing.F) {
	f.Add(1e308, 1e308, int64(10))
	f.Add(1.0, 1.6, int64(100))
	f.Add(5e-324, math.MaxFloat64, int64(1))
	f.Fuzz(func(t *testing.T, lo, hi float64, n int64) {
		spectrumHistogramHolds(t, spec(0, lo, 1, 100, hi, float64(n)))
	})
}
