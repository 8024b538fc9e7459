package report

import (
	"math"
	"sort"
	"strconv"

	"trafficlab/result"
)

// Bounds that keep the page of a long run small (a one-hour run has 3,600 timeline
// points, possibly hundreds of pods and a large sample) while keeping what matters.
const (
	// maxBuckets is the most points a time series gets; longer timelines are
	// aggregated, counts summed and percentiles maxed so that no tail is lost.
	maxBuckets = 1000
	// topPods is how many pods the pods-over-time chart draws one by one; the rest
	// are summed as "others".
	topPods = 12
	// topNodes is how many nodes, the busiest at their peak, the node chart draws.
	topNodes = 12
	// maxSamples is the most sampled requests the scatter gets.
	maxSamples = 10000
)

// data is the JSON document the page's script (assets/page.js, its only reader)
// draws. A nil or empty field means the result has nothing for that panel.
type data struct {
	// StepS is how many seconds each time point covers: the timeline's interval,
	// times the points merged into one.
	StepS float64 `json:"step_s"`
	// T is the start of each time point, in seconds.
	T times `json:"t"`
	// Pods are in service order, then creation order, as the text report lists them.
	Pods []podBar `json:"pods"`
	// PodSeries are requests per second of the busiest pods, then "others".
	PodSeries []line       `json:"pod_series"`
	Replicas  []replicaSet `json:"replicas"`
	Events    []event      `json:"events"`
	// Latency is p50, p90, p99, p99.9 in ms; null where no request succeeded.
	Latency []line `json:"latency"`
	// Errors are failed requests per second by kind.
	Errors    []line     `json:"errors"`
	Histogram *histogram `json:"histogram"`
	Spectrum  *spectrum  `json:"spectrum"`
	Samples   *samples   `json:"samples"`
	// ServiceP99 is each service's p99 at its pods, in ms, when services call
	// services; null where it answered none.
	ServiceP99 []line `json:"service_p99,omitempty"`
	// NodeCPU is the mean cores each of the busiest nodes used; Nodes is how many
	// nodes there were in all.
	NodeCPU []line `json:"node_cpu"`
	Nodes   int    `json:"nodes"`
}

type line struct {
	Name   string `json:"name"`
	Values series `json:"values"`
}

type podBar struct {
	Name     string `json:"name"`
	Service  string `json:"service"`
	Requests int64  `json:"requests"`
}

// replicaSet is one service's pod counts at the instants any of them changed, so
// that every change survives however long the run.
type replicaSet struct {
	Service string `json:"service"`
	T       times  `json:"t"`
	Desired series `json:"desired"`
	Actual  series `json:"actual"`
	Ready   series `json:"ready"`
}

type event struct {
	TS      float64 `json:"t"`
	Service string  `json:"service"`
	From    int     `json:"from"`
	To      int     `json:"to"`
	Reason  string  `json:"reason"`
}

// histogram buckets are [From, To) in ms; To is null for an open-ended last bucket.
type histogram struct {
	From    series `json:"from"`
	To      series `json:"to"`
	Counts  series `json:"counts"`
	Derived bool   `json:"derived"` // from the latency spectrum, not the scenario's buckets
}

// spectrum is the latency at each percentile; X is 1/(1−q), so each power of ten
// to the right is a nine more: 10 is p90, 100 p99, 1000 p99.9.
type spectrum struct {
	X  series `json:"x"`
	MS series `json:"ms"`
}

// samples are sampled requests in time order; Kind indexes Kinds, −1 for success.
type samples struct {
	T     times    `json:"t"`
	MS    series   `json:"ms"`
	Kind  []int    `json:"kind"`
	Kinds []string `json:"kinds"`
	Of    int      `json:"of"` // how many the result held
}

// series writes numbers to four significant digits (whole numbers stay whole), and
// NaN as null, which the charts draw as a gap: enough for a chart, and a third of
// the bytes of full precision.
type series []float64

func (s series) MarshalJSON() ([]byte, error) {
	return appendNumbers(s, func(v float64) float64 {
		if v == 0 || math.Abs(v) >= 1e4 {
			return math.Round(v)
		}
		p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
		return math.Round(v*p) / p
	}), nil
}

// times are instants in seconds, to the millisecond.
type times []float64

func (s times) MarshalJSON() ([]byte, error) {
	return appendNumbers(s, func(v float64) float64 { return math.Round(v*1000) / 1000 }), nil
}

func appendNumbers(s []float64, round func(float64) float64) []byte {
	b := make([]byte, 0, 2+7*len(s))
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, round(v), 'f', -1, 64)
	}
	return append(b, ']')
}

// chartData turns a Result into what the charts draw.
func chartData(r *result.Result) data {
	interval := r.TimelineIntervalS
	if interval <= 0 {
		interval = 1
	}
	per := (len(r.Timeline) + maxBuckets - 1) / maxBuckets
	var buckets [][]result.Point
	for i := 0; i < len(r.Timeline); i += per {
		buckets = append(buckets, r.Timeline[i:min(i+per, len(r.Timeline))])
	}
	d := data{StepS: interval * float64(max(per, 1)), Nodes: len(r.Nodes)}
	for _, b := range buckets {
		d.T = append(d.T, b[0].TS)
	}
	svcs := services(r)
	for _, svc := range svcs {
		for _, p := range r.Pods {
			if p.Service == svc {
				d.Pods = append(d.Pods, podBar{p.Name, p.Service, p.Requests})
			}
		}
	}
	d.PodSeries = podSeries(r, buckets, interval)
	for _, svc := range svcs {
		if rs, ok := replicasOf(r, svc, interval); ok {
			d.Replicas = append(d.Replicas, rs)
		}
	}
	for _, ev := range r.ScaleEvents {
		d.Events = append(d.Events, event{ev.TS, ev.Service, ev.From, ev.To, ev.Reason})
	}
	d.Latency = latency(buckets)
	d.ServiceP99 = serviceP99(r, buckets)
	d.Errors = errorSeries(buckets, interval)
	d.Histogram = histogramOf(r)
	d.Spectrum = spectrumOf(r.LatencySpectrum)
	d.Samples = sampled(r.Samples)
	if len(r.Nodes) > 1 {
		d.NodeCPU = nodeCPU(r, buckets)
	}
	return d
}

// rate is a count per second over a bucket of timeline points.
func rate(n float64, b []result.Point, interval float64) float64 {
	return n / (float64(len(b)) * interval)
}

// podSeries is requests per second of the topPods busiest pods over the run, then
// the rest summed as "others"; nil when the timeline has no per-pod counts.
func podSeries(r *result.Result, buckets [][]result.Point, interval float64) []line {
	have := false
	for _, b := range buckets {
		for _, p := range b {
			have = have || len(p.PodRequests) > 0
		}
	}
	if !have {
		return nil
	}
	pods := append([]result.Pod(nil), r.Pods...)
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].Requests > pods[j].Requests })
	top := map[string]int{}
	var out []line
	for _, p := range pods {
		if len(out) == topPods || p.Requests == 0 {
			break
		}
		top[p.Name] = len(out)
		out = append(out, line{Name: p.Name, Values: make(series, len(buckets))})
	}
	others := make(series, len(buckets))
	anyOther := false
	for i, b := range buckets {
		sums := make([]float64, len(out))
		rest := 0.0
		for _, p := range b {
			for name, n := range p.PodRequests {
				if k, ok := top[name]; ok {
					sums[k] += float64(n)
				} else {
					rest += float64(n)
				}
			}
		}
		for k := range out {
			out[k].Values[i] = rate(sums[k], b, interval)
		}
		others[i] = rate(rest, b, interval)
		anyOther = anyOther || rest > 0
	}
	if anyOther {
		out = append(out, line{Name: "others", Values: others})
	}
	return out
}

// replicasOf keeps the instants at which svc's desired, actual or ready count
// changed. A point's counts hold at its interval's end; a count the result lacks
// (an older result without ready endpoints) is a gap, not a zero.
func replicasOf(r *result.Result, svc string, interval float64) (replicaSet, bool) {
	rs := replicaSet{Service: svc}
	count := func(m map[string]int) int {
		if m == nil {
			return -1
		}
		return m[svc]
	}
	num := func(n int) float64 {
		if n < 0 {
			return math.NaN()
		}
		return float64(n)
	}
	add := func(t float64, c [3]int) {
		rs.T = append(rs.T, t)
		rs.Desired, rs.Actual, rs.Ready = append(rs.Desired, num(c[0])), append(rs.Actual, num(c[1])), append(rs.Ready, num(c[2]))
	}
	var prev [3]int
	for i, p := range r.Timeline {
		now := [3]int{count(p.DesiredReplicas), count(p.Replicas), count(p.ReadyEndpoints)}
		if now == [3]int{-1, -1, -1} {
			continue
		}
		if len(rs.T) == 0 {
			add(p.TS, now) // the first counts stand for the run's start
		}
		if now != prev || i == len(r.Timeline)-1 {
			add(p.TS+interval, now)
			prev = now
		}
	}
	return rs, len(rs.T) > 0
}

// latency is each percentile's worst value over the points of each bucket, so a
// spike of one second survives in a bucket of many. Only points in which a request
// succeeded have a latency (the timeline's JSON writes the others' as null): a
// bucket of none is NaN, which the charts draw as a gap, not as 0 ms.
// serviceP99 is each service's p99 at its pods over time, the worst of a bucket's
// points; nil without calls.
func serviceP99(r *result.Result, buckets [][]result.Point) []line {
	if len(r.Edges) == 0 {
		return nil
	}
	var out []line
	for _, s := range r.Services {
		if s.LatencyMS == nil {
			continue
		}
		l := line{Name: s.Name, Values: make(series, len(buckets))}
		for i, b := range buckets {
			l.Values[i] = math.NaN()
			for _, p := range b {
				if v, ok := p.ServiceP99MS[s.Name]; ok && v > 0 {
					l.Values[i] = max(v, nanAsZero(l.Values[i]))
				}
			}
		}
		out = append(out, l)
	}
	return out
}

func nanAsZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func latency(buckets [][]result.Point) []line {
	get := []func(result.Point) float64{
		func(p result.Point) float64 { return p.P50MS },
		func(p result.Point) float64 { return p.P90MS },
		func(p result.Point) float64 { return p.P99MS },
		func(p result.Point) float64 { return p.P999MS },
	}
	names := []string{"p50", "p90", "p99", "p99.9"}
	var out []line
	have := false
	for k, f := range get {
		l := line{Name: names[k], Values: make(series, len(buckets))}
		for i, b := range buckets {
			worst, measured := 0.0, false
			for _, p := range b {
				if p.Succeeded() > 0 {
					worst, measured = max(worst, f(p)), true
				}
			}
			l.Values[i] = math.NaN()
			if measured && worst > 0 { // under the Result's microsecond, 0 has no place on a log scale
				l.Values[i], have = worst, true
			}
		}
		out = append(out, l)
	}
	if !have {
		return nil
	}
	return out
}

// errorSeries is failed requests per second by kind, for the kinds that occurred;
// a timeline without the split gives one series of all errors.
func errorSeries(buckets [][]result.Point, interval float64) []line {
	var out []line
	split := false
	for kind := range result.ErrorKinds {
		l := line{Name: kind.String(), Values: make(series, len(buckets))}
		total := int64(0)
		for i, b := range buckets {
			n := int64(0)
			for _, p := range b {
				if p.ErrorsByKind != nil {
					split = true
					n += p.ErrorsByKind.Of(kind)
				}
			}
			total += n
			l.Values[i] = rate(float64(n), b, interval)
		}
		if total > 0 {
			out = append(out, l)
		}
	}
	if split {
		return out
	}
	l := line{Name: "errors", Values: make(series, len(buckets))}
	total := int64(0)
	for i, b := range buckets {
		n := int64(0)
		for _, p := range b {
			n += p.Errors
		}
		total += n
		l.Values[i] = rate(float64(n), b, interval)
	}
	if total == 0 {
		return nil
	}
	return []line{l}
}

// histogramOf uses the scenario's own buckets when the result has them, else
// log-spaced buckets derived from the latency spectrum.
func histogramOf(r *result.Result) *histogram {
	if len(r.Histogram) > 0 {
		h := &histogram{}
		for _, b := range r.Histogram {
			to := math.NaN()
			if b.ToMS != nil {
				to = *b.ToMS
			}
			h.From, h.To, h.Counts = append(h.From, b.FromMS), append(h.To, to), append(h.Counts, float64(b.Count))
		}
		return h
	}
	return spectrumHistogram(r.LatencySpectrum)
}

// r10 are the preferred numbers of ISO 3's R10 series: ten nearly log-spaced
// steps per power of ten, with readable edges (1, 1.25, 1.6, 2, 2.5, ...).
var r10 = []float64{1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8}

// spectrumHistogram buckets the successful requests at the R10 edges that cover
// their latencies. The requests between two steps of the spectrum are spread
// evenly, in log space, over the buckets their range covers: the steps are coarse
// near the median (every 10 %) and fine in the tail.
func spectrumHistogram(spec []result.Percentile) *histogram {
	var steps []result.Percentile
	for _, s := range spec {
		if s.MS > 0 && !math.IsInf(s.MS, 1) {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 || steps[len(steps)-1].Count == 0 {
		return nil
	}
	lo, hi := steps[0].MS, steps[0].MS // the extremes, though a spectrum out of order has them elsewhere
	for _, s := range steps {
		lo, hi = min(lo, s.MS), max(hi, s.MS)
	}
	lo = max(lo, 1e-6) // 1 ns, the engines' resolution: below it 10^e underflows
	hi = max(hi, lo)
	// The R10 numbers from the last at or under the fastest request to the first
	// over the slowest. The search starts a decade under the fastest: Log10 and Pow
	// round, and 10^e can land just above a fastest request of 10^e ms (1e308).
	var edges []float64
decades:
	for e := math.Floor(math.Log10(lo)) - 1; ; e++ {
		for _, m := range r10 {
			edge := m * math.Pow(10, e)
			if edge <= lo {
				edges = edges[:0]
			}
			edges = append(edges, edge)
			if edge > hi {
				break decades
			}
		}
	}
	counts := make([]float64, len(edges)-1)
	bucket := func(ms float64) int { // the bucket [edges[k], edges[k+1]) holding ms
		return min(len(edges)-2, max(0, sort.SearchFloat64s(edges, math.Nextafter(ms, math.Inf(1)))-1))
	}
	counts[bucket(lo)] += float64(steps[0].Count)
	for i := 1; i < len(steps); i++ {
		delta := float64(steps[i].Count - steps[i-1].Count)
		a, z := math.Log10(steps[i-1].MS), math.Log10(steps[i].MS)
		switch {
		case delta <= 0:
		case z-a < 1e-12:
			counts[bucket(steps[i].MS)] += delta
		default:
			for k := range counts {
				from, to := max(a, math.Log10(edges[k])), min(z, math.Log10(edges[k+1]))
				if to > from {
					counts[k] += delta * (to - from) / (z - a)
				}
			}
		}
	}
	h := &histogram{Derived: true}
	for k, c := range counts {
		h.From, h.To, h.Counts = append(h.From, edges[k]), append(h.To, edges[k+1]), append(h.Counts, math.Round(c))
	}
	return h
}

// spectrumOf places each percentile at 1/(1−q); the 100th has no place on that
// axis, and HdrHistogram's last steps before it already reach the maximum.
func spectrumOf(spec []result.Percentile) *spectrum {
	s := &spectrum{}
	for _, p := range spec {
		if p.Percentile >= 100 || p.MS <= 0 {
			continue
		}
		s.X = append(s.X, 1/(1-p.Percentile/100))
		s.MS = append(s.MS, p.MS)
	}
	if len(s.X) == 0 {
		return nil
	}
	return s
}

// sampled bounds the scatter to maxSamples, keeping every failure and the slowest
// requests (up to a tenth of the bound each) and thinning the rest evenly, then
// orders them by time.
func sampled(in []result.Sample) *samples {
	if len(in) == 0 {
		return nil
	}
	keep := in
	if len(in) > maxSamples {
		keep = thin(in)
	}
	keep = append([]result.Sample(nil), keep...)
	sort.SliceStable(keep, func(i, j int) bool { return keep[i].TS < keep[j].TS })
	s := &samples{Of: len(in)}
	kinds := map[string]int{}
	for _, x := range keep {
		k := -1
		if x.Error != "" {
			var ok bool
			if k, ok = kinds[x.Error]; !ok {
				k = len(s.Kinds)
				kinds[x.Error] = k
				s.Kinds = append(s.Kinds, x.Error)
			}
		}
		s.T, s.MS, s.Kind = append(s.T, x.TS), append(s.MS, x.LatencyMS), append(s.Kind, k)
	}
	return s
}

func thin(in []result.Sample) []result.Sample {
	tail := maxSamples / 10
	var failed, ok []int
	for i, x := range in {
		if x.Error != "" {
			failed = append(failed, i)
		} else {
			ok = append(ok, i)
		}
	}
	sort.SliceStable(ok, func(a, b int) bool { return in[ok[a]].LatencyMS > in[ok[b]].LatencyMS })
	chosen := map[int]bool{}
	for _, i := range every(failed, tail) {
		chosen[i] = true
	}
	for _, i := range ok[:min(tail, len(ok))] {
		chosen[i] = true
	}
	var rest []int
	for i := range in {
		if !chosen[i] {
			rest = append(rest, i)
		}
	}
	for _, i := range every(rest, maxSamples-len(chosen)) {
		chosen[i] = true
	}
	out := make([]result.Sample, 0, len(chosen))
	for i, x := range in {
		if chosen[i] {
			out = append(out, x)
		}
	}
	return out
}

// every picks n of idx evenly spread, or all of them when there are no more.
func every(idx []int, n int) []int {
	if len(idx) <= n {
		return idx
	}
	out := make([]int, 0, n)
	for k := 0; k < n; k++ {
		out = append(out, idx[k*len(idx)/n])
	}
	return out
}

// nodeCPU is the mean cores each node's containers used per bucket, for the
// topNodes nodes with the highest peak, in the result's node order.
func nodeCPU(r *result.Result, buckets [][]result.Point) []line {
	var out []line
	peak := map[string]float64{}
	for _, n := range r.Nodes {
		l := line{Name: n.Name, Values: make(series, len(buckets))}
		seen := false
		for i, b := range buckets {
			sum := 0.0
			for _, p := range b {
				v, ok := p.NodeCPUCores[n.Name]
				seen = seen || ok
				sum += v
			}
			l.Values[i] = sum / float64(len(b))
			peak[n.Name] = max(peak[n.Name], l.Values[i])
		}
		if seen {
			out = append(out, l)
		}
	}
	if len(out) > topNodes {
		busiest := append([]line(nil), out...)
		sort.SliceStable(busiest, func(i, j int) bool { return peak[busiest[i].Name] > peak[busiest[j].Name] })
		keep := map[string]bool{}
		for _, l := range busiest[:topNodes] {
			keep[l.Name] = true
		}
		var kept []line
		for _, l := range out {
			if keep[l.Name] {
				kept = append(kept, l)
			}
		}
		out = kept
	}
	return out
}
