package scenario

// Checks of the network (links, overrides, faults), of what requests and answers
// carry, of sidecars and of the report settings.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	jitterDistributions = []string{JitterUniform, JitterNormal}
	directions          = []string{DirectionTo, DirectionFrom, DirectionBoth}
	faultKinds          = []string{FaultLoss, FaultDelay, FaultBandwidth, FaultPartition, FaultPodKill}
	methods             = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	lbPolicies          = []string{LBRoundRobin, LBLeastRequest, LBRandom}

	// retryConditions are Envoy's HTTP router retry conditions
	// (x-envoy-retry-on, config.route.v3.RetryPolicy retry_on), plus the gRPC ones
	// Istio's default policy uses (x-envoy-retry-grpc-on: cancelled, unavailable).
	retryConditions = []string{
		"5xx", "gateway-error", "reset", "reset-before-request", "connect-failure", "envoy-ratelimited",
		"retriable-4xx", "refused-stream", "retriable-status-codes", "retriable-headers",
		"http3-post-connect-failure", "cancelled", "unavailable",
	}

	// linkFields are a Link's keys, in the order of the type.
	linkFields = []string{"latency", "jitter", "jitterDistribution", "bandwidth", "loss", "correlation", "gilbertElliott"}

	// faultFields are the fields that set what a network fault does, and the kind
	// each belongs to.
	faultFields = []struct{ field, kind string }{
		{"loss", FaultLoss}, {"correlation", FaultLoss},
		{"latency", FaultDelay}, {"jitter", FaultDelay},
		{"rate", FaultBandwidth},
	}
)

// world is what selectors may name: the services, clients and node pools, and which
// services may get pods beyond their initial replicas.
type world struct {
	services map[string]*Service
	clients  map[string]*Client
	pools    map[string]int // name → count
	// growing services get pods after the start, named on from their replicas: by an
	// autoscaler, or as replacements of pods a pod-kill fault deletes.
	growing map[string]bool
}

func newWorld(s *Scenario) *world {
	w := &world{services: map[string]*Service{}, clients: map[string]*Client{}, pools: map[string]int{}, growing: map[string]bool{}}
	for i := range s.Spec.Services {
		svc := &s.Spec.Services[i]
		if _, dup := w.services[svc.Name]; !dup && svc.Name != "" {
			w.services[svc.Name] = svc
		}
		if svc.Autoscaler != nil {
			w.growing[svc.Name] = true
		}
	}
	for i := range s.Spec.Clients {
		c := &s.Spec.Clients[i]
		if _, dup := w.clients[c.Name]; !dup && c.Name != "" {
			w.clients[c.Name] = c
		}
	}
	for _, p := range s.Spec.Cluster.Nodes {
		if _, dup := w.pools[p.Name]; !dup && p.Name != "" {
			w.pools[p.Name] = p.Count
		}
	}
	for _, f := range s.Spec.Faults {
		if f.Kind != FaultPodKill {
			continue
		}
		t := f.Target
		switch {
		case t.Service != "":
			w.growing[t.Service] = true
		case t.Pod != "":
			if name, _, ok := splitIndexed(t.Pod); ok {
				w.growing[name] = true
			}
		case t.Node != "":
			// Any service may have a pod on the node.
			for name := range w.services {
				w.growing[name] = true
			}
		}
	}
	return w
}

// splitIndexed splits a pod or node name NAME-N into NAME and N. N is written as
// trafficlab writes it: decimal, no sign, no leading zero.
func splitIndexed(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return "", 0, false
	}
	num := s[i+1:]
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strconv.Itoa(n) != num {
		return "", 0, false
	}
	return s[:i], n, true
}

// unknownName is the end of a message about a name that is not there: the closest
// known name if one is near enough to be a typo, else all of them.
func unknownName(what, name string, known []string) string {
	msg := fmt.Sprintf("no %s named %q", what, name)
	if len(known) == 0 {
		return msg + fmt.Sprintf("; the scenario has no %ss", what)
	}
	slices.Sort(known)
	if c, ok := closest(name, known); ok {
		return msg + fmt.Sprintf("; did you mean %q?", c)
	}
	return msg + fmt.Sprintf("; %ss: %s", what, strings.Join(known, ", "))
}

// closest is the name in known with the least edit distance to name, if that is small
// enough to be a typo: at most 1 edit for short names, 2 from 6 characters on.
func closest(name string, known []string) (string, bool) {
	limit := 1
	if len(name) >= 6 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := editDistance(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, bestDist <= limit
}

// editDistance is the optimal string alignment distance between a and b, by bytes:
// Levenshtein's insertions, deletions and substitutions, plus swaps of two adjacent
// characters, the commonest typo.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// members says which pods or nodes (noun) NAME-0 .. NAME-(n-1) there are.
func members(noun, name string, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("so it has no %ss", noun)
	case 1:
		return fmt.Sprintf("so its only %s is %s-0", noun, name)
	case 2:
		return fmt.Sprintf("so its %ss are %s-0 and %s-1", noun, name, name)
	}
	return fmt.Sprintf("so its %ss are %s-0 to %s-%d", noun, name, name, n-1)
}

// selectorFields are a Selector's keys.
var selectorFields = []string{"service", "client", "pod", "node"}

// selector checks that sel picks exactly one of a service, a client, a pod or a node,
// and that what it names exists. With podKill it must pick service pods.
func (v *validator) selector(path string, sel *Selector, w *world, podKill bool) {
	at := func(field string) string { return path + "." + field }
	var set []string
	for _, f := range selectorFields {
		if v.written(at(f)) {
			set = append(set, f)
		}
	}
	switch {
	case len(set) == 0 && !v.written(path):
		v.errorf(path, "is required: one of service, client, pod or node, e.g. {service: web}")
		return
	case len(set) == 0:
		v.errorf(path, "must set one of service, client, pod or node, e.g. {service: web}")
		return
	case len(set) > 1:
		v.errorf(at(set[1]), "cannot be set with %s: a selector picks one of service, client, pod or node", set[0])
		return
	}
	const podKillTargets = "pod-kill deletes service pods: target a service, one of its pods, or a node"
	switch f := set[0]; {
	case f == "service":
		if sel.Service == "" {
			v.errorf(at(f), "must name a service")
		} else if _, ok := w.services[sel.Service]; !ok {
			v.errorf(at(f), "%s", unknownName("service", sel.Service, keys(w.services)))
		}
	case f == "client":
		switch _, ok := w.clients[sel.Client]; {
		case podKill:
			v.errorf(at(f), "cannot be a client with kind pod-kill: %s", podKillTargets)
		case sel.Client == "":
			v.errorf(at(f), "must name a client")
		case !ok:
			v.errorf(at(f), "%s", unknownName("client", sel.Client, keys(w.clients)))
		}
	case f == "pod":
		v.podSelector(at(f), sel.Pod, w, podKill, podKillTargets)
	case f == "node":
		pool, i, ok := splitIndexed(sel.Node)
		if !ok {
			v.errorf(at(f), "%q is not a node name: nodes are named POOL-N, e.g. %s-0", sel.Node, firstName(keys(w.pools), "worker"))
			return
		}
		count, ok := w.pools[pool]
		switch {
		case !ok:
			v.errorf(at(f), "no node %s: %s", sel.Node, unknownName("node pool", pool, keys(w.pools)))
		case i >= count:
			v.errorf(at(f), "no node %s: node pool %s has %d node%s, %s", sel.Node, pool, count, plural(count),
				members("node", pool, count))
		}
	}
}

// podSelector checks a pod name, NAME-N: NAME is a service or a client and N one of
// its pods. A service that may get pods after the start (with an autoscaler, or under
// pod-kill) may be named with any N: later pods take the next numbers.
func (v *validator) podSelector(path, pod string, w *world, podKill bool, podKillTargets string) {
	name, i, ok := splitIndexed(pod)
	if !ok {
		v.errorf(path, "%q is not a pod name: pods are named SERVICE-N or CLIENT-N, e.g. %s-0", pod,
			firstName(append(keys(w.services), keys(w.clients)...), "web"))
		return
	}
	if svc, ok := w.services[name]; ok {
		if !w.growing[name] && i >= svc.Replicas {
			v.errorf(path, "no pod %s: service %s has %d replica%s and no autoscaler, %s", pod, name, svc.Replicas, plural(svc.Replicas),
				members("pod", name, svc.Replicas))
		}
		return
	}
	if c, ok := w.clients[name]; ok {
		switch {
		case podKill:
			v.errorf(path, "%s is a pod of client %s; %s", pod, name, podKillTargets)
		case i >= c.Replicas:
			v.errorf(path, "no pod %s: client %s has %d replica%s, %s", pod, name, c.Replicas, plural(c.Replicas), members("pod", name, c.Replicas))
		}
		return
	}
	known := append(keys(w.services), keys(w.clients)...)
	msg := fmt.Sprintf("no pod %s: no service or client named %q", pod, name)
	if c, ok := closest(name, known); ok {
		msg += fmt.Sprintf("; did you mean %s-%d?", c, i)
	}
	v.errorf(path, "%s", msg)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// firstName is the alphabetically first of names, or def when there are none: an
// example in a message.
func firstName(names []string, def string) string {
	if len(names) == 0 {
		return def
	}
	return slices.Min(names)
}

// network checks the cluster's network and its link overrides.
func (v *validator) network(n *Network, w *world) {
	const path = "spec.cluster.network"
	v.linkModifiers(path, n.Jitter != nil, n.JitterDistribution, n.Loss != nil, n.Correlation != nil)
	v.gilbertElliott(path, n.GilbertElliott, n.Loss != nil || n.Correlation != nil)
	v.oneOf(path+".congestionControl", "congestion control", n.CongestionControl, []string{CongestionCubic, CongestionReno})
	for i := range n.Links {
		o := &n.Links[i]
		at := fmt.Sprintf("%s.links[%d]", path, i)
		v.selector(at+".target", &o.Target, w, false)
		if o.Peer != nil {
			v.selector(at+".peer", o.Peer, w, false)
		}
		v.oneOf(at+".direction", "direction", o.Direction, directions)
		l := &o.Link
		if !slices.ContainsFunc(linkFields, func(f string) bool { return v.written(at + ".link." + f) }) {
			v.errorf(at+".link", "must set at least one of %s", strings.Join(linkFields, ", "))
			continue
		}
		v.linkModifiers(at+".link", l.Jitter != nil, l.JitterDistribution, l.Loss != nil, l.Correlation != nil)
		v.gilbertElliott(at+".link", l.GilbertElliott, l.Loss != nil || l.Correlation != nil)
	}
}

// gilbertElliott checks a burst-loss model: p and r are required, and it replaces
// loss and correlation in the same link.
func (v *validator) gilbertElliott(path string, g *GilbertElliott, loss bool) {
	if g == nil {
		return
	}
	path += ".gilbertElliott"
	if loss {
		v.errorf(path, "replaces loss and correlation in the same link; use one or the other")
	}
	if g.P == nil {
		v.errorf(path, "p is required: the chance per packet to go from the good state to the bad one")
	}
	if g.R == nil {
		v.errorf(path, "r is required: the chance per packet to go from the bad state back to the good one")
	}
}

// linkModifiers checks the fields of a link that shape another: jitterDistribution
// shapes jitter, correlation shapes loss, each in the same link.
func (v *validator) linkModifiers(path string, jitter bool, dist string, loss, correlation bool) {
	switch {
	case dist != "" && !jitter:
		v.errorf(path+".jitterDistribution", "applies only with jitter (in the same link); set jitter or leave jitterDistribution out")
	case dist != "":
		v.oneOf(path+".jitterDistribution", "jitter distribution", dist, jitterDistributions)
	}
	if correlation && !loss {
		v.errorf(path+".correlation", "applies only with loss (in the same link): it makes losses come in bursts; set loss or leave correlation out")
	}
}

// faults checks the timed faults against the run's duration and what they target.
func (v *validator) faults(faults []Fault, duration time.Duration, w *world) {
	names := map[string]string{}
	for i := range faults {
		f := &faults[i]
		path := fmt.Sprintf("spec.faults[%d]", i)
		at := func(field string) string { return path + "." + field }
		if f.Name != "" {
			if first, dup := names[f.Name]; dup {
				v.errorf(at("name"), "duplicate fault name %q (also %s)", f.Name, first)
			} else {
				names[f.Name] = path
			}
		}
		known := true
		switch {
		case f.Kind == "":
			v.errorf(at("kind"), "is required; valid: %s", strings.Join(faultKinds, ", "))
			known = false
		case !slices.Contains(faultKinds, f.Kind):
			v.oneOf(at("kind"), "fault kind", f.Kind, faultKinds)
			known = false
		}
		podKill := f.Kind == FaultPodKill

		if f.Start.Duration >= duration {
			v.errorf(at("start"), "must be less than spec.duration (%s): the fault would never happen", duration)
		}
		switch {
		case podKill:
			if v.written(at("end")) {
				v.errorf(at("end"), "does nothing with kind pod-kill, which deletes the pods at start; leave end out")
			}
		case f.End == nil || !v.written(at("end")):
			// Until the end of the run.
		case f.End.Duration <= f.Start.Duration:
			v.errorf(at("end"), "must be after start (%s)", f.Start.Duration)
		case f.End.Duration > duration:
			v.errorf(at("end"), "must not be after spec.duration (%s); leave end out to last until the end of the run", duration)
		}

		v.selector(at("target"), &f.Target, w, podKill)
		if podKill {
			for _, field := range []string{"peer", "direction"} {
				if v.written(at(field)) {
					v.errorf(at(field), "does nothing with kind pod-kill, which deletes the target's pods")
				}
			}
		} else {
			if f.Peer != nil {
				v.selector(at("peer"), f.Peer, w, false)
			}
			v.oneOf(at("direction"), "direction", f.Direction, directions)
		}
		if !known {
			continue
		}
		for _, ff := range faultFields {
			if ff.kind == f.Kind || !v.written(at(ff.field)) {
				continue
			}
			switch f.Kind {
			case FaultPartition:
				v.errorf(at(ff.field), "does nothing with kind partition, which drops every packet; use kind: %s", ff.kind)
			case FaultPodKill:
				v.errorf(at(ff.field), "does nothing with kind pod-kill, which deletes the target's pods; use kind: %s", ff.kind)
			default:
				v.errorf(at(ff.field), "does nothing with kind %s; use kind: %s, in a fault of its own to have both", f.Kind, ff.kind)
			}
		}
		switch {
		case f.Kind == FaultLoss && f.Loss == nil:
			v.errorf(at("loss"), `is required by kind loss: the share of packets dropped, e.g. "3%%"`)
		case f.Kind == FaultDelay && f.Latency == nil:
			v.errorf(at("latency"), "is required by kind delay: the delay added to each packet, e.g. 50ms")
		case f.Kind == FaultBandwidth && f.Rate == nil:
			v.errorf(at("rate"), "is required by kind bandwidth: the rate packets are held to, e.g. 10mbit")
		}
	}
}

// request checks what a client's requests carry.
func (v *validator) request(path string, r *Request) {
	at := path + ".request"
	if !slices.Contains(methods, r.Method) {
		if up := strings.ToUpper(r.Method); slices.Contains(methods, up) {
			v.errorf(at+".method", "unknown method %q: HTTP methods are case-sensitive; use %s", r.Method, up)
		} else {
			v.oneOf(at+".method", "method", r.Method, methods)
		}
	}
	if *r.HeaderBytes < 1 {
		v.errorf(at+".headerBytes", "must be at least 1: a request has at least its request line")
	}
	if r.BodyBytes < 0 {
		v.errorf(at+".bodyBytes", "must not be negative")
	}
}

// podSizes checks what the app's answers and HTTP/2 connections carry.
func (v *validator) podSizes(pod string, p *Pod) {
	if *p.ResponseBytes < 1 {
		v.errorf(pod+".responseBytes", "must be at least 1: an answer has at least its status line")
	}
	if *p.MaxConcurrentStreams < 1 {
		v.errorf(pod+".maxConcurrentStreams", "must be at least 1")
	}
	v.windows(pod+".http2", p.HTTP2)
}

// windows checks HTTP/2 receive windows: RFC 9113 allows 1 to 2^31-1 bytes.
func (v *validator) windows(path string, w *HTTP2Windows) {
	if w == nil {
		return
	}
	for _, f := range []struct {
		name string
		n    int64
	}{{"streamWindowBytes", *w.StreamWindowBytes}, {"connectionWindowBytes", *w.ConnectionWindowBytes}} {
		if f.n < 1 || f.n > math.MaxInt32 {
			v.errorf(path+"."+f.name, "must be from 1 to 2147483647 bytes (RFC 9113 section 6.9.1)")
		}
	}
}

// sidecar checks an Envoy sidecar's settings.
func (v *validator) sidecar(path string, s *Sidecar) {
	at := func(field string) string { return path + ".sidecar." + field }
	switch c := *s.Concurrency; {
	case c == 0:
		v.errorf(at("concurrency"), "must be at least 1: Istio's concurrency 0 (a worker per core of the node) is not modelled; give the number of workers")
	case c < 0:
		v.errorf(at("concurrency"), "must be at least 1")
	}
	if s.CPU != nil && s.CPU.Sign() <= 0 {
		v.errorf(at("cpu"), "must be greater than 0; leave it out for no limit")
	}
	v.oneOf(at("upstreamProtocol"), "protocol", s.UpstreamProtocol, []string{ProtocolHTTP1, ProtocolHTTP2})
	if !slices.Contains(lbPolicies, s.LBPolicy) {
		if up := strings.ToUpper(s.LBPolicy); slices.Contains(lbPolicies, up) {
			v.errorf(at("lbPolicy"), "unknown load-balancing policy %q: Envoy's names are upper-case; use %s", s.LBPolicy, up)
		} else {
			v.oneOf(at("lbPolicy"), "load-balancing policy", s.LBPolicy, lbPolicies)
		}
	}
	cb := &s.CircuitBreakers
	for _, t := range []struct {
		field string
		value int64
	}{
		{"maxConnections", *cb.MaxConnections}, {"maxPendingRequests", *cb.MaxPendingRequests},
		{"maxRequests", *cb.MaxRequests}, {"maxRetries", *cb.MaxRetries},
	} {
		if t.value < 1 {
			v.errorf(at("circuitBreakers."+t.field), "must be at least 1; leave it out for Istio's default, in effect unlimited")
		}
	}
	r := s.Retries
	if *r.Attempts < 0 {
		v.errorf(at("retries.attempts"), "must not be negative; 0 turns retries off")
	}
	for i, c := range r.RetryOn {
		p := fmt.Sprintf("%s[%d]", at("retries.retryOn"), i)
		if slices.Contains(retryConditions, c) {
			continue
		}
		if _, err := strconv.Atoi(c); err == nil {
			v.errorf(p, "unknown retry condition %q: status codes are not taken here (retriable-status-codes retries 503, as in Istio's default policy); valid: %s", c, strings.Join(retryConditions, ", "))
		} else {
			v.oneOf(p, "retry condition", c, retryConditions)
		}
	}
	if r.PerTryTimeout != nil && r.PerTryTimeout.Duration <= 0 {
		v.errorf(at("retries.perTryTimeout"), "must be greater than 0; leave it out for no per-try timeout")
	}
}

// report checks the report settings.
func (v *validator) report(r *Report) {
	const path = "spec.report"
	if v.written(path+".histogram") && len(r.Histogram) < 2 {
		v.errorf(path+".histogram", "needs at least two bounds: the first is the lower bound of the first bucket, e.g. [0, 2ms, 4ms, 6ms]")
	}
	for i := 1; i < len(r.Histogram); i++ {
		if r.Histogram[i].Duration <= r.Histogram[i-1].Duration {
			v.errorf(fmt.Sprintf("%s.histogram[%d]", path, i), "must be greater than the bound before it (%s): bounds go up", r.Histogram[i-1].Duration)
		}
	}
	if *r.Samples < 0 {
		v.errorf(path+".samples", "must not be negative; 0 keeps no samples")
	}
	if r.SlowThreshold.Duration <= 0 {
		v.errorf(path+".slowThreshold", "must be greater than 0")
	}
}
