package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"trafficlab/result"
)

// Prometheus writes the result's final counters and gauges in the Prometheus text
// exposition format, version 0.0.4, for a Pushgateway, a node-exporter textfile
// collector or promtool. Every sample describes the whole run; there are no
// timestamps, because a Result has no wall clock.
//
// The encoder is written here rather than taken from prometheus/common's expfmt:
// the format is a few lines of text per family, and expfmt would bring
// client_model and protobuf into every build of trafficlab for them. The tests
// parse the output with expfmt's parser to prove it valid.
//
// Families come in a fixed order and, within one, samples in the Result's order
// (pods, nodes and clients as the engine listed them, error kinds as in
// result.Errors), so equal Results give equal bytes. Optional families (slow
// requests, CPU throttling, sidecars, TCP, scale events) appear only when the
// result has them; a family never appears with no sample.
func Prometheus(w io.Writer, r *result.Result) error {
	var fams []*promFamily
	for _, part := range [][]*promFamily{runFamilies(r), latencyFamilies(r), podFamilies(r), nodeFamilies(r),
		clientFamilies(r), sidecarFamilies(r), tcpFamilies(r), scaleFamilies(r)} {
		fams = append(fams, part...)
	}
	b := &strings.Builder{}
	for _, f := range fams {
		f.write(b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// promFamily is one metric family: its # HELP and # TYPE lines and its samples.
type promFamily struct {
	name, typ, help string
	samples         []promSample
}

// promSample is one line: the family's name plus suffix (_sum and _count of a
// summary), labels as name, value pairs, and the value as written.
type promSample struct {
	suffix string
	labels []string
	value  string
}

func promFam(name, typ, help string) *promFamily {
	return &promFamily{name: name, typ: typ, help: help}
}

func (f *promFamily) add(value string, labels ...string) *promFamily {
	f.samples = append(f.samples, promSample{labels: labels, value: value})
	return f
}

// The format's escapes: in HELP text a backslash and a line feed; in a label
// value those and the double quote.
var (
	promHelpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	promLabelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func (f *promFamily) write(b *strings.Builder) {
	if len(f.samples) == 0 {
		return
	}
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", f.name, promHelpEscaper.Replace(f.help), f.name, f.typ)
	for _, s := range f.samples {
		b.WriteString(f.name + s.suffix)
		if len(s.labels) > 0 {
			b.WriteByte('{')
			for i := 0; i+1 < len(s.labels); i += 2 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, "%s=\"%s\"", s.labels[i], promLabelEscaper.Replace(s.labels[i+1]))
			}
			b.WriteByte('}')
		}
		b.WriteString(" " + s.value + "\n")
	}
}

// promInt writes a count exactly (a float's shortest form would turn 162540000
// into 1.6254e+08, valid but harder to read).
func promInt(n int64) string { return strconv.FormatInt(n, 10) }

// promFloat writes a value as the format spells floats, NaN and infinities included.
func promFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// runInfo is trafficlab_run_info's labels: only what the engine knows. A vegeta
// attack has no seed, and neither it nor load sees the cluster's kube-proxy mode:
// seed="0" and proxy_mode="" would read as a run with seed 0 in an unnamed mode.
func runInfo(r *result.Result) []string {
	info := []string{"engine", r.Engine}
	if r.Scenario != "" {
		info = append(info, "scenario", r.Scenario)
	}
	if r.Engine != "vegeta" {
		info = append(info, "seed", strconv.FormatInt(r.Seed, 10))
	}
	if !r.ProxyMode.IsZero() {
		info = append(info, "proxy_mode", r.ProxyMode.String())
	}
	if r.IPVSScheduler != "" {
		info = append(info, "ipvs_scheduler", r.IPVSScheduler)
	}
	return info
}

// interruptedGauge is the run's interruption as a gauge's value. A gauge rather than a
// label of run_info: a label would split the run's series in two names for one
// run, and a gauge can be alerted on (prometheus.io/docs/practices/naming).
func interruptedGauge(r *result.Result) int64 {
	if r.Interrupted {
		return 1
	}
	return 0
}

// runFamilies: what ran, and the request counts by outcome and error kind.
func runFamilies(r *result.Result) []*promFamily {
	info := runInfo(r)
	errs := promFam("trafficlab_errors_total", "counter", "Failed requests by error kind, as the client saw them.")
	for _, k := range ShownKinds(r.Errors) {
		errs.add(promInt(r.Errors.Of(k)), "kind", k.String())
	}
	return []*promFamily{
		promFam("trafficlab_run_info", "gauge", "The run: engine, scenario, seed and kube-proxy mode, those the engine knows; always 1.").add("1", info...),
		promFam("trafficlab_run_duration_seconds", "gauge", "Duration of the run in seconds.").
			add(promFloat(r.DurationS)),
		promFam("trafficlab_run_interrupted", "gauge", "1 when a signal stopped the run before its planned duration, else 0: every figure covers the shorter run.").
			add(promInt(interruptedGauge(r))),
		promFam("trafficlab_requests_total", "counter", "Finished requests by outcome; requests in flight at the end are not counted.").
			add(promInt(r.Requests.OK), "outcome", "ok").add(promInt(r.Requests.Failed), "outcome", "failed"),
		promFam("trafficlab_requests_in_flight", "gauge", "Requests still in flight when the run ended.").add(promInt(r.Requests.InFlight)),
		promFam("trafficlab_requests_not_sent_total", "counter", "Open-loop arrivals that found no free slot and were not sent.").
			add(promInt(r.Requests.NotSent)),
		promFam("trafficlab_requests_behind_schedule_total", "counter", "Open-loop arrivals a client's CPU had not caught up with when their phase or the run ended.").
			add(promInt(r.Requests.Behind)),
		promFam("trafficlab_requests_retried_total", "counter", "Requests a client library resent on another connection without the caller seeing an error.").
			add(promInt(r.Requests.Retried)),
		errs,
		promFam("trafficlab_rate_requests_per_second", "gauge", "Requests sent per second over the run.").add(promFloat(r.RateRPS)),
		promFam("trafficlab_throughput_requests_per_second", "gauge", "Successful requests per second over the run.").
			add(promFloat(r.ThroughputRPS)),
	}
}

// latencyFamilies: the latency summary of successful requests, and the slow ones.
// A summary's quantiles with no observation are NaN, as client libraries write them.
// _sum is mean × count: both are over the same successful requests.
func latencyFamilies(r *result.Result) []*promFamily {
	l, ok := r.LatencyMS, r.Requests.OK
	sum := promFam("trafficlab_request_duration_seconds", "summary",
		"Latency of successful requests, from sending to the last byte received; failed requests are not included.")
	for _, q := range []struct {
		q  string
		ms float64
	}{{"0.5", l.P50}, {"0.9", l.P90}, {"0.95", l.P95}, {"0.99", l.P99}, {"0.999", l.P999}} {
		v := math.NaN()
		if ok > 0 {
			v = q.ms / 1000
		}
		sum.add(promFloat(v), "quantile", q.q)
	}
	sum.samples = append(sum.samples, promSample{suffix: "_sum", value: promFloat(l.Mean * float64(ok) / 1000)},
		promSample{suffix: "_count", value: promInt(ok)})
	fams := []*promFamily{sum, latencyHistogram(r)}
	if ok > 0 {
		fams = append(fams,
			promFam("trafficlab_request_duration_min_seconds", "gauge", "Shortest latency of a successful request.").add(promFloat(l.Min/1000)),
			promFam("trafficlab_request_duration_max_seconds", "gauge", "Longest latency of a successful request.").add(promFloat(l.Max/1000)))
	}
	if r.SlowThresholdMS > 0 {
		fams = append(fams,
			promFam("trafficlab_slow_threshold_seconds", "gauge", "Latency above which a successful request counts as slow.").
				add(promFloat(r.SlowThresholdMS/1000)),
			promFam("trafficlab_slow_requests_total", "counter", "Successful requests slower than the slow threshold.").add(promInt(r.Slow)))
	}
	return fams
}

// latencyHistogram is the same successful requests as a histogram, which, unlike a
// summary, Prometheus can aggregate and take quantiles of (histogram_quantile). The
// exposition format's rules for one (prometheus.io/docs/instrumenting/exposition_formats,
// "Text format details"): cumulative x_bucket{le="y"} samples in increasing order of
// le, a bucket le="+Inf" equal to x_count, then x_sum and x_count.
//
// The bounds are the steps of the Result's latency spectrum (result.SpectrumOf):
// each is the highest latency HdrHistogram holds in one of its buckets, and its count
// is the successes recorded up to that bucket, so every bucket counts the requests
// at or below its bound, exact but for the spectrum's rounding to the microsecond
// (a request within half a microsecond of a bound may fall on either side), where
// fixed bounds would have to be interpolated. Steps that round to one bound are one
// bucket. Bounds therefore differ from run to run. A spectrum that does not add up
// to the successful requests (a Result read from another tool without one) gives
// only the le="+Inf" bucket: nothing is claimed that the Result does not hold.
func latencyHistogram(r *result.Result) *promFamily {
	ok, spec := r.Requests.OK, r.LatencySpectrum
	h := promFam("trafficlab_request_duration_histogram_seconds", "histogram",
		"Latency of successful requests as a histogram; bounds are the run's HdrHistogram percentile steps.")
	bucket := func(le string, n int64) {
		h.samples = append(h.samples, promSample{suffix: "_bucket", labels: []string{"le", le}, value: promInt(n)})
	}
	if n := len(spec); n > 0 && spec[n-1].Count == ok {
		for i, p := range spec {
			if i+1 < n && spec[i+1].MS == p.MS {
				continue // the later step of one bound has the higher count
			}
			bucket(promFloat(result.Round(p.MS/1000, 6)), p.Count)
		}
	}
	bucket("+Inf", ok)
	h.samples = append(h.samples, promSample{suffix: "_sum", value: promFloat(r.LatencyMS.Mean * float64(ok) / 1000)},
		promSample{suffix: "_count", value: promInt(ok)})
	return h
}

// perPod makes a family with one sample per pod, labelled pod, service and node,
// more labels following; value returns the sample, or ok false to leave the pod out.
func perPod(r *result.Result, name, typ, help string, value func(p result.Pod) (v string, ok bool)) *promFamily {
	f := promFam(name, typ, help)
	for _, p := range r.Pods {
		if v, ok := value(p); ok {
			f.add(v, "pod", p.Name, "service", p.Service, "node", p.Node)
		}
	}
	return f
}

// podFamilies: per server pod, its requests, connections, CPU, the errors its
// removal caused, its slow requests and its CFS throttling (cAdvisor's names).
func podFamilies(r *result.Result) []*promFamily {
	always := func(v func(result.Pod) string) func(result.Pod) (string, bool) {
		return func(p result.Pod) (string, bool) { return v(p), true }
	}
	fams := []*promFamily{
		perPod(r, "trafficlab_pod_requests_total", "counter", "Requests the pod finished, including ones whose client had already given up.",
			always(func(p result.Pod) string { return promInt(p.Requests) })),
		perPod(r, "trafficlab_pod_connections_total", "counter", "Connections the pod accepted.",
			always(func(p result.Pod) string { return promInt(p.Connections) })),
		perPod(r, "trafficlab_pod_cpu_cores", "gauge", "Mean CPU cores the pod used over its life in the run.",
			always(func(p result.Pod) string { return promFloat(p.CPUCores) })),
		perPod(r, "trafficlab_pod_cpu_utilization", "gauge", "CPU the pod used over the cores it may use (its limit, or its node's), 0 to 1; 0 when neither limits it.",
			always(func(p result.Pod) string { return promFloat(p.CPUUtilization) })),
	}
	podErrs := promFam("trafficlab_pod_errors_total", "counter", "Failed requests caused by the pod's removal, by error kind; kinds with none are left out.")
	for _, p := range r.Pods {
		for k := range result.ErrorKinds {
			if n := p.Errors.Of(k); n > 0 {
				podErrs.add(promInt(n), "pod", p.Name, "service", p.Service, "node", p.Node, "kind", k.String())
			}
		}
	}
	fams = append(fams, podErrs)
	if r.SlowThresholdMS > 0 {
		fams = append(fams, perPod(r, "trafficlab_pod_slow_requests_total", "counter", "The pod's successful requests slower than the slow threshold.",
			always(func(p result.Pod) string { return promInt(p.Slow) })))
	}
	throttled := func(v func(*result.Throttling) string) func(result.Pod) (string, bool) {
		return func(p result.Pod) (string, bool) {
			if p.Throttling == nil {
				return "", false
			}
			return v(p.Throttling), true
		}
	}
	return append(fams,
		perPod(r, "trafficlab_pod_cpu_cfs_periods_total", "counter", "CFS periods in which the pod's container had runnable work (cpu.stat nr_periods); pods with a CPU limit only.",
			throttled(func(t *result.Throttling) string { return promInt(t.Periods) })),
		perPod(r, "trafficlab_pod_cpu_cfs_throttled_periods_total", "counter", "CFS periods in which the container ran out of quota (cpu.stat nr_throttled).",
			throttled(func(t *result.Throttling) string { return promInt(t.ThrottledPeriods) })),
		perPod(r, "trafficlab_pod_cpu_cfs_throttled_seconds_total", "counter", "Time the container's threads spent throttled by its quota.",
			throttled(func(t *result.Throttling) string { return promFloat(t.ThrottledS) })))
}

// nodeFamilies: per node, its CPU (capacity where limited, utilisation) and, where
// its disk was modelled, the disk's busy share.
func nodeFamilies(r *result.Result) []*promFamily {
	cores := promFam("trafficlab_node_cpu_cores", "gauge", "CPU cores of the node; nodes without a limit are left out.")
	util := promFam("trafficlab_node_cpu_utilization", "gauge", "Share of the node's cores used over the run, 0 to 1.")
	disk := promFam("trafficlab_node_disk_utilization", "gauge", "Share of time the node's disk was busy writing; nodes without a disk limit are left out.")
	for _, n := range r.Nodes {
		if n.CPU > 0 {
			cores.add(promFloat(n.CPU), "node", n.Name)
		}
		util.add(promFloat(n.CPUUtilization), "node", n.Name)
		if n.DiskUtilization > 0 || n.DiskMaxWaitMS > 0 {
			disk.add(promFloat(n.DiskUtilization), "node", n.Name)
		}
	}
	return []*promFamily{cores, util, disk}
}

// clientFamilies: per client Deployment, what it sent and the connections it opened.
func clientFamilies(r *result.Result) []*promFamily {
	reqs := promFam("trafficlab_client_requests_total", "counter", "Requests the client sent that finished.")
	errs := promFam("trafficlab_client_errors_total", "counter", "The client's failed requests.")
	conns := promFam("trafficlab_client_connections_opened_total", "counter", "Connections the client opened.")
	for _, c := range r.Clients {
		reqs.add(promInt(c.Requests), "client", c.Name, "target", c.Target)
		errs.add(promInt(c.Errors), "client", c.Name, "target", c.Target)
		conns.add(promInt(c.ConnectionsOpened), "client", c.Name, "target", c.Target)
	}
	return []*promFamily{reqs, errs, conns}
}

// sidecarFamilies: per Envoy proxy, labelled by its pod and direction.
func sidecarFamilies(r *result.Result) []*promFamily {
	fams := []*promFamily{
		promFam("trafficlab_sidecar_requests_total", "counter", "Requests through the sidecar."),
		promFam("trafficlab_sidecar_retries_total", "counter", "Retries the sidecar made."),
		promFam("trafficlab_sidecar_overflows_total", "counter", "Requests a circuit breaker of the sidecar refused."),
		promFam("trafficlab_sidecar_http_503_total", "counter", "503 responses the sidecar gave."),
		promFam("trafficlab_sidecar_worker_utilization", "gauge", "Mean share of time the sidecar's worker threads were busy, 0 to 1."),
		promFam("trafficlab_sidecar_cpu_cores", "gauge", "Mean CPU cores the sidecar used."),
	}
	for _, s := range r.Sidecars {
		for i, v := range []string{promInt(s.Requests), promInt(s.Retries), promInt(s.Overflows), promInt(s.HTTP503),
			promFloat(s.WorkerUtilization), promFloat(s.CPUCores)} {
			fams[i].add(v, "pod", s.Pod, "direction", s.Direction)
		}
	}
	return fams
}

// tcpFamilies: segment-level TCP counters, when the run modelled segments. The
// repairs are separate families, not labels of one, because they overlap: a
// retransmission counted by kind is also in the total.
func tcpFamilies(r *result.Result) []*promFamily {
	t := r.TCP
	if t == nil {
		return nil
	}
	return []*promFamily{
		promFam("trafficlab_tcp_connections_total", "counter", "TCP connections opened.").add(promInt(t.Connections)),
		promFam("trafficlab_tcp_segments_total", "counter", "TCP segments sent.").add(promInt(t.Segments)),
		promFam("trafficlab_tcp_retransmits_total", "counter", "TCP segments retransmitted, by any mechanism.").add(promInt(t.Retransmits)),
		promFam("trafficlab_tcp_fast_retransmits_total", "counter", "Retransmissions after three duplicate ACKs.").add(promInt(t.FastRetransmits)),
		promFam("trafficlab_tcp_tlp_events_total", "counter", "Tail loss probes sent.").add(promInt(t.TLPEvents)),
		promFam("trafficlab_tcp_rto_events_total", "counter", "Retransmission timeouts.").add(promInt(t.RTOEvents)),
		promFam("trafficlab_tcp_syn_retransmits_total", "counter", "SYNs retransmitted.").add(promInt(t.SynRetransmits)),
	}
}

// scaleFamilies counts the autoscaler's changes per service and direction, the
// directions in a fixed order.
func scaleFamilies(r *result.Result) []*promFamily {
	f := promFam("trafficlab_scale_events_total", "counter", "Changes of a Deployment's replicas by its autoscaler, by direction.")
	for _, svc := range scaledServices(r) {
		out, in := int64(0), int64(0)
		for _, e := range r.ScaleEvents {
			switch {
			case e.Service != svc:
			case e.To > e.From:
				out++
			case e.To < e.From:
				in++
			}
		}
		f.add(promInt(out), "service", svc, "direction", "out").add(promInt(in), "service", svc, "direction", "in")
	}
	return []*promFamily{f}
}

// scaledServices are the services with scale events, in the order of their first.
func scaledServices(r *result.Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range r.ScaleEvents {
		if !seen[e.Service] {
			seen[e.Service] = true
			out = append(out, e.Service)
		}
	}
	return out
}
