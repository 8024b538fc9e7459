package scenario

import (
	"fmt"
	"k8s.io/apimachinery/pkg/util/intstr"
	"reflect"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
)

// base is a small valid scenario; the bad cases below each break one line of it, so the
// expected line and column can be read off this listing.
const base = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  duration: 10s
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: caller
    target: web
    threads: 2
`

// edit returns base with the first occurrence of old replaced by new.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(base, old) {
		t.Fatalf("base has no %q", old)
	}
	return strings.Replace(base, old, new, 1)
}

func TestLoadBase(t *testing.T) {
	for _, in := range []string{base, "---\n" + base + "---\n", base + "...\n"} {
		sc, _, diags := Load("f.yaml", []byte(in), nil)
		if len(diags) > 0 || sc == nil {
			t.Fatalf("Load(%q): %v", in, diags)
		}
	}
}

// hpaOld is the part of base that hpa replaces.
const hpaOld = "    replicas: 2\n    pod:"

// hpa gives base's service an autoscaler written from line 10, column 7, one line per
// argument, and its pod a CPU limit (on the line after the autoscaler).
func hpa(lines ...string) string {
	var b strings.Builder
	b.WriteString("    replicas: 2\n    autoscaler:\n")
	for _, l := range lines {
		b.WriteString("      " + l + "\n")
	}
	b.WriteString("    pod:\n      cpu: 1")
	return b.String()
}

// resourceMetric is hpa's lines for one Resource metric; the target is on line 15,
// from column 19.
func resourceMetric(name, target string) []string {
	return []string{"maxReplicas: 3", "metrics:", "- type: Resource", "  resource:", "    name: " + name, "    target: " + target}
}

// scaling is hpa's lines for a behavior with one rule in one direction, on line 13
// from column 11.
func scaling(direction, rule string) []string {
	return []string{"maxReplicas: 3", "behavior:", "  " + direction + ":", "    " + rule}
}

const clientFields = "name, target, replicas, threads, rate, rateCurve, arrival, maxInFlight, thinkTime, overhead, timeout, library, connections, phases, repeat, request, sidecar, work, resources, placement"

// loadErrorCases edit base into bad input; FuzzLoad starts from them too.
// headlessTail is base from the service's replicas on; headlessWith makes the
// service headless and gives its client one more line.
const headlessTail = "    replicas: 2\n    pod:\n      serviceTime: {distribution: exponential, mean: 1ms}\n  clients:\n  - name: caller\n    target: web\n    threads: 2"

func headlessWith(line string) string {
	return "    replicas: 2\n    clusterIP: None" + strings.TrimPrefix(headlessTail, "    replicas: 2") + "\n    " + line
}

var loadErrorCases = []struct {
	name, old, new string
	want           string
}{
	{"grace without an age", "    pod:", "    pod:\n      grpc: {maxConnectionAgeGrace: 5s}",
		`10:37: spec.services[0].pod.grpc.maxConnectionAgeGrace: applies only with maxConnectionAge`},
	{"clusterIP other than None", "    replicas: 2", "    replicas: 2\n    clusterIP: 198.18.0.10",
		`9:16: spec.services[0].clusterIP: must be None (a headless Service) or left out`},
	{"loadBalancing without grpc", "    threads: 2", "    threads: 2\n    connections: {loadBalancing: round_robin}",
		`15:34: spec.clients[0].connections.loadBalancing: applies only with protocol: grpc`},
	{"unknown loadBalancing", "    threads: 2", "    threads: 2\n    library: grpc-go\n    connections: {loadBalancing: random}",
		`16:34: spec.clients[0].connections.loadBalancing: unknown policy "random"; valid: pick_first, round_robin`},
	{"headless through a library not modelled", headlessTail, headlessWith("library: nginx-upstream-keepalive"),
		`spec.clients[0].target: service web is headless, and how nginx-upstream-keepalive resolves a name to several pods is not modelled`},
	{"headless through a sidecar", headlessTail, headlessWith("sidecar: {}"),
		`spec.clients[0].target: service web is headless: a sidecar's routing to its pods is not modelled yet`},
	{"unknown key", "    threads: 2", "    thread: 2",
		`14:5: unknown field "thread" in spec.clients[0]; known fields: ` + clientFields},
	{"unknown top-level key", "kind: Scenario", "kind: Scenario\nstatus: {}",
		`3:1: unknown field "status" at the top level; known fields: apiVersion, kind, metadata, spec`},
	{"string for int", "    threads: 2", "    threads: five",
		`14:14: spec.clients[0].threads: expected an integer, got "five"`},
	{"quoted int", "    threads: 2", `    threads: "2"`,
		`14:14: spec.clients[0].threads: expected an integer, got the quoted string "2"`},
	{"mapping for int", "    replicas: 2", "    replicas: {n: 2}",
		`8:15: spec.services[0].replicas: expected an integer, got a mapping`},
	{"scalar for list", "  services:\n  - name: web", "  services: web\n  oops:\n  - name: web",
		`6:13: spec.services: expected a list, got "web"`},
	{"negative duration", "duration: 10s", "duration: -5s",
		`5:13: spec.duration: negative duration -5s`},
	{"duration without unit", "duration: 10s", "duration: 10",
		`5:13: spec.duration: invalid duration "10": durations need a unit, e.g. 10ms`},
	{"garbage duration", "mean: 1ms", "mean: soon",
		`10:54: spec.services[0].pod.serviceTime.mean: invalid duration "soon": want a number and a unit`},
	{"duplicate key", "    replicas: 2", "    replicas: 2\n    replicas: 3",
		`9:5: duplicate field "replicas" in spec.services[0] (first at line 8)`},
	{"bad quantity", "    pod:", "    pod:\n      cpu: lots",
		`10:12: spec.services[0].pod.cpu: invalid quantity "lots": want a Kubernetes quantity such as 500m, 2 or 20Mi`},
	{"negative quantity", "    pod:", "    pod:\n      cpu: -1",
		`10:12: spec.services[0].pod.cpu: negative quantity -1`},
	{"zero quantity", "    pod:", "    pod:\n      cpu: 0m",
		`10:12: spec.services[0].pod.cpu: must be greater than 0; leave it out for no limit`},
	{"bad rate", "    threads: 2", "    rate: 100",
		`14:11: spec.clients[0].rate: invalid rate "100": rates need a unit, e.g. 100/s`},
	{"zero rate", "    threads: 2", "    rate: 0/s",
		`14:11: spec.clients[0].rate: invalid rate "0/s": must be greater than 0`},
	{"yaml syntax", "    replicas: 2", "    replicas: 2: 3",
		`8:1: invalid YAML: mapping values are not allowed in this context`},
	{"tab indentation", "  duration: 10s", "\tduration: 10s",
		`invalid YAML: found character that cannot start any token (YAML does not allow tabs for indentation)`},
	{"trailing empty document is fine, a second one is not", "    threads: 2\n", "    threads: 2\n---\n---\nkind: Scenario\n",
		`16:1: a second YAML document: a scenario file holds one document`},
	{"second document", "    threads: 2\n", "    threads: 2\n---\nkind: Scenario\n",
		`15:1: a second YAML document: a scenario file holds one document`},
	{"bad apiVersion", "apiVersion: trafficlab/v1alpha1", "apiVersion: v1",
		`1:13: apiVersion: must be trafficlab/v1alpha1, got "v1"`},
	{"missing apiVersion", "apiVersion: trafficlab/v1alpha1\n", "",
		`1:1: apiVersion: is required; use trafficlab/v1alpha1`},
	{"bad kind", "kind: Scenario", "kind: Pod",
		`2:7: kind: must be Scenario, got "Pod"`},
	{"missing name", "metadata: {name: t}", "metadata: {description: x}",
		`3:11: metadata.name: is required`},
	{"missing duration", "  duration: 10s\n", "",
		`5:3: spec.duration: is required, e.g. 60s`},
	{"zero duration", "duration: 10s", "duration: 0s",
		`5:13: spec.duration: must be greater than 0`},
	{"unknown proxy mode", "  services:", "  cluster: {proxyMode: ebpf}\n  services:",
		`6:24: spec.cluster.proxyMode: unknown proxy mode "ebpf"; valid: iptables, nftables, ipvs, userspace`},
	{"unknown ipvs scheduler", "  services:", "  cluster: {proxyMode: ipvs, ipvsScheduler: wrr}\n  services:",
		`6:45: spec.cluster.ipvsScheduler: unknown IPVS scheduler "wrr"; valid: rr, lc, sh, sed, nq`},
	{"node pool count", "  services:", "  cluster:\n    nodes: [{name: big, count: 0}]\n  services:",
		`7:32: spec.cluster.nodes[0].count: must be at least 1`},
	{"node pool name", "  services:", "  cluster:\n    nodes: [{name: Big_Pool, count: 1}]\n  services:",
		`7:20: spec.cluster.nodes[0].name: node pool name "Big_Pool" must be a DNS label`},
	{"duplicate node pool", "  services:", "  cluster:\n    nodes: [{name: a, count: 1}, {name: a, count: 2}]\n  services:",
		`7:41: spec.cluster.nodes[1].name: duplicate node pool name "a" (also spec.cluster.nodes[0])`},
	{"negative replicas", "    replicas: 2", "    replicas: -1",
		`8:15: spec.services[0].replicas: must not be negative`},
	{"negative concurrency", "    pod:", "    pod:\n      concurrency: -2",
		`10:20: spec.services[0].pod.concurrency: must not be negative; 0 is unbounded`},
	{"missing service time", "      serviceTime: {distribution: exponential, mean: 1ms}", "      concurrency: 4",
		`10:7: spec.services[0].pod.serviceTime: is required, e.g. {distribution: exponential, mean: 1ms}`},
	{"unknown distribution", "distribution: exponential", "distribution: gauss",
		`10:35: spec.services[0].pod.serviceTime.distribution: unknown distribution "gauss"; valid: constant, exponential, lognormal, uniform, empirical`},
	{"exponential without mean", "{distribution: exponential, mean: 1ms}", "{distribution: exponential}",
		`10:20: spec.services[0].pod.serviceTime.mean: is required by distribution exponential`},
	{"constant without value", "{distribution: exponential, mean: 1ms}", "{distribution: constant}",
		`10:20: spec.services[0].pod.serviceTime.value: is required by distribution constant`},
	{"lognormal p99 and sigma", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 1ms, p99: 9ms, sigma: 1}",
		`10:74: spec.services[0].pod.serviceTime.sigma: lognormal takes p99 or sigma, not both`},
	{"lognormal neither", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 1ms}",
		`10:20: spec.services[0].pod.serviceTime: lognormal needs p99 or sigma besides mean`},
	{"lognormal p99 below mean", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 5ms, p99: 2ms}",
		`10:62: spec.services[0].pod.serviceTime.p99: must be greater than mean (5ms)`},
	{"uniform min above max", "{distribution: exponential, mean: 1ms}", "{distribution: uniform, min: 5ms, max: 2ms}",
		`10:49: spec.services[0].pod.serviceTime.min: must not exceed max (2ms)`},
	{"empirical without samples", "{distribution: exponential, mean: 1ms}", "{distribution: empirical, samples: []}",
		`10:55: spec.services[0].pod.serviceTime.samples: is required by distribution empirical: at least one sample`},
	{"bad wait time", "    pod:", "    pod:\n      waitTime: {distribution: uniform}",
		`10:17: spec.services[0].pod.waitTime.max: is required by distribution uniform`},
	{"exponential with zero mean", "mean: 1ms", "mean: 0s",
		`10:54: spec.services[0].pod.serviceTime.mean: must be greater than 0`},
	{"lognormal with zero sigma", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 1ms, sigma: 0}",
		`10:64: spec.services[0].pod.serviceTime.sigma: must be greater than 0`},
	{"service without name", "  - name: web\n    replicas", "  - replicas",
		`7:5: spec.services[0].name: is required`},
	{"no services", "  services:\n  - name: web\n    replicas: 2\n    pod:\n      serviceTime: {distribution: exponential, mean: 1ms}\n", "",
		`8:13: spec.clients[0].target: no service named "web"; the scenario has no services`},
	{"negative client replicas", "    threads: 2", "    threads: 2\n    replicas: -1",
		`15:15: spec.clients[0].replicas: must be at least 1`},
	{"negative threads", "    threads: 2", "    threads: -2",
		`14:14: spec.clients[0].threads: must be greater than 0`},
	{"negative maxIdlePerHost", "    threads: 2", "    threads: 2\n    connections: {maxIdlePerHost: -1}",
		`15:35: spec.clients[0].connections.maxIdlePerHost: must not be negative; 0 is unlimited`},
	{"missing target service", "    target: web", "    target: api",
		`13:13: spec.clients[0].target: no service named "api"; services: web`},
	{"missing target", "    target: web\n", "",
		`12:5: spec.clients[0].target: is required; services: web`},
	{"threads and rate", "    threads: 2", "    threads: 2\n    rate: 100/s",
		`15:11: spec.clients[0].rate: cannot be set with threads: threads run a closed loop, rate an open loop; set one`},
	{"neither threads nor rate", "    threads: 2\n", "",
		`12:5: spec.clients[0]: needs threads (a closed loop) or rate (an open loop)`},
	{"arrival with threads", "    threads: 2", "    threads: 2\n    arrival: poisson",
		`15:14: spec.clients[0].arrival: applies only to an open loop (rate)`},
	{"unknown arrival", "    threads: 2", "    rate: 10/s\n    arrival: bursty",
		`15:14: spec.clients[0].arrival: unknown arrival "bursty"; valid: constant, poisson`},
	{"negative maxInFlight", "    threads: 2", "    rate: 10/s\n    maxInFlight: -1",
		`15:18: spec.clients[0].maxInFlight: must not be negative; 0 is unbounded`},
	{"negative work", "    threads: 2", "    threads: 2\n    work: {perRequest: -1ms}",
		`15:24: spec.clients[0].work.perRequest: negative duration -1ms`},
	{"client request over its limit", "    threads: 2", "    threads: 2\n    resources: {requests: {cpu: 2}, limits: {cpu: 1}}",
		`15:33: spec.clients[0].resources.requests.cpu: must be less than or equal to the cpu limit (1)`},
	{"zero timeout", "    threads: 2", "    threads: 2\n    timeout: 0s",
		`15:14: spec.clients[0].timeout: must be greater than 0`},
	{"duplicate client", "    threads: 2\n", "    threads: 2\n  - {name: caller, target: web, threads: 1}\n",
		`15:12: spec.clients[1].name: duplicate client name "caller" (also spec.clients[0])`},
	{"unknown library", "    threads: 2", "    threads: 2\n    library: netscape",
		`15:14: spec.clients[0].library: unknown library "netscape"; known: ` + strings.Join(library.Names(), ", ")},
	{"unknown reuse", "    threads: 2", "    threads: 2\n    connections: {reuse: sometimes}",
		`15:26: spec.clients[0].connections.reuse: unknown reuse "sometimes"; valid: none, per-thread, shared`},
	{"negative maxPerHost", "    threads: 2", "    threads: 2\n    connections: {maxPerHost: -1}",
		`15:31: spec.clients[0].connections.maxPerHost: must not be negative; 0 is unlimited`},
	{"unknown protocol", "    threads: 2", "    threads: 2\n    connections: {protocol: spdy}",
		`15:29: spec.clients[0].connections.protocol: unknown protocol "spdy"; valid: http1, http2`},

	// Autoscaler: hpa writes it from line 10, column 7, under "    autoscaler:" on line 9.
	{"hpa without maxReplicas", hpaOld, hpa("minReplicas: 1"),
		`10:7: spec.services[0].autoscaler.maxReplicas: is required`},
	{"hpa maxReplicas zero", hpaOld, hpa("maxReplicas: 0"),
		`10:20: spec.services[0].autoscaler.maxReplicas: must be at least 1`},
	{"hpa maxReplicas below minReplicas", hpaOld, hpa("minReplicas: 3", "maxReplicas: 2"),
		`11:20: spec.services[0].autoscaler.maxReplicas: must be at least minReplicas (3)`},
	{"hpa targets another Deployment", hpaOld, hpa("maxReplicas: 2", "scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}"),
		`11:69: spec.services[0].autoscaler.scaleTargetRef.name: must be web: the autoscaler scales the service's own Deployment, named as the service`},
	{"hpa targets a StatefulSet", hpaOld, hpa("maxReplicas: 2", "scaleTargetRef: {kind: StatefulSet, name: web}"),
		`11:30: spec.services[0].autoscaler.scaleTargetRef.kind: must be Deployment: the autoscaler scales service web's Deployment`},
	{"hpa scale to zero", hpaOld, hpa("minReplicas: 0", "maxReplicas: 2"),
		`10:20: spec.services[0].autoscaler.minReplicas: must be at least 1: minReplicas 0 is Kubernetes' alpha feature HPAScaleToZero (off by default; it also needs an Object or External metric), not modelled`},
	{"hpa negative minReplicas", hpaOld, hpa("minReplicas: -1", "maxReplicas: 2"),
		`10:20: spec.services[0].autoscaler.minReplicas: must be at least 1`},
	{"hpa metric without type", hpaOld, hpa("maxReplicas: 3", "metrics: [{resource: {name: cpu}}]"),
		`11:17: spec.services[0].autoscaler.metrics[0].type: is required; supported: type Resource with resource.name cpu`},
	{"hpa Pods metric", hpaOld, hpa("maxReplicas: 3", "metrics: [{type: Pods, pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: 10}}}]"),
		`11:24: spec.services[0].autoscaler.metrics[0].type: metric type Pods is not modelled yet; supported: type Resource with resource.name cpu`},
	{"hpa unknown metric type", hpaOld, hpa("maxReplicas: 3", "metrics: [{type: Memory}]"),
		`11:24: spec.services[0].autoscaler.metrics[0].type: unknown metric type "Memory"; valid: Resource, Pods, Object, External, ContainerResource; supported: type Resource with resource.name cpu`},
	{"hpa Resource metric without resource", hpaOld, hpa("maxReplicas: 3", "metrics: [{type: Resource}]"),
		`11:17: spec.services[0].autoscaler.metrics[0].resource: is required by type Resource, e.g. {name: cpu, target: {type: Utilization, averageUtilization: 80}}`},
	{"hpa metric with two sources", hpaOld, hpa("maxReplicas: 3", "metrics:", "- type: Resource",
		"  resource: {name: cpu, target: {type: AverageValue, averageValue: 500m}}", "  external: {metric: {name: q}, target: {type: Value, value: 1}}"),
		`14:19: spec.services[0].autoscaler.metrics[0].external: cannot be set with type Resource: a metric has one source`},
	{"hpa memory metric", hpaOld, hpa(resourceMetric("memory", "{type: AverageValue, averageValue: 1Gi}")...),
		`14:17: spec.services[0].autoscaler.metrics[0].resource.name: resource memory is not modelled yet; supported: cpu`},
	{"hpa utilization without target", hpaOld, hpa(resourceMetric("cpu", "{type: Utilization}")...),
		`15:19: spec.services[0].autoscaler.metrics[0].resource.target.averageUtilization: is required by target type Utilization: a percentage of the CPU request, e.g. 80`},
	{"hpa zero utilization", hpaOld, hpa(resourceMetric("cpu", "{type: Utilization, averageUtilization: 0}")...),
		`15:59: spec.services[0].autoscaler.metrics[0].resource.target.averageUtilization: must be greater than 0`},
	{"hpa utilization and average value", hpaOld, hpa(resourceMetric("cpu", "{type: Utilization, averageUtilization: 50, averageValue: 500m}")...),
		`15:77: spec.services[0].autoscaler.metrics[0].resource.target.averageValue: cannot be set with target type Utilization: Kubernetes takes averageUtilization or averageValue, not both`},
	{"hpa utilization without pod cpu", hpaOld, strings.TrimSuffix(hpa(resourceMetric("cpu", "{type: Utilization, averageUtilization: 50}")...), "\n      cpu: 1"),
		`15:26: spec.services[0].autoscaler.metrics[0].resource.target.type: Utilization needs a CPU request: utilization is relative to the pod's CPU request (pod.resources.requests.cpu, or pod.cpu, which sets the limit and so the request); set one, or use target type AverageValue`},
	{"hpa default metric without pod cpu", hpaOld, strings.TrimSuffix(hpa("maxReplicas: 3"), "\n      cpu: 1"),
		`10:7: spec.services[0].autoscaler.metrics: the default metric, 80% average CPU utilization, needs a CPU request: utilization is relative to the pod's CPU request (pod.resources.requests.cpu, or pod.cpu, which sets the limit and so the request); set one, or a metric with target type AverageValue`},
	{"hpa average value without target", hpaOld, hpa(resourceMetric("cpu", "{type: AverageValue}")...),
		`15:19: spec.services[0].autoscaler.metrics[0].resource.target.averageValue: is required by target type AverageValue: CPU per pod, e.g. 500m`},
	{"hpa zero average value", hpaOld, hpa(resourceMetric("cpu", "{type: AverageValue, averageValue: 0}")...),
		`15:54: spec.services[0].autoscaler.metrics[0].resource.target.averageValue: must be greater than 0`},
	{"hpa Value target", hpaOld, hpa(resourceMetric("cpu", "{type: Value, value: 1}")...),
		`15:26: spec.services[0].autoscaler.metrics[0].resource.target.type: target type Value does not apply to a Resource metric (Kubernetes needs averageUtilization or averageValue); supported: Utilization, AverageValue`},
	{"hpa unknown target type", hpaOld, hpa(resourceMetric("cpu", "{type: Percent}")...),
		`15:26: spec.services[0].autoscaler.metrics[0].resource.target.type: unknown target type "Percent"; supported: Utilization, AverageValue`},
	{"hpa select policy", hpaOld, hpa(scaling("scaleUp", "selectPolicy: Sometimes")...),
		`13:25: spec.services[0].autoscaler.behavior.scaleUp.selectPolicy: unknown select policy "Sometimes"; valid: Max, Min, Disabled`},
	{"hpa long stabilization window", hpaOld, hpa(scaling("scaleUp", "stabilizationWindowSeconds: 3601")...),
		`13:39: spec.services[0].autoscaler.behavior.scaleUp.stabilizationWindowSeconds: must be at most 3600 (Kubernetes' MaxStabilizationWindowSeconds)`},
	{"hpa negative stabilization window", hpaOld, hpa(scaling("scaleDown", "stabilizationWindowSeconds: -1")...),
		`13:39: spec.services[0].autoscaler.behavior.scaleDown.stabilizationWindowSeconds: must not be negative`},
	{"hpa no policies", hpaOld, hpa(scaling("scaleDown", "policies: []")...),
		`13:21: spec.services[0].autoscaler.behavior.scaleDown.policies: must list at least one policy; leave policies out for Kubernetes' default`},
	{"hpa policy type", hpaOld, hpa(scaling("scaleUp", "policies: [{type: Nodes, value: 1, periodSeconds: 15}]")...),
		`13:29: spec.services[0].autoscaler.behavior.scaleUp.policies[0].type: unknown scaling policy type "Nodes"; valid: Pods, Percent`},
	{"hpa policy without type", hpaOld, hpa(scaling("scaleUp", "policies: [{value: 1, periodSeconds: 15}]")...),
		`13:22: spec.services[0].autoscaler.behavior.scaleUp.policies[0].type: is required; valid: Pods, Percent`},
	{"hpa policy value", hpaOld, hpa(scaling("scaleUp", "policies: [{type: Pods, value: 0, periodSeconds: 15}]")...),
		`13:42: spec.services[0].autoscaler.behavior.scaleUp.policies[0].value: must be greater than 0`},
	{"hpa policy long period", hpaOld, hpa(scaling("scaleDown", "policies: [{type: Percent, value: 100, periodSeconds: 1801}]")...),
		`13:65: spec.services[0].autoscaler.behavior.scaleDown.policies[0].periodSeconds: must be at most 1800 (Kubernetes' MaxPeriodSeconds)`},
	{"hpa policy without period", hpaOld, hpa(scaling("scaleDown", "policies: [{type: Pods, value: 1}]")...),
		`13:22: spec.services[0].autoscaler.behavior.scaleDown.policies[0].periodSeconds: must be greater than 0`},
	{"hpa zero sync period", hpaOld, hpa("maxReplicas: 3", "controller: {syncPeriod: 0s}"),
		`11:32: spec.services[0].autoscaler.controller.syncPeriod: must be greater than 0`},
	{"hpa tolerance of 1", hpaOld, hpa("maxReplicas: 3", "controller: {tolerance: 1}"),
		`11:31: spec.services[0].autoscaler.controller.tolerance: must be at least 0 and less than 1: a fraction of the target (0.1 is 10%)`},
	{"hpa negative tolerance", hpaOld, hpa("maxReplicas: 3", "controller: {tolerance: -0.1}"),
		`11:31: spec.services[0].autoscaler.controller.tolerance: must be at least 0 and less than 1`},
	{"hpa zero metric resolution", hpaOld, hpa("maxReplicas: 3", "controller: {metricResolution: 0s}"),
		`11:38: spec.services[0].autoscaler.controller.metricResolution: must be greater than 0`},

	// Pod start, readiness and termination, written on line 10 from column 7.
	{"bad startup delay", "    pod:", "    pod:\n      startupDelay: {distribution: uniform}",
		`10:21: spec.services[0].pod.startupDelay.max: is required by distribution uniform`},
	{"probe period zero", "    pod:", "    pod:\n      readinessProbe: {periodSeconds: 0}",
		`10:39: spec.services[0].pod.readinessProbe.periodSeconds: must be at least 1; Kubernetes reads 0 as its default, 10: leave the field out for that`},
	{"probe negative timeout", "    pod:", "    pod:\n      readinessProbe: {timeoutSeconds: -1}",
		`10:40: spec.services[0].pod.readinessProbe.timeoutSeconds: must be at least 1`},
	{"probe success threshold zero", "    pod:", "    pod:\n      readinessProbe: {successThreshold: 0}",
		`10:42: spec.services[0].pod.readinessProbe.successThreshold: must be at least 1; Kubernetes reads 0 as its default, 1`},
	{"probe negative failure threshold", "    pod:", "    pod:\n      readinessProbe: {failureThreshold: -3}",
		`10:42: spec.services[0].pod.readinessProbe.failureThreshold: must be at least 1`},
	{"probe with two handlers", "    pod:", "    pod:\n      readinessProbe: {httpGet: {path: /ready, port: 8080}, tcpSocket: {port: 8080}}",
		`10:72: spec.services[0].pod.readinessProbe.tcpSocket: a probe has one handler, and httpGet is set too`},
	{"probe negative initial delay", "    pod:", "    pod:\n      readinessProbe: {initialDelaySeconds: -1}",
		`10:45: spec.services[0].pod.readinessProbe.initialDelaySeconds: must not be negative`},
	{"empty preStop", "    pod:", "    pod:\n      lifecycle: {preStop: {}}",
		`10:28: spec.services[0].pod.lifecycle.preStop: needs sleep ({seconds: N}) or exec ({command: [sh, -c, "sleep N"]})`},
	{"preStop sleep and exec", "    pod:", "    pod:\n      lifecycle: {preStop: {sleep: {seconds: 1}, exec: {command: [sleep, 1]}}}",
		`10:56: spec.services[0].pod.lifecycle.preStop.exec: cannot be set with sleep: a hook runs one action; set one`},
	{"preStop negative sleep", "    pod:", "    pod:\n      lifecycle: {preStop: {sleep: {seconds: -1}}}",
		`10:46: spec.services[0].pod.lifecycle.preStop.sleep.seconds: must not be negative`},
	{"preStop exec without command", "    pod:", "    pod:\n      lifecycle: {preStop: {exec: {command: []}}}",
		`10:45: spec.services[0].pod.lifecycle.preStop.exec.command: is required: the command the hook runs, e.g. [sh, -c, "sleep 10"]`},
	{"preStop exec without duration", "    pod:", "    pod:\n      lifecycle: {preStop: {exec: {command: [nginx, -s, quit]}}}",
		"10:35: spec.services[0].pod.lifecycle.preStop.exec.duration: is required: trafficlab cannot tell how long \"nginx -s quit\" runs; only `sleep N`, directly or through `sh -c`, is read from the command"},
	{"negative grace period", "    pod:", "    pod:\n      terminationGracePeriodSeconds: -1",
		`10:38: spec.services[0].pod.terminationGracePeriodSeconds: must not be negative`},
	{"unknown SIGTERM action", "    pod:", "    pod:\n      onSigterm: {action: die}",
		`10:27: spec.services[0].pod.onSigterm.action: unknown SIGTERM action "die"; valid: exit, drain`},
	{"zero drain timeout", "    pod:", "    pod:\n      onSigterm: {action: drain, drainTimeout: 0s}",
		`10:48: spec.services[0].pod.onSigterm.drainTimeout: must be greater than 0; leave it out to drain until SIGKILL`},

	// Client phases, from line 14.
	{"threads with phases", "    threads: 2", "    threads: 2\n    phases: [{threads: 1, duration: 5s}]",
		`14:14: spec.clients[0].threads: cannot be set with phases: each phase sets its own threads or rate`},
	{"rate with phases", "    threads: 2", "    rate: 5/s\n    phases: [{threads: 1, duration: 5s}]",
		`14:11: spec.clients[0].rate: cannot be set with phases: each phase sets its own threads or rate`},
	{"no phases", "    threads: 2", "    phases: []",
		`14:13: spec.clients[0].phases: must list at least one phase; leave phases out to use threads or rate`},
	{"phase threads and rate", "    threads: 2", "    phases:\n    - {threads: 1, rate: 5/s, duration: 5s}",
		`15:26: spec.clients[0].phases[0].rate: cannot be set with threads: threads run a closed loop, rate an open loop; set one`},
	{"phase zero threads", "    threads: 2", "    phases:\n    - {threads: 0, duration: 5s}",
		`15:17: spec.clients[0].phases[0].threads: must be at least 1`},
	{"phase without load", "    threads: 2", "    phases:\n    - {duration: 5s}",
		`15:7: spec.clients[0].phases[0]: needs threads (a closed loop) or rate (an open loop)`},
	{"phase duration and requests", "    threads: 2", "    phases:\n    - {threads: 1, duration: 5s, requests: 10}",
		`15:44: spec.clients[0].phases[0].requests: cannot be set with duration: a phase ends after a duration or after a number of requests; set one`},
	{"phase zero duration", "    threads: 2", "    phases:\n    - {threads: 1, duration: 0s}",
		`15:30: spec.clients[0].phases[0].duration: must be greater than 0`},
	{"phase zero requests", "    threads: 2", "    phases:\n    - {threads: 1, requests: 0}",
		`15:30: spec.clients[0].phases[0].requests: must be at least 1`},
	{"phase without end", "    threads: 2", "    phases:\n    - {threads: 1}",
		`15:7: spec.clients[0].phases[0]: needs duration or requests: when the phase ends`},
	{"phase ramp with threads", "    threads: 2", "    phases:\n    - {threads: 1, duration: 5s, rampTo: 10/s}",
		`15:42: spec.clients[0].phases[0].rampTo: applies only to an open loop (rate): the rate changes from rate to rampTo`},
	{"phase ramp by requests", "    threads: 2", "    phases:\n    - {rate: 5/s, requests: 100, rampTo: 10/s}",
		`15:42: spec.clients[0].phases[0].rampTo: needs duration: the rate ramps over the phase's duration, which a phase by requests does not have`},
	{"phase negative pause", "    threads: 2", "    phases:\n    - {threads: 1, duration: 5s, pause: -1s}",
		`15:41: spec.clients[0].phases[0].pause: negative duration -1s`},
	{"negative repeat", "    threads: 2", "    phases: [{threads: 1, duration: 5s}]\n    repeat: -1",
		`15:13: spec.clients[0].repeat: must be at least 1`},

	// Cluster timing: durations, so never negative.
	{"negative min sync period", "  services:", "  cluster: {minSyncPeriod: -1s}\n  services:",
		`6:28: spec.cluster.minSyncPeriod: negative duration -1s`},
	{"negative propagation jitter", "  services:", "  cluster: {endpointPropagation: {jitter: -1s}}\n  services:",
		`6:43: spec.cluster.endpointPropagation.jitter: negative duration -1s`},
}

func TestLoadErrors(t *testing.T) {
	cases := loadErrorCases
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(edit(t, tc.old, tc.new)), nil)
			if sc != nil || !diags.HasErrors() {
				t.Fatalf("loaded without errors; diagnostics: %v", diags)
			}
			if got := diags.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, tc.want)
			}
		})
	}
}

// A Kubernetes object given as a scenario points at import, at its kind, rather
// than listing every field as unknown; a scenario with a wrong kind does not.
func TestLoadKubernetesObject(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"a Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n",
			"f.yaml:2:7: this is a Deployment (apps/v1), not a Scenario: run `trafficlab import -f f.yaml` to make a scenario from it"},
		{"manifests, a Service first", "# web\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\napiVersion: apps/v1\nkind: Deployment\n",
			"f.yaml:3:7: this is a Service (v1), not a Scenario: run `trafficlab import"},
		{"kubectl get -o yaml", "apiVersion: v1\nitems: []\nkind: List\n",
			"f.yaml:3:7: this is a List (v1), not a Scenario: run `trafficlab import"},
		{"a scenario of the wrong kind", "apiVersion: trafficlab/v1alpha1\nkind: Deployment\n",
			`kind: must be Scenario, got "Deployment"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := Load("f.yaml", []byte(tc.doc), nil)
			if got := diags.Error(); !strings.Contains(got, tc.want) || (strings.Contains(tc.want, "import") != strings.Contains(got, "import")) {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestLoadWarnings(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"service with no replicas", "    replicas: 2", "    replicas: 0",
			`f.yaml:13:13: warning: spec.clients[0].target: service web has 0 replicas: kube-proxy REJECTs its ClusterIP and every connection is refused`},
		{"headless service with no replicas", "    replicas: 2", "    replicas: 0\n    clusterIP: None",
			`f.yaml:14:13: warning: spec.clients[0].target: service web has 0 replicas: DNS answers its name NXDOMAIN and every connection fails, no such host`},
		{"ipvs scheduler without ipvs", "  services:", "  cluster: {ipvsScheduler: lc}\n  services:",
			`f.yaml:6:28: warning: spec.cluster.ipvsScheduler: applies only with proxyMode ipvs; ignored with iptables`},
		{"unused distribution field", "mean: 1ms}", "mean: 1ms, value: 2ms}",
			`f.yaml:10:66: warning: spec.services[0].pod.serviceTime.value: not used by distribution exponential; ignored`},
		{"think time with rate", "    threads: 2", "    rate: 5/s\n    thinkTime: {distribution: constant, value: 1s}",
			`f.yaml:15:16: warning: spec.clients[0].thinkTime: applies only to a closed loop (threads); ignored`},
		{"entryNode with a sidecar", "    threads: 2", "    threads: 2\n    entryNode: worker-0\n    sidecar: {}",
			`f.yaml:15:16: warning: spec.clients[0].entryNode: a client with a sidecar sends through it, not through a node's kube-proxy: ignored`},
		{"maxInFlight with threads", "    threads: 2", "    threads: 2\n    maxInFlight: 3",
			`f.yaml:15:18: warning: spec.clients[0].maxInFlight: applies only to an open loop (rate); ignored`},
		{"drain timeout with exit", "    pod:", "    pod:\n      onSigterm: {drainTimeout: 5s}",
			`f.yaml:10:33: warning: spec.services[0].pod.onSigterm.drainTimeout: applies only to action drain; ignored with exit`},
		{"repeat without phases", "    threads: 2", "    threads: 2\n    repeat: 3",
			`f.yaml:15:13: warning: spec.clients[0].repeat: applies only with phases; ignored`},
		{"replicas above maxReplicas", hpaOld, hpa("maxReplicas: 1"),
			`f.yaml:8:15: warning: spec.services[0].replicas: 2 is above maxReplicas (1): the HPA will scale it to 1 at its first sync`},
		{"replicas below minReplicas", hpaOld, hpa("minReplicas: 3", "maxReplicas: 5"),
			`f.yaml:8:15: warning: spec.services[0].replicas: 2 is below minReplicas (3): the HPA will scale it to 3 at its first sync`},
		{"preStop sleep as long as the grace period", "    pod:", "    pod:\n      terminationGracePeriodSeconds: 10\n      lifecycle: {preStop: {sleep: {seconds: 10}}}",
			`f.yaml:11:46: warning: spec.services[0].pod.lifecycle.preStop.sleep.seconds: the hook runs 10s, not less than terminationGracePeriodSeconds (10): the kubelet cuts it at 10s, then sends SIGTERM and allows the app only 2s more before SIGKILL`},
		{"preStop sleep command longer than the default grace period", "    pod:", "    pod:\n      lifecycle: {preStop: {exec: {command: [sleep, \"45\"]}}}",
			`f.yaml:10:45: warning: spec.services[0].pod.lifecycle.preStop.exec.command: the hook runs 45s, not less than terminationGracePeriodSeconds (30): the kubelet cuts it at 30s`},
		{"preStop exec duration longer than the grace period", "    pod:", "    pod:\n      terminationGracePeriodSeconds: 5\n      lifecycle: {preStop: {exec: {command: [drain.sh], duration: 7500ms}}}",
			`f.yaml:11:67: warning: spec.services[0].pod.lifecycle.preStop.exec.duration: the hook runs 7.5s, not less than terminationGracePeriodSeconds (5): the kubelet cuts it at 5s`},
		{"preStop without grace period", "    pod:", "    pod:\n      terminationGracePeriodSeconds: 0\n      lifecycle: {preStop: {sleep: {seconds: 5}}}",
			`f.yaml:11:28: warning: spec.services[0].pod.lifecycle.preStop: never runs: with terminationGracePeriodSeconds 0 the kubelet skips preStop hooks`},
		{"value of a resource metric", hpaOld, hpa(resourceMetric("cpu", "{type: Utilization, averageUtilization: 50, value: 1}")...),
			`f.yaml:15:70: warning: spec.services[0].autoscaler.metrics[0].resource.target.value: not used by a Resource metric; ignored`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(edit(t, tc.old, tc.new)), nil)
			if sc == nil || diags.HasErrors() {
				t.Fatalf("want a scenario and only warnings, got %v", diags)
			}
			if len(diags) != 1 || !strings.HasPrefix(diags[0].Error(), tc.want) {
				t.Errorf("diagnostics:\n%v\nwant exactly one, starting:\n%s", diags, tc.want)
			}
		})
	}
}

// TestLoadCollectsAll checks that every error is reported, in file order, whatever
// order the checks run in.
func TestLoadCollectsAll(t *testing.T) {
	t.Run("decoding", func(t *testing.T) {
		in := edit(t, "    threads: 2", "    threads: two\n    thread: 2")
		in = strings.Replace(in, "duration: 10s", "duration: 10", 1)
		_, _, diags := Load("f.yaml", []byte(in), nil)
		want := []string{
			`f.yaml:5:13: spec.duration: invalid duration "10": durations need a unit, e.g. 10ms`,
			`f.yaml:14:14: spec.clients[0].threads: expected an integer, got "two"`,
			`f.yaml:15:5: unknown field "thread" in spec.clients[0]`,
		}
		checkLines(t, diags, want)
	})
	t.Run("validation", func(t *testing.T) {
		// The cluster comes last in the file but is checked before services and clients.
		in := edit(t, "    replicas: 2", "    replicas: -2")
		in = strings.Replace(in, "    target: web", "    target: api", 1)
		in += "  cluster: {proxyMode: ebpf}\n"
		_, _, diags := Load("f.yaml", []byte(in), nil)
		want := []string{
			`f.yaml:8:15: spec.services[0].replicas: must not be negative`,
			`f.yaml:13:13: spec.clients[0].target: no service named "api"`,
			`f.yaml:15:24: spec.cluster.proxyMode: unknown proxy mode "ebpf"`,
		}
		checkLines(t, diags, want)
	})
}

// checkLines checks that diags has one line per want, each starting with it.
func checkLines(t *testing.T, diags Diagnostics, want []string) {
	t.Helper()
	got := strings.Split(diags.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%v", len(got), len(want), diags)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("diagnostic %d:\n%s\nwant prefix:\n%s", i, got[i], want[i])
		}
	}
}

func TestLoadEmpty(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "---\n"} {
		_, _, diags := Load("f.yaml", []byte(in), nil)
		want := "f.yaml:1:1: empty file: want a Scenario document (apiVersion: trafficlab/v1alpha1, kind: Scenario)"
		if diags.Error() != want {
			t.Errorf("Load(%q) = %v, want %s", in, diags, want)
		}
	}
}

func TestLoadFile(t *testing.T) {
	_, _, diags := LoadFile("testdata/none.yaml", nil)
	if want := "testdata/none.yaml: no such file or directory"; diags.Error() != want {
		t.Errorf("LoadFile of a missing file: %v, want %s", diags, want)
	}
}

func TestDefaults(t *testing.T) {
	sc, _, diags := Load("f.yaml", []byte(base+"  - {name: open, target: web, rate: 50/s}\n"), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := sc.Spec.Cluster
	if c.ProxyMode != kubeproxy.Iptables || c.IPVSScheduler != "" {
		t.Errorf("proxyMode %q, ipvsScheduler %q; want iptables and none", c.ProxyMode, c.IPVSScheduler)
	}
	if want := []NodePool{{Name: "worker", Count: 3}}; !reflect.DeepEqual(c.Nodes, want) {
		t.Errorf("nodes %+v, want %+v", c.Nodes, want)
	}
	if c.Network.LocalLatency.Duration != 20*time.Microsecond {
		t.Errorf("localLatency %v, want 20us", c.Network.LocalLatency)
	}
	closed, open := sc.Spec.Clients[0], sc.Spec.Clients[1]
	if closed.Replicas != 1 || closed.Timeout.Duration != 30*time.Second || closed.Arrival != "" {
		t.Errorf("closed-loop client: replicas %d, timeout %v, arrival %q; want 1, 30s, none",
			closed.Replicas, closed.Timeout.Duration, closed.Arrival)
	}
	if open.Arrival != ArrivalConstant {
		t.Errorf("open-loop client: arrival %q, want constant", open.Arrival)
	}
	want := Connections{Reuse: ReuseShared, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(0),
		IdleTimeout: &metav1.Duration{}, MaxLifetime: &metav1.Duration{}, Protocol: ProtocolHTTP1}
	if !reflect.DeepEqual(closed.Connections, want) {
		t.Errorf("connections %s, want %s", fmtConn(closed.Connections), fmtConn(want))
	}

	sc, _, diags = Load("f.yaml", []byte(edit(t, "  services:", "  cluster: {proxyMode: ipvs}\n  services:")), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s := sc.Spec.Cluster.IPVSScheduler; s != IPVSRoundRobin {
		t.Errorf("ipvsScheduler with ipvs: %q, want rr", s)
	}
}

func TestDefaultsLibrary(t *testing.T) {
	// Whatever the profiles hold, a client naming one gets its connection values and
	// timeout, and fields the user sets win over them.
	for _, name := range library.Names() {
		p, _ := library.Lookup(name)
		t.Run(name, func(t *testing.T) {
			in := edit(t, "    threads: 2", "    threads: 2\n    library: "+name)
			sc, _, diags := Load("f.yaml", []byte(in), nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			want := Connections{Reuse: p.Reuse, MaxPerHost: &p.MaxPerHost, MaxIdlePerHost: &p.MaxIdlePerHost,
				IdleTimeout: &metav1.Duration{Duration: p.IdleTimeout}, MaxLifetime: &metav1.Duration{Duration: p.MaxLifetime},
				Protocol: p.Protocol}
			if Multiplexed(p.Protocol) {
				want.HTTP2 = defaultWindows(nil, defaultClientStreamWindow, defaultClientConnWindow)
			}
			if p.Protocol == ProtocolGRPC {
				want.LoadBalancing = PickFirst // every gRPC library's default policy
			}
			if got := sc.Spec.Clients[0].Connections; !reflect.DeepEqual(got, want) {
				t.Errorf("connections %s, want the profile's %s", fmtConn(got), fmtConn(want))
			}
			wantTimeout := p.Timeout
			if wantTimeout == 0 {
				wantTimeout = 30 * time.Second
			}
			if got := sc.Spec.Clients[0].Timeout.Duration; got != wantTimeout {
				t.Errorf("timeout %v, want %v", got, wantTimeout)
			}

			in = edit(t, "    threads: 2", "    threads: 2\n    library: "+name+
				"\n    timeout: 7s\n    connections: {reuse: none, maxIdlePerHost: 77, maxLifetime: 5m}")
			sc, _, diags = Load("f.yaml", []byte(in), nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			want.Reuse, want.MaxIdlePerHost, want.MaxLifetime = ReuseNone, ptr(77), &metav1.Duration{Duration: 5 * time.Minute}
			if got := sc.Spec.Clients[0].Connections; !reflect.DeepEqual(got, want) {
				t.Errorf("connections %s, want %s", fmtConn(got), fmtConn(want))
			}
			if got := sc.Spec.Clients[0].Timeout.Duration; got != 7*time.Second {
				t.Errorf("timeout %v, want the explicit 7s", got)
			}
		})
	}
}

// TestDefaultsGo checks one profile by value: Go's DefaultTransport keeps 2 idle
// connections per host for 90s and opens as many as it needs.
func TestDefaultsGo(t *testing.T) {
	sc := mustLoad(t, edit(t, "    threads: 2", "    threads: 2\n    library: go-net-http"))
	want := Connections{Reuse: ReuseShared, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(2),
		IdleTimeout: &metav1.Duration{Duration: 90 * time.Second}, MaxLifetime: &metav1.Duration{}, Protocol: ProtocolHTTP1}
	if got := sc.Spec.Clients[0].Connections; !reflect.DeepEqual(got, want) {
		t.Errorf("connections %s, want %s", fmtConn(got), fmtConn(want))
	}
}

// TestHTTP2 checks that http2, now modelled, loads whether the user or a library's
// profile chooses it. No profile need speak http2 today, so the test plays the
// profile's part between decoding and defaulting.
func TestHTTP2(t *testing.T) {
	sc := mustLoad(t, edit(t, "    threads: 2", "    threads: 2\n    connections: {protocol: http2}"))
	if p := sc.Spec.Clients[0].Connections.Protocol; p != ProtocolHTTP2 {
		t.Errorf("protocol %q, want http2", p)
	}

	in := edit(t, "    threads: 2", "    threads: 2\n    library: go-net-http")
	root, diag := parse("f.yaml", []byte(in))
	if diag != nil {
		t.Fatal(diag)
	}
	var s Scenario
	pos, diags := decode("f.yaml", root, nil, &s)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	s.Spec.Clients[0].Connections.Protocol = ProtocolHTTP2
	setDefaults(&s)
	if diags := validate(&s, pos); len(diags) > 0 {
		t.Errorf("a library speaking http2: %v", diags)
	}
}

func mustLoad(t *testing.T, in string) *Scenario {
	t.Helper()
	sc, _, diags := Load("f.yaml", []byte(in), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return sc
}

func ptr[T any](v T) *T { return &v }

func fmtConn(c Connections) string {
	deref := func(p *int) any {
		if p == nil {
			return nil
		}
		return *p
	}
	dur := func(p *metav1.Duration) any {
		if p == nil {
			return nil
		}
		return p.Duration
	}
	return fmt.Sprintf("{reuse %s, maxPerHost %v, maxIdlePerHost %v, idleTimeout %v, maxLifetime %v, protocol %s}",
		c.Reuse, deref(c.MaxPerHost), deref(c.MaxIdlePerHost), dur(c.IdleTimeout), dur(c.MaxLifetime), c.Protocol)
}

// full is a scenario that sets every kind of optional field, as a user's might.
const full = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: clusterip-reuse, description: uneven load}
spec:
  duration: 60s
  seed: 1
  cluster:
    proxyMode: iptables        # iptables | nftables | ipvs | userspace
    nodes:
    - {name: worker, count: 3, cpu: "2"}
    - {name: big, count: 1}
    network: {latency: 100us, localLatency: 10us}
  services:
  - name: webapp1
    replicas: 5
    pod:
      cpu: "1"
      concurrency: 0
      serviceTime: {distribution: exponential, mean: 1ms}
      waitTime: {distribution: lognormal, mean: 2ms, p99: 20ms}
      acceptCost: 50us
  - name: db
    replicas: 1
    pod:
      cpu: 500m
      serviceTime: {distribution: empirical, samples: [1ms, 2ms, 10ms]}
  clients:
  - name: caller
    target: webapp1
    replicas: 1
    threads: 5
    timeout: 10s
    thinkTime: {distribution: uniform, min: 1ms, max: 3ms}
    overhead: 2ms
    connections:
      reuse: per-thread
      maxPerHost: 0
      protocol: http1
  - name: loader
    target: db
    replicas: 2
    rate: 1000/s
    arrival: poisson
    maxInFlight: 64
    connections: {reuse: none, idleTimeout: 1m30s}
`

// cpuResources is a container's resources with only a cpu limit, after defaulting.
func cpuResources(cpu string) corev1.ResourceRequirements {
	q := resource.MustParse(cpu)
	return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q}, Requests: corev1.ResourceList{corev1.ResourceCPU: q}}
}

// fullDecoded is the Scenario full decodes to, its defaults filled in.
func fullDecoded() *Scenario {
	ms := func(n float64) metav1.Duration {
		return metav1.Duration{Duration: time.Duration(n * float64(time.Millisecond))}
	}
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	startup := &Distribution{Distribution: DistConstant, Value: ms(2000)}
	return &Scenario{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   Metadata{Name: "clusterip-reuse", Description: "uneven load"},
		Spec: Spec{
			Duration: ms(60000),
			Seed:     1,
			Cluster: Cluster{
				ProxyMode: kubeproxy.Iptables,
				Nodes:     []NodePool{{Name: "worker", Count: 3, CPU: q("2")}, {Name: "big", Count: 1}},
				Network:   Network{Latency: ms(0.1), LocalLatency: ptr(ms(0.01)), CongestionControl: CongestionCubic},
				// Defaults.
				EndpointPropagation: EndpointPropagation{Latency: ptr(ms(200)), Jitter: ptr(ms(300))},
				MinSyncPeriod:       ptr(ms(1000)),
				PodNetworkTeardown:  ptr(ms(1000)),
			},
			Services: []Service{
				{Name: "webapp1", Replicas: 5, Pod: Pod{
					CPU:         q("1"),
					ServiceTime: Distribution{Distribution: DistExponential, Mean: ms(1)},
					// The cpu limit, and the request the API server defaults from it.
					Resources:  cpuResources("1"),
					WaitTime:   &Distribution{Distribution: DistLognormal, Mean: ms(2), P99: ms(20)},
					AcceptCost: ms(0.05),
					// Defaults.
					StartupDelay:                  startup,
					TerminationGracePeriodSeconds: ptr[int64](30),
					OnSigterm:                     OnSigterm{Action: SigtermExit},
					ResponseBytes:                 ptr[int64](200),
					MaxConcurrentStreams:          ptr(250),
					HTTP2:                         goServerWindows(),
				}, Strategy: rollingUpdate(ptr(intstr.FromString("25%")), ptr(intstr.FromString("25%")))},
				{Name: "db", Replicas: 1, Pod: Pod{
					CPU:         q("500m"),
					Resources:   cpuResources("500m"),
					ServiceTime: Distribution{Distribution: DistEmpirical, Samples: []metav1.Duration{ms(1), ms(2), ms(10)}},
					// Defaults.
					StartupDelay:                  startup,
					TerminationGracePeriodSeconds: ptr[int64](30),
					OnSigterm:                     OnSigterm{Action: SigtermExit},
					ResponseBytes:                 ptr[int64](200),
					MaxConcurrentStreams:          ptr(250),
					HTTP2:                         goServerWindows(),
				}, Strategy: rollingUpdate(ptr(intstr.FromString("25%")), ptr(intstr.FromString("25%")))},
			},
			Clients: []Client{
				{Name: "caller", Target: "webapp1", Replicas: 1, Threads: 5, Timeout: ptr(ms(10000)),
					ThinkTime: &Distribution{Distribution: DistUniform, Min: ms(1), Max: ms(3)},
					Overhead:  ms(2),
					Connections: Connections{Reuse: ReusePerThread, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(0),
						IdleTimeout: ptr(ms(0)), MaxLifetime: ptr(ms(0)), Protocol: ProtocolHTTP1},
					Repeat: 1, Request: Request{Method: "GET", HeaderBytes: ptr[int64](200)},
					Work: ClientWork{PerRequest: ptr(ms(0)), PerConnection: ptr(ms(0)), Steady: resource.NewMilliQuantity(0, resource.DecimalSI)}},
				{Name: "loader", Target: "db", Replicas: 2, Rate: &Rate{PerSecond: 1000}, Arrival: ArrivalPoisson,
					MaxInFlight: 64, Timeout: ptr(ms(30000)),
					Connections: Connections{Reuse: ReuseNone, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(0),
						IdleTimeout: ptr(ms(90000)), MaxLifetime: ptr(ms(0)), Protocol: ProtocolHTTP1},
					Repeat: 1, Request: Request{Method: "GET", HeaderBytes: ptr[int64](200)},
					Work: ClientWork{PerRequest: ptr(ms(0)), PerConnection: ptr(ms(0)), Steady: resource.NewMilliQuantity(0, resource.DecimalSI)}},
			},
			Report: Report{Samples: ptr(10000), SlowThreshold: ptr(ms(500))},
		},
	}
}

func TestLoadFull(t *testing.T) {
	sc, pos, diags := Load("f.yaml", []byte(full), nil)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	want := fullDecoded()
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", sc, want)
	}

	for path, want := range map[string][2]int{
		"":                          {1, 1},
		"spec":                      {5, 3},
		"spec.cluster.nodes[0].cpu": {10, 37},
		"spec.services[1]":          {22, 5},
		"spec.services[1].pod.cpu":  {25, 12},
		"spec.services[1].pod.serviceTime.samples[2]": {26, 66},
		"spec.clients[0].target":                      {29, 13},
		"spec.clients[1].connections.idleTimeout":     {45, 45},
	} {
		line, col, ok := pos.Lookup(path)
		if !ok || line != want[0] || col != want[1] {
			t.Errorf("Lookup(%q) = %d, %d, %v; want %d, %d", path, line, col, ok, want[0], want[1])
		}
	}
	if _, _, ok := pos.Lookup("spec.clients[0].rate"); ok {
		t.Error("Lookup of an absent field is ok")
	}
}

// secs is n seconds as a scenario duration.
func secs(n float64) *metav1.Duration {
	return &metav1.Duration{Duration: time.Duration(n * float64(time.Second))}
}

// preStopOf is the preStop hook of the first service's pods.
func preStopOf(sc *Scenario) *LifecycleHandler { return sc.Spec.Services[0].Pod.Lifecycle.PreStop }

// lifecycleAutoscalerPhasesCases are edits of the base scenario that give Kubernetes-shaped
// fields, each with its check of the decoded Scenario.
var lifecycleAutoscalerPhasesCases = []struct {
	name, old, new string
	check          func(t *testing.T, sc *Scenario)
}{
	{"hpa spec", hpaOld, hpa(
		"maxReplicas: 10",
		"metrics:",
		"- type: Resource",
		"  resource: {name: cpu, target: {type: AverageValue, averageValue: 500m}}",
		"behavior:",
		"  scaleUp: {policies: [{type: Percent, value: 200, periodSeconds: 30}], selectPolicy: Min}",
		"  scaleDown: {stabilizationWindowSeconds: 60, selectPolicy: Disabled}",
		"controller: {syncPeriod: 10s, tolerance: 0.05}"),
		func(t *testing.T, sc *Scenario) {
			a := sc.Spec.Services[0].Autoscaler
			if *a.MinReplicas != 1 || a.MaxReplicas != 10 {
				t.Errorf("replicas [%d, %d], want [1, 10]", *a.MinReplicas, a.MaxReplicas)
			}
			r := a.Metrics[0].Resource
			if a.Metrics[0].Type != autoscalingv2.ResourceMetricSourceType || r.Name != corev1.ResourceCPU ||
				r.Target.Type != autoscalingv2.AverageValueMetricType || r.Target.AverageValue.Cmp(resource.MustParse("500m")) != 0 {
				t.Errorf("metric %+v, want a Resource cpu metric of average value 500m", a.Metrics[0])
			}
			up := a.Behavior.ScaleUp
			wantUp := []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 200, PeriodSeconds: 30}}
			if !reflect.DeepEqual(up.Policies, wantUp) || *up.SelectPolicy != autoscalingv2.MinChangePolicySelect || up.StabilizationWindowSeconds != nil {
				t.Errorf("scaleUp %+v, want policies %+v, selectPolicy Min and no window", up, wantUp)
			}
			down := a.Behavior.ScaleDown
			if *down.StabilizationWindowSeconds != 60 || *down.SelectPolicy != autoscalingv2.DisabledPolicySelect || down.Policies != nil {
				t.Errorf("scaleDown %+v, want window 60, selectPolicy Disabled, no policies (the hpa package's default)", down)
			}
			c := a.Controller
			if c.SyncPeriod.Duration != 10*time.Second || *c.Tolerance != 0.05 || c.MetricResolution.Duration != 15*time.Second ||
				c.DownscaleStabilization.Duration != 5*time.Minute || c.CPUInitializationPeriod.Duration != 5*time.Minute ||
				c.InitialReadinessDelay.Duration != 30*time.Second {
				t.Errorf("controller %+v, want the given sync period and tolerance and the defaults", c)
			}
		}},
	{"hpa default metric", hpaOld, hpa("maxReplicas: 5"),
		func(t *testing.T, sc *Scenario) {
			want := []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr[int32](80)}},
			}}
			if got := sc.Spec.Services[0].Autoscaler.Metrics; !reflect.DeepEqual(got, want) {
				t.Errorf("metrics %+v, want 80%% CPU utilization", got)
			}
			if sc.Spec.Services[0].Autoscaler.Behavior != nil {
				t.Error("behavior defaulted; the hpa package applies Kubernetes' rules")
			}
		}},
	{"preStop sh -c sleep", "    pod:", "    pod:\n      lifecycle: {preStop: {exec: {command: [sh, -c, \"sleep 10\"]}}}",
		func(t *testing.T, sc *Scenario) {
			if d := preStopOf(sc).Exec.Duration; !reflect.DeepEqual(d, secs(10)) {
				t.Errorf("duration %v, want 10s", d)
			}
		}},
	{"preStop sleep", "    pod:", "    pod:\n      lifecycle: {preStop: {exec: {command: [\"sleep\", \"5\"]}}}",
		func(t *testing.T, sc *Scenario) {
			if d := preStopOf(sc).Exec.Duration; !reflect.DeepEqual(d, secs(5)) {
				t.Errorf("duration %v, want 5s", d)
			}
		}},
	{"preStop bash -c sleep with a unit", "    pod:", "    pod:\n      lifecycle: {preStop: {exec: {command: [/bin/bash, -c, \"sleep 1.5s\"]}}}",
		func(t *testing.T, sc *Scenario) {
			if d := preStopOf(sc).Exec.Duration; !reflect.DeepEqual(d, secs(1.5)) {
				t.Errorf("duration %v, want 1.5s", d)
			}
		}},
	{"preStop exec with its duration", "    pod:", "    pod:\n      lifecycle: {preStop: {exec: {command: [sleep, \"5\"], duration: 3s}}}",
		func(t *testing.T, sc *Scenario) {
			if d := preStopOf(sc).Exec.Duration; !reflect.DeepEqual(d, secs(3)) {
				t.Errorf("duration %v, want the given 3s", d)
			}
		}},
	{"pod lifecycle", "    pod:", "    pod:\n" +
		"      startupDelay: {distribution: uniform, min: 1s, max: 3s}\n" +
		"      readinessProbe: {initialDelaySeconds: 2, periodSeconds: 1}\n" +
		"      lifecycle: {preStop: {sleep: {seconds: 5}}}\n" +
		"      terminationGracePeriodSeconds: 20\n" +
		"      onSigterm: {action: drain, drainTimeout: 10s}",
		func(t *testing.T, sc *Scenario) {
			p := sc.Spec.Services[0].Pod
			want := Pod{
				ServiceTime:                   p.ServiceTime,
				StartupDelay:                  &Distribution{Distribution: DistUniform, Min: *secs(1), Max: *secs(3)},
				ReadinessProbe:                &Probe{InitialDelaySeconds: 2, PeriodSeconds: ptr[int32](1), TimeoutSeconds: ptr[int32](1), SuccessThreshold: ptr[int32](1), FailureThreshold: ptr[int32](3)},
				Lifecycle:                     &Lifecycle{PreStop: &LifecycleHandler{Sleep: &SleepAction{Seconds: 5}}},
				TerminationGracePeriodSeconds: ptr[int64](20),
				OnSigterm:                     OnSigterm{Action: SigtermDrain, DrainTimeout: secs(10)},
				ResponseBytes:                 ptr[int64](200),
				MaxConcurrentStreams:          ptr(250),
				HTTP2:                         goServerWindows(),
			}
			if !reflect.DeepEqual(p, want) {
				t.Errorf("pod\n%+v\nwant\n%+v", p, want)
			}
		}},
	{"phases with repeat", "    threads: 2", "    repeat: 3\n    phases:\n" +
		"    - {name: warm-up, threads: 2, duration: 10s, pause: 1s}\n" +
		"    - {name: ramp, rate: 10/s, rampTo: 100/s, duration: 30s}\n" +
		"    - {name: burst, rate: 50/s, requests: 1000}",
		func(t *testing.T, sc *Scenario) {
			c := sc.Spec.Clients[0]
			want := []Phase{
				{Name: "warm-up", Threads: 2, Duration: secs(10), Pause: secs(1)},
				{Name: "ramp", Rate: &Rate{PerSecond: 10}, RampTo: &Rate{PerSecond: 100}, Duration: secs(30)},
				{Name: "burst", Rate: &Rate{PerSecond: 50}, Requests: 1000},
			}
			if !reflect.DeepEqual(c.Phases, want) || c.Repeat != 3 {
				t.Errorf("phases %+v repeated %d, want %+v repeated 3", c.Phases, c.Repeat, want)
			}
			// Some phases are open loops, so the arrival process takes its default.
			if c.Threads != 0 || c.Rate != nil || c.Arrival != ArrivalConstant {
				t.Errorf("threads %d, rate %v, arrival %q; want none, none, constant", c.Threads, c.Rate, c.Arrival)
			}
		}},
	{"cluster timing", "  services:", "  cluster:\n    endpointPropagation: {latency: 1s, jitter: 0s}\n    minSyncPeriod: 0s\n    podNetworkTeardown: 2s\n  services:",
		func(t *testing.T, sc *Scenario) {
			c := sc.Spec.Cluster
			if !reflect.DeepEqual(c.EndpointPropagation, EndpointPropagation{Latency: secs(1), Jitter: secs(0)}) ||
				!reflect.DeepEqual(c.MinSyncPeriod, secs(0)) || !reflect.DeepEqual(c.PodNetworkTeardown, secs(2)) {
				t.Errorf("cluster %+v, want propagation 1s+0s, minSyncPeriod 0s, teardown 2s", c)
			}
		}},
}

// TestLoadLifecycleAutoscalerPhases checks that the Kubernetes-shaped fields decode into
// their types and take their defaults.
func TestLoadLifecycleAutoscalerPhases(t *testing.T) {
	cases := lifecycleAutoscalerPhasesCases
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(edit(t, tc.old, tc.new)), nil)
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			tc.check(t, sc)
		})
	}
}

// TestAutoscalerAtZero checks that a Deployment at 0 replicas, which Kubernetes does
// not autoscale, is pointed out whether the 0 is written or left out.
func TestAutoscalerAtZero(t *testing.T) {
	cases := []struct {
		name, new string
		want      []string
	}{
		{"written", "    replicas: 0\n    autoscaler: {maxReplicas: 3}\n    pod:\n      cpu: 1", []string{
			`f.yaml:8:15: warning: spec.services[0].replicas: 0 replicas disable the HPA: Kubernetes does not autoscale a Deployment at 0 replicas`,
			`f.yaml:15:13: warning: spec.clients[0].target: service web has 0 replicas`,
		}},
		{"left out", "    autoscaler: {maxReplicas: 3}\n    pod:\n      cpu: 1", []string{
			`f.yaml:7:5: warning: spec.services[0].replicas: is not set, so the Deployment starts with 0 pods and the HPA never scales it (Kubernetes disables autoscaling at 0 replicas); set replicas, e.g. to minReplicas (1)`,
			`f.yaml:14:13: warning: spec.clients[0].target: service web has 0 replicas`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(edit(t, hpaOld, tc.new)), nil)
			if sc == nil {
				t.Fatal(diags)
			}
			checkLines(t, diags, tc.want)
		})
	}
}

func TestSleepCommand(t *testing.T) {
	cases := []struct {
		cmd  []string
		want time.Duration // -1: not read
	}{
		{[]string{"sleep", "5"}, 5 * time.Second},
		{[]string{"/bin/sleep", "0.25"}, 250 * time.Millisecond},
		{[]string{"sh", "-c", "sleep 10"}, 10 * time.Second},
		{[]string{"/bin/sh", "-c", "  sleep   2m "}, 2 * time.Minute},
		{[]string{"sleep", "1h"}, time.Hour},
		{[]string{"sleep", "1d"}, 24 * time.Hour},
		{[]string{"sleep", "0"}, 0},
		{[]string{"sleep", "infinity"}, -1},
		{[]string{"sleep", "-1"}, -1},
		{[]string{"sleep", "1ms"}, -1},
		{[]string{"sleep", "s"}, -1},
		{[]string{"sleep"}, -1},
		{[]string{"sleep", "1", "2"}, -1},
		{[]string{"sh", "-c", "sleep 5 && nginx -s quit"}, -1},
		{[]string{"python", "-c", "sleep 5"}, -1},
		{[]string{"nginx", "-s", "quit"}, -1},
		{[]string{"asleep", "5"}, -1},
		{nil, -1},
	}
	for _, tc := range cases {
		got, ok := SleepCommand(tc.cmd)
		if !ok {
			got = -1
		}
		if got != tc.want {
			t.Errorf("SleepCommand(%q) = %v, %v; want %v", tc.cmd, got, ok, tc.want)
		}
	}
}

// goServerWindows are Go's HTTP/2 server receive windows, the pods' default.
func goServerWindows() *HTTP2Windows {
	return &HTTP2Windows{StreamWindowBytes: ptr[int64](1 << 20), ConnectionWindowBytes: ptr[int64](1 << 20)}
}
