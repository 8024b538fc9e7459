// Package report renders a result.Result for people (text) and programs (JSON, CSV).
// It reads only the Result, so it works the same for every engine.
package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"trafficlab/result"
)

// Text writes the human summary: vegeta-style totals, the per-pod spread with bars,
// the clients' connections and runs, the autoscaler's scale events, the services
// offered more than they could serve, which pod's removal caused which errors, the
// slow requests and their suspects, and an explanation when the spread is uneven.
func Text(w io.Writer, r *result.Result) error {
	b := &strings.Builder{}
	writeInterrupted(b, r)
	fmt.Fprintf(b, "%s\n", joinKnown(r.Engine, r.Scenario, seedOf(r), runLength(r), kubeProxy(r, false)))
	if o := originLine(r); o != "" {
		fmt.Fprintf(b, "%s\n", o)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Requests\t[total, rate, throughput]\t%d, %.2f/s, %.2f/s\n", r.Requests.Total, r.RateRPS, r.ThroughputRPS)
	l, lat := r.LatencyMS, func(v float64) string { return successMS(r, v) }
	fmt.Fprintf(tw, "Latencies\t[min, mean, 50, 90, 95, 99, 99.9, max]\t%s, %s, %s, %s, %s, %s, %s, %s\n",
		lat(l.Min), lat(l.Mean), lat(l.P50), lat(l.P90), lat(l.P95), lat(l.P99), lat(l.P999), lat(l.Max))
	ratio := 0.0
	if r.Requests.Total > 0 {
		ratio = float64(r.Requests.OK) / float64(r.Requests.Total)
	}
	fmt.Fprintf(tw, "Success\t[ratio]\t%s\n", percent(ratio, 2))
	kinds, counts := errorColumns(r)
	fmt.Fprintf(tw, "Errors\t[%s]\t%s\n", strings.Join(kinds, ", "), strings.Join(counts, ", "))
	if r.Requests.Retried > 0 {
		fmt.Fprintf(tw, "Retried\t[resent on a new connection]\t%d\n", r.Requests.Retried)
	}
	if r.Requests.NotSent > 0 {
		fmt.Fprintf(tw, "Not sent\t[no free slot]\t%d\n", r.Requests.NotSent)
	}
	if r.Requests.Behind > 0 {
		fmt.Fprintf(tw, "Not sent\t[client behind]\t%d\n", r.Requests.Behind)
	}
	tw.Flush()
	for _, note := range totalsNotes(r) {
		fmt.Fprintf(b, "%s\n", wrap(note, width))
	}

	for _, sec := range textSections {
		if sec.prose != nil {
			for _, p := range sec.prose(r) {
				fmt.Fprintf(b, "\n%s\n", wrap(p, 92))
			}
			continue
		}
		sec.write(b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// errorColumns are the Errors line's kinds and counts: the connection's kinds
// always, 503 when a sidecar could answer one or any request got one, and no
// such host when a name did not resolve.
func errorColumns(r *result.Result) (kinds, counts []string) {
	e := r.Errors
	kinds = []string{"timeout", "refused", "reset", "closed"}
	n := []int64{e.Timeout, e.ConnectionRefused, e.ConnectionReset, e.ConnectionClosed}
	if len(r.Sidecars) > 0 || e.HTTP503 > 0 {
		kinds, n = append(kinds, "503"), append(n, e.HTTP503)
	}
	if e.NoSuchHost > 0 {
		kinds, n = append(kinds, "no such host"), append(n, e.NoSuchHost)
	}
	for _, c := range n {
		counts = append(counts, fmt.Sprint(c))
	}
	return kinds, counts
}

// failed is the run's failed requests: those the Errors count by kind, and those
// of no kind (another error status, an error the engine could not name).
func failed(r *result.Result) int64 { return max(r.Requests.Failed, r.Errors.Total()) }

// otherErrorsNote says what the failed requests the Errors line leaves out are,
// from the status codes when the Result has them: "(12 of the 253 failed requests
// are of none of these kinds: 11 answered 500 and 1 answered 404.)"; "" when the
// kinds add up to the failed requests.
func otherErrorsNote(r *result.Result) string {
	rest := failed(r) - r.Errors.Total()
	if rest <= 0 {
		return ""
	}
	var what []string
	named := int64(0)
	if r.Ended != nil {
		var codes []string
		for code := range r.Ended.StatusCodes {
			c, err := strconv.Atoi(code)
			if err == nil && c != 0 && c != 503 && (c < 200 || c >= 400) {
				codes = append(codes, code)
			}
		}
		sort.Strings(codes)
		for _, code := range codes {
			n := r.Ended.StatusCodes[code]
			what = append(what, fmt.Sprintf("%s answered %s", count(n), code))
			named += n
		}
	}
	switch other := rest - named; {
	case other > 0 && len(what) > 0:
		what = append(what, count(other)+" ended with another error")
	case other > 0:
		what = append(what, "another error status, or an error no kind describes")
	}
	return fmt.Sprintf("(%s of the %s are of none of these kinds: %s.)", count(rest),
		counted(failed(r), "failed request"), strings.Join(what, " and "))
}

// uncounted names the requests sent that are in no total: "20 requests still in
// flight at the end and 891 abandoned when ab aborted its runs"; "" when none.
func uncounted(r *result.Result) string {
	var parts []string
	if n := r.Requests.InFlight; n > 0 {
		parts = append(parts, plural(n, "request")+" still in flight at the end")
	}
	if n := r.Requests.Abandoned; n > 0 {
		tool := "a client"
		for _, c := range r.Clients {
			if c.RunsAborted > 0 {
				tool = cmp.Or(c.Library, c.Name)
			}
		}
		s := fmt.Sprintf("%d abandoned when %s aborted its runs", n, tool)
		if len(parts) == 0 {
			s = plural(n, "request") + " " + strings.TrimPrefix(s, fmt.Sprint(n)+" ")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " and ")
}

// uncountedNote says which requests sent the total leaves out; "" when none.
func uncountedNote(r *result.Result) string {
	if note := uncounted(r); note != "" {
		return "(Not in the total, only in the rate: " + note + ". Latencies are of successful requests.)"
	}
	return ""
}

// runLength is the header's length of the run: "30m simulated" for a simulation,
// the span alone for a real run.
func runLength(r *result.Result) string { return lengthOf(r.Engine, r.DurationS) }

// lengthOf is a run of s seconds by engine: "1h30m simulated", or "1h30m".
func lengthOf(engine string, s float64) string {
	if engine == "simulate" {
		return GoDuration(s) + " simulated"
	}
	return GoDuration(s)
}

// textSection is one section of the text report, written by write, or by prose as
// paragraphs the text wraps and the page shows as they are. Sections that explain
// say in sentences what happened and why; the HTML page shows each of them under
// "What happened" and draws the rest as charts, and both walk this one list.
type textSection struct {
	write    func(*strings.Builder, *result.Result)
	prose    func(*result.Result) []string
	explains bool
}

// textSections are the text report's sections after the totals, in order.
var textSections = []textSection{
	{prose: clusterRun, explains: true},
	{write: writeServices},
	{write: writeClients},
	{write: writeClientCPU, explains: true},
	{write: writeProxyCPU, explains: true},
	{write: writeCalls, explains: true},
	{prose: callFailures, explains: true},
	{prose: callRetries, explains: true},
	{write: writeSlowPath, explains: true},
	{write: writeBackground, explains: true},
	{write: writeRuns, explains: true},
	{write: writeScaleEvents},
	{write: writeRollouts, explains: true},
	{write: writePending, explains: true},
	{write: writeOverloads, explains: true},
	{write: writeAttribution, explains: true},
	{prose: idleCloses, explains: true},
	{write: writeNoEndpoints, explains: true},
	{write: writeSidecars, explains: true},
	{write: writeLatencyHistogram},
	{write: writeSlow, explains: true},
	{write: writeSuspects, explains: true},
	{write: writeThrottling, explains: true},
	{write: writeNICs, explains: true},
	{write: writeTCP, explains: true},
	{prose: explanations, explains: true},
}

// writeServices tables each service's pods.
func writeServices(b *strings.Builder, r *result.Result) {
	for _, svc := range services(r) {
		writePods(b, r, svc, podsOf(r, svc))
	}
}

// explanations are Explain's paragraphs, one per service that has one.
func explanations(r *result.Result) []string {
	var out []string
	for _, svc := range services(r) {
		if why := Explain(r, svc); why != "" {
			out = append(out, why)
		}
	}
	return out
}

// services lists the services in the order their first pod appears, then any the
// timeline knows that have no pod (all Pending, or none asked for).
func services(r *result.Result) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range r.Pods {
		add(p.Service)
	}
	var more []string
	for _, p := range r.Timeline {
		for s := range p.Replicas {
			if !seen[s] {
				more = append(more, s)
				seen[s] = true
			}
		}
	}
	sort.Strings(more)
	return append(out, more...)
}

func podsOf(r *result.Result, svc string) []result.Pod {
	var out []result.Pod
	for _, p := range r.Pods {
		if p.Service == svc {
			out = append(out, p)
		}
	}
	return out
}

const barWidth = 30

func writePods(b *strings.Builder, r *result.Result, svc string, pods []result.Pod) {
	total := int64(0)
	for _, p := range pods {
		total += p.Requests
	}
	life := hasLifecycle(r)
	switch {
	case !ranScenario(r):
		// A load generator knows the pods that answered, by name: not whether a
		// Service and its ClusterIP stood in front of them.
		fmt.Fprintf(b, "\nTarget %s: %s answered\n", svc, plural(int64(len(pods)), "pod"))
	case life:
		fmt.Fprintf(b, "\nService %s: %s over the run, %d at the end, %s\n", svc, plural(int64(len(pods)), "pod"), podsAtEnd(pods), front(r, svc))
	case isHeadless(r, svc):
		fmt.Fprintf(b, "\nService %s: %s, %s\n", svc, plural(int64(len(pods)), "pod"), front(r, svc))
	default:
		fmt.Fprintf(b, "\nService %s: %s %s\n", svc, plural(int64(len(pods)), "pod"), front(r, svc))
	}
	// Columns the engine measured: a pod's node and CPU only where it ran the cluster.
	nodes, cpus := ranScenario(r) || anyPod(pods, func(p result.Pod) bool { return p.Node != "" }), ranScenario(r)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"POD"}
	if nodes {
		head = append(head, "NODE")
	}
	if life {
		head = append(head, "LIFE", "READY")
	}
	head = append(head, "REQUESTS", "SHARE", "CONNS")
	if cpus {
		head = append(head, "CPU")
	}
	if life {
		head = append(head, "ERRORS")
	}
	fmt.Fprintf(tw, "%s\t\t\n", strings.Join(head, "\t"))
	for _, p := range pods {
		share := 0.0
		if total > 0 {
			share = float64(p.Requests) / float64(total)
		}
		row := []string{p.Name}
		if nodes {
			row = append(row, p.Node)
		}
		if life {
			row = append(row, lifeSpan(p), readyAt(p))
		}
		row = append(row, fmt.Sprint(p.Requests), percent(share, 1), fmt.Sprint(p.Connections))
		if cpus {
			cpu := fmt.Sprintf("%.2f cores", p.CPUCores)
			if p.CPUUtilization > 0 || p.CPUCores == 0 {
				cpu = percent(p.CPUUtilization, 0)
			}
			row = append(row, cpu)
		}
		if life {
			row = append(row, fmt.Sprint(p.Errors.Total()))
		}
		bar := strings.Repeat("█", int(math.Round(share*barWidth)))
		fmt.Fprintf(tw, "%s\t\t%s\n", strings.Join(row, "\t"), bar)
	}
	tw.Flush()
	if note := cpuOf(pods); note != "" {
		fmt.Fprintf(b, "%s\n", note)
	}
	for _, note := range podNotes(r, svc, pods) {
		fmt.Fprintf(b, "%s\n", wrap(note, width))
	}
}

// anyPod is true when some pod has the property.
func anyPod(pods []result.Pod, has func(result.Pod) bool) bool {
	for _, p := range pods {
		if has(p) {
			return true
		}
	}
	return false
}

// podNotes are the sentences under a service's pods table, after the CPU column's
// label: why the pods finished more than the clients counted, and which pods got
// no request or finished none.
func podNotes(r *result.Result, svc string, pods []result.Pod) []string {
	var out []string
	total := int64(0)
	for _, p := range pods {
		total += p.Requests
	}
	if extra := total - clientsCounted(r, svc); clientsTarget(r, svc) && extra > 0 {
		out = append(out, fmt.Sprintf("The pods finished %s more than the clients counted, answered or failed: "+
			"requests in no total that the pods finished (%s).", plural(extra, "request"), cmp.Or(uncounted(r), "requests the clients gave up without a result")))
	}
	if idle := idlePods(pods); idle > 0 {
		out = append(out, fmt.Sprintf("Idle pods: %d of %d got no request.", idle, len(pods)))
	}
	if busy := unfinished(pods); busy > 0 {
		out = append(out, fmt.Sprintf("%s finished no request but had %s in progress at the end.",
			plural(int64(busy), "pod"), plural(inProgress(pods), "request")))
	}
	return out
}

// totalsNotes are the sentences under the totals: the failed requests of no kind
// listed, the requests in no total.
func totalsNotes(r *result.Result) []string {
	var out []string
	for _, note := range []string{otherErrorsNote(r), uncountedNote(r)} {
		if note != "" {
			out = append(out, note)
		}
	}
	return out
}

// tableNotes are the sentences the text report writes under its tables of totals
// and pods, which the page draws as tiles and charts: the page shows them under
// "What happened".
func tableNotes(r *result.Result) []string {
	out := totalsNotes(r)
	for _, svc := range services(r) {
		out = append(out, podNotes(r, svc, podsOf(r, svc))...)
	}
	return out
}

// cpuOf says what the CPU column is a share of: a pod's CPU limit (the pods with
// CFS statistics have one), or its node's cores without one.
func cpuOf(pods []result.Pod) string {
	limited, free := 0, 0
	for _, p := range pods {
		switch {
		case p.CPUUtilization == 0: // shown in cores, or nothing used
		case p.Throttling != nil:
			limited++
		default:
			free++
		}
	}
	switch {
	case limited > 0 && free > 0:
		return "CPU: each pod's use of its CPU limit, or of its node's cores without one."
	case limited > 0:
		return "CPU: each pod's use of its CPU limit."
	case free > 0:
		return "CPU: each pod's use of its node's cores (no CPU limit)."
	}
	return ""
}

// clientsTarget is true when some client sends its requests to svc.
func clientsTarget(r *result.Result, svc string) bool {
	for _, c := range r.Clients {
		if c.Target == svc {
			return true
		}
	}
	return false
}

// clientsCounted are the requests svc's clients counted, answered or failed.
func clientsCounted(r *result.Result, svc string) int64 {
	n := int64(0)
	for _, c := range r.Clients {
		if c.Target == svc {
			n += c.Requests + c.Errors
		}
	}
	return n
}

// idlePods counts the pods that got no request: none finished, none in progress.
func idlePods(pods []result.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Requests == 0 && p.InProgress == 0 {
			n++
		}
	}
	return n
}

// unfinished counts the pods that finished no request but had some in progress.
func unfinished(pods []result.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Requests == 0 && p.InProgress > 0 {
			n++
		}
	}
	return n
}

func inProgress(pods []result.Pod) int64 {
	n := int64(0)
	for _, p := range pods {
		if p.Requests == 0 {
			n += p.InProgress
		}
	}
	return n
}

func writeClients(b *strings.Builder, r *result.Result) {
	if len(r.Clients) == 0 {
		return
	}
	fmt.Fprintf(b, "\nClients\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "NAME\tTARGET\tPODS\tLOAD\tREUSE\tCONNS OPENED\tPEAK OPEN\tPODS REACHED\tREQUESTS\tERRORS\t\n")
	for _, c := range r.Clients {
		load := plural(int64(c.Threads), "thread")
		switch {
		case c.RatePerPod > 0:
			load = fmt.Sprintf("%g/s", c.RatePerPod)
		case len(c.Runs) > 0:
			load = plural(int64(len(c.Runs)), "run")
		case c.Threads == 0:
			load = "phases"
		}
		reuse := c.Reuse
		if c.Library != "" {
			reuse += " (" + c.Library + ")"
		}
		if c.LoadBalancing == "round_robin" {
			reuse += ", round_robin"
		}
		reached := fmt.Sprintf("%d of %d", c.PodsReached, len(podsOf(r, c.Target)))
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t\n", c.Name, c.Target, c.Replicas, load, reuse,
			c.ConnectionsOpened, c.PeakOpen, reached, c.Requests, c.Errors)
	}
	tw.Flush()
}

// front says what stands before svc's pods, for the end of its heading: its
// ClusterIP, or nothing.
func front(r *result.Result, svc string) string {
	if isHeadless(r, svc) {
		return "headless (clients connect to the pods its name resolves to)"
	}
	return "behind its ClusterIP"
}

// Uneven is true when some pod of svc got nothing or the busiest got over 1.5× the
// fair share. Random per-connection picks over many connections stay well inside
// that: it takes pinning (or very few connections) to cross it.
func Uneven(pods []result.Pod) bool {
	total, most := int64(0), int64(0)
	for _, p := range pods {
		total += p.Requests
		most = max(most, p.Requests)
	}
	if total == 0 || len(pods) < 2 {
		return false
	}
	fair := float64(total) / float64(len(pods))
	return idlePods(pods) > 0 || float64(most) > 1.5*fair
}

// ExpectedIdle is the expected number of pods with no connection when k connections
// each pick one of n pods uniformly at random: n·(1−1/n)^k.
func ExpectedIdle(n, k int) float64 {
	if n == 0 {
		return 0
	}
	return float64(n) * math.Pow(1-1/float64(n), float64(k))
}

// Explain says, in a paragraph, why the requests to svc are spread as they are, or ""
// when there is nothing to explain.
func Explain(r *result.Result, svc string) string {
	if r.ProxyMode.IsZero() {
		return "" // the explanation is kube-proxy's choice, and no kube-proxy is known to have chosen
	}
	pods := podsOf(r, svc)
	lived := false
	if hasLifecycle(r) {
		// Pods that served for different spans got different totals for that alone:
		// compare the pods serving at the end, per second each was ready.
		pods, lived = perSecondReady(pods, r.DurationS), true
	}
	if !Uneven(pods) {
		return ""
	}
	callers, conns, peak, reqs := callersOf(r, svc)
	if len(callers) == 0 || conns == 0 {
		return ""
	}
	if isHeadless(r, svc) {
		return explainHeadless(r, svc, pods, lived, callers, peak, conns, reqs)
	}
	n := len(pods)
	idle := idlePods(pods)
	mode := r.ProxyMode.String()
	if r.IPVSScheduler != "" {
		mode += " " + r.IPVSScheduler
	}
	pin := "conntrack then sends every request on that connection to the same pod"
	if r.ProxyMode.Relays() {
		pin = "the proxy process then relays every request on that connection to the same pod"
	}
	s := fmt.Sprintf("Why the load on %s is uneven: kube-proxy (%s) chooses a pod once per connection, when it opens; %s. %s. ",
		svc, mode, pin, openedBy(callers))
	s += holders(r, svc)
	if lived {
		s += cameAndWent(n)
	}
	if !result.LongLived(reqs, conns) {
		return s + "Connections are short-lived here, so the spread comes from few connections or from pods that answer at different speeds."
	}
	late := lateIdle(pods)
	switch {
	case lived && len(late) > 0 && len(late) == idle:
		s += fmt.Sprintf("%s came after the %s connections were open: kube-proxy balances only new connections "+
			"and established ones never move, so a pool that is already full sends nothing to a pod a scale-out adds. ",
			strings.Join(late, ", "), whose(callers))
	case r.IPVSScheduler == "sh":
		s += "IPVS source hashing sends every connection from one client pod to the same pod, so no more pods are used than there are client pods. "
	case r.ProxyMode.InTurn():
		s += fmt.Sprintf("This mode hands new connections to pods in turn (or to the least busy), so on each node k long-lived connections reach at most k pods: "+
			"%s over %d pods leave at least %d idle (here: %d). ", plural(peak, "long-lived connection"), n, max(0, n-int(peak)), idle)
	default:
		s += expectedIdle(peak, "long-lived connection", n, idle, true)
	}
	s += saturatedPod(pods, r.Nodes)
	more := "open more connections than pods (more threads with per-thread reuse, or a larger pool), "
	if int(peak) > n {
		// There are more than pods already: more random picks only narrow the
		// spread as the square root of their number.
		s += fmt.Sprintf("More connections than pods are open already, and random picks still give some pods more of them than others "+
			"(here %s a pod). ", connectionRange(pods))
		more = ""
	}
	if grpcCallers(r, svc) {
		return s + grpcRemedy(r, svc)
	}
	return s + "To spread it: " + more +
		"recycle them (connections.maxLifetime, as .NET's PooledConnectionLifetime does), " +
		"or balance per request with an L7 proxy (a service-mesh sidecar) or client-side load balancing."
}

// grpcCallers tells whether a client of svc speaks gRPC.
func grpcCallers(r *result.Result, svc string) bool {
	for _, c := range r.Clients {
		if c.Target == svc && c.Protocol == "grpc" {
			return true
		}
	}
	return false
}

// grpcRemedy is how to spread gRPC channels' calls over svc's pods: a channel
// keeps its one connection until the server ends it.
func grpcRemedy(r *result.Result, svc string) string {
	age := serviceConfig(r, svc).GRPCMaxConnectionAgeS
	s := "A gRPC channel keeps its connection (pick_first) until the server ends it or it breaks. To spread it: "
	if age > 0 {
		s = fmt.Sprintf("A gRPC channel keeps its connection (pick_first); the server ends each after %s (pod.grpc.maxConnectionAge), "+
			"and the channel's next connection is picked anew, so over time the calls spread, but meanwhile each channel's "+
			"calls go to the pod of its connection. To spread it further: a shorter age, ", GoDuration(age))
	} else {
		s += "have the server end connections as they age (pod.grpc.maxConnectionAge: each channel reconnects within the age, " +
			"and kube-proxy picks a pod again), "
	}
	return s + "a channel per thread (reuse: per-thread), or balance per call: round_robin in the client over a headless " +
		"Service's pods, or a service-mesh sidecar."
}

// openedBy says what each caller opened for what, in name order: "caller opened 5
// connections (at most 5 at once) for 473573 requests; ...".
func openedBy(callers []caller) string {
	sort.Slice(callers, func(i, j int) bool { return callers[i].name < callers[j].name })
	held := make([]string, 0, len(callers))
	for _, c := range callers {
		held = append(held, fmt.Sprintf("%s opened %s (at most %d at once) for %s", c.name,
			plural(c.opened, "connection"), c.peak, plural(c.requests, c.noun)))
	}
	return strings.Join(held, "; ")
}

// cameAndWent says that an explanation compares the n pods serving at the end.
func cameAndWent(n int) string {
	return fmt.Sprintf("(Pods came and went: this compares the %s serving at the end, per second since each became ready.) ", plural(int64(n), "pod"))
}

// expectedIdle sets the idle pods against what k connections (noun), each to a
// uniformly random one of n pods, leave idle on average, as a clause: "with 3
// long-lived connections over 5 pods, ... (here: 2). "; capitalized to open a
// sentence.
func expectedIdle(k int64, noun string, n, idle int, capitalized bool) string {
	with := "with"
	if capitalized {
		with = "With"
	}
	return fmt.Sprintf("%s %s over %d pods, n·(1−1/n)^k = %.2f pods are expected to get none (here: %d). ",
		with, plural(k, noun), n, ExpectedIdle(n, int(k)), idle)
}

// clientsOf returns the clients of svc and, summed over them, the connections they
// opened, the most they held open at once and their requests.
func callersOf(r *result.Result, svc string) (callers []caller, conns, peak, reqs int64) {
	for _, c := range r.Clients {
		if c.Target == svc {
			callers = append(callers, caller{c.Name, c.ConnectionsOpened, c.PeakOpen, c.Requests, "request"})
		}
	}
	for _, e := range r.Edges {
		if e.To == svc {
			callers = append(callers, caller{e.From + "'s pods", e.ConnectionsOpened, e.PeakOpen, e.Requests, "call"})
		}
	}
	for _, c := range callers {
		conns += c.opened
		peak += c.peak
		reqs += c.requests
	}
	return callers, conns, peak, reqs
}

// whose names the callers' kind for prose: the clients', or the callers' when a
// service's pods call too.
func whose(callers []caller) string {
	for _, c := range callers {
		if c.noun == "call" {
			return "callers'"
		}
	}
	return "clients'"
}

// caller is what holds connections to a service: a client Deployment, or the pods
// of a service that calls it.
type caller struct {
	name                   string
	opened, peak, requests int64
	noun                   string // what it sends: request or call
}

// lateIdle names the idle pods that a scale-out added after the connections were
// open, with when each became ready.
func lateIdle(pods []result.Pod) []string {
	var late []string
	for _, p := range pods {
		if p.Requests == 0 && p.InProgress == 0 && p.StartS > 0 {
			late = append(late, fmt.Sprintf("%s (ready at %s)", p.Name, at(*p.ReadyS)))
		}
	}
	return late
}

// saturatedPod says when the busiest pod's CPU is spent, and whether the other pods
// had CPU to spare: when some did, the requests pinned to it wait for CPU there while
// they have room; when every pod's CPU is spent too, on its own or by the other pods
// of its node, each pod serves what CPU it gets, and a pod with a node to itself gets
// more. "" when the busiest pod had room.
func saturatedPod(pods []result.Pod, nodes []result.Node) string {
	var busiest *result.Pod
	conns := int64(0)
	for i := range pods {
		conns += pods[i].Connections
		if busiest == nil || pods[i].Requests > busiest.Requests {
			busiest = &pods[i]
		}
	}
	if busiest == nil || busiest.CPUUtilization < saturatedCPU {
		return ""
	}
	byName := map[string]result.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	// A pod has room when neither its own CPU (of its limit, or of its node's cores)
	// nor its node's cores are spent.
	hasRoom := func(p result.Pod) bool {
		n, ok := byName[p.Node]
		return p.CPUUtilization < saturatedCPU && (!ok || n.CPU == 0 || n.CPUUtilization < saturatedCPU)
	}
	var room []string
	for _, p := range pods {
		if p.Name != busiest.Name && hasRoom(p) {
			room = append(room, p.Name)
		}
	}
	of := "its node's cores"
	if busiest.Throttling != nil {
		of = "its CPU limit"
	}
	s := fmt.Sprintf("%s holds %d of the %s and uses %s of %s", busiest.Name, busiest.Connections, plural(conns, "connection"), pct(busiest.CPUUtilization), of)
	switch {
	case len(room) == len(pods)-1:
		return s + ": the requests pinned to it wait for CPU there while the other pods have room. "
	case len(room) > 0:
		verb := "has"
		if len(room) > 1 {
			verb = "have"
		}
		return s + fmt.Sprintf(": the requests pinned to it wait for CPU there while %s %s room. ", strings.Join(room, ", "), verb)
	}
	s += ", and every other pod's CPU is spent too, by itself or by the other pods of its node: each pod serves what CPU it gets. "
	// Without CPU limits, pods on a busy node split its cores: one alone on its node
	// gets them all.
	own, ok := byName[busiest.Node]
	if busiest.Throttling != nil || !ok || own.Pods != 1 || own.CPU == 0 {
		return s
	}
	for _, p := range pods {
		if n, ok := byName[p.Node]; p.Name != busiest.Name && (!ok || n.Pods < 2 || p.Throttling != nil) {
			return s
		}
	}
	cores := strconv.FormatFloat(own.CPU, 'g', -1, 64) + " cores"
	if own.CPU == 1 {
		cores = "core"
	}
	return s + fmt.Sprintf("%s has the %s of %s to itself, while every other pod shares its node. ", busiest.Name, cores, own.Name)
}

// saturatedCPU is the CPU use above which a pod has no room left.
const saturatedCPU = 0.95

// connectionRange is the fewest and most connections a pod accepted: "1 to 7".
func connectionRange(pods []result.Pod) string {
	lo, hi := pods[0].Connections, pods[0].Connections
	for _, p := range pods {
		lo, hi = min(lo, p.Connections), max(hi, p.Connections)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// perSecondReady keeps the pods still serving at the end of the run and scales each
// one's requests to what it would have got over the whole run at the rate it got
// since it became ready. Pods that were removed served under other conditions
// (another replica count, another load) and are left out.
func perSecondReady(pods []result.Pod, duration float64) []result.Pod {
	var out []result.Pod
	for _, p := range pods {
		if p.ReadyS == nil || p.DeletedS != nil || p.EndS != nil || duration-*p.ReadyS <= 0 {
			continue
		}
		p.Requests = int64(math.Round(float64(p.Requests) / (duration - *p.ReadyS) * duration))
		out = append(out, p)
	}
	return out
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// successMS writes a latency of r's successful requests: "<0.5µs" for a 0 among
// latencies it recorded (its maximum is not 0), since the Result keeps them to the
// microsecond and no request takes no time; as ms does otherwise.
func successMS(r *result.Result, v float64) string {
	if v == 0 && r.Requests.OK > 0 && r.LatencyMS.Max > 0 {
		return "<0.5µs"
	}
	return ms(v)
}

func ms(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.3fs", v/1000)
	case v >= 1:
		return fmt.Sprintf("%.3fms", v)
	default:
		return fmt.Sprintf("%.1fµs", v*1000)
	}
}

func wrap(s string, width int) string {
	var out, line strings.Builder
	for _, word := range strings.Fields(s) {
		if line.Len() > 0 && line.Len()+1+len([]rune(word)) > width {
			out.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	out.WriteString(line.String())
	return out.String()
}
