package importer

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	sigsyaml "sigs.k8s.io/yaml"

	"trafficlab/inventory"
	"trafficlab/model/hpa"
	"trafficlab/scenario"
)

// service is the scenario service for w: its Service, pods and autoscaler.
func (im *importer) service(w *workload) (*yaml.Node, error) {
	svc := newMapping().set("name", str(w.as))
	if w.service.Spec.ClusterIP == corev1.ClusterIPNone {
		svc.set("clusterIP", str(scenario.ClusterIPNone))
	}
	h := im.autoscalerOf(w)
	replicas := int32(1) // a Deployment's default
	if w.replicas != nil {
		replicas = *w.replicas
	}
	if h != nil && h.Object.Spec.MinReplicas != nil && replicas < *h.Object.Spec.MinReplicas {
		replicas = *h.Object.Spec.MinReplicas
	}
	svc.set("replicas", integer(replicas))
	pod, err := im.pod(w)
	if err != nil {
		return nil, err
	}
	svc.set("pod", pod.node)
	if h != nil {
		if a, err := im.autoscaler(w, h); err != nil {
			return nil, err
		} else if a != nil {
			svc.set("autoscaler", a)
		}
	}
	if sc := im.sidecar(w); sc != nil {
		svc.set("sidecar", sc)
	}
	if s := w.strategy; s != nil && !defaultStrategy(s) {
		n, err := value(s)
		if err != nil {
			return nil, err
		}
		svc.set("strategy", compact(n))
	}
	if w.minReadySeconds > 0 {
		svc.set("minReadySeconds", integer(w.minReadySeconds))
	}
	if w.kind == "StatefulSet" {
		im.note(w.source, w.String(), "its pods are modelled as a Deployment's: their ordered start and stable names are not")
	}
	return svc.node, nil
}

// pod is w's pod: the app container's resources, probe and hook, where the pods
// go, and the assumed time a request takes.
func (im *importer) pod(w *workload) (mapping, error) {
	pod := newMapping()
	c, why := appContainer(w)
	if why != "" {
		im.note(w.source, w.String(), "%s", why)
	}
	spec := &w.template.Spec
	if r := resources(c); len(r.Requests)+len(r.Limits) > 0 {
		n, err := value(r)
		if err != nil {
			return pod, err
		}
		pod.set("resources", compact(n))
	}
	if len(w.template.Labels) > 0 {
		n, _ := value(w.template.Labels)
		pod.set("labels", compact(n))
	}
	for _, f := range []struct {
		key string
		v   any
		set bool
	}{
		{"nodeSelector", spec.NodeSelector, len(spec.NodeSelector) > 0},
		{"affinity", spec.Affinity, spec.Affinity != nil},
		{"tolerations", spec.Tolerations, len(spec.Tolerations) > 0},
		{"topologySpreadConstraints", spec.TopologySpreadConstraints, len(spec.TopologySpreadConstraints) > 0},
	} {
		if !f.set {
			continue
		}
		n, err := value(f.v)
		if err != nil {
			return pod, err
		}
		pod.set(f.key, compact(n))
	}
	pod.set("serviceTime", compact(newMapping().set("distribution", str(scenario.DistExponential)).set("mean", str(assumedServiceTime)).node),
		"ASSUMED: the app's CPU time per request, which manifests do not say. Measure it: the",
		"server's own request-duration histogram (p50, p99) under light load, less its calls.")
	if calls := im.calls[w]; len(calls) > 0 {
		var steps []*yaml.Node
		for _, c := range calls {
			step := flowMapping().set("service", str(c.To))
			step.node.LineComment = fmt.Sprintf("from %s=%s", c.Where, c.Text)
			steps = append(steps, step.node)
		}
		pod.set("calls", sequence(steps...),
			"ASSUMED: each request calls each of these once, one after another, as inferred",
			"from the addresses the container is given. Tracing shows the real order, counts",
			"and which calls go out in parallel.")
		pod.set("client", im.callClient(calls).node)
	}
	if c != nil {
		probe(pod, c)
		im.preStop(w, pod, c)
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g != corev1.DefaultTerminationGracePeriodSeconds {
		pod.set("terminationGracePeriodSeconds", integer(*g))
	}
	return pod, nil
}

// defaultStrategy tells whether s, defaulted, is the strategy a Deployment gets
// by default, which is the scenario's too.
func defaultStrategy(s *appsv1.DeploymentStrategy) bool {
	var byDefault appsv1.DeploymentStrategy
	scenario.DefaultStrategy(&byDefault)
	got := s.DeepCopy()
	scenario.DefaultStrategy(got)
	return equality.Semantic.DeepEqual(*got, byDefault)
}

// resources are c's requests and limits of cpu and memory, the ones a scenario
// reads.
func resources(c *corev1.Container) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	if c == nil {
		return out
	}
	pick := func(in corev1.ResourceList) corev1.ResourceList {
		var l corev1.ResourceList
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := in[name]; ok {
				if l == nil {
					l = corev1.ResourceList{}
				}
				l[name] = q
			}
		}
		return l
	}
	out.Requests, out.Limits = pick(c.Resources.Requests), pick(c.Resources.Limits)
	return out
}

// callClient is how a caller's pods make their calls: gRPC's library when
// every service they call speaks gRPC, else the generic HTTP client.
func (im *importer) callClient(calls []Call) mapping {
	grpc := 0
	for _, c := range calls {
		if im.speaksGRPC(c.To) {
			grpc++
		}
	}
	client := newMapping()
	if grpc == len(calls) {
		client.set("library", str(grpcLibrary),
			"ASSUMED: the services called name their ports grpc; "+grpcLibrary+"'s channel is taken",
			"for the pods' library (`trafficlab libraries` lists the others).")
		return client
	}
	why := []string{"ASSUMED: a client library that keeps a shared pool of HTTP/1.1 connections; set",
		"library to the app's own (`trafficlab libraries` lists them)."}
	if grpc > 0 {
		why = []string{"ASSUMED: it calls gRPC and HTTP services, and a scenario's pods have one client:",
			"a shared pool of HTTP/1.1 connections is taken for all of them."}
	}
	client.set("connections", sharedPool(), why...)
	return client
}

// sharedPool is the connections of a client that shares one pool per pod.
func sharedPool() *yaml.Node {
	return compact(newMapping().set("reuse", str(scenario.ReuseShared)).node)
}

// probe writes the readiness probe's timing, which is what a run plays: it
// succeeds while the app listens, whatever its handler.
func probe(pod mapping, c *corev1.Container) {
	p := c.ReadinessProbe
	if p == nil {
		return
	}
	probe := flowMapping()
	for _, f := range []struct {
		key       string
		v         int32
		byDefault int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds, 0}, {"periodSeconds", p.PeriodSeconds, scenario.DefaultProbePeriodSeconds},
		{"timeoutSeconds", p.TimeoutSeconds, scenario.DefaultProbeTimeoutSeconds},
		{"successThreshold", p.SuccessThreshold, scenario.DefaultProbeSuccessThreshold},
		{"failureThreshold", p.FailureThreshold, scenario.DefaultProbeFailureThreshold}} {
		if f.v != 0 && f.v != f.byDefault {
			probe.set(f.key, integer(f.v))
		}
	}
	pod.set("readinessProbe", probe.node)
}

// preStop writes the app container's preStop hook: a sleep, or a command and
// how long it runs.
func (im *importer) preStop(w *workload, pod mapping, c *corev1.Container) {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return
	}
	h := c.Lifecycle.PreStop
	hook := newMapping()
	switch {
	case h.Sleep != nil:
		hook.set("sleep", flowMapping().set("seconds", integer(h.Sleep.Seconds)).node)
	case h.Exec != nil:
		exec := newMapping()
		cmd := make([]*yaml.Node, len(h.Exec.Command))
		for i, a := range h.Exec.Command {
			cmd[i] = str(a)
		}
		exec.set("command", compact(sequence(cmd...)))
		if _, ok := scenario.SleepCommand(h.Exec.Command); !ok {
			exec.set("duration", str("1s"), "ASSUMED: how long the command runs; time it in the container.")
		}
		hook.set("exec", exec.node)
	default:
		im.note(w.source, w.String(), "its preStop hook is an HTTP or TCP call, which is not modelled: the pod stops without it")
		return
	}
	pod.set("lifecycle", newMapping().set("preStop", hook.node).node)
}

// autoscalerOf is the HPA whose scaleTargetRef is w.
func (im *importer) autoscalerOf(w *workload) *inventory.Object[*autoscalingv2.HorizontalPodAutoscaler] {
	for i := range im.inv.HPAs {
		h := &im.inv.HPAs[i]
		ref := h.Object.Spec.ScaleTargetRef
		if ref.Kind == w.kind && ref.Name == w.name && namespaceOf(h.Object.Namespace) == w.namespace {
			return h
		}
	}
	return nil
}

// autoscaler is the HPA as the scenario's autoscaler: its bounds, its CPU
// metrics and behavior. Metrics other than CPU are left out with a note; an
// HPA left with none it can compute is not imported.
func (im *importer) autoscaler(w *workload, h *inventory.Object[*autoscalingv2.HorizontalPodAutoscaler]) (*yaml.Node, error) {
	src := h.Source
	subject := "HorizontalPodAutoscaler " + h.Object.Name
	spec := hpa.Undefaulted(h.Object.Spec)
	var cpu []autoscalingv2.MetricSpec
	for _, m := range spec.Metrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
			cpu = append(cpu, m)
			continue
		}
		im.note(src, subject, "its %s metric is not modelled: it scales on CPU alone in the scenario", metricName(m))
	}
	if len(cpu) == 0 && len(spec.Metrics) > 0 {
		im.note(src, subject, "scales on no metric the scenario models: service %s keeps its replicas", w.as)
		return nil, nil
	}
	c, _ := appContainer(w)
	r := resources(c)
	if _, ok := r.Requests[corev1.ResourceCPU]; !ok {
		if _, limit := r.Limits[corev1.ResourceCPU]; !limit && usesUtilization(cpu) {
			im.note(src, subject, "its target is a utilization of the CPU request, and the app container has none: Kubernetes' HPA cannot compute it either, so service %s keeps its replicas", w.as)
			return nil, nil
		}
	}
	a := newMapping()
	if spec.MinReplicas != nil {
		a.set("minReplicas", integer(*spec.MinReplicas))
	}
	a.set("maxReplicas", integer(spec.MaxReplicas))
	if len(cpu) > 0 {
		n, err := value(cpu)
		if err != nil {
			return nil, err
		}
		a.set("metrics", compact(n))
	}
	if spec.Behavior != nil {
		n, err := value(spec.Behavior)
		if err != nil {
			return nil, err
		}
		a.set("behavior", compact(n))
	}
	return a.node, nil
}

func usesUtilization(metrics []autoscalingv2.MetricSpec) bool {
	if len(metrics) == 0 {
		return true // Kubernetes' default: 80 % of the request
	}
	for _, m := range metrics {
		if m.Resource.Target.Type == autoscalingv2.UtilizationMetricType {
			return true
		}
	}
	return false
}

func metricName(m autoscalingv2.MetricSpec) string {
	switch {
	case m.Resource != nil:
		return string(m.Resource.Name)
	case m.ContainerResource != nil:
		return "container " + string(m.ContainerResource.Name)
	case m.Pods != nil:
		return "Pods " + m.Pods.Metric.Name
	case m.Object != nil:
		return "Object " + m.Object.Metric.Name
	case m.External != nil:
		return "External " + m.External.Metric.Name
	}
	return string(m.Type)
}

// Istio's injection switches and the annotations a sidecar's resources and
// settings are read from (istio.io/latest/docs/reference/config/annotations).
const (
	injectionLabel  = "istio-injection"
	revisionLabel   = "istio.io/rev"
	injectSwitch    = "sidecar.istio.io/inject"
	proxyCPULimit   = "sidecar.istio.io/proxyCPULimit"
	proxyConfig     = "proxy.istio.io/config"
	istioProxy      = "istio-proxy"
	concurrencyFlag = "--concurrency"
)

// injected tells whether Istio injects a sidecar into w's pods: the pod's
// label or annotation, else its namespace's label, as Istio's webhook decides.
func (im *importer) injected(w *workload) bool {
	for i := range w.template.Spec.Containers {
		if w.template.Spec.Containers[i].Name == istioProxy {
			return true // injected already (istioctl kube-inject)
		}
	}
	if v, ok := w.template.Labels[injectSwitch]; ok {
		return v == "true"
	}
	if v, ok := w.template.Annotations[injectSwitch]; ok {
		return v == "true"
	}
	for _, ns := range im.inv.Namespaces {
		if ns.Object.Name == w.namespace {
			_, rev := ns.Object.Labels[revisionLabel]
			return ns.Object.Labels[injectionLabel] == "enabled" || rev
		}
	}
	return false
}

// sidecar is the Envoy sidecar of an injected workload: its CPU limit and
// concurrency, from the annotations or an injected container.
func (im *importer) sidecar(w *workload) *yaml.Node {
	if !im.injected(w) {
		return nil
	}
	sc := newMapping()
	if cpu, ok := w.template.Annotations[proxyCPULimit]; ok {
		sc.set("cpu", str(cpu))
	}
	for i := range w.template.Spec.Containers {
		c := &w.template.Spec.Containers[i]
		if c.Name != istioProxy {
			continue
		}
		if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && !sc.has("cpu") {
			sc.set("cpu", str(q.String()))
		}
		for j, a := range c.Args {
			if a == concurrencyFlag && j+1 < len(c.Args) {
				sc.set("concurrency", count(c.Args[j+1]))
			} else if v, ok := strings.CutPrefix(a, concurrencyFlag+"="); ok {
				sc.set("concurrency", count(v))
			}
		}
	}
	if cfg, ok := w.template.Annotations[proxyConfig]; ok && !sc.has("concurrency") {
		var pc struct {
			Concurrency *int `json:"concurrency"`
		}
		switch err := sigsyaml.Unmarshal([]byte(cfg), &pc); {
		case err != nil:
			im.note(w.source, w.String(), "its %s annotation does not read as YAML: %v", proxyConfig, err)
		case pc.Concurrency != nil && *pc.Concurrency == 0:
			im.note(w.source, w.String(), "its %s sets concurrency 0, a worker per host CPU, which is not modelled: the default from the CPU limit is taken", proxyConfig)
		case pc.Concurrency != nil:
			sc.set("concurrency", integer(*pc.Concurrency))
		}
	}
	return compact(sc.node)
}

// count is a flag's value as the scenario reads it: an integer when it is one,
// else the text as given, which validation then refuses with its place.
func count(v string) *yaml.Node {
	if n, err := strconv.Atoi(v); err == nil {
		return integer(n)
	}
	return str(v)
}
