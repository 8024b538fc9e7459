package report

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"trafficlab/result"
)

// writeHistogram prints the latency buckets the way vegeta's hist reporter does
// (tsenart/vegeta lib/reporters.go NewHistogramReporter): one row per bucket with its
// count, share and a bar of '#'.
func writeHistogram(b *strings.Builder, r *result.Result) {
	if len(r.Histogram) == 0 {
		return
	}
	fmt.Fprintf(b, "\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Bucket\t\t#\t%%\tHistogram\n")
	for _, k := range r.Histogram {
		to := "+Inf"
		if k.ToMS != nil {
			to = duration(*k.ToMS)
		}
		fmt.Fprintf(tw, "[%s,\t%s]\t%d\t%s\t%s\n", duration(k.FromMS), to, k.Count, percent(k.Share, 2),
			strings.Repeat("#", int(k.Share*75)))
	}
	tw.Flush()
}

// writeLatencyHistogram is the text report's histogram: vegeta's table under a line
// that says what it counts.
func writeLatencyHistogram(b *strings.Builder, r *result.Result) {
	if len(r.Histogram) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", wrap("Latency histogram: "+histogramCounts(r)+".", width))
	var t strings.Builder
	writeHistogram(&t, r)
	b.WriteString(strings.TrimPrefix(t.String(), "\n"))
}

// histogramCounts says what the scenario's histogram buckets count: every request,
// as vegeta's hist reporter does, the failed ones at their time to failure.
func histogramCounts(r *result.Result) string {
	if n := r.Errors.Total(); n > 0 {
		return fmt.Sprintf("every request, the %s among them at their time to failure", counted(n, "failed one"))
	}
	return "every request (none failed)"
}

// duration writes milliseconds as Go writes durations, as vegeta's bucket labels are.
func duration(v float64) string {
	return time.Duration(v * float64(time.Millisecond)).String()
}

// writeTCP summarises the segment-level TCP events and the connections that suffered
// most: where a loss stalled a connection, and how it was repaired.
func writeTCP(b *strings.Builder, r *result.Result) {
	t := r.TCP
	if t == nil {
		return
	}
	fmt.Fprintf(b, "\nTCP: %s, %s, %d retransmitted (%s): %d by fast retransmit, %s, %s, %s.\n",
		plural(t.Connections, "connection"), plural(t.Segments, "segment"), t.Retransmits, percent(ratio(t.Retransmits, t.Segments), 2), t.FastRetransmits,
		plural(t.TLPEvents, "tail loss probe"), plural(t.RTOEvents, "RTO timeout"), plural(t.SynRetransmits, "SYN retransmit"))
	if faults := faultsRun(r); faults != "" {
		fmt.Fprintf(b, "%s\n", wrap("Network faults that ran: "+faults+".", 92))
	}
	if why := explainTCP(r); why != "" {
		fmt.Fprintf(b, "%s\n", wrap(why, 92))
	}
	if len(t.WorstConnections) == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CLIENT\tPOD\tOPENED\tCLOSED\tRETRANSMITS\tTLP\tRTO\t\n")
	for _, c := range t.WorstConnections {
		closed := "open"
		if c.ClosedS != nil {
			closed = fmt.Sprintf("%.3fs", *c.ClosedS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3fs\t%s\t%d\t%d\t%d\t\n", c.Client, c.Pod, c.OpenedS, closed, c.Retransmits, c.TLPEvents, c.RTOEvents)
	}
	tw.Flush()
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// writeSidecars lists the Envoy proxies and says when one's worker threads, not its
// CPU, are what requests wait for.
func writeSidecars(b *strings.Builder, r *result.Result) {
	if len(r.Sidecars) == 0 {
		return
	}
	fmt.Fprintf(b, "\nSidecars\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	// A result from before sidecars recorded their node has no NODE column.
	nodes := slices.ContainsFunc(r.Sidecars, func(s result.Sidecar) bool { return s.Node != "" })
	head := "POD\tDIRECTION\tWORKERS\tWORKERS BUSY\tCPU\tREQUESTS\tRETRIES\t503s\t\n"
	if nodes {
		head = "POD\tNODE\t" + strings.TrimPrefix(head, "POD\t")
	}
	fmt.Fprint(tw, head)
	for _, s := range r.Sidecars {
		pod := s.Pod
		if nodes {
			pod += "\t" + s.Node
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.2f cores\t%d\t%d\t%d\t\n", pod, s.Direction, s.Workers,
			percent(s.WorkerUtilization, 1), s.CPUCores, s.Requests, s.Retries, s.HTTP503)
	}
	tw.Flush()
	for _, s := range r.Sidecars {
		if s.WorkerUtilization < 0.95 {
			continue
		}
		limit := fmt.Sprintf("it has no CPU limit and uses %.2f cores", s.CPUCores)
		switch {
		case s.CPULimit > 0 && s.CPUUtilization >= 0.95:
			limit = fmt.Sprintf("its CPU limit of %g cores is spent too: raise the limit with the workers", s.CPULimit)
		case s.CPULimit > 0:
			limit = fmt.Sprintf("%s of its CPU limit of %g cores is used", percent(s.CPUUtilization, 0), s.CPULimit)
		}
		direction := s.Direction
		if direction == result.SidecarBoth {
			direction = "two-way" // it relays its pod's calls out as well
		}
		fmt.Fprintf(b, "%s\n", wrap(fmt.Sprintf("The %s sidecar of %s keeps its %d worker threads busy %s of the time: requests queue for a worker while %s. Raise its concurrency (proxy.istio.io/config: {concurrency: N}, or a higher CPU limit, from which Istio derives it).",
			direction, s.Pod, s.Workers, percent(s.WorkerUtilization, 0), limit), 92))
	}
}

// rtoFloor is Linux's minimum retransmission timeout (TCP_RTO_MIN), in ms: the least
// a repair by timeout costs.
const rtoFloor = 200

// explainTCP says what the connections' retransmissions show: SYNs sent again are
// connections that could not be opened; data repaired by probes and timeouts (too
// little in flight for duplicate ACKs) cost each at least Linux's 200 ms minimum,
// repaired by fast retransmit on busy connections they hold back everything queued
// behind the hole on that connection. The tail is named as paying for them only when
// it is as long as what they cost.
func explainTCP(r *result.Result) string {
	t := r.TCP
	var out []string
	if t.SynRetransmits > 0 {
		s := fmt.Sprintf("%s went unanswered and were sent again: connections could not be opened, each "+
			"waiting at least 1 s for its first retry (the initial RTO, doubling after each try; RFC 6298) before it "+
			"opened or the client gave up.", plural(t.SynRetransmits, "SYN"))
		if dropped(r) {
			s += " A fault that dropped packets ran (listed above)."
		}
		out = append(out, s)
	}
	if t.Retransmits == 0 {
		return strings.Join(out, " ")
	}
	p99 := r.LatencyMS.P99
	slow := t.TLPEvents + t.RTOEvents
	if slow*2 > t.Retransmits {
		s := fmt.Sprintf("Most losses (%d of %s) were found by the tail loss probe or the retransmission timeout, "+
			"not by duplicate ACKs: the connections had too few segments in flight for a loss to show. Each such repair "+
			"waits at least 200 ms (2·SRTT + 200 ms with one segment out, or the RTO's 200 ms floor)", slow, plural(t.Retransmits, "repair"))
		switch {
		case p99 >= rtoFloor:
			s += fmt.Sprintf(", which is what the slowest requests paid (p99 %s).", ms(p99))
		case p99 > 0:
			s += fmt.Sprintf("; the p99 (%s) is below that, so fewer than 1 in 100 successful requests paid it.", ms(p99))
		default: // no successful request to take a percentile of
			s += "."
		}
		return strings.Join(append(out, s), " ")
	}
	perConn := r.ThroughputRPS / float64(max(t.Connections, 1))
	return strings.Join(append(out, fmt.Sprintf("Most losses (%d of %s) were fast retransmits, found within a round trip, but %s "+
		"carried about %.0f requests a second each: every loss holds back all the requests queued behind it on its "+
		"connection until the hole is filled (head-of-line blocking in TCP), and each cut of the congestion window slows "+
		"them all. More connections, as HTTP/1.1 or more proxy workers give, shorten this tail (p99 %s).",
		t.FastRetransmits, plural(t.Retransmits, "repair"), plural(t.Connections, "connection"), perConn, ms(p99))), " ")
}

// faultsRun lists the network faults that ran, "cut: partition of pod web-1 (both
// ways), 10s–20s"; "" when none did.
func faultsRun(r *result.Result) string {
	var each []string
	for _, f := range r.Faults {
		if f.Kind == "pod-kill" {
			continue
		}
		s := f.Kind + " of " + f.Target
		if f.Peer != "" {
			s += " and " + f.Peer
		}
		if f.Direction != "" {
			s += " (" + map[string]string{"to": "packets it sends", "from": "packets it receives", "both": "both ways"}[f.Direction] + ")"
		}
		s += fmt.Sprintf(", %s–%s", at(f.StartS), at(f.EndS))
		if f.Name != "" {
			s = f.Name + ": " + s
		}
		each = append(each, s)
	}
	return strings.Join(each, "; ")
}

// dropped says whether a fault that drops packets ran.
func dropped(r *result.Result) bool {
	for _, f := range r.Faults {
		if f.Kind == "partition" || f.Kind == "loss" {
			return true
		}
	}
	return false
}
