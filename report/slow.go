package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"trafficlab/result"
)

// Sections about the slow tail: which nodes and pods served the slow requests, how
// the tail followed the load, the ranked suspects with one piece of advice, CPU
// throttling the suspects do not cover, and the workloads that served no traffic.
// Each is written only when the result carries what it reads, so results from before
// these fields existed print as they always did.

// allNodesUpTo: the slow section lists every node up to this many, else only the
// nodes with slow requests.
const allNodesUpTo = 8

// slowPodsShown is how many pods the slow section lists, highest slow share first.
const slowPodsShown = 5

// writeSlow writes the "Slow requests" section: how many successful requests took
// over the threshold, per node, the pods with the highest slow share and where
// their time went, and how the slow share followed the load.
func writeSlow(b *strings.Builder, r *result.Result) {
	if r.Slow <= 0 {
		return
	}
	share := r.SlowShare
	if share == 0 {
		share = ratio(r.Slow, r.Requests.OK)
	}
	over := "over the slow threshold"
	if r.SlowThresholdMS > 0 {
		over = "over " + readableMS(r.SlowThresholdMS)
	}
	fmt.Fprintf(b, "\nSlow requests: %s of %s successful requests (%s) took %s\n",
		count(r.Slow), count(r.Requests.OK), pct(share), over)
	writeSlowNodes(b, r)
	writeSlowPods(b, r)
	if s := slowByLoad(r); s != "" {
		fmt.Fprintf(b, "%s\n", wrap(s, width))
	}
}

// writeSlowNodes tables the nodes: every one when there are few, else those whose
// pods served slow requests. The disk columns appear only when some node's disk
// was limited (modelled).
func writeSlowNodes(b *strings.Builder, r *result.Result) {
	var nodes []result.Node
	for _, n := range r.Nodes {
		if len(r.Nodes) <= allNodesUpTo || n.Slow > 0 {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return
	}
	disk := false
	for _, n := range r.Nodes {
		disk = disk || n.DiskUtilization > 0 || n.DiskMaxWaitMS > 0
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	if disk {
		fmt.Fprintf(tw, "NODE\tPODS\tSLOW\tSLOW %%\tDISK BUSY\tDISK MAX WAIT\tCPU\t\n")
	} else {
		fmt.Fprintf(tw, "NODE\tPODS\tSLOW\tSLOW %%\tCPU\t\n")
	}
	idx, omitted := shown(len(nodes))
	for k, i := range idx {
		if omitted > 0 && k == listKeep {
			fmt.Fprintf(tw, "…\t%s omitted\t\t\t\t\t\t\n", plural(int64(omitted), "node"))
		}
		n := nodes[i]
		cpu := "-"
		if n.CPU > 0 {
			cpu = percent(n.CPUUtilization, 0)
		}
		if disk {
			busy, wait := "-", "-"
			if n.DiskUtilization > 0 || n.DiskMaxWaitMS > 0 {
				busy, wait = percent(n.DiskUtilization, 0), readableMS(n.DiskMaxWaitMS)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", n.Name, n.Pods, count(n.Slow), pct(n.SlowShare), busy, wait, cpu)
		} else {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", n.Name, n.Pods, count(n.Slow), pct(n.SlowShare), cpu)
		}
	}
	tw.Flush()
	if quiet := len(r.Nodes) - len(nodes); quiet > 0 {
		fmt.Fprintf(b, "The other %s served no slow request.\n", plural(int64(quiet), "node"))
	}
}

// slowestPods are the pods with slow requests, highest slow share first.
func slowestPods(r *result.Result) []result.Pod {
	var out []result.Pod
	for _, p := range r.Pods {
		if p.Slow > 0 {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].SlowShare != out[j].SlowShare {
			return out[i].SlowShare > out[j].SlowShare
		}
		return out[i].Slow > out[j].Slow
	})
	return out
}

// writeSlowPods tables the pods with the highest slow share and the mean of each
// wait over all the requests they answered, then says when access-log writes
// blocked.
func writeSlowPods(b *strings.Builder, r *result.Result) {
	pods := slowestPods(r)
	if len(pods) == 0 {
		return
	}
	of := ""
	if len(pods) > slowPodsShown {
		of = fmt.Sprintf(" (%d of %d)", slowPodsShown, len(pods))
		pods = pods[:slowPodsShown]
	}
	if !seesInsidePods(r) {
		fmt.Fprintf(b, "Pods with the most slow requests%s (the %s engine measures from the clients' side, not where a request waited in its pod):\n", of, r.Engine)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "POD\tNODE\tSLOW\tSLOW %%\t\n")
		for _, p := range pods {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", p.Name, p.Node, count(p.Slow), pct(p.SlowShare))
		}
		tw.Flush()
		return
	}
	fmt.Fprintf(b, "Pods with the most slow requests%s; waits are means per request answered, in ms:\n", of)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "POD\tNODE\tSLOW\tSLOW %%\tQUEUE\tCPU\tTHROTTLED\tDISK\tDEPENDENCY\tNETWORK\t\n")
	for _, p := range pods {
		w := p.WaitMS
		throttled := "-" // no CPU limit
		if p.Throttling != nil || w.Throttled > 0 {
			throttled = fmt.Sprintf("%.2f", w.Throttled)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%.2f\t%.2f\t%.2f\t\n", p.Name, p.Node, count(p.Slow), pct(p.SlowShare),
			w.Queue, w.CPU, throttled, w.Disk, w.Dependency, w.Network)
	}
	tw.Flush()
	var blocked []string
	for _, p := range pods {
		if p.LogBlocked > 0 {
			blocked = append(blocked, fmt.Sprintf("%s %s", p.Name, count(p.LogBlocked)))
		}
	}
	if len(blocked) > 0 {
		fmt.Fprintf(b, "%s\n", wrap("Requests whose access-log write blocked on a full pipe: "+strings.Join(blocked, ", ")+
			". The container runtime drains stdout to the node's disk; when the disk falls behind, the pipe fills "+
			"and the app's log write blocks, holding its request.", width))
	}
}

// slowByLoad compares the slow share of the busiest quarter of the timeline's
// intervals (by requests offered per second) with the quietest quarter's, and says
// what the difference means; "" without a timeline to compare, or when the load was
// steady. The load is what the clients offered, not what finished: an overloaded
// service finishes fewer requests, which would pass for a quiet interval. A request
// that timed out waited at least its timeout, so it counts as slow; an interval with
// neither a success nor a timeout says nothing about the share and is left out. A
// run with a closed-loop client has no comparison: its busiest intervals are those
// with the shortest latencies, by construction.
func slowByLoad(r *result.Result) string {
	step := r.TimelineIntervalS
	if step <= 0 {
		return ""
	}
	for _, c := range r.Clients {
		if c.ClosedLoop {
			return "" // a closed loop sends as fast as it is answered: its load follows the tail
		}
	}
	offered := false // results from before Point.Offered existed have only what finished
	for _, pt := range r.Timeline {
		offered = offered || pt.Offered > 0
	}
	ivs, timeouts := intervalLoads(r, offered)
	q := len(ivs) / 4
	if q == 0 {
		return ""
	}
	sort.SliceStable(ivs, func(i, j int) bool {
		return float64(ivs[i].requests)/ivs[i].secs < float64(ivs[j].requests)/ivs[j].secs
	})
	quietRPS, quiet := sumLoads(ivs[:q])
	busyRPS, busy := sumLoads(ivs[len(ivs)-q:])
	if busyRPS < 1.25*quietRPS {
		return "" // a steady load: the quarters differ by chance, not by load
	}
	what := "Slow share by load"
	if timeouts {
		what = "Slow share by load (timeouts counted as slow)"
	}
	by := "rps"
	if offered {
		by = "rps offered"
	}
	s := fmt.Sprintf("%s: %s in the busiest quarter of the %s intervals (%s %s), %s in the quietest (%s %s)",
		what, pct(busy), span(step), rps(busyRPS), by, pct(quiet), rps(quietRPS), by)
	switch {
	case busy > 2*quiet:
		return s + ": the tail grows with the load, so what the slow requests wait for is shared and fills up at the peak."
	case quiet > 2*busy:
		return s + ": the tail is worse when traffic is light, so it comes not from the traffic but from something else that ran then."
	}
	return s + ": about the same at any load, so the slow requests come not from the traffic but from something " +
		"that runs regardless of it, such as a neighbour's bursts."
}

// intervalLoad is what one timeline interval offered and how much of it was slow.
type intervalLoad struct {
	requests, judged, slow int64 // judged: successes and timeouts, the requests a share is of
	secs                   float64
}

// intervalLoads returns the load of each interval with requests and something to judge
// the slow share by, counting requests offered when offered is set, else those that
// finished; and whether any request timed out.
func intervalLoads(r *result.Result, offered bool) (ivs []intervalLoad, timeouts bool) {
	step := r.TimelineIntervalS
	for _, pt := range r.Timeline {
		secs := step
		if r.DurationS > 0 && pt.TS+step > r.DurationS {
			secs = r.DurationS - pt.TS // the last interval is cut short by the run's end
		}
		var timedOut int64
		if pt.ErrorsByKind != nil {
			timedOut = pt.ErrorsByKind.Timeout
		}
		requests := pt.Requests
		if offered {
			requests = pt.Offered
		}
		judged := pt.Succeeded() + timedOut
		if requests <= 0 || judged <= 0 || secs <= 0 {
			continue
		}
		timeouts = timeouts || timedOut > 0
		ivs = append(ivs, intervalLoad{requests, judged, pt.Slow + timedOut, secs})
	}
	return ivs, timeouts
}

// sumLoads returns the requests per second over the intervals together, and their
// slow share.
func sumLoads(part []intervalLoad) (rps, share float64) {
	var t intervalLoad
	for _, l := range part {
		t.requests += l.requests
		t.judged += l.judged
		t.slow += l.slow
		t.secs += l.secs
	}
	return float64(t.requests) / t.secs, ratio(t.slow, t.judged)
}

// writeSuspects ranks the resources that made up the slow requests' time, then
// gives the advice for the worst.
func writeSuspects(b *strings.Builder, r *result.Result) {
	if len(r.Suspects) == 0 {
		return
	}
	fmt.Fprintf(b, "\nSuspects, worst first\n")
	for i, s := range r.Suspects {
		fmt.Fprintf(b, "%s\n", indentWrap(suspectLine(r, s), fmt.Sprintf("  %d. ", i+1), strings.Repeat(" ", len(fmt.Sprint(i+1))+4)))
	}
	fmt.Fprintf(b, "%s\n", wrap(advice(r, r.Suspects[0]), width))
}

// suspectLine is one ranked suspect: "disk on pool-2 — 93% of the slow requests'
// time, the main wait of 1,180 of them; neighbour batch-writer; disk 97% busy; …".
func suspectLine(r *result.Result, s result.Suspect) string {
	line := fmt.Sprintf("%s — %s of the slow requests' time", resourceOn(s), pct(s.ShareOfTail))
	if s.SlowRequests > 0 {
		line += fmt.Sprintf(", the main wait of %s of them", count(s.SlowRequests))
	}
	if s.Neighbour != "" {
		line += "; neighbour " + s.Neighbour
	}
	if e := evidence(r, s); e != "" {
		line += "; " + e
	}
	return line
}

// evidence says what a suspect's resource did on its node, from the node's and its
// pods' figures.
func evidence(r *result.Result, s result.Suspect) string {
	switch s.Resource {
	case "disk":
		if n := nodeNamed(r, s.Node); n != nil {
			return fmt.Sprintf("disk %s busy; writes queued up to %s", percent(n.DiskUtilization, 0), readableMS(n.DiskMaxWaitMS))
		}
	case "cpu":
		if n := nodeNamed(r, s.Node); n != nil && n.CPU > 0 {
			return fmt.Sprintf("node CPU %s used of %g cores", percent(n.CPUUtilization, 0), n.CPU)
		}
	case "throttled":
		var periods, throttled int64
		for _, p := range r.Pods {
			if p.Node == s.Node && p.Throttling != nil {
				periods += p.Throttling.Periods
				throttled += p.Throttling.ThrottledPeriods
			}
		}
		if periods > 0 {
			return fmt.Sprintf("its pods ran out of CPU quota in %s of %s (cpu.stat nr_throttled)", count(throttled), counted(periods, "period"))
		}
	}
	return ""
}

func nodeNamed(r *result.Result, name string) *result.Node {
	for i := range r.Nodes {
		if r.Nodes[i].Name == name {
			return &r.Nodes[i]
		}
	}
	return nil
}

// resourceOn names a suspect's resource and node for people.
func resourceOn(s result.Suspect) string {
	switch s.Resource {
	case "work":
		return "the requests' own CPU work on " + s.Node
	case "queue":
		return "the app's worker queue on " + s.Node
	case "cpu":
		return "CPU on " + s.Node
	case "throttled":
		return "the CPU limit (throttling) on " + s.Node
	case "disk":
		return "disk on " + s.Node
	case "dependency":
		return "a dependency, called from " + s.Node
	case "network":
		return "the network, client or sidecars, from " + s.Node
	}
	return s.Resource + " on " + s.Node
}

// advice is what to do about the top suspect, and why. It names every pod it
// applies to, not only those on the top suspect's node: when the same resource is a
// suspect on several nodes, the advice is the same for all of them.
func advice(r *result.Result, s result.Suspect) string {
	pods := podNames(r, slowPodsOn(r, s.Node))
	if pods == "" {
		pods = "the pods on " + s.Node
	}
	switch s.Resource {
	case "disk":
		if s.Neighbour == "" {
			return fmt.Sprintf("Advice: the pods' own writes fill %s's disk: write less per request or give the node a "+
				"faster disk. Cheaper logging code saves CPU but not this wait: the wait is the disk.", s.Node)
		}
		return fmt.Sprintf("Advice: keep %s off %s (pod anti-affinity against it, or a taint on the node that only "+
			"the right pods tolerate), or give the node a faster disk: %s wait for the disk behind its writes, and "+
			"cheaper logging saves CPU but not this wait, since the wait is the disk.", s.Neighbour, s.Node, pods)
	case "throttled":
		if limited := podNames(r, throttledPods(r)); limited != "" {
			pods = limited
		}
		return fmt.Sprintf("Advice: raise or remove the CPU limit of %s. Once a container has spent its CFS quota "+
			"for a 100 ms period, every one of its threads stalls until the next period, however idle the node is.", pods)
	case "cpu":
		if competes(r, s) {
			move := "spread the pods over more nodes"
			if s.Neighbour != "" {
				move = "move " + s.Neighbour + " to another node"
			}
			return fmt.Sprintf("Advice: when %s's cores are contended, CFS shares them by weights taken from the pods' "+
				"CPU requests: raise the CPU request of %s, or %s.", s.Node, pods, move)
		}
		return ownCores(r)
	case "queue":
		return "Advice: requests waited for a free app worker, not for the node: give the app more workers " +
			"or the service more replicas."
	case "dependency":
		return "Advice: the slow requests waited on a dependency: its latency, not this node, sets the tail; " +
			"look at that service."
	case "network":
		where := "the pods answered in time"
		switch {
		case r.Requests.Behind > 0 || slices.ContainsFunc(r.Clients, func(c result.Client) bool { return c.MaxLateS > 0 }):
			where = "a client fell behind its rate, and its requests' latencies count the wait; see Client CPU above"
		case r.TCP != nil:
			where = "see the TCP section below"
		case len(r.Sidecars) > 0:
			where = "see the Sidecars section above"
		}
		return "Advice: the time went outside the pods, in the network, the client or sidecars: " + where + "."
	case "work":
		return "Advice: the requests' own CPU work is the tail, not waiting: make the slow requests cheaper " +
			"or give them faster cores; moving neighbours will not help."
	}
	return ""
}

// competes says whether a CPU suspect's node had a workload other than the slow
// pods' service using its cores: only then do CPU requests, which weigh one cgroup
// against another (CFS cpu.weight), move cores towards the slow pods. Between pods
// of one service with equal requests, raising them all changes no one's share.
func competes(r *result.Result, s result.Suspect) bool {
	if s.Neighbour != "" {
		return true
	}
	services := map[string]bool{}
	for _, p := range r.Pods {
		if p.Node == s.Node {
			services[p.Service] = true
		}
	}
	for _, w := range r.Background {
		if w.Node == s.Node && w.CPUCores > 0 {
			return true
		}
	}
	return len(services) > 1
}

// ownCores is the advice when the slow pods' own service filled the cores of every
// node where CPU is a suspect: no share between them can be raised, only cores added.
func ownCores(r *result.Result) string {
	var nodes []string
	services := map[string]bool{}
	unrequested := false // BestEffort pods: the scheduler placed them without counting cores
	for _, s := range r.Suspects {
		if s.Resource != "cpu" || competes(r, s) {
			continue
		}
		nodes = append(nodes, s.Node)
		for _, p := range r.Pods {
			if p.Node == s.Node {
				services[p.Service] = true
				unrequested = unrequested || p.QoSClass == "BestEffort"
			}
		}
	}
	more := "add nodes or faster cores."
	if unrequested {
		more = "add nodes, or give the pods CPU requests so that the scheduler spreads them over nodes with room."
	}
	return fmt.Sprintf("Advice: the cores of %s went to %s's own pods alone, which CFS weighs only against each "+
		"other: raising their CPU requests changes no one's share. They need more cores: %s",
		joinAnd(nodes), strings.Join(sortedKeys(services), " and "), more)
}

// throttledPods are the pods whose CPU limit stalled them on the nodes where
// throttling is a suspect.
func throttledPods(r *result.Result) []result.Pod {
	on := map[string]bool{}
	for _, s := range r.Suspects {
		if s.Resource == "throttled" {
			on[s.Node] = true
		}
	}
	var out []result.Pod
	for _, p := range r.Pods {
		if on[p.Node] && p.Throttling != nil && p.Throttling.ThrottledPeriods > 0 {
			out = append(out, p)
		}
	}
	return out
}

// slowPodsOn are the pods on node with slow requests, highest slow share first.
func slowPodsOn(r *result.Result, node string) []result.Pod {
	var out []result.Pod
	for _, p := range slowestPods(r) {
		if p.Node == node {
			out = append(out, p)
		}
	}
	return out
}

// podNames names every one of pods, a service's at once when they are all its pods:
// "all 8 pods of web", "api-4 and api-5"; "" for none.
func podNames(r *result.Result, pods []result.Pod) string {
	of := map[string]int{}
	for _, p := range r.Pods {
		of[p.Service]++
	}
	picked := map[string][]string{}
	var services []string
	for _, p := range pods {
		if len(picked[p.Service]) == 0 {
			services = append(services, p.Service)
		}
		picked[p.Service] = append(picked[p.Service], p.Name)
	}
	var names []string
	for _, svc := range services {
		if n := len(picked[svc]); n > 1 && n == of[svc] {
			names = append(names, fmt.Sprintf("all %d pods of %s", n, svc))
			continue
		}
		names = append(names, picked[svc]...)
	}
	return joinAnd(names)
}

// joinAnd joins names as "a, b and c".
func joinAnd(names []string) string {
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return strings.Join(names, "")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// throttledShown: the throttling line names at most this many pods.
const throttledShown = 3

// writeThrottling says which pods' CPU limits stalled them, when no suspect on their
// node already says it.
func writeThrottling(b *strings.Builder, r *result.Result) {
	covered := map[string]bool{}
	for _, s := range r.Suspects {
		if s.Resource == "throttled" {
			covered[s.Node] = true
		}
	}
	var pods []result.Pod
	for _, p := range r.Pods {
		if t := p.Throttling; t != nil && t.ThrottledPeriods > 0 && !covered[p.Node] {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return
	}
	share := func(p result.Pod) float64 { return ratio(p.Throttling.ThrottledPeriods, p.Throttling.Periods) }
	sort.SliceStable(pods, func(i, j int) bool { return share(pods[i]) > share(pods[j]) })
	periods := func(p result.Pod) string {
		t := p.Throttling
		return fmt.Sprintf("%s of %s (%s", count(t.ThrottledPeriods), counted(t.Periods, "period"), pct(share(p)))
	}
	var line string
	if len(pods) == 1 {
		p := pods[0]
		line = fmt.Sprintf("CPU throttling: %s was throttled in %s), %s in all", p.Name, periods(p), readableS(p.Throttling.ThrottledS))
	} else {
		var each []string
		for _, p := range pods[:min(len(pods), throttledShown)] {
			each = append(each, fmt.Sprintf("%s in %s, %s in all)", p.Name, periods(p), readableS(p.Throttling.ThrottledS)))
		}
		if more := len(pods) - throttledShown; more > 0 {
			each = append(each, plural(int64(more), "more pod"))
		}
		line = "CPU throttling: " + strings.Join(each, ", ")
	}
	switch {
	case share(pods[0]) < 0.1:
		line += ": short stalls in bursts, each until the next 100 ms period."
	case len(pods) == 1:
		line += ": its CPU limit, not the node, set its pace."
	default:
		line += ": their CPU limits, not the nodes, set their pace."
	}
	fmt.Fprintf(b, "\n%s\n", wrap(line, width))
}

// writeNICs shows the nodes whose network interface has a bandwidth: how busy it
// was each way and the longest a packet queued for it. A NIC busy nearly all the
// time caps what the pods behind it can send or receive.
func writeNICs(b *strings.Builder, r *result.Result) {
	var each []string
	busy := false
	for _, n := range r.Nodes {
		if n.NICTxUtilization == 0 && n.NICRxUtilization == 0 {
			continue
		}
		each = append(each, fmt.Sprintf("%s out %s, in %s, packets queued up to %s", n.Name,
			pct(n.NICTxUtilization), pct(n.NICRxUtilization), readableMS(n.NICMaxWaitMS)))
		busy = busy || max(n.NICTxUtilization, n.NICRxUtilization) >= 0.9
	}
	if len(each) == 0 {
		return
	}
	line := "Network interfaces: " + strings.Join(each, "; ") + "."
	if busy {
		line += " A NIC busy 90% of the time or more limits every pod on its node: its packets queue behind the others'."
	}
	fmt.Fprintf(b, "\n%s\n", wrap(line, width))
}

// writeBackground lists the workloads that shared nodes without serving traffic.
func writeBackground(b *strings.Builder, r *result.Result) {
	if len(r.Background) == 0 {
		return
	}
	var each []string
	for _, w := range r.Background {
		var used []string
		if w.CPUCores > 0 {
			used = append(used, fmt.Sprintf("%.2f cores", w.CPUCores))
		}
		if w.DiskBytesPerSecond > 0 {
			used = append(used, bytesPerSecond(w.DiskBytesPerSecond)+" written")
		}
		if len(used) == 0 {
			used = append(used, "idle")
		}
		each = append(each, fmt.Sprintf("%s on %s (%s)", w.Name, w.Node, strings.Join(used, ", ")))
	}
	fmt.Fprintf(b, "\n%s\n", wrap("Background workloads: "+strings.Join(each, "; ")+".", width))
}

// pct writes a share as a percentage with two significant digits at most, down
// to the first non-zero digit for small ones: 93%, 5.3%, 0.21%, 0.004%; more
// digits where those would round a share short of all or none to 100% or 0%.
func pct(x float64) string {
	v := 100 * x
	decimals := 0
	switch {
	case v == 0:
		return "0%"
	case math.Round(v) >= 10:
	case math.Round(v*10) >= 10:
		decimals = 1
	case math.Round(v*100) >= 1:
		decimals = 2
	default:
		decimals = int(math.Ceil(-math.Log10(v)))
	}
	return percent(x, decimals)
}

// percent writes share x as a percentage to decimals places, or to as many more as
// it takes for a share that is not exactly 1 or 0 not to read 100% or 0%: 19
// failures in 552,586 requests are a success of 99.997%, not 100.00%.
func percent(x float64, decimals int) string {
	v := 100 * x
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	for d := decimals + 1; d <= maxDecimals && misleads(s, x); d++ {
		s = strconv.FormatFloat(v, 'f', d, 64)
	}
	if misleads(s, x) { // a share under 10^-maxDecimals %
		s = strconv.FormatFloat(v, 'g', 2, 64)
	}
	return s + "%"
}

// maxDecimals bounds the places percent adds: a share off by less is shown in
// scientific notation.
const maxDecimals = 12

// misleads is true when s, a percentage of share x, reads as all or none when x is
// neither.
func misleads(s string, x float64) bool {
	v, _ := strconv.ParseFloat(s, 64)
	return (v == 100 && x != 1) || (v == 0 && x != 0)
}

// count writes n with thousands separators: 2,000,000.
func count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// rps writes a rate of requests per second: 2,950, or 7.5 below ten.
func rps(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return count(int64(math.Round(v)))
}

// readableMS writes milliseconds for people: 850 ms, 1.2 s, 0.4 ms.
func readableMS(v float64) string {
	switch {
	case v >= 1000:
		return readableS(v / 1000)
	case v >= 10:
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// readableS writes seconds for people: 61 s, 1.2 s.
func readableS(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f s", v)
	}
	return fmt.Sprintf("%.1f s", v)
}

// span writes an interval's length: 1s, 15s, 1m, 15m, 1h.
func span(s float64) string {
	switch {
	case s >= 3600 && math.Mod(s, 3600) == 0:
		return fmt.Sprintf("%gh", s/3600)
	case s >= 60 && math.Mod(s, 60) == 0:
		return fmt.Sprintf("%gm", s/60)
	case s != math.Trunc(s):
		return GoDuration(s) // a measured span: 14.978ms, not 0.014978018s
	}
	return fmt.Sprintf("%gs", s)
}

// bytesPerSecond writes a rate in decimal units: 1.0 MB/s, 350 kB/s.
func bytesPerSecond(v float64) string {
	switch {
	case v >= 10e6:
		return fmt.Sprintf("%.0f MB/s", v/1e6)
	case v >= 1e6:
		return fmt.Sprintf("%.1f MB/s", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f kB/s", v/1e3)
	}
	return fmt.Sprintf("%.0f B/s", v)
}
