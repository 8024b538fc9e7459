package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"trafficlab/result"
)

// writeCalls draws the services' calls as a tree from each client: per call its
// rate, its p50 and p99 as the caller saw them, the calls that failed after their
// retries and the retries made; then each service's own figures at its pods.
func writeCalls(b *strings.Builder, r *result.Result) {
	if len(r.Edges) == 0 {
		return
	}
	fmt.Fprintf(b, "\nCalls (latency as the caller saw it, retries included; errors: calls that failed after their retries)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CALL\tRATE\tP50\tP99\tERRORS\tRETRIES\t\n")
	drawn := map[string]bool{}
	for _, c := range r.Clients {
		p50, p99 := "-", "-"
		if len(r.Clients) == 1 {
			p50, p99 = successMS(r, r.LatencyMS.P50), successMS(r, r.LatencyMS.P99)
		}
		fmt.Fprintf(tw, "%s → %s\t%s\t%s\t%s\t%s\t-\t\n", c.Name, c.Target, rateOf(c.Requests+c.Errors, r.DurationS),
			p50, p99, errorShare(c.Errors, c.Requests+c.Errors))
		writeCallTree(tw, r, c.Target, "", drawn)
	}
	// Services no client reaches still show their calls.
	for _, e := range r.Edges {
		if !drawn[e.From] && !calledBy(r, e.From) {
			writeCallTree(tw, r, e.From, "", drawn)
		}
	}
	tw.Flush()

	fmt.Fprintf(b, "\nServices (time at their pods: queueing, CPU, waits and calls; 503s: answered so because a call failed)\n")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "SERVICE\tREQUESTS\t503s\tMEAN\tP99\t\n")
	for _, s := range r.Services {
		if s.LatencyMS == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t\n", s.Name, s.Requests, s.Errors, ms(s.LatencyMS.Mean), ms(s.LatencyMS.P99))
	}
	tw.Flush()
}

// writeCallTree writes the calls out of service svc under prefix, and theirs below
// them; a service whose calls are drawn already is not drawn again.
func writeCallTree(tw *tabwriter.Writer, r *result.Result, svc, prefix string, drawn map[string]bool) {
	if drawn[svc] {
		return
	}
	drawn[svc] = true
	var out []result.Edge
	for _, e := range r.Edges {
		if e.From == svc {
			out = append(out, e)
		}
	}
	for i, e := range out {
		branch, more := "├─ ", "│  "
		if i == len(out)-1 {
			branch, more = "└─ ", "   "
		}
		name := e.From + " → " + e.To
		if drawn[e.To] && hasCalls(r, e.To) {
			name += " (its calls above)"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%d\t\n", prefix+branch, name, rateOf(e.Requests, r.DurationS),
			ms(e.LatencyMS.P50), ms(e.LatencyMS.P99), errorShare(e.Errors.Total(), e.Requests), e.Retries)
		writeCallTree(tw, r, e.To, prefix+more, drawn)
	}
}

func hasCalls(r *result.Result, svc string) bool {
	for _, e := range r.Edges {
		if e.From == svc {
			return true
		}
	}
	return false
}

// calledBy tells whether a client or another service calls svc.
func calledBy(r *result.Result, svc string) bool {
	if clientsTarget(r, svc) {
		return true
	}
	for _, e := range r.Edges {
		if e.To == svc {
			return true
		}
	}
	return false
}

func rateOf(n int64, seconds float64) string {
	if seconds <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f/s", float64(n)/seconds)
}

// errorShare is a count of failures with its share of all: "12 (0.3%)".
func errorShare(failed, all int64) string {
	if failed == 0 || all == 0 {
		return fmt.Sprint(failed)
	}
	return fmt.Sprintf("%d (%s)", failed, percent(float64(failed)/float64(all), 1))
}

// callFailures says, per service that answered 503s because its calls failed, which
// of its calls failed and how.
func callFailures(r *result.Result) []string {
	var out []string
	for _, s := range r.Services {
		if s.Errors == 0 {
			continue
		}
		var calls []string
		for _, e := range r.Edges {
			if e.From != s.Name || e.Errors.Total() == 0 {
				continue
			}
			var kinds []string
			for k := range result.ErrorKinds {
				if n := e.Errors.Of(k); n > 0 {
					kinds = append(kinds, fmt.Sprintf("%d %s", n, k.Words()))
				}
			}
			calls = append(calls, fmt.Sprintf("%s to %s (%s)", counted(e.Errors.Total(), "call"), e.To, strings.Join(kinds, ", ")))
		}
		out = append(out, fmt.Sprintf("%s answered %s with a 503 because a call it made still failed after its retries. Its calls that failed: %s.",
			s.Name, counted(s.Errors, "request"), strings.Join(calls, "; ")))
	}
	return out
}

// partWords name a part of a pod's time in prose.
var partWords = map[string]string{
	"work": "CPU work", "queue": "queue for a worker", "cpu": "wait for a core", "throttled": "CPU throttling",
	"disk": "disk", "dependency": "waitTime",
}

// pathWords says what one part of the slow requests' critical path is: "cart waiting
// for db-2's disk", "frontend-1's own CPU work", "cart's calls to db on the way".
func pathWords(p result.PathShare) string {
	switch {
	case p.Part == "network" && p.Caller == "":
		return "the clients' own network and connection waits"
	case p.Part == "network":
		return fmt.Sprintf("%s's calls to %s on the way (network, connection waits, failed attempts)", p.Caller, p.Service)
	case p.Caller == "":
		return fmt.Sprintf("%s's own %s (%s the most, %s)", p.Service, partWords[p.Part], p.Pod, percent(p.PodShare, 0))
	}
	return fmt.Sprintf("%s waiting for %s's %s (%s the most, %s)", p.Caller, p.Service, partWords[p.Part], p.Pod, percent(p.PodShare, 0))
}

// writeSlowPath says where the slow requests' time went along their critical path
// across the services they called: at each step of calls, the call that ended last.
func writeSlowPath(b *strings.Builder, r *result.Result) {
	if len(r.SlowPath) == 0 {
		return
	}
	top := r.SlowPath[0]
	fmt.Fprintf(b, "\n%s\n", wrap(fmt.Sprintf("Where the %s over %s spent their time along their calls (at each step, the call that ended last): %s of it is %s.",
		counted(r.Slow, "slow request"), ms(r.SlowThresholdMS), percent(top.ShareOfTail, 0), pathWords(top)), width))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, p := range r.SlowPath {
		fmt.Fprintf(tw, "  %s\t%s\n", percent(p.ShareOfTail, 0), pathWords(p))
	}
	tw.Flush()
}

// retriedShare is the attempts per call above which a call counts as retried much.
const retriedShare = 1.1

// callRetries says which calls were retried much (at least 1.1 attempts a call),
// and where retries at one tier multiply those at the next: a call whose callee
// retries its own calls much too reaches that callee's callee many times over.
func callRetries(r *result.Result) []string {
	perCall := func(e result.Edge) float64 {
		if first := e.Attempts - e.Retries; first > 0 {
			return float64(e.Attempts) / float64(first)
		}
		return 0
	}
	var heavy []result.Edge
	var parts []string
	for _, e := range r.Edges {
		if perCall(e) >= retriedShare {
			heavy = append(heavy, e)
			parts = append(parts, fmt.Sprintf("%s → %s %.1f", e.From, e.To, perCall(e)))
		}
	}
	if len(heavy) == 0 {
		return nil
	}
	s := fmt.Sprintf("Retried calls, in attempts per call: %s.", strings.Join(parts, ", "))
	for _, x := range heavy {
		for _, y := range heavy {
			if x.To != y.From {
				continue
			}
			s += fmt.Sprintf(" Retries at two tiers multiply: each of %s's calls to %s became %.1f attempts at %s (%s tried %s %.1f times a call, and %s tried %s %.1f times a call). Retrying at one tier only bounds the attempts a request makes at %s by that tier's tries.",
				x.From, x.To, float64(y.Attempts)/float64(x.Attempts-x.Retries), y.To,
				x.From, x.To, perCall(x), y.From, y.To, perCall(y), y.To)
		}
	}
	return []string{s}
}
