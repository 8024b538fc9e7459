package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"trafficlab/model/library"
)

var (
	proxyModes     = []string{ProxyIptables, ProxyNftables, ProxyIPVS, ProxyUserspace}
	ipvsSchedulers = []string{IPVSRoundRobin, IPVSLeastConnection, IPVSSourceHashing, IPVSShortestExpected, IPVSNeverQueue}
	distributions  = []string{DistConstant, DistExponential, DistLognormal, DistUniform, DistEmpirical}
	arrivals       = []string{ArrivalConstant, ArrivalPoisson}
	reuses         = []string{ReuseNone, ReusePerThread, ReuseShared}
	protocols      = []string{ProtocolHTTP1, ProtocolHTTP2}

	// distributionFields are the parameters each distribution reads.
	distributionFields = map[string][]string{
		DistConstant:    {"value"},
		DistExponential: {"mean"},
		DistLognormal:   {"mean", "p99", "sigma"},
		DistUniform:     {"min", "max"},
		DistEmpirical:   {"samples"},
	}
	allDistributionFields = []string{"value", "mean", "p99", "sigma", "min", "max", "samples"}

	// dnsLabel is RFC 1123's label, as Kubernetes checks names: node pools, services and
	// clients name nodes and pods (POOL-0, SERVICE-0), which must be labels too.
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// validator checks a defaulted scenario and reports each problem at its field.
type validator struct {
	pos   Positions
	diags Diagnostics
}

func validate(s *Scenario, pos Positions) Diagnostics {
	v := &validator{pos: pos}
	v.header(s)
	v.cluster(&s.Spec.Cluster)
	services := v.services(s.Spec.Services)
	v.clients(s.Spec.Clients, services)
	return v.diags
}

func (v *validator) errorf(path, format string, args ...any) {
	v.diags = append(v.diags, v.pos.Diag(Error, path, fmt.Sprintf(format, args...)))
}

func (v *validator) warnf(path, format string, args ...any) {
	v.diags = append(v.diags, v.pos.Diag(Warning, path, fmt.Sprintf(format, args...)))
}

// written reports whether the field at path was given, in the file or by --set, so that
// an explicit zero can be told from an absent field.
func (v *validator) written(path string) bool {
	_, ok := v.pos.at[path]
	return ok
}

// oneOf reports value at path unless it is one of valid.
func (v *validator) oneOf(path, what, value string, valid []string) {
	if !slices.Contains(valid, value) {
		v.errorf(path, "unknown %s %q; valid: %s", what, value, strings.Join(valid, ", "))
	}
}

func (v *validator) header(s *Scenario) {
	switch s.APIVersion {
	case APIVersion:
	case "":
		v.errorf("apiVersion", "is required; use %s", APIVersion)
	default:
		v.errorf("apiVersion", "must be %s, got %q", APIVersion, s.APIVersion)
	}
	switch s.Kind {
	case Kind:
	case "":
		v.errorf("kind", "is required; use %s", Kind)
	default:
		v.errorf("kind", "must be %s, got %q", Kind, s.Kind)
	}
	if s.Metadata.Name == "" {
		v.errorf("metadata.name", "is required")
	}
	switch {
	case !v.written("spec.duration"):
		v.errorf("spec.duration", "is required, e.g. 60s")
	case s.Spec.Duration.Duration <= 0:
		v.errorf("spec.duration", "must be greater than 0")
	}
}

func (v *validator) cluster(c *Cluster) {
	v.oneOf("spec.cluster.proxyMode", "proxy mode", c.ProxyMode, proxyModes)
	if c.IPVSScheduler != "" {
		v.oneOf("spec.cluster.ipvsScheduler", "IPVS scheduler", c.IPVSScheduler, ipvsSchedulers)
		if c.ProxyMode != ProxyIPVS {
			v.warnf("spec.cluster.ipvsScheduler", "applies only with proxyMode %s; ignored with %s", ProxyIPVS, c.ProxyMode)
		}
	}
	names := map[string]string{}
	for i, p := range c.Nodes {
		path := fmt.Sprintf("spec.cluster.nodes[%d]", i)
		v.name(path, "node pool", p.Name, names)
		if p.Count < 1 {
			v.errorf(path+".count", "must be at least 1")
		}
		if p.CPU != nil && p.CPU.Sign() <= 0 {
			v.errorf(path+".cpu", "must be greater than 0; leave it out for unlimited")
		}
	}
}

// name checks that a name is given, is a DNS label, and is not already in seen, which
// maps names to the path that used them first.
func (v *validator) name(path, what, name string, seen map[string]string) {
	switch {
	case name == "":
		v.errorf(path+".name", "is required")
		return
	case len(name) > 63 || !dnsLabel.MatchString(name):
		v.errorf(path+".name", "%s name %q must be a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters", what, name)
	}
	if first, dup := seen[name]; dup {
		v.errorf(path+".name", "duplicate %s name %q (also %s)", what, name, first)
		return
	}
	seen[name] = path
}

// services checks the services and returns them by name.
func (v *validator) services(svcs []Service) map[string]*Service {
	byName := map[string]*Service{}
	names := map[string]string{}
	for i := range svcs {
		s := &svcs[i]
		path := fmt.Sprintf("spec.services[%d]", i)
		v.name(path, "service", s.Name, names)
		if s.Name != "" {
			byName[s.Name] = s
		}
		if s.Replicas < 0 {
			v.errorf(path+".replicas", "must not be negative")
		}
		pod := path + ".pod"
		if s.Pod.CPU != nil && s.Pod.CPU.Sign() <= 0 {
			v.errorf(pod+".cpu", "must be greater than 0; leave it out for no limit")
		}
		if s.Pod.Concurrency < 0 {
			v.errorf(pod+".concurrency", "must not be negative; 0 is unbounded")
		}
		if !v.written(pod + ".serviceTime") {
			v.errorf(pod+".serviceTime", "is required, e.g. {distribution: exponential, mean: 1ms}")
		} else {
			v.distribution(pod+".serviceTime", &s.Pod.ServiceTime)
		}
		if s.Pod.WaitTime != nil {
			v.distribution(pod+".waitTime", s.Pod.WaitTime)
		}
	}
	return byName
}

// distribution checks that d has the parameters its kind needs, and warns about the ones
// it ignores, which are usually a mistake (exponential with a value instead of a mean).
func (v *validator) distribution(path string, d *Distribution) {
	at := func(field string) string { return path + "." + field }
	needs := "required by distribution " + d.Distribution
	switch d.Distribution {
	case "":
		v.errorf(at("distribution"), "is required; valid: %s", strings.Join(distributions, ", "))
		return
	case DistConstant:
		if !v.written(at("value")) {
			v.errorf(at("value"), "is %s", needs)
		}
	case DistExponential:
		v.positive(at("mean"), d.Mean.Duration, needs)
	case DistLognormal:
		v.positive(at("mean"), d.Mean.Duration, needs)
		p99, sigma := v.written(at("p99")), v.written(at("sigma"))
		switch {
		case p99 && sigma:
			v.errorf(at("sigma"), "lognormal takes p99 or sigma, not both")
		case !p99 && !sigma:
			v.errorf(path, "lognormal needs p99 or sigma besides mean")
		case p99 && d.P99.Duration <= d.Mean.Duration:
			v.errorf(at("p99"), "must be greater than mean (%s)", d.Mean.Duration)
		case sigma && d.Sigma <= 0:
			v.errorf(at("sigma"), "must be greater than 0")
		}
	case DistUniform:
		v.positive(at("max"), d.Max.Duration, needs)
		if d.Max.Duration > 0 && d.Min.Duration > d.Max.Duration {
			v.errorf(at("min"), "must not exceed max (%s)", d.Max.Duration)
		}
	case DistEmpirical:
		if len(d.Samples) == 0 {
			v.errorf(at("samples"), "is %s: at least one sample", needs)
		}
	default:
		v.oneOf(at("distribution"), "distribution", d.Distribution, distributions)
		return
	}
	for _, f := range allDistributionFields {
		if v.written(at(f)) && !slices.Contains(distributionFields[d.Distribution], f) {
			v.warnf(at(f), "not used by distribution %s; ignored", d.Distribution)
		}
	}
}

// positive checks a required duration parameter of a distribution.
func (v *validator) positive(path string, d time.Duration, needs string) {
	switch {
	case !v.written(path):
		v.errorf(path, "is %s", needs)
	case d <= 0:
		v.errorf(path, "must be greater than 0")
	}
}

func (v *validator) clients(clients []Client, services map[string]*Service) {
	svcNames := "the scenario has no services"
	if len(services) > 0 {
		names := make([]string, 0, len(services))
		for n := range services {
			names = append(names, n)
		}
		slices.Sort(names)
		svcNames = "services: " + strings.Join(names, ", ")
	}
	names := map[string]string{}
	for i := range clients {
		c := &clients[i]
		path := fmt.Sprintf("spec.clients[%d]", i)
		at := func(field string) string { return path + "." + field }
		v.name(path, "client", c.Name, names)
		switch svc, ok := services[c.Target]; {
		case c.Target == "":
			v.errorf(at("target"), "is required; %s", svcNames)
		case !ok:
			v.errorf(at("target"), "no service named %q; %s", c.Target, svcNames)
		case svc.Replicas == 0:
			v.warnf(at("target"), "service %s has 0 replicas: kube-proxy REJECTs its ClusterIP and every connection is refused", c.Target)
		}
		if c.Replicas < 1 {
			v.errorf(at("replicas"), "must be at least 1")
		}
		v.loop(path, c)
		if c.Timeout.Duration <= 0 {
			v.errorf(at("timeout"), "must be greater than 0")
		}
		if c.Library != "" {
			if _, ok := library.Lookup(c.Library); !ok {
				v.errorf(at("library"), "unknown library %q; known: %s", c.Library, strings.Join(library.Names(), ", "))
			}
		}
		v.connections(path, c)
	}
}

// loop checks the closed-loop (threads) or open-loop (rate) settings of a client.
func (v *validator) loop(path string, c *Client) {
	at := func(field string) string { return path + "." + field }
	switch {
	case c.Threads < 0:
		v.errorf(at("threads"), "must be greater than 0")
	case c.Threads > 0 && c.Rate != nil:
		v.errorf(at("rate"), "cannot be set with threads: threads run a closed loop, rate an open loop; set one")
	case c.Threads == 0 && c.Rate == nil:
		v.errorf(path, "needs threads (a closed loop) or rate (an open loop)")
	}
	if c.MaxInFlight < 0 {
		v.errorf(at("maxInFlight"), "must not be negative; 0 is unbounded")
	} else if c.MaxInFlight > 0 && c.Rate == nil {
		v.warnf(at("maxInFlight"), "applies only to an open loop (rate); ignored")
	}
	if c.Arrival != "" {
		if c.Rate == nil {
			v.errorf(at("arrival"), "applies only to an open loop (rate)")
		} else {
			v.oneOf(at("arrival"), "arrival", c.Arrival, arrivals)
		}
	}
	if c.ThinkTime != nil {
		v.distribution(at("thinkTime"), c.ThinkTime)
		if c.Rate != nil {
			v.warnf(at("thinkTime"), "applies only to a closed loop (threads); ignored")
		}
	}
}

func (v *validator) connections(path string, c *Client) {
	conn := path + ".connections"
	v.oneOf(conn+".reuse", "reuse", c.Connections.Reuse, reuses)
	if *c.Connections.MaxPerHost < 0 {
		v.errorf(conn+".maxPerHost", "must not be negative; 0 is unlimited")
	}
	if *c.Connections.MaxIdlePerHost < 0 {
		v.errorf(conn+".maxIdlePerHost", "must not be negative; 0 is unlimited")
	}
	switch proto := c.Connections.Protocol; {
	case proto == ProtocolHTTP2 && !v.written(conn+".protocol"):
		// From the library's profile: say where it came from and how to opt out.
		v.errorf(path+".library", "library %s speaks http2, which is not modelled yet (it arrives with the TCP/HTTP2 model); set connections.protocol: http1", c.Library)
	case proto == ProtocolHTTP2:
		v.errorf(conn+".protocol", "protocol http2 is not modelled yet (it arrives with the TCP/HTTP2 model); use http1")
	default:
		v.oneOf(conn+".protocol", "protocol", proto, protocols)
	}
}
