package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// promRun is the old-style run (pods that came and went, sidecars, TCP, scale
// events) with a slow threshold, a throttled pod and a pod name that needs escaping.
func promRun() *result.Result {
	r := oldStyle()
	r.SlowThresholdMS, r.Slow = 500, 4
	r.LatencyMS = result.Latency{Min: 0.2, Mean: 1.5, P50: 0.9, P90: 2.5, P95: 4, P99: 19, P999: 250, Max: 800}
	r.Pods[0].Throttling = &result.Throttling{Periods: 1200, ThrottledPeriods: 300, ThrottledS: 7.25}
	r.Pods[2].Name = "web-\"2\"\\\n"
	return r
}

// parseProm renders r with Prometheus and parses it with expfmt's text parser, which
// fails on anything the 0.0.4 format does not allow (a sample before its TYPE, a
// second TYPE for a family, bad escapes, bad names).
func parseProm(t *testing.T, r *result.Result) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	var b bytes.Buffer
	if err := Prometheus(&b, r); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("not valid exposition format: %v\n%s", err, b.String())
	}
	return b.String(), fams
}

// promLabels writes a metric's labels as name=value, sorted, for lookups.
func promLabels(m *dto.Metric) string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// promValue finds the sample of family name with exactly these labels, given as
// name=value pairs joined by commas in any order.
func promValue(t *testing.T, fams map[string]*dto.MetricFamily, name, lbls string) float64 {
	t.Helper()
	pairs := strings.Split(lbls, ",")
	sort.Strings(pairs)
	lbls = strings.Join(pairs, ",")
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
	for _, m := range f.GetMetric() {
		if promLabels(m) != lbls {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue()
		}
		t.Fatalf("%s is a %v", name, f.GetType())
	}
	t.Fatalf("no sample %s{%s}", name, lbls)
	return 0
}

func TestPrometheusParses(t *testing.T) {
	out, fams := parseProm(t, promRun())
	// Every family once, and no two samples of a family with the same labels.
	for name, f := range fams {
		if strings.Count(out, "# TYPE "+name+" ") != 1 || strings.Count(out, "# HELP "+name+" ") != 1 {
			t.Errorf("%s: want one HELP and one TYPE line", name)
		}
		seen := map[string]bool{}
		for _, m := range f.GetMetric() {
			if seen[promLabels(m)] {
				t.Errorf("%s: duplicate sample {%s}", name, promLabels(m))
			}
			seen[promLabels(m)] = true
		}
	}
	types := map[string]dto.MetricType{
		"trafficlab_requests_total": dto.MetricType_COUNTER, "trafficlab_errors_total": dto.MetricType_COUNTER,
		"trafficlab_pod_requests_total": dto.MetricType_COUNTER, "trafficlab_pod_connections_total": dto.MetricType_COUNTER,
		"trafficlab_pod_cpu_cores": dto.MetricType_GAUGE, "trafficlab_node_cpu_utilization": dto.MetricType_GAUGE,
		"trafficlab_request_duration_seconds": dto.MetricType_SUMMARY, "trafficlab_slow_requests_total": dto.MetricType_COUNTER,
		"trafficlab_sidecar_requests_total": dto.MetricType_COUNTER, "trafficlab_tcp_retransmits_total": dto.MetricType_COUNTER,
		"trafficlab_pod_cpu_cfs_throttled_periods_total": dto.MetricType_COUNTER, "trafficlab_scale_events_total": dto.MetricType_COUNTER,
		"trafficlab_run_info": dto.MetricType_GAUGE,
	}
	for name, typ := range types {
		if f, ok := fams[name]; !ok || f.GetType() != typ {
			t.Errorf("%s: want a %v family", name, typ)
		}
	}
	var again bytes.Buffer
	if err := Prometheus(&again, promRun()); err != nil || again.String() != out {
		t.Error("two renders of one result differ")
	}
}

func TestPrometheusValues(t *testing.T) {
	_, fams := parseProm(t, promRun())
	web1 := "node=n-1,pod=web-1,service=web"
	cases := []struct {
		name, labels string
		want         float64
	}{
		{"trafficlab_requests_total", "outcome=ok", 976},
		{"trafficlab_requests_total", "outcome=failed", 24},
		{"trafficlab_errors_total", "kind=connection_refused", 22},
		{"trafficlab_errors_total", "kind=timeout", 0},
		{"trafficlab_run_info", "engine=simulate,proxy_mode=iptables,scenario=s,seed=0", 1},
		{"trafficlab_run_duration_seconds", "", 120},
		{"trafficlab_run_interrupted", "", 0},
		{"trafficlab_pod_requests_total", web1, 200},
		{"trafficlab_pod_requests_total", "node=n-2,pod=web-\"2\"\\\n,service=web", 276}, // escaped and back
		{"trafficlab_pod_errors_total", web1 + ",kind=connection_refused", 19},
		{"trafficlab_pod_cpu_cfs_throttled_seconds_total", "node=n-0,pod=web-0,service=web", 7.25},
		{"trafficlab_node_cpu_utilization", "node=n-0", 0.5},
		{"trafficlab_node_cpu_cores", "node=n-1", 4},
		{"trafficlab_slow_threshold_seconds", "", 0.5},
		{"trafficlab_slow_requests_total", "", 4},
		{"trafficlab_request_duration_max_seconds", "", 0.8},
		{"trafficlab_sidecar_worker_utilization", "direction=outbound,pod=ab-0", 0.97},
		{"trafficlab_tcp_retransmits_total", "", 12},
		{"trafficlab_tcp_tlp_events_total", "", 8},
		{"trafficlab_scale_events_total", "direction=out,service=web", 1},
		{"trafficlab_scale_events_total", "direction=in,service=web", 1},
		{"trafficlab_client_connections_opened_total", "client=ab,target=web", 1000},
	}
	for _, c := range cases {
		if got := promValue(t, fams, c.name, c.labels); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Pods without a CPU limit have no throttling samples; pods without errors no
	// error samples.
	if n := len(fams["trafficlab_pod_cpu_cfs_periods_total"].GetMetric()); n != 1 {
		t.Errorf("cfs periods for %d pods, want the 1 with a limit", n)
	}
	if n := len(fams["trafficlab_pod_errors_total"].GetMetric()); n != 2 {
		t.Errorf("pod errors: %d samples, want 2 (web-1's refused and reset)", n)
	}
}

func TestPrometheusSummary(t *testing.T) {
	_, fams := parseProm(t, promRun())
	s := fams["trafficlab_request_duration_seconds"].GetMetric()[0].GetSummary()
	// Milliseconds become seconds; _sum is mean × successes.
	if s.GetSampleCount() != 976 || math.Abs(s.GetSampleSum()-1.464) > 1e-9 {
		t.Errorf("count %d, sum %v; want 976 and 1.464 s", s.GetSampleCount(), s.GetSampleSum())
	}
	want := map[float64]float64{0.5: 0.0009, 0.9: 0.0025, 0.95: 0.004, 0.99: 0.019, 0.999: 0.25}
	if len(s.GetQuantile()) != len(want) {
		t.Errorf("%d quantiles, want %d", len(s.GetQuantile()), len(want))
	}
	for _, q := range s.GetQuantile() {
		if w, ok := want[q.GetQuantile()]; !ok || math.Abs(q.GetValue()-w) > 1e-12 {
			t.Errorf("quantile %v = %v, want %v", q.GetQuantile(), q.GetValue(), w)
		}
	}

	// No success: the quantiles are NaN and there is no min or max to give.
	none := &result.Result{Engine: "simulate", Requests: result.Requests{Total: 3, Failed: 3}, Errors: result.Errors{Timeout: 3}}
	out, fams := parseProm(t, none)
	for _, q := range fams["trafficlab_request_duration_seconds"].GetMetric()[0].GetSummary().GetQuantile() {
		if !math.IsNaN(q.GetValue()) {
			t.Errorf("quantile %v = %v with no success, want NaN", q.GetQuantile(), q.GetValue())
		}
	}
	for _, absent := range []string{"trafficlab_request_duration_max_seconds", "trafficlab_slow_requests_total", "trafficlab_tcp_",
		"trafficlab_sidecar_", "trafficlab_scale_events_total", "trafficlab_pod_", "trafficlab_node_", "trafficlab_client_"} {
		if strings.Contains(out, absent) {
			t.Errorf("a bare result has no %s:\n%s", absent, out)
		}
	}
}

func TestPrometheusEscapes(t *testing.T) {
	cases := []struct{ in, label, help string }{
		{`plain`, `plain`, `plain`},
		{`a"b`, `a\"b`, `a"b`},
		{`a\b`, `a\\b`, `a\\b`},
		{"a\nb", `a\nb`, `a\nb`},
	}
	for _, c := range cases {
		if got := promLabelEscaper.Replace(c.in); got != c.label {
			t.Errorf("label %q escaped to %q, want %q", c.in, got, c.label)
		}
		if got := promHelpEscaper.Replace(c.in); got != c.help {
			t.Errorf("help %q escaped to %q, want %q", c.in, got, c.help)
		}
	}
	for v, want := range map[float64]string{0: "0", 0.5: "0.5", 1e-4: "0.0001", math.Inf(1): "+Inf", math.Inf(-1): "-Inf"} {
		if got := promFloat(v); got != want {
			t.Errorf("promFloat(%v) = %q, want %q", v, got, want)
		}
	}
	if promFloat(math.NaN()) != "NaN" || promInt(162_540_000) != "162540000" {
		t.Error("NaN and large counts")
	}
}

// promHistogramLines checks the exposition format's rules for the histogram family
// name in the text itself (prometheus.io/docs/instrumenting/exposition_formats, "Text
// format details"), which the parser does not enforce: buckets in increasing order
// of le with counts that never fall, the last le="+Inf" and equal to _count, then
// _sum and _count. It returns the buckets as le and count.
func promHistogramLines(t *testing.T, out, name string) (les []float64, counts []int64) {
	t.Helper()
	var body []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+"_") || strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			body = append(body, l)
		}
	}
	if len(body) < 3 {
		t.Fatalf("%s: %d sample lines, want buckets, _sum and _count:\n%s", name, len(body), out)
	}
	last := len(body) - 2
	if !strings.HasPrefix(body[last], name+"_sum ") || !strings.HasPrefix(body[last+1], name+"_count ") {
		t.Fatalf("%s: want _sum then _count after the buckets, got %q", name, body[last:])
	}
	count, err := strconv.ParseInt(strings.Fields(body[last+1])[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range body[:last] {
		var le string
		var n int64
		if _, err := fmt.Sscanf(l, name+"_bucket{le=%q} %d", &le, &n); err != nil {
			t.Fatalf("line %d %q is not a bucket: %v", i, l, err)
		}
		v, err := strconv.ParseFloat(le, 64)
		if err != nil {
			t.Fatalf("le %q: %v", le, err)
		}
		if i > 0 && (v <= les[i-1] || n < counts[i-1]) {
			t.Errorf("bucket le=%q %d after le=%v %d: le must rise and counts never fall", le, n, les[i-1], counts[i-1])
		}
		les, counts = append(les, v), append(counts, n)
	}
	if k := len(les) - 1; !math.IsInf(les[k], 1) || counts[k] != count {
		t.Errorf("last bucket le=%v %d, want le=\"+Inf\" equal to _count %d", les[k], counts[k], count)
	}
	return les, counts
}

// Every bucket of the latency histogram counts the successful requests at or below
// its bound. The spectrum keeps a bound to the microsecond, rounded from the highest
// latency of an HdrHistogram bucket, so the true bound is within half a microsecond
// of le: the count lies between the requests at most le - 0.5 µs and those at most
// le + 0.5 µs, and no further.
func TestPrometheusHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := hdr.New(1, int64(3600e9), 3) // as the engines record them
	var lat []int64
	for range 20_000 {
		ns := int64(math.Exp(rng.NormFloat64()*1.5+13)) + 1 // log-normal, 1 µs to seconds
		lat = append(lat, ns)
		if err := h.RecordValue(ns); err != nil {
			t.Fatal(err)
		}
	}
	r := &result.Result{Engine: "simulate", Requests: result.Requests{Total: int64(len(lat)), OK: int64(len(lat))},
		LatencyMS: result.LatencyOf(h), LatencySpectrum: result.SpectrumOf(h)}
	out, fams := parseProm(t, r)
	const name = "trafficlab_request_duration_histogram_seconds"
	les, counts := promHistogramLines(t, out, name)
	if len(les) < 20 {
		t.Errorf("%d buckets, want one per spectrum step (%d steps)", len(les), len(r.LatencySpectrum))
	}
	atMost := func(ns float64) (n int64) {
		for _, v := range lat {
			if float64(v) <= ns {
				n++
			}
		}
		return n
	}
	for i, le := range les[:len(les)-1] {
		if lo, hi := atMost(le*1e9-500), atMost(le*1e9+500); counts[i] < lo || counts[i] > hi {
			t.Errorf("bucket le=%v: %d, but %d to %d requests took at most that (±0.5 µs)", le, counts[i], lo, hi)
		}
	}
	f := fams[name]
	if f.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s is a %v, want a histogram", name, f.GetType())
	}
	hg := f.GetMetric()[0].GetHistogram()
	if sum := r.LatencyMS.Mean * float64(len(lat)) / 1000; hg.GetSampleCount() != uint64(len(lat)) || math.Abs(hg.GetSampleSum()-sum) > 1e-9*sum {
		t.Errorf("count %d, sum %v; want %d and %v (mean × count, as the summary's)", hg.GetSampleCount(), hg.GetSampleSum(), len(lat), sum)
	}
}

// Steps of the spectrum that round to one bound give one bucket (a second sample
// with the same le would be a duplicate); a Result without a spectrum that adds up
// to its successes gets the +Inf bucket alone; a run with no success an empty one.
func TestPrometheusHistogramEdges(t *testing.T) {
	const name = "trafficlab_request_duration_histogram_seconds"
	spectrum := func(steps ...result.Percentile) *result.Result {
		return &result.Result{Engine: "simulate", Requests: result.Requests{Total: 10, OK: 10},
			LatencyMS: result.Latency{Mean: 2}, LatencySpectrum: steps}
	}
	cases := []struct {
		name   string
		r      *result.Result
		les    []float64
		counts []int64
	}{
		{"equal steps merge", spectrum(result.Percentile{Percentile: 0, MS: 1, Count: 4}, result.Percentile{Percentile: 40, MS: 1, Count: 6},
			result.Percentile{Percentile: 60, MS: 2.5, Count: 9}, result.Percentile{Percentile: 100, MS: 4, Count: 10}),
			[]float64{0.001, 0.0025, 0.004, math.Inf(1)}, []int64{6, 9, 10, 10}},
		{"no spectrum", spectrum(), []float64{math.Inf(1)}, []int64{10}},
		{"spectrum of other requests", spectrum(result.Percentile{Percentile: 100, MS: 4, Count: 7}), []float64{math.Inf(1)}, []int64{10}},
		{"no success", &result.Result{Engine: "simulate", Requests: result.Requests{Total: 3, Failed: 3}}, []float64{math.Inf(1)}, []int64{0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _ := parseProm(t, c.r)
			les, counts := promHistogramLines(t, out, name)
			if fmt.Sprint(les, counts) != fmt.Sprint(c.les, c.counts) {
				t.Errorf("buckets %v %v, want %v %v", les, counts, c.les, c.counts)
			}
		})
	}
}

// TestPrometheusSaysOnlyWhatTheEngineKnows: run_info carries no label the engine
// does not know (a vegeta attack has no seed and sees no kube-proxy), and an
// interrupted run says so in a gauge.
func TestPrometheusSaysOnlyWhatTheEngineKnows(t *testing.T) {
	cases := []struct {
		name        string
		edit        func(r *result.Result)
		info        string
		interrupted float64
	}{
		{"simulate", func(*result.Result) {}, "engine=simulate,proxy_mode=iptables,scenario=s,seed=0", 0},
		{"simulate, interrupted", func(r *result.Result) { r.Interrupted, r.PlannedDurationS = true, 600 }, "engine=simulate,proxy_mode=iptables,scenario=s,seed=0", 1},
		{"vegeta", func(r *result.Result) { r.Engine, r.Scenario, r.ProxyMode = "vegeta", "atk", kubeproxy.Mode{} }, "engine=vegeta,scenario=atk", 0},
		{"load", func(r *result.Result) { r.Engine, r.Seed, r.ProxyMode = "load", 4, kubeproxy.Mode{} }, "engine=load,scenario=s,seed=4", 0},
	}
	for _, c := range cases {
		r := promRun()
		c.edit(r)
		_, fams := parseProm(t, r)
		info := fams["trafficlab_run_info"].GetMetric()
		if len(info) != 1 || promLabels(info[0]) != c.info {
			t.Errorf("%s: run_info %v, want {%s}", c.name, info, c.info)
		}
		if got := promValue(t, fams, "trafficlab_run_interrupted", ""); got != c.interrupted {
			t.Errorf("%s: run_interrupted %v, want %v", c.name, got, c.interrupted)
		}
	}
}
