package report

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// writeOverloads says, for each service that got more requests than its pods could
// serve, the offered and served rates, what ran out, and how many replicas would
// carry the load, with the sweep that finds the fewest.
func writeOverloads(b *strings.Builder, r *result.Result) {
	for _, o := range r.Overloads {
		fmt.Fprintf(b, "\nOverload: %s was offered %s requests/s; its pods finished %s/s\n", o.Service, rps(o.OfferedRPS), rps(o.ServedRPS))
		for _, s := range overloadEvidence(r, o) {
			fmt.Fprintf(b, "%s\n", indentWrap(s, "  - ", "    "))
		}
		fmt.Fprintf(b, "%s\n", wrap(overloadFix(o), width))
		if o.Sweep != "" {
			fmt.Fprintf(b, "  %s\n", o.Sweep)
		}
	}
}

// overloadEvidence is what ran out and what it did to the requests, one line each.
func overloadEvidence(r *result.Result, o result.Overload) []string {
	var out []string
	for _, s := range o.Saturated {
		switch s {
		case "cpu":
			line := fmt.Sprintf("CPU: its pods used %s of the CPU they could get (%s a pod), %s ms of CPU a request",
				pct(o.CPUUtilization), cores(o.CoresPerPod), trimFloat(o.CPUPerRequestMS))
			if o.ThrottledShare > 0 {
				line += fmt.Sprintf("; their CPU limits throttled them in %s of CFS periods", pct(o.ThrottledShare))
			}
			out = append(out, line+".")
		case "node_cpu":
			out = append(out, fmt.Sprintf("CPU: the nodes its pods ran on (%s in all) were %s busy; its pods have no CPU limit and share their cores, %s ms of CPU a request.",
				cores(o.NodeCores), pct(o.CPUUtilization), trimFloat(o.CPUPerRequestMS)))
		case "workers":
			line := fmt.Sprintf("workers: every app worker of each pod (%d a pod) was busy, each request holding one for %s ms",
				o.Workers, trimFloat(o.HoldMS))
			if o.QueuedAtEnd > 0 {
				line += fmt.Sprintf("; %s waited for a worker at the end", counted(o.QueuedAtEnd, "request"))
			}
			out = append(out, line+".")
		}
	}
	if o.PoolWaitersAtEnd > 0 {
		out = append(out, fmt.Sprintf("client pools: %s waited for a pooled connection at the end, the pools full of requests the pods were slow to answer.",
			counted(o.PoolWaitersAtEnd, "request")))
	}
	var harm []string
	if r.Errors.Timeout > 0 {
		harm = append(harm, counted(r.Errors.Timeout, "request")+" timed out")
	}
	if r.Requests.NotSent > 0 {
		harm = append(harm, counted(r.Requests.NotSent, "arrival")+" found no free slot and were not sent")
	}
	if len(harm) > 0 {
		out = append(out, fmt.Sprintf("the excess queued: %s. A queue fed faster than it drains grows for as long as the load lasts.",
			strings.Join(harm, ", and ")))
	}
	return out
}

// overloadFix is the replica estimate and the math behind it.
func overloadFix(o result.Overload) string {
	if o.ReplicasNeeded == 0 {
		return fmt.Sprintf("Fix: more cores. The offered load needs %s/s × %s ms of CPU = %s, and more replicas on the same nodes "+
			"only share the same cores: add nodes, or give the pods CPU requests and limits so that the scheduler "+
			"spreads them over nodes with room.", rps(o.OfferedRPS), trimFloat(o.CPUPerRequestMS), cores(o.OfferedRPS*o.CPUPerRequestMS/1e3))
	}
	var need []string
	for _, s := range o.Saturated {
		switch s {
		case "cpu":
			need = append(need, fmt.Sprintf("%s/s × %s ms of CPU = %s at %s a pod",
				rps(o.OfferedRPS), trimFloat(o.CPUPerRequestMS), cores(o.OfferedRPS*o.CPUPerRequestMS/1e3), cores(o.CoresPerPod)))
		case "workers":
			busy := trimFloat(o.OfferedRPS*o.HoldMS/1e3) + " busy workers"
			if busy == "1 busy workers" {
				busy = "1 busy worker"
			}
			need = append(need, fmt.Sprintf("%s/s × %s ms held = %s at %d a pod",
				rps(o.OfferedRPS), trimFloat(o.HoldMS), busy, o.Workers))
		}
	}
	what := "replicas"
	if strings.HasSuffix(o.ReplicasPath, "maxReplicas") {
		what = "replicas (the autoscaler's maxReplicas)"
	}
	return fmt.Sprintf("Fix: more %s. The offered load needs %s: fewer than %s (%d now) cannot serve it at all, "+
		"and how many more keep the tail inside the timeout depends on the spread of the service time. "+
		"This sweep finds the fewest with no errors:", what, strings.Join(need, ", and "), plural(int64(o.ReplicasNeeded), "pod"), o.Replicas)
}

// trimFloat writes v to three significant digits at most: 12, 1.5, 0.002.
func trimFloat(v float64) string {
	return fmt.Sprintf("%.3g", v)
}

// cores writes a number of CPU cores: 1 core, 1.5 cores, 12 cores.
func cores(v float64) string {
	if s := trimFloat(v); s != "1" {
		return s + " cores"
	}
	return "1 core"
}

// counted is plural with thousands separators: 1 request, 138,344 requests.
func counted(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return count(n) + " " + noun + "s"
}
