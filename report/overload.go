package report

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"trafficlab/result"
)

// writeOverloads says, for each service that got more requests than were answered
// in time, the offered, answered and finished rates, what ran out, and what would
// carry the load, with the sweep that finds the least of it.
func writeOverloads(b *strings.Builder, r *result.Result) {
	for _, o := range r.Overloads {
		fmt.Fprintf(b, "\n%s\n", wrap(overloadHead(o), width))
		for _, s := range overloadEvidence(r, o) {
			fmt.Fprintf(b, "%s\n", indentWrap(s, "  - ", "    "))
		}
		for _, fix := range overloadFixes(r, o) {
			fmt.Fprintf(b, "%s\n", wrap(fix, width))
		}
		if o.Sweep != nil {
			fmt.Fprintf(b, "  %s\n", SweepCommand(r.Origin, o.Sweep))
		}
	}
}

// overloadHead is the rates: offered, answered in time, and what the pods finished
// when that was more, the rest having come too late for their clients.
func overloadHead(o result.Overload) string {
	head := fmt.Sprintf("Overload: %s was offered %s requests/s; %s/s were answered in time", o.Service, rps(o.OfferedRPS), rps(o.ServedRPS))
	if late := o.FinishedRPS - o.ServedRPS; rps(late) != rps(0) && late > 0 {
		head += fmt.Sprintf(". Its pods finished %s/s: %s/s of them after their clients had given up", rps(o.FinishedRPS), rps(late))
	}
	return head
}

// overloadEvidence is what ran out and what it did to the requests, one line each.
func overloadEvidence(r *result.Result, o result.Overload) []string {
	var out []string
	pool := false
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
			line := fmt.Sprintf("CPU: the nodes its pods ran on (%s in all) were %s busy; its pods have no CPU limit and share their cores, %s ms of CPU a request",
				cores(o.NodeCores), pct(o.CPUUtilization), trimFloat(o.CPUPerRequestMS))
			if others := nodeOthers(o); len(others) > 0 {
				line += fmt.Sprintf(". Of those cores its pods used %s, %s", trimFloat(o.PodsCores), strings.Join(others, ", "))
			}
			out = append(out, line+".")
		case "workers":
			line := fmt.Sprintf("workers: every app worker of each pod (%d a pod) was busy, each request holding one for %s ms",
				o.Workers, trimFloat(o.HoldMS))
			if o.QueuedAtEnd > 0 {
				line += fmt.Sprintf("; %s waited for a worker at the end", counted(o.QueuedAtEnd, "request"))
				if o.QueuedAbandonedAtEnd > 0 {
					line += fmt.Sprintf(", %s of them already given up on by their clients", count(o.QueuedAbandonedAtEnd))
				}
			}
			out = append(out, line+".")
		case "pool":
			pool = true
			line := fmt.Sprintf("client pools: their %s (maxPerHost) were all busy, each request answered in time holding one for %s ms: "+
				"they carry at most %d / %s ms = %s requests/s (Little's law). %s waited for a connection, %s ms on average",
				counted(int64(o.PoolConnections), "connection"), trimFloat(o.PoolHoldMS), o.PoolConnections, trimFloat(o.PoolHoldMS),
				rps(float64(o.PoolConnections)/o.PoolHoldMS*1e3), capital(counted(o.PoolWaited, "request")), trimFloat(o.PoolWaitMS))
			if o.PoolTimedOut > 0 {
				line += fmt.Sprintf("; %s timed out still waiting and never reached a pod", count(o.PoolTimedOut))
			}
			if o.PoolWaitersAtEnd > 0 {
				line += fmt.Sprintf("; %s waited at the end", count(o.PoolWaitersAtEnd))
			}
			out = append(out, line+".")
		}
	}
	if o.PoolWaitersAtEnd > 0 && !pool {
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

// overloadFixes are what would carry the load, each with the math behind it: more
// pooled connections, more replicas, more nodes, or more cores.
func overloadFixes(r *result.Result, o result.Overload) []string {
	var out []string
	podsRanOut := false
	for _, s := range o.Saturated {
		switch s {
		case "pool":
			busy := o.OfferedRPS * o.PoolHoldMS / 1e3
			d := ceilDigits(busy)
			// simulate blames the pools only when the pods kept up.
			out = append(out, fmt.Sprintf("Fix: more connections (%s), not more replicas: no resource of the pods ran out. The offered load needs %s/s × %s ms held = %s busy connections: fewer than %d (%d now) would be more than 100%% busy, "+
				"the requests waiting for them growing for as long as the load lasts; %d a client pod's pool at least. How many more keep the tail inside the timeout depends on the spread of the hold time.%s",
				o.PoolPath, rps(o.OfferedRPS), sig(o.PoolHoldMS, d), sig(busy, d),
				o.ConnectionsNeeded, o.PoolConnections, o.MaxPerHostNeeded, sweepIntro(o, o.PoolPath)))
		case "cpu", "workers":
			podsRanOut = true
		case "node_cpu":
			out = append(out, moreCores(r, o))
		}
	}
	if podsRanOut && o.ReplicasNeeded > 0 {
		out = append(out, moreReplicas(o))
	}
	return out
}

// moreReplicas is the replica estimate: x pods' worth of what ran out, so fewer
// than ⌈x⌉ pods cannot serve the load; more nodes when those pods do not fit.
func moreReplicas(o result.Overload) string {
	var need []string
	for _, s := range o.Saturated {
		switch s {
		case "cpu":
			// Every figure of the arithmetic to the digits that keep the pods' ceiling.
			c := o.OfferedRPS * o.CPUPerRequestMS / 1e3
			d := ceilDigits(c / o.CoresPerPod)
			need = append(need, fmt.Sprintf("%s/s × %s ms of CPU = %s cores, %s pods' worth at %s cores a pod",
				rps(o.OfferedRPS), sig(o.CPUPerRequestMS, d), sig(c, d), sig(c/o.CoresPerPod, d), sig(o.CoresPerPod, d)))
		case "workers":
			busy := o.OfferedRPS * o.HoldMS / 1e3
			d := ceilDigits(busy / float64(o.Workers))
			workers := " busy workers"
			if sig(busy, d) == "1" {
				workers = " busy worker"
			}
			need = append(need, fmt.Sprintf("%s/s × %s ms held = %s, %s pods' worth at %d a pod",
				rps(o.OfferedRPS), sig(o.HoldMS, d), sig(busy, d)+workers, sig(busy/float64(o.Workers), d), o.Workers))
		}
	}
	now := fmt.Sprintf("%d now", o.Replicas)
	if o.PendingAtEnd > 0 {
		now += fmt.Sprintf(", and %d Pending", o.PendingAtEnd)
	}
	need1 := fmt.Sprintf("The offered load needs %s: fewer than %d pods (%s) would be more than 100%% busy, their queues growing for as long as the load lasts.",
		strings.Join(need, ", and "), o.ReplicasNeeded, now)
	if o.NodesNeeded > 0 {
		then := fmt.Sprintf("then more replicas (%s)", o.ReplicasPath)
		if asked := o.Replicas + o.PendingAtEnd; strings.HasSuffix(o.ReplicasPath, "maxReplicas") && asked >= o.ReplicasNeeded {
			then = fmt.Sprintf("the autoscaler already asks for %d", asked)
		}
		return fmt.Sprintf("Fix: more nodes. %s But the nodes' allocatable CPU takes only %s at %s of CPU request each, beside the other pods' requests: "+
			"fitting the other %d takes %s of requests more, %s of %s; %s.",
			need1, counted(int64(o.PodsFit), "such pod"), cores(o.PodRequestCores), o.ReplicasNeeded-o.PodsFit,
			cores(float64(o.ReplicasNeeded-o.PodsFit)*o.PodRequestCores), counted(int64(o.NodesNeeded), "more node"), cores(o.NodeCoresEach), then)
	}
	what := "more replicas"
	switch {
	case o.Replicas >= o.ReplicasNeeded:
		what = fmt.Sprintf("more replicas from the start (%s)", o.ReplicasPath)
		need1 += fmt.Sprintf(" It had %d at the end, but fewer before: the queue built up while they were missing.", o.Replicas)
	case strings.HasSuffix(o.ReplicasPath, "maxReplicas"):
		what = "more replicas (the autoscaler's maxReplicas)"
	}
	return fmt.Sprintf("Fix: %s. %s How many more keep the tail inside the timeout depends on the spread of the service time.%s",
		what, need1, sweepIntro(o, o.ReplicasPath))
}

// sweepIntro introduces the sweep printed below when it varies path.
func sweepIntro(o result.Overload, path string) string {
	if o.Sweep == nil || o.Sweep.Path != path {
		return ""
	}
	return " This sweep finds the fewest with no errors:"
}

// nodeOthers names what else took the cores of an overloaded service's nodes:
// kube-proxy's relaying, client pods' own work.
func nodeOthers(o result.Overload) []string {
	var out []string
	if o.NodeProxyCores > 0 {
		out = append(out, fmt.Sprintf("kube-proxy's relaying %s", trimFloat(o.NodeProxyCores)))
	}
	if o.NodeClientCores > 0 {
		out = append(out, fmt.Sprintf("client pods' own work %s", trimFloat(o.NodeClientCores)))
	}
	// The rest (other services' pods, sidecars, background work) only beside those:
	// an overload of its own pods' making is said as it was before.
	if len(out) > 0 && o.NodeOtherCores >= 0.01 {
		out = append(out, fmt.Sprintf("other containers %s", trimFloat(o.NodeOtherCores)))
	}
	return out
}

// moreCores is the fix when the nodes' cores ran out: replicas on the same nodes
// share them. Spreading the pods helps only when some node has room.
func moreCores(r *result.Result, o result.Overload) string {
	if o.NodeProxyCores+o.NodeClientCores > o.PodsCores {
		return takenCores(o)
	}
	fix := fmt.Sprintf("Fix: more cores. The offered load needs %s/s × %s ms of CPU = %s, and more replicas on the same nodes only share the same cores: add nodes",
		rps(o.OfferedRPS), trimFloat(o.CPUPerRequestMS), cores(o.OfferedRPS*o.CPUPerRequestMS/1e3))
	for _, n := range r.Nodes {
		if n.CPUUtilization < nodeRoom {
			return fix + fmt.Sprintf(", or give the pods CPU requests and limits so that the scheduler spreads them over nodes with room (%s was %s busy).",
				n.Name, pct(n.CPUUtilization))
		}
	}
	return fix + " or cores: every node was busy."
}

// takenCores is the fix when the nodes' cores went more to kube-proxy's relaying
// or to client pods than to the service's own pods: take that work off them.
func takenCores(o result.Overload) string {
	var fixes []string
	if o.NodeProxyCores > 0 {
		fixes = append(fixes, "run kube-proxy in a mode that rewrites packets in the kernel (iptables or nftables), which relays in no process")
	}
	if o.NodeClientCores > 0 {
		fixes = append(fixes, "give the client pods nodes of their own (clients[].placement)")
	}
	return fmt.Sprintf("Fix: the cores went more to other work (%s) than to its pods (%s): %s. More replicas on these nodes only share the same cores.",
		strings.Join(nodeOthers(o), ", "), trimFloat(o.PodsCores), strings.Join(fixes, ", and "))
}

// nodeRoom is the CPU use below which a node has room for more: simulate's
// threshold for a saturated resource.
const nodeRoom = 0.95

// SweepCommand is the trafficlab sweep over s for the run origin describes: its
// file and its own overrides (but one of s's path, which the sweep varies), quoted
// for a POSIX shell; FILE stands for the scenario when the run has no origin.
func SweepCommand(origin *result.Origin, s *result.OverloadSweep) string {
	args := []string{"trafficlab sweep", "FILE"}
	if origin != nil {
		if origin.File != "" {
			args[1] = shellQuote(origin.File)
		}
		for _, set := range origin.Sets {
			if path, _, _ := strings.Cut(set, "="); path != s.Path {
				args = append(args, "--set", shellQuote(set))
			}
		}
		if origin.Seed != nil {
			args = append(args, "--seed", strconv.FormatInt(*origin.Seed, 10))
		}
		if origin.DurationS > 0 {
			args = append(args, "--duration", GoDuration(origin.DurationS))
		}
	}
	axis := fmt.Sprintf("%s=%d..%d", s.Path, s.From, s.To)
	find := fmt.Sprintf("min %s where errors == 0", s.Path)
	args = append(args, "--set", shellQuote(axis), "--find", shellQuote(find))
	return strings.Join(args, " ")
}

// shellSafe are the words a POSIX shell passes as they are: no globbing,
// expansion, quoting or word splitting.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it: in single quotes, each
// quote in it written '\”.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ceilDigits is the fewest significant digits (three at least) that keep x's
// ceiling, the count the text derives from it: 16.01 needs four beside "fewer
// than 17".
func ceilDigits(x float64) int {
	for digits := 3; digits < 10; digits++ {
		if v, _ := strconv.ParseFloat(sig(x, digits), 64); math.Ceil(v) == math.Ceil(x) {
			return digits
		}
	}
	return 10
}

// sig writes v to digits significant digits, without an exponent or trailing
// zeros: 16.01, 8000, 0.25.
func sig(v float64, digits int) string {
	decimals := 0
	if v != 0 {
		decimals = max(0, digits-1-int(math.Floor(math.Log10(math.Abs(v)))))
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// capital starts s with a capital letter.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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
