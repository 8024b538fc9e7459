package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	hpactl "trafficlab/model/hpa"
	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
)

var (
	proxyModes     = kubeproxy.Names()
	ipvsSchedulers = []string{IPVSRoundRobin, IPVSLeastConnection, IPVSSourceHashing, IPVSShortestExpected, IPVSNeverQueue}
	distributions  = []string{DistConstant, DistExponential, DistLognormal, DistUniform, DistEmpirical}
	arrivals       = []string{ArrivalConstant, ArrivalPoisson}
	reuses         = []string{ReuseNone, ReusePerThread, ReuseShared}
	protocols      = []string{ProtocolHTTP1, ProtocolHTTP2, ProtocolGRPC}
	sigtermActions = []string{SigtermExit, SigtermDrain}

	// Kubernetes' HPA enumerations (pkg/apis/autoscaling/validation/validation.go).
	metricSourceTypes = []string{
		string(autoscalingv2.ResourceMetricSourceType), string(autoscalingv2.PodsMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ContainerResourceMetricSourceType),
	}
	scalingPolicyTypes   = []string{string(autoscalingv2.PodsScalingPolicy), string(autoscalingv2.PercentScalingPolicy)}
	scalingPolicySelects = []string{
		string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect),
		string(autoscalingv2.DisabledPolicySelect),
	}

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
	// Sizes first: the checks below list nodes by name, which a count over the
	// limit would make a hang.
	var nodes []string
	if v.sizes(s) {
		nodes = nodeNames(&s.Spec.Cluster)
	}
	v.cluster(&s.Spec.Cluster)
	services := v.services(s.Spec.Services, s.Spec.Duration.Duration)
	v.clients(s.Spec.Clients, services, nodes)
	v.calls(s.Spec.Services, services)
	for i := range s.Spec.Services {
		v.placed(fmt.Sprintf("spec.services[%d].pod", i), &s.Spec.Services[i].Pod, nodes)
	}
	v.background(s.Spec.Background, map[string]string{}, nodes)
	w := newWorld(s)
	v.network(&s.Spec.Cluster.Network, w)
	v.faults(s.Spec.Faults, s.Spec.Duration.Duration, w)
	v.report(&s.Spec.Report)
	return v.diags
}

func (v *validator) errorf(path, format string, args ...any) {
	v.diags = append(v.diags, v.pos.Diag(Error, path, fmt.Sprintf(format, args...)))
}

func (v *validator) warnf(path, format string, args ...any) {
	v.diags = append(v.diags, v.pos.Diag(Warning, path, fmt.Sprintf(format, args...)))
}

// inboundOnly warns of the outbound settings given on a service's sidecar, which
// proxies only the requests coming in to its pod. Istio's retry policy belongs to
// the caller's route (a VirtualService), so retries are the client sidecar's. Istio
// also puts a DestinationRule's connection pool on the pod's inbound cluster (the
// discussion of istio/api#2961), but trafficlab enforces circuit breakers on
// outbound requests only: set here, they would change nothing, silently.
func (v *validator) inboundOnly(path string) {
	for _, f := range []string{"circuitBreakers", "retries"} {
		at := path + ".sidecar." + f
		if !v.written(at) {
			continue
		}
		what := "circuit breakers act on a client's outbound sidecar only here: Istio also applies a DestinationRule's connection pool to a pod's inbound cluster, which trafficlab does not model"
		if f == "retries" {
			what = "retries are the caller's route policy (a VirtualService), made by the client's sidecar"
		}
		v.warnf(at, "has no effect on a service's sidecar, which proxies the requests coming in to its pod: %s; give it to the sidecar of the clients that call this service", what)
	}
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
	v.oneOf("spec.cluster.proxyMode", "proxy mode", c.ProxyMode.String(), proxyModes)
	if c.IPVSScheduler != "" {
		v.oneOf("spec.cluster.ipvsScheduler", "IPVS scheduler", c.IPVSScheduler, ipvsSchedulers)
		if c.ProxyMode != kubeproxy.IPVS {
			v.warnf("spec.cluster.ipvsScheduler", "applies only with proxyMode %s; ignored with %s", kubeproxy.IPVS, c.ProxyMode)
		}
	}
	if v.written("spec.cluster.proxyWork") && !c.ProxyMode.Relays() {
		v.warnf("spec.cluster.proxyWork", "applies only with proxyMode %s, whose process relays the bytes; ignored with %s", kubeproxy.Userspace, c.ProxyMode)
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
		v.nodePool(path, &p)
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
func (v *validator) services(svcs []Service, duration time.Duration) map[string]*Service {
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
		if s.ClusterIP != "" && !s.Headless() {
			v.errorf(path+".clusterIP", "must be None (a headless Service) or left out; trafficlab gives every other Service a ClusterIP")
		}
		pod := path + ".pod"
		if s.Pod.CPU != nil && s.Pod.CPU.Sign() <= 0 {
			v.errorf(pod+".cpu", "must be greater than 0; leave it out for no limit")
		}
		if s.Pod.Concurrency < 0 {
			v.errorf(pod+".concurrency", "must not be negative; 0 is unbounded")
		}
		if s.Pod.IdleTimeout.Duration < 0 {
			v.errorf(pod+".idleTimeout", "must not be negative; 0 never closes an idle connection")
		}
		if g := s.Pod.GRPC; g != nil {
			if g.MaxConnectionAge != nil && g.MaxConnectionAge.Duration <= 0 {
				v.errorf(pod+".grpc.maxConnectionAge", "must be greater than 0; leave it out for connections that never age out")
			}
			switch grace := g.MaxConnectionAgeGrace; {
			case grace == nil:
			case grace.Duration <= 0:
				v.errorf(pod+".grpc.maxConnectionAgeGrace", "must be greater than 0; leave it out for no limit")
			case g.MaxConnectionAge == nil:
				v.errorf(pod+".grpc.maxConnectionAgeGrace", "applies only with maxConnectionAge: it counts from the age's GOAWAY")
			}
		}
		if !v.written(pod + ".serviceTime") {
			v.errorf(pod+".serviceTime", "is required, e.g. {distribution: exponential, mean: 1ms}")
		} else {
			v.distribution(pod+".serviceTime", &s.Pod.ServiceTime)
		}
		if s.Pod.WaitTime != nil {
			v.distribution(pod+".waitTime", s.Pod.WaitTime)
		}
		v.podLifecycle(pod, &s.Pod)
		v.containers(pod, &s.Pod)
		v.podSizes(pod, &s.Pod)
		if s.Autoscaler != nil {
			v.autoscaler(path, s)
		}
		if s.Sidecar != nil {
			v.sidecar(path, s.Sidecar)
			v.inboundOnly(path)
		}
		v.deployment(path, s, duration)
	}
	return byName
}

// podLifecycle checks how a pod starts, becomes ready and stops.
func (v *validator) podLifecycle(pod string, p *Pod) {
	// The default start-up delay needs no checking, and has no positions to check by.
	if v.written(pod + ".startupDelay") {
		v.distribution(pod+".startupDelay", p.StartupDelay)
	}
	if r := p.ReadinessProbe; r != nil {
		rp := pod + ".readinessProbe"
		var handlers []string
		for _, h := range []struct {
			name string
			set  bool
		}{{"httpGet", r.HTTPGet != nil}, {"tcpSocket", r.TCPSocket != nil}, {"exec", r.Exec != nil}, {"grpc", r.GRPC != nil}} {
			if h.set {
				handlers = append(handlers, h.name)
			}
		}
		if len(handlers) > 1 {
			// pkg/apis/core/validation validateHandler: "may not specify more than 1 handler type".
			v.errorf(rp+"."+handlers[1], "a probe has one handler, and %s is set too", handlers[0])
		}
		if r.InitialDelaySeconds < 0 {
			v.errorf(rp+".initialDelaySeconds", "must not be negative")
		}
		for _, f := range []struct {
			name       string
			value, def int32
		}{
			{"periodSeconds", *r.PeriodSeconds, DefaultProbePeriodSeconds},
			{"timeoutSeconds", *r.TimeoutSeconds, DefaultProbeTimeoutSeconds},
			{"successThreshold", *r.SuccessThreshold, DefaultProbeSuccessThreshold},
			{"failureThreshold", *r.FailureThreshold, DefaultProbeFailureThreshold},
		} {
			switch {
			case f.value == 0:
				// Kubernetes' SetDefaults_Probe reads 0 as unset; here unset is leaving it out.
				v.errorf(rp+"."+f.name, "must be at least 1; Kubernetes reads 0 as its default, %d: leave the field out for that", f.def)
			case f.value < 0:
				v.errorf(rp+"."+f.name, "must be at least 1")
			}
		}
	}
	grace := *p.TerminationGracePeriodSeconds
	if grace < 0 {
		v.errorf(pod+".terminationGracePeriodSeconds", "must not be negative")
	}
	if p.Lifecycle != nil && p.Lifecycle.PreStop != nil {
		v.preStop(pod+".lifecycle.preStop", p.Lifecycle.PreStop, grace)
	}
	at := pod + ".onSigterm"
	v.oneOf(at+".action", "SIGTERM action", p.OnSigterm.Action, sigtermActions)
	if d := p.OnSigterm.DrainTimeout; d != nil {
		switch p.OnSigterm.Action {
		case SigtermExit:
			v.warnf(at+".drainTimeout", "applies only to action %s; ignored with %s", SigtermDrain, SigtermExit)
		case SigtermDrain:
			if d.Duration <= 0 {
				v.errorf(at+".drainTimeout", "must be greater than 0; leave it out to drain until SIGKILL")
			}
		}
	}
}

// preStop checks a preStop hook and how long it runs against the grace period.
func (v *validator) preStop(path string, h *LifecycleHandler, grace int64) {
	var (
		secs float64 // how long the hook runs
		at   string  // where that was written
	)
	switch {
	case h.Sleep == nil && h.Exec == nil:
		v.errorf(path, `needs sleep ({seconds: N}) or exec ({command: [sh, -c, "sleep N"]})`)
		return
	case h.Sleep != nil && h.Exec != nil:
		v.errorf(path+".exec", "cannot be set with sleep: a hook runs one action; set one")
		return
	case h.Sleep != nil:
		at = path + ".sleep.seconds"
		if h.Sleep.Seconds < 0 {
			v.errorf(at, "must not be negative")
			return
		}
		secs = float64(h.Sleep.Seconds)
	default:
		x := h.Exec
		at = path + ".exec.duration"
		switch {
		case len(x.Command) == 0:
			v.errorf(path+".exec.command", `is required: the command the hook runs, e.g. [sh, -c, "sleep 10"]`)
			return
		case x.Duration == nil:
			v.errorf(at, "is required: trafficlab cannot tell how long %q runs; only `sleep N`, directly or through `sh -c`, is read from the command", strings.Join(x.Command, " "))
			return
		case !v.written(at):
			at = path + ".exec.command" // read from `sleep N`
		}
		secs = x.Duration.Seconds()
	}
	// pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer: the hook runs only
	// with a grace period, is cut when the grace period ends, and the app is then still
	// allowed minimumGracePeriodInSeconds (2) after SIGTERM.
	switch {
	case grace == 0:
		v.warnf(path, "never runs: with terminationGracePeriodSeconds 0 the kubelet skips preStop hooks")
	case grace > 0 && secs >= float64(grace):
		v.warnf(at, "the hook runs %gs, not less than terminationGracePeriodSeconds (%d): the kubelet cuts it at %ds, then sends SIGTERM and allows the app only 2s more before SIGKILL",
			secs, grace, grace)
	}
}

// autoscaler checks a service's HPA as the API server does
// (pkg/apis/autoscaling/validation/validation.go), and that trafficlab models it.
func (v *validator) autoscaler(svc string, s *Service) {
	a := s.Autoscaler
	path := svc + ".autoscaler"
	at := func(field string) string { return path + "." + field }
	minR := *a.MinReplicas
	switch {
	case minR == 0:
		v.errorf(at("minReplicas"), "must be at least 1: minReplicas 0 is Kubernetes' alpha feature HPAScaleToZero (off by default; it also needs an Object or External metric), not modelled")
	case minR < 0:
		v.errorf(at("minReplicas"), "must be at least 1")
	}
	if ref := a.ScaleTargetRef; ref != nil {
		switch {
		case ref.Kind != "Deployment":
			v.errorf(at("scaleTargetRef.kind"), "must be Deployment: the autoscaler scales service %s's Deployment", s.Name)
		case ref.Name != s.Name:
			v.errorf(at("scaleTargetRef.name"), "must be %s: the autoscaler scales the service's own Deployment, named as the service", s.Name)
		case ref.APIVersion != "" && ref.APIVersion != "apps/v1":
			v.errorf(at("scaleTargetRef.apiVersion"), "must be apps/v1, a Deployment's, or left out")
		}
	}
	bounds := minR >= 1
	switch {
	case !v.written(at("maxReplicas")):
		v.errorf(at("maxReplicas"), "is required")
		bounds = false
	case a.MaxReplicas < 1:
		v.errorf(at("maxReplicas"), "must be at least 1")
		bounds = false
	case a.MaxReplicas < minR:
		v.errorf(at("maxReplicas"), "must be at least minReplicas (%d)", minR)
		bounds = false
	}
	if !v.written(at("metrics[0]")) {
		// Kubernetes' default metric, set by setDefaults.
		if !hasCPURequest(&s.Pod) {
			v.errorf(at("metrics"), "the default metric, %d%% average CPU utilization, needs a CPU request: %s; set one, or a metric with target type AverageValue",
				hpactl.DefaultCPUUtilization, utilizationNeedsCPU)
		}
	} else {
		for i := range a.Metrics {
			v.metric(fmt.Sprintf("%s.metrics[%d]", path, i), &a.Metrics[i], hasCPURequest(&s.Pod))
		}
	}
	if b := a.Behavior; b != nil {
		v.scalingRules(at("behavior.scaleUp"), b.ScaleUp)
		v.scalingRules(at("behavior.scaleDown"), b.ScaleDown)
	}
	c := &a.Controller
	if c.SyncPeriod.Duration <= 0 {
		v.errorf(at("controller.syncPeriod"), "must be greater than 0")
	}
	if t := *c.Tolerance; t < 0 || t >= 1 {
		v.errorf(at("controller.tolerance"), "must be at least 0 and less than 1: a fraction of the target (0.1 is 10%%)")
	}
	if c.MetricResolution.Duration <= 0 {
		v.errorf(at("controller.metricResolution"), "must be greater than 0")
	}

	// What the HPA does at its first sync (pkg/controller/podautoscaler/horizontal.go
	// reconcileAutoscaler): nothing at 0 replicas, else clamp to [minReplicas, maxReplicas].
	replicas := svc + ".replicas"
	switch r := int64(s.Replicas); {
	case !bounds || r < 0:
	case r == 0 && !v.written(replicas):
		v.warnf(replicas, "is not set, so the Deployment starts with 0 pods and the HPA never scales it (Kubernetes disables autoscaling at 0 replicas); set replicas, e.g. to minReplicas (%d)", minR)
	case r == 0:
		v.warnf(replicas, "0 replicas disable the HPA: Kubernetes does not autoscale a Deployment at 0 replicas")
	case r < int64(minR):
		v.warnf(replicas, "%d is below minReplicas (%d): the HPA will scale it to %d at its first sync", r, minR, minR)
	case r > int64(a.MaxReplicas):
		v.warnf(replicas, "%d is above maxReplicas (%d): the HPA will scale it to %d at its first sync", r, a.MaxReplicas, a.MaxReplicas)
	}
}

const (
	utilizationNeedsCPU = "utilization is relative to the pod's CPU request (pod.resources.requests.cpu, or pod.cpu, which sets the limit and so the request)"
	supportedMetrics    = "supported: type Resource with resource.name cpu"
	supportedTargets    = "supported: Utilization, AverageValue"
)

// metric checks one entry of an HPA's metrics: trafficlab models CPU, as a utilization
// or an average value per pod.
// hasCPURequest tells whether the pod's container has a CPU request, after defaulting.
func hasCPURequest(p *Pod) bool {
	_, ok := p.Resources.Requests[corev1.ResourceCPU]
	return ok
}

func (v *validator) metric(path string, m *autoscalingv2.MetricSpec, hasRequest bool) {
	at := func(field string) string { return path + "." + field }
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
	case "":
		v.errorf(at("type"), "is required; %s", supportedMetrics)
		return
	default:
		if slices.Contains(metricSourceTypes, string(m.Type)) {
			v.errorf(at("type"), "metric type %s is not modelled yet; %s", m.Type, supportedMetrics)
		} else {
			v.errorf(at("type"), "unknown metric type %q; valid: %s; %s", m.Type, strings.Join(metricSourceTypes, ", "), supportedMetrics)
		}
		return
	}
	for _, other := range []struct {
		field string
		set   bool
	}{{"object", m.Object != nil}, {"pods", m.Pods != nil}, {"containerResource", m.ContainerResource != nil}, {"external", m.External != nil}} {
		if other.set {
			v.errorf(at(other.field), "cannot be set with type Resource: a metric has one source")
		}
	}
	r := m.Resource
	if r == nil {
		v.errorf(at("resource"), "is required by type Resource, e.g. {name: cpu, target: {type: Utilization, averageUtilization: 80}}")
		return
	}
	switch r.Name {
	case corev1.ResourceCPU:
	case "":
		v.errorf(at("resource.name"), "is required; supported: cpu")
	default:
		v.errorf(at("resource.name"), "resource %s is not modelled yet; supported: cpu", r.Name)
	}

	t := &r.Target
	target := at("resource.target")
	tat := func(field string) string { return target + "." + field }
	switch t.Type {
	case autoscalingv2.UtilizationMetricType:
		switch u := t.AverageUtilization; {
		case u == nil:
			v.errorf(tat("averageUtilization"), "is required by target type Utilization: a percentage of the CPU request, e.g. 80")
		case *u < 1:
			v.errorf(tat("averageUtilization"), "must be greater than 0")
		}
		if t.AverageValue != nil {
			v.errorf(tat("averageValue"), "cannot be set with target type Utilization: Kubernetes takes averageUtilization or averageValue, not both")
		}
		if !hasRequest {
			v.errorf(tat("type"), "Utilization needs a CPU request: %s; set one, or use target type AverageValue", utilizationNeedsCPU)
		}
	case autoscalingv2.AverageValueMetricType:
		switch q := t.AverageValue; {
		case q == nil:
			v.errorf(tat("averageValue"), "is required by target type AverageValue: CPU per pod, e.g. 500m")
		case q.Sign() <= 0:
			v.errorf(tat("averageValue"), "must be greater than 0")
		}
		if t.AverageUtilization != nil {
			v.errorf(tat("averageUtilization"), "cannot be set with target type AverageValue: Kubernetes takes averageUtilization or averageValue, not both")
		}
	case autoscalingv2.ValueMetricType:
		v.errorf(tat("type"), "target type Value does not apply to a Resource metric (Kubernetes needs averageUtilization or averageValue); %s", supportedTargets)
		return
	case "":
		v.errorf(tat("type"), "is required; %s", supportedTargets)
		return
	default:
		v.errorf(tat("type"), "unknown target type %q; %s", t.Type, supportedTargets)
		return
	}
	if t.Value != nil {
		v.warnf(tat("value"), "not used by a Resource metric; ignored")
	}
}

// scalingRules checks one direction of an HPA's behavior as
// pkg/apis/autoscaling/validation/validation.go validateScalingRules does. Absent
// rules and fields take Kubernetes' defaults in the hpa package.
func (v *validator) scalingRules(path string, r *autoscalingv2.HPAScalingRules) {
	if r == nil {
		return
	}
	at := func(field string) string { return path + "." + field }
	if w := r.StabilizationWindowSeconds; w != nil {
		switch {
		case *w < 0:
			v.errorf(at("stabilizationWindowSeconds"), "must not be negative")
		case *w > maxStabilizationWindowSeconds:
			v.errorf(at("stabilizationWindowSeconds"), "must be at most %d (Kubernetes' MaxStabilizationWindowSeconds)", maxStabilizationWindowSeconds)
		}
	}
	if p := r.SelectPolicy; p != nil {
		v.oneOf(at("selectPolicy"), "select policy", string(*p), scalingPolicySelects)
	}
	if r.Policies != nil && len(r.Policies) == 0 {
		v.errorf(at("policies"), "must list at least one policy; leave policies out for Kubernetes' default")
	}
	for i, p := range r.Policies {
		pp := fmt.Sprintf("%s.policies[%d]", path, i)
		if p.Type == "" {
			v.errorf(pp+".type", "is required; valid: %s", strings.Join(scalingPolicyTypes, ", "))
		} else {
			v.oneOf(pp+".type", "scaling policy type", string(p.Type), scalingPolicyTypes)
		}
		if p.Value <= 0 {
			v.errorf(pp+".value", "must be greater than 0")
		}
		switch {
		case p.PeriodSeconds <= 0:
			v.errorf(pp+".periodSeconds", "must be greater than 0")
		case p.PeriodSeconds > maxPeriodSeconds:
			v.errorf(pp+".periodSeconds", "must be at most %d (Kubernetes' MaxPeriodSeconds)", maxPeriodSeconds)
		}
	}
}

// Bounds of an HPA's behavior (pkg/apis/autoscaling/validation/validation.go).
const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

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

func (v *validator) clients(clients []Client, services map[string]*Service, nodes []string) {
	svcNames := serviceNames(services)
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
			v.warnf(at("target"), "%s", noReplicas(svc, "connection"))
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
		v.connections(path+".connections", &c.Connections)
		if svc, ok := services[c.Target]; ok && svc.Headless() {
			v.headlessCaller(at("target"), c.Target, c.Library, c.Sidecar != nil)
		}
		v.request(path, &c.Request)
		if c.Sidecar != nil {
			v.sidecar(path, c.Sidecar)
		}
		v.resources(at("resources"), &c.Resources)
		if q := c.Work.Steady; q != nil && q.Sign() < 0 {
			v.errorf(at("work.steady"), "must not be negative")
		}
		if c.EntryNode != "" && nodes != nil && !slices.Contains(nodes, c.EntryNode) {
			v.errorf(at("entryNode"), "%s", unknownName("node", c.EntryNode, nodes))
		}
		if c.EntryNode != "" && c.Sidecar != nil {
			v.warnf(at("entryNode"), "a client with a sidecar sends through it, not through a node's kube-proxy: ignored")
		}
		if pl := c.Placement; pl != nil {
			v.placement(at("placement"), pl.NodeSelector, pl.Affinity, pl.Tolerations)
		}
	}
}

// noReplicas is the warning for a Service called with no pods, whose calls (what)
// all fail.
func noReplicas(svc *Service, what string) string {
	if svc.Headless() {
		return fmt.Sprintf("service %s has 0 replicas: DNS answers its name NXDOMAIN and every %s fails, no such host", svc.Name, what)
	}
	return fmt.Sprintf("service %s has 0 replicas: kube-proxy REJECTs its ClusterIP and every %s is refused", svc.Name, what)
}

// headlessCaller checks a caller of headless service name, at path: its library
// must say how it resolves the name, and no sidecar may stand between.
func (v *validator) headlessCaller(path, name, lib string, sidecar bool) {
	if _, ok := library.Lookup(lib); ok && library.ResolutionOf(lib) == nil {
		v.errorf(path, "service %s is headless, and how %s resolves a name to several pods is not modelled; call it with another library, or give it a ClusterIP", name, lib)
	}
	if sidecar {
		v.errorf(path, "service %s is headless: a sidecar's routing to its pods is not modelled yet; give it a ClusterIP", name)
	}
}

// serviceNames lists the scenario's services for an error that names one it lacks.
func serviceNames(services map[string]*Service) string {
	if len(services) == 0 {
		return "the scenario has no services"
	}
	names := make([]string, 0, len(services))
	for n := range services {
		names = append(names, n)
	}
	slices.Sort(names)
	return "services: " + strings.Join(names, ", ")
}

// loop checks the closed-loop (threads) or open-loop (rate) settings of a client, or
// its phases.
func (v *validator) loop(path string, c *Client) {
	at := func(field string) string { return path + "." + field }
	if c.Repeat < 1 {
		v.errorf(at("repeat"), "must be at least 1")
	} else if v.written(at("repeat")) && !v.written(at("phases")) {
		v.warnf(at("repeat"), "applies only with phases; ignored")
	}
	switch {
	case c.RateCurve != nil:
		v.rateCurve(path, c)
	case v.written(at("phases")):
		v.phases(path, c)
	default:
		switch {
		case c.Threads < 0:
			v.errorf(at("threads"), "must be greater than 0")
		case c.Threads > 0 && c.Rate != nil:
			v.errorf(at("rate"), "cannot be set with threads: threads run a closed loop, rate an open loop; set one")
		case c.Threads == 0 && c.Rate == nil:
			v.errorf(path, "needs threads (a closed loop) or rate (an open loop)")
		}
	}
	open, closed := openLoop(c), closedLoop(c)
	if c.MaxInFlight < 0 {
		v.errorf(at("maxInFlight"), "must not be negative; 0 is unbounded")
	} else if c.MaxInFlight > 0 && !open {
		v.warnf(at("maxInFlight"), "applies only to an open loop (rate); ignored")
	}
	if c.Arrival != "" {
		if !open {
			v.errorf(at("arrival"), "applies only to an open loop (rate)")
		} else {
			v.oneOf(at("arrival"), "arrival", c.Arrival, arrivals)
		}
	}
	if c.ThinkTime != nil {
		v.distribution(at("thinkTime"), c.ThinkTime)
		if !closed {
			v.warnf(at("thinkTime"), "applies only to a closed loop (threads); ignored")
		}
	}
}

// phases checks a client's load steps, which replace its threads and rate.
func (v *validator) phases(path string, c *Client) {
	at := func(field string) string { return path + "." + field }
	const each = "cannot be set with phases: each phase sets its own threads or rate"
	if c.Threads != 0 {
		v.errorf(at("threads"), each)
	}
	if c.Rate != nil {
		v.errorf(at("rate"), each)
	}
	if len(c.Phases) == 0 {
		v.errorf(at("phases"), "must list at least one phase; leave phases out to use threads or rate")
	}
	for i := range c.Phases {
		v.phase(fmt.Sprintf("%s.phases[%d]", path, i), &c.Phases[i])
	}
}

// phase checks one load step: a closed or an open loop, ending after a duration or a
// number of requests.
func (v *validator) phase(path string, p *Phase) {
	at := func(field string) string { return path + "." + field }
	threads := v.written(at("threads"))
	switch {
	case threads && p.Rate != nil:
		v.errorf(at("rate"), "cannot be set with threads: threads run a closed loop, rate an open loop; set one")
	case threads && p.Threads < 1:
		v.errorf(at("threads"), "must be at least 1")
	case !threads && p.Rate == nil:
		v.errorf(path, "needs threads (a closed loop) or rate (an open loop)")
	}
	requests := v.written(at("requests"))
	switch {
	case p.Duration != nil && requests:
		v.errorf(at("requests"), "cannot be set with duration: a phase ends after a duration or after a number of requests; set one")
	case p.Duration != nil && p.Duration.Duration <= 0:
		v.errorf(at("duration"), "must be greater than 0")
	case requests && p.Requests < 1:
		v.errorf(at("requests"), "must be at least 1")
	case p.Duration == nil && !requests:
		v.errorf(path, "needs duration or requests: when the phase ends")
	}
	if p.RampTo != nil {
		switch {
		case p.Rate == nil:
			v.errorf(at("rampTo"), "applies only to an open loop (rate): the rate changes from rate to rampTo")
		case p.Duration == nil:
			v.errorf(at("rampTo"), "needs duration: the rate ramps over the phase's duration, which a phase by requests does not have")
		}
	}
}

// connections checks a client's pools, at conn.
func (v *validator) connections(conn string, c *Connections) {
	v.oneOf(conn+".reuse", "reuse", c.Reuse, reuses)
	if *c.MaxPerHost < 0 {
		v.errorf(conn+".maxPerHost", "must not be negative; 0 is unlimited")
	}
	if *c.MaxIdlePerHost < 0 {
		v.errorf(conn+".maxIdlePerHost", "must not be negative; 0 is unlimited")
	}
	v.oneOf(conn+".protocol", "protocol", c.Protocol, protocols)
	if c.LoadBalancing != "" {
		if c.Protocol != ProtocolGRPC {
			v.errorf(conn+".loadBalancing", "applies only with protocol: grpc; an HTTP library picks an address for each new connection itself (see trafficlab libraries)")
		} else {
			v.oneOf(conn+".loadBalancing", "policy", c.LoadBalancing, []string{PickFirst, RoundRobin})
		}
	}
	if w := c.HTTP2; w != nil && !Multiplexed(c.Protocol) {
		v.errorf(conn+".http2", "applies only with protocol: http2 or grpc")
	} else {
		v.windows(conn+".http2", w)
	}
}
