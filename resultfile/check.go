package resultfile

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"trafficlab/result"
)

// Check refuses a Result no run can produce, naming the first field at fault by
// its JSON path: an engine this version does not know, a negative or non-finite
// number, latency percentiles out of order, counts that do not add up (Requests:
// Total = OK + Failed, and the errors by kind are among the failed), shares
// outside 0..1, CPU beyond the cores, pods finishing more requests than were sent,
// rates the counts and the duration cannot give, timelines longer than any engine
// writes. A report of such a Result would print what never happened.
func Check(r *result.Result) error {
	c := &checker{}
	c.check(r)
	if c.err != nil {
		return c.err
	}
	return nil
}

type checker struct{ err *Error }

// fail keeps the first problem.
func (c *checker) fail(field, format string, a ...any) {
	if c.err == nil {
		c.err = &Error{Field: field, Err: fmt.Errorf(format, a...)}
	}
}

// number: finite and not negative.
func (c *checker) number(field string, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		c.fail(field, "%v is not a number", v)
	case v < 0:
		c.fail(field, "%v is negative", v)
	}
}

func (c *checker) count(field string, v int64) {
	if v < 0 {
		c.fail(field, "%d is negative", v)
	}
}

func (c *checker) share(field string, v float64) {
	c.number(field, v)
	if v > 1 {
		c.fail(field, "%v is a share, at most 1", v)
	}
}

// latency: each figure a number, the percentiles in order between min and max,
// the mean between them too.
func (c *checker) latency(field string, l result.Latency) {
	figures := []struct {
		name string
		v    float64
	}{{"min", l.Min}, {"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95}, {"p99", l.P99}, {"p999", l.P999}, {"max", l.Max}}
	for _, f := range figures {
		c.number(field+"."+f.name, f.v)
		c.latencyMS(field+"."+f.name, f.v)
	}
	c.number(field+".mean", l.Mean)
	for i := 1; i < len(figures); i++ {
		if a, b := figures[i-1], figures[i]; b.v < a.v {
			c.fail(field+"."+b.name, "%v is below %s %v: percentiles rise", b.v, a.name, a.v)
		}
	}
	if l.Mean < l.Min || l.Mean > l.Max {
		c.fail(field+".mean", "%v is outside min %v and max %v", l.Mean, l.Min, l.Max)
	}
}

// maxLatencyMS is the longest latency a Result summarises: every engine's
// histogram tracks up to an hour (simulate/engine.go stats.init, load's histMax,
// resultfile's), and reports a value up to its bucket's top, at most 1/1024 above.
const maxLatencyMS = 3600e3 * (1 + 1.0/1024)

func (c *checker) latencyMS(field string, ms float64) {
	if ms > maxLatencyMS {
		c.fail(field, "%v ms is over the hour every engine's latency histogram ends at", ms)
	}
}

func (c *checker) errors(field string, e result.Errors) {
	for k := range result.ErrorKinds {
		c.count(field+"."+k.String(), e.Of(k))
	}
}

func (c *checker) check(r *result.Result) {
	if !slices.Contains(Engines, r.Engine) {
		c.fail("engine", "%q is not an engine this version reads (%s)", r.Engine, strings.Join(Engines, ", "))
	}
	c.walk("", reflect.ValueOf(r).Elem())
	c.number("duration_s", r.DurationS)
	c.requests(r)
	c.number("throughput_rps", r.ThroughputRPS)
	c.number("rate_rps", r.RateRPS)
	c.latencies(r)
	c.number("timeline_interval_s", r.TimelineIntervalS)
	c.spectrum(r.LatencySpectrum)
	c.histogram(r.Histogram)
	c.timeline(r.Timeline)
	c.pods(r)
	c.podRequests(r)
	for i, n := range r.Nodes {
		f := fmt.Sprintf("nodes[%d]", i)
		c.number(f+".cpu", n.CPU)
		c.number(f+".cpu_utilization", n.CPUUtilization)
		c.cpuShare(r.Engine, f+".cpu_utilization", n.CPUUtilization, 0)
	}
	for i, sc := range r.Sidecars {
		f := fmt.Sprintf("sidecars[%d]", i)
		c.share(f+".worker_utilization", sc.WorkerUtilization)
	}
	for i, cl := range r.Clients {
		f := fmt.Sprintf("clients[%d]", i)
		c.count(f+".requests", cl.Requests)
		c.count(f+".errors", cl.Errors)
	}
	c.edges(r)
	if r.Ended != nil {
		c.ended(r.Ended, r.Requests.Total)
	}
	c.rates(r)
}

// edges checks each call's counts add up: the calls that ended were sent (an attempt
// each at least), retries are among the attempts, and failed calls among the calls.
func (c *checker) edges(r *result.Result) {
	for i, e := range r.Edges {
		f := fmt.Sprintf("edges[%d]", i)
		c.latency(f+".latency_ms", e.LatencyMS)
		c.errors(f+".errors", e.Errors)
		c.errors(f+".attempt_errors", e.AttemptErrors)
		switch {
		case e.Requests > e.Attempts-e.Retries:
			c.fail(f+".requests", "%d calls ended, more than the %d first attempts (attempts less retries)", e.Requests, e.Attempts-e.Retries)
		case e.Errors.Total() > e.Requests:
			c.fail(f+".errors", "%d failed calls, more than the %d that ended", e.Errors.Total(), e.Requests)
		case e.AttemptErrors.Total() > e.Attempts:
			c.fail(f+".attempt_errors", "%d failed attempts, more than the %d sent", e.AttemptErrors.Total(), e.Attempts)
		}
	}
}

// requests checks the request counts add up: total = ok + failed, and the errors by
// kind are among the failed.
func (c *checker) requests(r *result.Result) {
	q := r.Requests
	for _, f := range []struct {
		name string
		v    int64
	}{{"total", q.Total}, {"ok", q.OK}, {"failed", q.Failed}, {"in_flight", q.InFlight}, {"not_sent", q.NotSent}, {"retried", q.Retried}} {
		c.count("requests."+f.name, f.v)
	}
	if q.OK+q.Failed != q.Total {
		c.fail("requests.total", "%d is not ok %d + failed %d", q.Total, q.OK, q.Failed)
	}
	c.errors("errors", r.Errors)
	if n := r.Errors.Total(); n > q.Failed || n < 0 {
		c.fail("errors", "%d errors by kind, more than the %d failed requests", n, q.Failed)
	}
}

// latencies checks the run's latency summary and its slow requests, which are
// successful ones: none without a success, no more than succeeded.
func (c *checker) latencies(r *result.Result) {
	q := r.Requests
	c.latency("latency_ms", r.LatencyMS)
	if q.OK == 0 && r.LatencyMS != (result.Latency{}) {
		c.fail("latency_ms", "latencies of successful requests, but none succeeded")
	}
	c.number("slow_threshold_ms", r.SlowThresholdMS)
	c.count("slow", r.Slow)
	if r.Slow > q.OK {
		c.fail("slow", "%d slow requests, more than the %d that succeeded", r.Slow, q.OK)
	}
	c.share("slow_share", r.SlowShare)
}

// spectrum checks the latency spectrum rises in both percentile and latency.
func (c *checker) spectrum(spectrum []result.Percentile) {
	for i, p := range spectrum {
		f := fmt.Sprintf("latency_spectrum[%d]", i)
		c.share(f+".percentile", p.Percentile/100)
		c.number(f+".ms", p.MS)
		c.latencyMS(f+".ms", p.MS)
		c.count(f+".count", p.Count)
		if i > 0 && (p.Percentile < spectrum[i-1].Percentile || p.MS < spectrum[i-1].MS) {
			c.fail(f, "below the step before it: the spectrum rises")
		}
	}
}

// histogram checks each bucket ends above where it starts.
func (c *checker) histogram(buckets []result.Bucket) {
	for i, b := range buckets {
		f := fmt.Sprintf("histogram[%d]", i)
		c.number(f+".from_ms", b.FromMS)
		c.count(f+".count", b.Count)
		c.share(f+".share", b.Share)
		if b.ToMS != nil && !(*b.ToMS > b.FromMS) {
			c.fail(f+".to_ms", "%v is not above from_ms %v", *b.ToMS, b.FromMS)
		}
	}
}

// timeline checks the timeline is no longer than an engine writes and each point's
// percentiles rise.
func (c *checker) timeline(timeline []result.Point) {
	if len(timeline) > MaxTimelinePoints {
		c.fail("timeline", "%d points; no engine writes more than %d (it widens the interval instead)", len(timeline), MaxTimelinePoints)
	}
	for i, p := range timeline {
		f := fmt.Sprintf("timeline[%d]", i)
		c.number(f+".t_s", p.TS)
		c.count(f+".requests", p.Requests)
		c.count(f+".errors", p.Errors)
		c.count(f+".slow", p.Slow)
		if p.ErrorsByKind != nil {
			c.errors(f+".errors_by_kind", *p.ErrorsByKind)
		}
		pcts := []float64{p.P50MS, p.P90MS, p.P99MS, p.P999MS}
		for j, name := range []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms"} {
			c.number(f+"."+name, pcts[j])
			c.latencyMS(f+"."+name, pcts[j])
			if j > 0 && pcts[j] < pcts[j-1] {
				c.fail(f+"."+name, "%v is below the percentile before it", pcts[j])
			}
		}
	}
}

// pods checks each pod's counts, and its CPU against its limit and its node's cores.
func (c *checker) pods(r *result.Result) {
	for i, p := range r.Pods {
		f := fmt.Sprintf("pods[%d]", i)
		c.count(f+".requests", p.Requests)
		c.count(f+".connections", p.Connections)
		c.number(f+".cpu_utilization", p.CPUUtilization)
		c.cpuShare(r.Engine, f+".cpu_utilization", p.CPUUtilization, podLife(r, p))
		c.number(f+".cpu_cores", p.CPUCores)
		c.number(f+".start_s", p.StartS)
		c.errors(f+".errors", p.Errors)
		if cores := nodeCores(r, p.Node); cores > 0 && p.CPUCores > cores*cpuOvershoot(r.Engine, podLife(r, p)) {
			c.fail(f+".cpu_cores", "%v cores, more than its node %s has (%v)", p.CPUCores, p.Node, cores)
		}
	}
}

// MaxTimelinePoints is the longest timeline an engine writes: simulate
// (maxTimelinePoints in simulate/engine.go) and load (maxTimeline in
// emulate/load/stats.go) widen the interval instead of passing it.
const MaxTimelinePoints = 3600

// roundingS is the half-unit of the rounding of rates (to 3 decimals, by
// result.Round in every engine) and of load's duration (to the millisecond,
// emulate/load/report.go): a figure read back may be off by this much.
const roundingS = 0.0005

// rates checks the rates against the counts over the run: throughput is the
// successful requests per second of duration_s, the rate the requests sent per
// second (simulate/result.go, emulate/result.go, emulate/load/report.go; vegeta's
// Metrics.Close over the requests' own window). A rate beside no duration, or
// above what the counts allow within the rounding, is not of this run.
func (c *checker) rates(r *result.Result) {
	q := r.Requests
	if (r.ThroughputRPS > 0 || r.RateRPS > 0) && !(r.DurationS > 0) {
		c.fail("duration_s", "%v s beside a throughput of %v/s and a rate of %v/s: rates are over a duration", r.DurationS, r.ThroughputRPS, r.RateRPS)
		return
	}
	if r.ThroughputRPS > r.RateRPS {
		c.fail("throughput_rps", "%v/s, above the rate %v/s of the requests sent", r.ThroughputRPS, r.RateRPS)
	}
	// The requests sent: every one that ended, was still in flight or was
	// abandoned, the resends and the open-loop arrivals counted as not sent.
	sent := float64(q.Total) + float64(q.InFlight) + float64(q.Abandoned) + float64(q.Retried) + float64(q.NotSent)
	rateWindow, okWindow := r.DurationS, r.DurationS
	if r.Engine == "vegeta" && r.Ended != nil {
		// vegeta divides by the window of the sends, and without one (a single
		// request, or all at one instant) gives counts as rates.
		rateWindow = time.Duration(r.Ended.LastSentNS).Seconds()
		if rateWindow == 0 {
			return
		}
	}
	// Only load rounds its duration; the others record it exactly.
	windowRounding := 0.0
	if r.Engine == "load" {
		windowRounding = roundingS
	}
	if over(r.RateRPS, rateWindow, sent, windowRounding) {
		c.fail("rate_rps", "%v/s over %v s is more than the %.0f requests sent", r.RateRPS, rateWindow, sent)
	}
	if over(r.ThroughputRPS, okWindow, float64(q.OK), windowRounding) {
		c.fail("throughput_rps", "%v/s over %v s is more than the %d requests that succeeded", r.ThroughputRPS, okWindow, q.OK)
	}
}

// over says whether rate × window exceeds n beyond the rounding: the rate rounded
// up by roundingS, over a window recorded up to windowRounding shorter than it was.
func over(rate, window, n, windowRounding float64) bool {
	if window <= windowRounding {
		return false
	}
	return rate*window > n*window/(window-windowRounding)+roundingS*window
}

// cfsPeriodS is the CFS period Kubernetes sets on every container with a CPU limit
// (the kubelet's cpuCFSQuotaPeriod, 100 ms), and simulate models.
const cfsPeriodS = 0.1

// cpuOvershoot is the most a CPU share over a life of lifeS seconds can be. A CPU
// limit is a quota per period, and a life that is not a whole number of periods
// touches up to two more than lifeS/period, each with a full quota: at most
// 1 + 2·period/life (8 simulated pods at full CPU over 30 s gave up to 1.0033
// against a bound of 1.0067). Emulate reads cgroup usage, which the kernel charges against
// the quota a bandwidth slice at a time (sched_cfs_bandwidth_slice_us, 5 ms of a
// 100 ms period), so a throttled pod runs up to 5 % more; so does the cluster
// engine, which reads the kubelets' cgroup figures. Plus the rounding to 4
// decimals.
func cpuOvershoot(engine string, lifeS float64) float64 {
	limit := 1 + roundingS/10
	if lifeS > 0 {
		limit += 2 * cfsPeriodS / lifeS
	}
	if engine == "emulate" || engine == "cluster" {
		limit += 0.05
	}
	return limit
}

// podLife is how long a pod ran within the run, as the engines divide by it.
func podLife(r *result.Result, p result.Pod) float64 {
	end := r.DurationS
	if p.EndS != nil {
		end = *p.EndS
	}
	return end - p.StartS
}

// cpuShare checks a CPU utilization: CPU used over what the cores allow, over a
// life of lifeS seconds (0: the whole run, with no quota period to overrun).
func (c *checker) cpuShare(engine, field string, v, lifeS float64) {
	if limit := cpuOvershoot(engine, lifeS); v > limit {
		c.fail(field, "%v is CPU used over the cores allowed, at most %.4g", v, limit)
	}
}

// nodeCores is the cores of the named node; 0 when unlimited or not in the run.
func nodeCores(r *result.Result, name string) float64 {
	for _, n := range r.Nodes {
		if n.Name == name {
			return n.CPU
		}
	}
	return 0
}

// podRequests checks the pods' requests against the run's: a pod counts the
// requests it finished, so together they finished at most those the clients sent
// (ended, in flight or abandoned), plus each request again that was sent twice:
// the library's resends and the sidecars' retries; and the services' calls.
func (c *checker) podRequests(r *result.Result) {
	q := r.Requests
	var pods, retries int64
	for _, p := range r.Pods {
		pods += min(p.Requests, math.MaxInt64-pods)
	}
	for _, sc := range r.Sidecars {
		retries += min(sc.Retries, math.MaxInt64-retries)
	}
	for _, e := range r.Edges {
		retries += min(e.Attempts, math.MaxInt64-retries)
	}
	limit := float64(q.Total) + float64(q.InFlight) + float64(q.Abandoned) + float64(q.Retried) + float64(retries)
	if float64(pods) > limit {
		c.fail("pods", "the pods finished %d requests, more than the %.0f the clients sent (requests.total, in_flight, abandoned and retried, the sidecars' retries, and the services' call attempts)", pods, limit)
	}
}

func (c *checker) ended(x *result.Ended, total int64) {
	c.latency("ended.latency_ms", x.LatencyMS)
	for _, f := range []struct {
		name string
		v    int64
	}{{"latency_sum_ns", x.LatencySumNS}, {"latency_min_ns", x.LatencyMinNS}, {"latency_max_ns", x.LatencyMaxNS},
		{"first_sent_ns", x.FirstSentNS}, {"last_sent_ns", x.LastSentNS}, {"last_end_ns", x.LastEndNS},
		{"bytes_out", x.BytesOut}, {"bytes_in", x.BytesIn}} {
		c.count("ended."+f.name, f.v)
	}
	if x.LatencyMinNS > x.LatencyMaxNS {
		c.fail("ended.latency_min_ns", "%d is above latency_max_ns %d", x.LatencyMinNS, x.LatencyMaxNS)
	}
	if n := float64(total); float64(x.LatencySumNS) < n*float64(x.LatencyMinNS) || float64(x.LatencySumNS) > n*float64(x.LatencyMaxNS) {
		c.fail("ended.latency_sum_ns", "%d is not between requests.total × latency_min_ns and × latency_max_ns", x.LatencySumNS)
	}
	if x.FirstSentNS > x.LastSentNS || x.LastSentNS > x.LastEndNS {
		c.fail("ended.last_sent_ns", "first_sent_ns %d, last_sent_ns %d and last_end_ns %d are out of order",
			x.FirstSentNS, x.LastSentNS, x.LastEndNS)
	}
	var codes int64
	for code, n := range x.StatusCodes {
		c.count("ended.status_codes."+code, n)
		if codes+n < codes {
			c.fail("ended.status_codes", "the counts add up beyond 2⁶³")
		}
		codes += n
	}
	if x.StatusCodes != nil && codes != total {
		c.fail("ended.status_codes", "%d requests by code, not the %d in requests.total", codes, total)
	}
	for i, e := range x.Errors {
		if e.Kind == "" && e.Message == "" {
			c.fail(fmt.Sprintf("ended.errors[%d]", i), "neither a kind nor a message")
		}
	}
}

// walk checks every number in v, at JSON path field: none is negative or not
// finite but the seed, which any int64 may be, and no share is above 1.
func (c *checker) walk(field string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			c.walk(field, v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" || name == "seed" {
				continue
			}
			if field != "" {
				name = field + "." + name
			}
			c.walk(name, v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			c.walk(fmt.Sprintf("%s[%d]", field, i), v.Index(i))
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			c.walk(field+"."+iter.Key().String(), iter.Value())
		}
	case reflect.Int, reflect.Int64:
		c.count(field, v.Int())
	case reflect.Float64:
		c.number(field, v.Float())
		// A share of requests, periods or time is at most all of them; CPU, which a
		// quota period can overrun, is checked apart (cpuShare).
		if name := field[strings.LastIndex(field, ".")+1:]; name == "share" || strings.HasSuffix(name, "_share") ||
			(strings.HasSuffix(name, "_utilization") && name != "cpu_utilization") {
			c.share(field, v.Float())
		}
	}
}
