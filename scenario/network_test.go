package scenario

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// netBase is a valid scenario with a node pool, a service without an autoscaler (web,
// 2 replicas), one with an autoscaler (api) and a client (caller, 1 replica), for
// selectors to name. The helpers below add to it at known lines.
const netBase = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  duration: 10s
  cluster:
    nodes: [{name: worker, count: 3}]
    network:
      latency: 100us
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  - name: api
    replicas: 1
    autoscaler: {maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, target: {type: AverageValue, averageValue: 500m}}}]}
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: caller
    target: web
    threads: 2
`

// network adds lines to spec.cluster.network from line 10, column 7.
func network(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("      " + l + "\n")
	}
	return strings.Replace(netBase, "      latency: 100us\n", "      latency: 100us\n"+b.String(), 1)
}

// links adds link overrides: "links:" on line 10, the first item's mapping on line 11
// from column 9.
func links(lines ...string) string {
	return network(append([]string{"links:"}, lines...)...)
}

// faults adds spec.faults, one item per line, the first on line 25 from column 5.
func faults(items ...string) string {
	var b strings.Builder
	b.WriteString(netBase + "  faults:\n")
	for _, f := range items {
		b.WriteString("  - " + f + "\n")
	}
	return b.String()
}

// caller adds a line to the client, on line 24 from column 5.
func caller(line string) string { return netBase + "    " + line + "\n" }

// webPod adds a line to the web service's pod, on line 15 from column 7.
func webPod(line string) string {
	return strings.Replace(netBase, "mean: 1ms}\n", "mean: 1ms}\n      "+line+"\n", 1)
}

// report adds spec.report on line 24: the value from column 11.
func report(value string) string { return netBase + "  report: " + value + "\n" }

func TestNetBase(t *testing.T) {
	if _, _, diags := Load("f.yaml", []byte(netBase), nil); len(diags) > 0 {
		t.Fatal(diags)
	}
}

const units = "use bit, kbit, mbit, gbit or tbit for bits per second, or bps, kbps, mbps, gbps or tbps for BYTES per second (as in tc: 100mbps is 800mbit)"
const selectorKinds = "one of service, client, pod or node"

// networkErrorCases are bad input; FuzzLoad starts from them too.
var networkErrorCases = []struct {
	name, in string
	want     string // every diagnostic, one per line
}{
	// Percentages and bandwidths, decoded.
	{"loss without percent sign", network("loss: 3"),
		`f.yaml:10:13: spec.cluster.network.loss: invalid percentage "3": write it with a percent sign, e.g. "3%"`},
	{"loss as a fraction", network("loss: 0.5"),
		`f.yaml:10:13: spec.cluster.network.loss: invalid percentage "0.5": write it with a percent sign, e.g. "0.5%", or "50%" if 0.5 is a fraction`},
	{"quoted loss without percent sign", network(`loss: "3"`),
		`f.yaml:10:13: spec.cluster.network.loss: invalid percentage "3": write it with a percent sign, e.g. "3%"`},
	{"loss above 100%", network("loss: 150%"),
		`f.yaml:10:13: spec.cluster.network.loss: invalid percentage "150%": must be between 0% and 100%`},
	{"negative loss", network("loss: -1%"),
		`f.yaml:10:13: spec.cluster.network.loss: invalid percentage "-1%": must be between 0% and 100%`},
	{"loss not a number", network("loss: lots"),
		`f.yaml:10:13: spec.cluster.network.loss: invalid percentage "lots": want a number and a percent sign, e.g. "3%"`},
	{"loss as a list", network("loss: [3%]"),
		`f.yaml:10:13: spec.cluster.network.loss: expected a percentage such as "3%", got a list`},
	{"zero bandwidth", network("bandwidth: 0mbit"),
		`f.yaml:10:18: spec.cluster.network.bandwidth: invalid bandwidth "0mbit": must be greater than 0`},
	{"bandwidth without unit", network("bandwidth: 100"),
		`f.yaml:10:18: spec.cluster.network.bandwidth: invalid bandwidth "100": give a unit, e.g. 100mbit (megabits per second) or 100mbps (megabytes per second, as tc reads it)`},
	{"bandwidth unknown unit", network("bandwidth: 100mb"),
		`f.yaml:10:18: spec.cluster.network.bandwidth: invalid bandwidth "100mb": unknown unit "mb"; ` + units},
	{"bandwidth as a mapping", network("bandwidth: {rate: 1}"),
		`f.yaml:10:18: spec.cluster.network.bandwidth: expected a bandwidth such as 100mbit, got a mapping`},
	{"negative jitter", network("jitter: -1ms"),
		`f.yaml:10:15: spec.cluster.network.jitter: negative duration -1ms`},
	{"negative latency", strings.Replace(netBase, "latency: 100us", "latency: -1ms", 1),
		`f.yaml:9:16: spec.cluster.network.latency: negative duration -1ms`},

	// The cluster's network.
	{"jitter distribution without jitter", network("jitterDistribution: normal"),
		`f.yaml:10:27: spec.cluster.network.jitterDistribution: applies only with jitter (in the same link); set jitter or leave jitterDistribution out`},
	{"unknown congestion control", network("congestionControl: bbr"),
		`f.yaml:10:26: spec.cluster.network.congestionControl: unknown congestion control "bbr"; valid: cubic, reno`},
	{"unknown jitter distribution", network("jitter: 1ms", "jitterDistribution: pareto"),
		`f.yaml:11:27: spec.cluster.network.jitterDistribution: unknown jitter distribution "pareto"; valid: uniform, normal`},
	{"correlation without loss", network("correlation: 25%"),
		`f.yaml:10:20: spec.cluster.network.correlation: applies only with loss (in the same link): it makes losses come in bursts; set loss or leave correlation out`},

	// Link overrides and selectors.
	{"link without target", links("- link: {loss: 1%}"),
		`f.yaml:11:9: spec.cluster.network.links[0].target: is required: ` + selectorKinds + `, e.g. {service: web}`},
	{"empty target", links("- target: {}", "  link: {loss: 1%}"),
		`f.yaml:11:17: spec.cluster.network.links[0].target: must set ` + selectorKinds + `, e.g. {service: web}`},
	{"null target field", links("- target: {service: }", "  link: {loss: 1%}"),
		`f.yaml:11:27: spec.cluster.network.links[0].target.service: must name a service`},
	{"two target fields", links("- target: {service: web, pod: web-0}", "  link: {loss: 1%}"),
		`f.yaml:11:37: spec.cluster.network.links[0].target.pod: cannot be set with service: a selector picks ` + selectorKinds},
	{"misspelt service", links("- target: {service: wbe}", "  link: {loss: 1%}"),
		`f.yaml:11:27: spec.cluster.network.links[0].target.service: no service named "wbe"; did you mean "web"?`},
	{"unknown service", links("- target: {service: nope}", "  link: {loss: 1%}"),
		`f.yaml:11:27: spec.cluster.network.links[0].target.service: no service named "nope"; services: api, web`},
	{"misspelt client", links("- target: {client: callr}", "  link: {loss: 1%}"),
		`f.yaml:11:26: spec.cluster.network.links[0].target.client: no client named "callr"; did you mean "caller"?`},
	{"pod beyond replicas", links("- target: {pod: web-2}", "  link: {loss: 1%}"),
		`f.yaml:11:23: spec.cluster.network.links[0].target.pod: no pod web-2: service web has 2 replicas and no autoscaler, so its pods are web-0 and web-1`},
	{"client pod beyond replicas", links("- target: {pod: caller-1}", "  link: {loss: 1%}"),
		`f.yaml:11:23: spec.cluster.network.links[0].target.pod: no pod caller-1: client caller has 1 replica, so its only pod is caller-0`},
	{"not a pod name", links("- target: {pod: web}", "  link: {loss: 1%}"),
		`f.yaml:11:23: spec.cluster.network.links[0].target.pod: "web" is not a pod name: pods are named SERVICE-N or CLIENT-N, e.g. api-0`},
	{"pod with a leading zero", links("- target: {pod: web-01}", "  link: {loss: 1%}"),
		`f.yaml:11:23: spec.cluster.network.links[0].target.pod: "web-01" is not a pod name: pods are named SERVICE-N or CLIENT-N, e.g. api-0`},
	{"pod of a misspelt service", links("- target: {pod: wbe-0}", "  link: {loss: 1%}"),
		`f.yaml:11:23: spec.cluster.network.links[0].target.pod: no pod wbe-0: no service or client named "wbe"; did you mean web-0?`},
	{"node beyond the pool", links("- target: {node: worker-3}", "  link: {loss: 1%}"),
		`f.yaml:11:24: spec.cluster.network.links[0].target.node: no node worker-3: node pool worker has 3 nodes, so its nodes are worker-0 to worker-2`},
	{"node of an unknown pool", links("- target: {node: big-0}", "  link: {loss: 1%}"),
		`f.yaml:11:24: spec.cluster.network.links[0].target.node: no node big-0: no node pool named "big"; node pools: worker`},
	{"not a node name", links("- target: {node: worker}", "  link: {loss: 1%}"),
		`f.yaml:11:24: spec.cluster.network.links[0].target.node: "worker" is not a node name: nodes are named POOL-N, e.g. worker-0`},
	{"empty peer", links("- target: {service: web}", "  peer: {}", "  link: {loss: 1%}"),
		`f.yaml:12:15: spec.cluster.network.links[0].peer: must set ` + selectorKinds + `, e.g. {service: web}`},
	{"unknown peer", links("- target: {service: web}", "  peer: {client: other}", "  link: {loss: 1%}"),
		`f.yaml:12:24: spec.cluster.network.links[0].peer.client: no client named "other"; clients: caller`},
	{"link direction", links("- target: {service: web}", "  direction: sideways", "  link: {loss: 1%}"),
		`f.yaml:12:20: spec.cluster.network.links[0].direction: unknown direction "sideways"; valid: to, from, both`},
	{"empty link", links("- target: {service: web}", "  link: {}"),
		`f.yaml:12:15: spec.cluster.network.links[0].link: must set at least one of latency, jitter, jitterDistribution, bandwidth, loss, correlation, gilbertElliott`},
	{"no link", links("- target: {service: web}"),
		`f.yaml:11:9: spec.cluster.network.links[0].link: must set at least one of latency, jitter, jitterDistribution, bandwidth, loss, correlation, gilbertElliott`},
	{"link jitter distribution without jitter", network("jitter: 1ms", "links:", "- target: {service: web}", "  link: {jitterDistribution: normal}"),
		`f.yaml:13:36: spec.cluster.network.links[0].link.jitterDistribution: applies only with jitter (in the same link); set jitter or leave jitterDistribution out`},
	{"link correlation without loss", network("loss: 1%", "links:", "- target: {service: web}", "  link: {correlation: 10%}"),
		`f.yaml:13:29: spec.cluster.network.links[0].link.correlation: applies only with loss (in the same link): it makes losses come in bursts; set loss or leave correlation out`},
	{"client windows with http1", caller("connections: {protocol: http1, http2: {streamWindowBytes: 1Mi}}"),
		`f.yaml:24:43: spec.clients[0].connections.http2: applies only with protocol: http2 or grpc`},
	{"zero stream window", webPod("http2: {streamWindowBytes: 0}"),
		`f.yaml:15:34: spec.services[0].pod.http2.streamWindowBytes: must be from 1 to 2147483647 bytes (RFC 9113 section 6.9.1)`},
	{"gilbert-elliott with loss", network("loss: 1%", "gilbertElliott: {p: 1%, r: 25%}"),
		`f.yaml:11:23: spec.cluster.network.gilbertElliott: replaces loss and correlation in the same link; use one or the other`},
	{"gilbert-elliott without r", links("- target: {service: web}", "  link: {gilbertElliott: {p: 1%}}"),
		`f.yaml:12:32: spec.cluster.network.links[0].link.gilbertElliott: r is required: the chance per packet to go from the bad state back to the good one`},
	{"gilbert-elliott percent", network("gilbertElliott: {p: 0.01, r: 25%}"),
		`f.yaml:10:27: spec.cluster.network.gilbertElliott.p: invalid percentage "0.01": write it with a percent sign, e.g. "0.01%", or "1%" if 0.01 is a fraction`},
	{"link unknown jitter distribution", links("- target: {service: web}", "  link: {jitter: 1ms, jitterDistribution: gauss}"),
		`f.yaml:12:49: spec.cluster.network.links[0].link.jitterDistribution: unknown jitter distribution "gauss"; valid: uniform, normal`},
	{"link bad loss", links("- target: {service: web}", "  link: {loss: 2}"),
		`f.yaml:12:22: spec.cluster.network.links[0].link.loss: invalid percentage "2": write it with a percent sign, e.g. "2%"`},

	// Faults.
	{"fault without kind", faults("{loss: 3%, target: {service: web}}"),
		`f.yaml:25:5: spec.faults[0].kind: is required; valid: loss, delay, bandwidth, partition, pod-kill`},
	{"unknown fault kind", faults("{kind: jam, target: {service: web}}"),
		`f.yaml:25:12: spec.faults[0].kind: unknown fault kind "jam"; valid: loss, delay, bandwidth, partition, pod-kill`},
	{"duplicate fault name", faults("{name: x, kind: partition, target: {service: web}}", "{name: x, kind: partition, target: {service: api}}"),
		`f.yaml:26:12: spec.faults[1].name: duplicate fault name "x" (also spec.faults[0])`},
	{"fault after the run", faults("{kind: partition, start: 10s, target: {service: web}}"),
		`f.yaml:25:30: spec.faults[0].start: must be less than spec.duration (10s): the fault would never happen`},
	{"fault ending at its start", faults("{kind: partition, start: 5s, end: 5s, target: {service: web}}"),
		`f.yaml:25:39: spec.faults[0].end: must be after start (5s)`},
	{"fault ending after the run", faults("{kind: partition, end: 11s, target: {service: web}}"),
		`f.yaml:25:28: spec.faults[0].end: must not be after spec.duration (10s); leave end out to last until the end of the run`},
	{"negative start", faults("{kind: partition, start: -1s, target: {service: web}}"),
		`f.yaml:25:30: spec.faults[0].start: negative duration -1s`},
	{"loss without loss", faults("{kind: loss, target: {service: web}}"),
		`f.yaml:25:5: spec.faults[0].loss: is required by kind loss: the share of packets dropped, e.g. "3%"`},
	{"delay without latency", faults("{kind: delay, jitter: 1ms, target: {service: web}}"),
		`f.yaml:25:5: spec.faults[0].latency: is required by kind delay: the delay added to each packet, e.g. 50ms`},
	{"bandwidth without rate", faults("{kind: bandwidth, target: {service: web}}"),
		`f.yaml:25:5: spec.faults[0].rate: is required by kind bandwidth: the rate packets are held to, e.g. 10mbit`},
	{"latency with loss", faults("{kind: loss, loss: 3%, latency: 10ms, target: {service: web}}"),
		`f.yaml:25:37: spec.faults[0].latency: does nothing with kind loss; use kind: delay, in a fault of its own to have both`},
	{"correlation with delay", faults("{kind: delay, latency: 10ms, correlation: 5%, target: {service: web}}"),
		`f.yaml:25:47: spec.faults[0].correlation: does nothing with kind delay; use kind: loss, in a fault of its own to have both`},
	{"rate with loss", faults("{kind: loss, loss: 3%, rate: 1mbit, target: {service: web}}"),
		`f.yaml:25:34: spec.faults[0].rate: does nothing with kind loss; use kind: bandwidth, in a fault of its own to have both`},
	{"loss with partition", faults("{kind: partition, loss: 50%, target: {service: web}}"),
		`f.yaml:25:29: spec.faults[0].loss: does nothing with kind partition, which drops every packet; use kind: loss`},
	{"rate with pod-kill", faults("{kind: pod-kill, rate: 1mbit, target: {service: web}}"),
		`f.yaml:25:28: spec.faults[0].rate: does nothing with kind pod-kill, which deletes the target's pods; use kind: bandwidth`},
	{"direction with pod-kill", faults("{kind: pod-kill, direction: to, target: {service: web}}"),
		`f.yaml:25:33: spec.faults[0].direction: does nothing with kind pod-kill, which deletes the target's pods`},
	{"peer with pod-kill", faults("{kind: pod-kill, target: {service: web}, peer: {service: api}}"),
		`f.yaml:25:52: spec.faults[0].peer: does nothing with kind pod-kill, which deletes the target's pods`},
	{"end with pod-kill", faults("{kind: pod-kill, start: 1s, end: 2s, target: {service: web}}"),
		`f.yaml:25:38: spec.faults[0].end: does nothing with kind pod-kill, which deletes the pods at start; leave end out`},
	{"pod-kill of a client", faults("{kind: pod-kill, target: {client: caller}}"),
		`f.yaml:25:39: spec.faults[0].target.client: cannot be a client with kind pod-kill: pod-kill deletes service pods: target a service, one of its pods, or a node`},
	{"pod-kill of a client pod", faults("{kind: pod-kill, target: {pod: caller-0}}"),
		`f.yaml:25:36: spec.faults[0].target.pod: caller-0 is a pod of client caller; pod-kill deletes service pods: target a service, one of its pods, or a node`},
	{"fault direction", faults("{kind: partition, direction: up, target: {service: web}}"),
		`f.yaml:25:34: spec.faults[0].direction: unknown direction "up"; valid: to, from, both`},
	{"fault without target", faults("{kind: partition}"),
		`f.yaml:25:5: spec.faults[0].target: is required: ` + selectorKinds + `, e.g. {service: web}`},
	{"fault peer", faults("{kind: partition, target: {service: web}, peer: {node: worker-9}}"),
		`f.yaml:25:60: spec.faults[0].peer.node: no node worker-9: node pool worker has 3 nodes, so its nodes are worker-0 to worker-2`},
	{"fault rate without unit", faults("{kind: bandwidth, rate: 10, target: {service: web}}"),
		`f.yaml:25:29: spec.faults[0].rate: invalid bandwidth "10": give a unit, e.g. 10mbit (megabits per second) or 10mbps (megabytes per second, as tc reads it)`},
	{"fault loss above 100%", faults("{kind: loss, loss: 101%, target: {service: web}}"),
		`f.yaml:25:24: spec.faults[0].loss: invalid percentage "101%": must be between 0% and 100%`},

	// Requests and answers.
	{"lower-case method", caller("request: {method: get}"),
		`f.yaml:24:23: spec.clients[0].request.method: unknown method "get": HTTP methods are case-sensitive; use GET`},
	{"unknown method", caller("request: {method: FETCH}"),
		`f.yaml:24:23: spec.clients[0].request.method: unknown method "FETCH"; valid: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`},
	{"zero header bytes", caller("request: {headerBytes: 0}"),
		`f.yaml:24:28: spec.clients[0].request.headerBytes: must be at least 1: a request has at least its request line`},
	{"negative body bytes", caller("request: {method: POST, bodyBytes: -1}"),
		`f.yaml:24:40: spec.clients[0].request.bodyBytes: must not be negative`},
	{"size not a quantity", webPod("responseBytes: lots"),
		`f.yaml:15:22: spec.services[0].pod.responseBytes: invalid size "lots": want a number of bytes or a Kubernetes quantity such as 16Ki or 1M`},
	{"size not whole", caller(`request: {bodyBytes: "0.5"}`),
		`f.yaml:24:26: spec.clients[0].request.bodyBytes: invalid size "0.5": not a whole number of bytes in range`},
	{"size too large", caller(`request: {bodyBytes: 16Ei}`),
		`f.yaml:24:26: spec.clients[0].request.bodyBytes: invalid size "16Ei": not a whole number of bytes in range`},
	{"size as a float", caller(`request: {bodyBytes: 1.5}`),
		`f.yaml:24:26: spec.clients[0].request.bodyBytes: expected an integer, got "1.5"`},
	{"negative size quantity", caller(`request: {headerBytes: -1Ki}`),
		`f.yaml:24:28: spec.clients[0].request.headerBytes: must be at least 1: a request has at least its request line`},
	{"zero response bytes", webPod("responseBytes: 0"),
		`f.yaml:15:22: spec.services[0].pod.responseBytes: must be at least 1: an answer has at least its status line`},
	{"zero streams", webPod("maxConcurrentStreams: 0"),
		`f.yaml:15:29: spec.services[0].pod.maxConcurrentStreams: must be at least 1`},

	// Sidecars.
	{"sidecar concurrency 0", caller("sidecar: {concurrency: 0}"),
		`f.yaml:24:28: spec.clients[0].sidecar.concurrency: must be at least 1: Istio's concurrency 0 (a worker per core of the node) is not modelled; give the number of workers`},
	{"negative sidecar concurrency", caller("sidecar: {concurrency: -1}"),
		`f.yaml:24:28: spec.clients[0].sidecar.concurrency: must be at least 1`},
	{"sidecar cpu 0", caller("sidecar: {cpu: 0}"),
		`f.yaml:24:20: spec.clients[0].sidecar.cpu: must be greater than 0; leave it out for no limit`},
	{"negative per-request cpu", caller("sidecar: {perRequestCPU: -1us}"),
		`f.yaml:24:30: spec.clients[0].sidecar.perRequestCPU: negative duration -1us`},
	{"sidecar upstream protocol", caller("sidecar: {upstreamProtocol: h2}"),
		`f.yaml:24:33: spec.clients[0].sidecar.upstreamProtocol: unknown protocol "h2"; valid: http1, http2`},
	{"lower-case lb policy", caller("sidecar: {lbPolicy: least_request}"),
		`f.yaml:24:25: spec.clients[0].sidecar.lbPolicy: unknown load-balancing policy "least_request": Envoy's names are upper-case; use LEAST_REQUEST`},
	{"unknown lb policy", caller("sidecar: {lbPolicy: MAGLEV}"),
		`f.yaml:24:25: spec.clients[0].sidecar.lbPolicy: unknown load-balancing policy "MAGLEV"; valid: ROUND_ROBIN, LEAST_REQUEST, RANDOM`},
	{"zero circuit breaker", caller("sidecar: {circuitBreakers: {maxRequests: 0}}"),
		`f.yaml:24:46: spec.clients[0].sidecar.circuitBreakers.maxRequests: must be at least 1; leave it out for Istio's default, in effect unlimited`},
	{"negative retries", caller("sidecar: {retries: {attempts: -1}}"),
		`f.yaml:24:35: spec.clients[0].sidecar.retries.attempts: must not be negative; 0 turns retries off`},
	{"unknown retry condition", caller("sidecar: {retries: {retryOn: [5xx, oops]}}"),
		`f.yaml:24:40: spec.clients[0].sidecar.retries.retryOn[1]: unknown retry condition "oops"; valid: 5xx, gateway-error, reset, reset-before-request, connect-failure, envoy-ratelimited, retriable-4xx, refused-stream, retriable-status-codes, retriable-headers, http3-post-connect-failure, cancelled, unavailable`},
	{"retry on a status code", caller(`sidecar: {retries: {retryOn: ["503"]}}`),
		`f.yaml:24:35: spec.clients[0].sidecar.retries.retryOn[0]: unknown retry condition "503": status codes are not taken here (retriable-status-codes retries 503, as in Istio's default policy); valid: 5xx, gateway-error, reset, reset-before-request, connect-failure, envoy-ratelimited, retriable-4xx, refused-stream, retriable-status-codes, retriable-headers, http3-post-connect-failure, cancelled, unavailable`},
	{"zero per-try timeout", caller("sidecar: {retries: {perTryTimeout: 0s}}"),
		`f.yaml:24:40: spec.clients[0].sidecar.retries.perTryTimeout: must be greater than 0; leave it out for no per-try timeout`},
	{"service sidecar", strings.Replace(netBase, "    replicas: 2\n", "    replicas: 2\n    sidecar: {lbPolicy: RANDOM, concurrency: 0}\n", 1),
		`f.yaml:13:46: spec.services[0].sidecar.concurrency: must be at least 1: Istio's concurrency 0 (a worker per core of the node) is not modelled; give the number of workers`},

	// Report.
	{"one histogram bound", report("{histogram: [1ms]}"),
		`f.yaml:24:23: spec.report.histogram: needs at least two bounds: the first is the lower bound of the first bucket, e.g. [0, 2ms, 4ms, 6ms]`},
	{"no histogram bounds", report("{histogram: []}"),
		`f.yaml:24:23: spec.report.histogram: needs at least two bounds: the first is the lower bound of the first bucket, e.g. [0, 2ms, 4ms, 6ms]`},
	{"histogram not increasing", report("{histogram: [0, 2ms, 2ms, 1ms]}"),
		"f.yaml:24:32: spec.report.histogram[2]: must be greater than the bound before it (2ms): bounds go up\n" +
			"f.yaml:24:37: spec.report.histogram[3]: must be greater than the bound before it (2ms): bounds go up"},
	{"negative histogram bound", report("{histogram: [0, -1ms]}"),
		`f.yaml:24:27: spec.report.histogram[1]: negative duration -1ms`},
	{"negative samples", report("{samples: -1}"),
		`f.yaml:24:21: spec.report.samples: must not be negative; 0 keeps no samples`},

	// Every error at once, in file order.
	{"all collected", faults("{kind: loss, latency: 1ms, target: {service: nope}}", "{kind: pod-kill, start: 20s, target: {client: caller}}"),
		"f.yaml:25:5: spec.faults[0].loss: is required by kind loss: the share of packets dropped, e.g. \"3%\"\n" +
			"f.yaml:25:27: spec.faults[0].latency: does nothing with kind loss; use kind: delay, in a fault of its own to have both\n" +
			"f.yaml:25:50: spec.faults[0].target.service: no service named \"nope\"; services: api, web\n" +
			"f.yaml:26:29: spec.faults[1].start: must be less than spec.duration (10s): the fault would never happen\n" +
			"f.yaml:26:51: spec.faults[1].target.client: cannot be a client with kind pod-kill: pod-kill deletes service pods: target a service, one of its pods, or a node"},
}

func TestLoadNetworkErrors(t *testing.T) {
	cases := networkErrorCases
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(tc.in), nil)
			if sc != nil || !diags.HasErrors() {
				t.Fatalf("loaded without errors; diagnostics: %v", diags)
			}
			if got := diags.Error(); got != tc.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestLoadSelectors checks selectors that name what exists, or may exist later.
func TestLoadSelectors(t *testing.T) {
	cases := []struct{ name, in string }{
		{"pods of a service with an autoscaler are not bounded", links("- target: {pod: api-7}", "  link: {loss: 1%}")},
		{"pods of a service under pod-kill are not bounded", faults(
			"{kind: pod-kill, start: 1s, target: {service: web}}",
			"{kind: partition, start: 2s, target: {pod: web-2}}")},
		{"pod-kill of a node makes every service grow", faults(
			"{kind: pod-kill, start: 1s, target: {node: worker-0}}",
			"{kind: delay, latency: 1ms, target: {pod: web-5}}")},
		{"pod-kill of one pod", faults("{kind: pod-kill, start: 1s, target: {pod: web-1}}")},
		{"every kind of selector", links(
			"- {target: {service: web}, link: {loss: 1%}}",
			"- {target: {client: caller}, link: {loss: 1%}}",
			"- {target: {pod: caller-0}, peer: {pod: web-1}, link: {loss: 1%}}",
			"- {target: {node: worker-2}, direction: to, link: {loss: 1%}}")},
		{"a service whose name ends in a number", strings.NewReplacer("name: web\n", "name: web-1\n", "target: web\n", "target: web-1\n").Replace(netBase) +
			"  faults:\n  - {kind: pod-kill, target: {pod: web-1-1}}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, diags := Load("f.yaml", []byte(tc.in), nil); len(diags) > 0 {
				t.Fatal(diags)
			}
		})
	}
}

func TestNetworkDefaults(t *testing.T) {
	sc := mustLoad(t, netBase)
	s := sc.Spec
	if n := s.Cluster.Network; n.JitterDistribution != "" || n.Jitter != nil || n.Loss != nil || n.Bandwidth != nil {
		t.Errorf("network %+v: want no jitter, no distribution, no loss, no bandwidth", n)
	}
	if r := s.Clients[0].Request; !reflect.DeepEqual(r, Request{Method: "GET", HeaderBytes: ptr[int64](200)}) {
		t.Errorf("request %+v, want GET, 200 header bytes, no body", r)
	}
	for _, svc := range s.Services {
		if p := svc.Pod; *p.ResponseBytes != 200 || *p.MaxConcurrentStreams != 250 {
			t.Errorf("%s: responseBytes %d, maxConcurrentStreams %d; want 200, 250", svc.Name, *p.ResponseBytes, *p.MaxConcurrentStreams)
		}
		if svc.Sidecar != nil {
			t.Errorf("%s: sidecar %+v, want none", svc.Name, svc.Sidecar)
		}
	}
	if s.Clients[0].Sidecar != nil {
		t.Errorf("client sidecar %+v, want none", s.Clients[0].Sidecar)
	}
	if !reflect.DeepEqual(s.Report, Report{Samples: ptr(10000), SlowThreshold: &metav1.Duration{Duration: 500 * time.Millisecond}}) {
		t.Errorf("report %+v, want 10000 samples, no histogram, slow from 500ms", s.Report)
	}

	sc = mustLoad(t, network("jitter: 1ms", "links:",
		"- {target: {service: web}, link: {jitter: 2ms}}",
		"- {target: {service: api}, link: {loss: 1%}}",
		"- {target: {service: api}, direction: from, link: {jitter: 1ms, jitterDistribution: normal}}"))
	n := sc.Spec.Cluster.Network
	if n.JitterDistribution != JitterUniform {
		t.Errorf("network jitterDistribution %q with jitter, want uniform", n.JitterDistribution)
	}
	for i, want := range []struct{ dir, dist string }{{"both", "uniform"}, {"both", ""}, {"from", "normal"}} {
		if o := n.Links[i]; o.Direction != want.dir || o.Link.JitterDistribution != want.dist {
			t.Errorf("links[%d]: direction %q, jitterDistribution %q; want %q, %q", i, o.Direction, o.Link.JitterDistribution, want.dir, want.dist)
		}
	}
	sc = mustLoad(t, network("jitter: 1ms", "jitterDistribution: normal"))
	if d := sc.Spec.Cluster.Network.JitterDistribution; d != JitterNormal {
		t.Errorf("jitterDistribution %q, want the given normal", d)
	}

	sc = mustLoad(t, faults(
		"{kind: loss, loss: 3%, target: {service: web}}",
		"{kind: delay, latency: 5ms, start: 1s, end: 4s, direction: both, target: {service: web}}",
		"{kind: pod-kill, start: 2s, target: {service: web}}"))
	sec := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Second} }
	f := sc.Spec.Faults
	if f[0].Direction != DirectionTo || !reflect.DeepEqual(f[0].End, sec(10)) {
		t.Errorf("loss fault: direction %q, end %v; want to (Chaos Mesh's default) and spec.duration", f[0].Direction, f[0].End)
	}
	if f[1].Direction != DirectionBoth || !reflect.DeepEqual(f[1].End, sec(4)) {
		t.Errorf("delay fault: direction %q, end %v; want the given both and 4s", f[1].Direction, f[1].End)
	}
	if f[2].Direction != "" || f[2].End != nil {
		t.Errorf("pod-kill: direction %q, end %v; want neither", f[2].Direction, f[2].End)
	}
}

func TestSidecarDefaults(t *testing.T) {
	maxU32 := ptr[int64](math.MaxUint32)
	istio := Sidecar{
		Concurrency:      ptr(2),
		PerRequestCPU:    &metav1.Duration{Duration: 200 * time.Microsecond},
		UpstreamProtocol: ProtocolHTTP1,
		LBPolicy:         LBLeastRequest,
		CircuitBreakers:  CircuitBreakers{MaxConnections: maxU32, MaxPendingRequests: maxU32, MaxRequests: maxU32, MaxRetries: maxU32},
		Retries: &Retries{Attempts: ptr(2),
			RetryOn: []string{"connect-failure", "refused-stream", "unavailable", "cancelled", "retriable-status-codes"}},
	}
	with := func(change func(*Sidecar)) Sidecar {
		s := istio
		r := *s.Retries
		s.Retries = &r
		change(&s)
		return s
	}
	cases := []struct {
		name, sidecar string
		want          Sidecar
	}{
		{"empty", "{}", istio},
		{"tuned", "{concurrency: 4, cpu: 500m, perRequestCPU: 0s, upstreamProtocol: http2, lbPolicy: ROUND_ROBIN, circuitBreakers: {maxConnections: 1024}}",
			with(func(s *Sidecar) {
				q := resource.MustParse("500m")
				s.Concurrency, s.CPU, s.PerRequestCPU = ptr(4), &q, &metav1.Duration{}
				s.UpstreamProtocol, s.LBPolicy = ProtocolHTTP2, LBRoundRobin
				s.CircuitBreakers.MaxConnections = ptr[int64](1024)
			})},
		// Istio ≥ 1.18 derives unset concurrency from the proxy's CPU limit, rounded up.
		{"concurrency from the CPU limit", "{cpu: 2500m}",
			with(func(s *Sidecar) {
				q := resource.MustParse("2500m")
				s.Concurrency, s.CPU = ptr(3), &q
			})},
		{"retries with attempts only keep Istio's conditions", "{retries: {attempts: 5}}",
			with(func(s *Sidecar) { s.Retries.Attempts = ptr(5) })},
		{"retries with conditions only keep Istio's attempts", "{retries: {retryOn: [5xx], perTryTimeout: 1s}}",
			with(func(s *Sidecar) {
				s.Retries.RetryOn, s.Retries.PerTryTimeout = []string{"5xx"}, &metav1.Duration{Duration: time.Second}
			})},
		{"retries off", "{retries: {attempts: 0, retryOn: []}}",
			with(func(s *Sidecar) { s.Retries.Attempts, s.Retries.RetryOn = ptr(0), []string{} })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := mustLoad(t, caller("sidecar: "+tc.sidecar))
			if got := *sc.Spec.Clients[0].Sidecar; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("client sidecar\n%+v (retries %+v)\nwant\n%+v (retries %+v)", got, *got.Retries, tc.want, *tc.want.Retries)
			}
			sc = mustLoad(t, strings.Replace(netBase, "    replicas: 2\n", "    replicas: 2\n    sidecar: "+tc.sidecar+"\n", 1))
			if got := *sc.Spec.Services[0].Sidecar; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("service sidecar\n%+v (retries %+v)\nwant\n%+v (retries %+v)", got, *got.Retries, tc.want, *tc.want.Retries)
			}
		})
	}
	// Defaults are copies: changing one scenario's retry conditions changes no other's.
	sc := mustLoad(t, caller("sidecar: {}"))
	sc.Spec.Clients[0].Sidecar.Retries.RetryOn[0] = "5xx"
	if defaultRetryOn[0] != "connect-failure" {
		t.Error("a scenario's retryOn aliases the defaults")
	}
}

// everyKey uses every key added with the network and sidecar models.
const everyKey = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: every-key}
spec:
  duration: 30s
  cluster:
    nodes: [{name: worker, count: 2}]
    network:
      latency: 100us
      jitter: 20us
      jitterDistribution: normal
      congestionControl: reno
      bandwidth: 10gbit
      loss: 0.1%
      correlation: 25%
      links:
      - target: {node: worker-1}
        peer: {service: db}
        direction: to
        link: {latency: 2ms, jitter: 500us, jitterDistribution: uniform, bandwidth: 100mbps, loss: 1%, correlation: 50%}
      - target: {pod: web-0}
        link: {latency: 1ms}
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
      responseBytes: 16Ki
      maxConcurrentStreams: 100
    sidecar:
      concurrency: 4
      cpu: "2"
      perRequestCPU: 250us
      upstreamProtocol: http1
      lbPolicy: ROUND_ROBIN
      circuitBreakers: {maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3}
      retries: {attempts: 3, perTryTimeout: 500ms, retryOn: [5xx, reset, connect-failure]}
  - name: db
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 2ms}
  clients:
  - name: caller
    target: web
    threads: 8
    connections: {protocol: http2}
    request: {method: POST, headerBytes: 300, bodyBytes: 4096}
    sidecar: {upstreamProtocol: http2}
  faults:
  - {name: flaky, kind: loss, start: 5s, end: 10s, target: {service: web}, peer: {client: caller}, direction: both, loss: 5%, correlation: 10%}
  - {name: slow, kind: delay, start: 10s, target: {pod: web-1}, direction: from, latency: 50ms, jitter: 5ms}
  - {kind: bandwidth, start: 12s, end: 14s, target: {node: worker-0}, rate: 1mbit}
  - {kind: partition, start: 15s, end: 16s, target: {service: db}}
  - {name: kill, kind: pod-kill, start: 20s, target: {service: web}}
  report:
    histogram: [0, 1ms, 2ms, 5ms, 10ms]
    samples: 500
`

func TestLoadEveryNewKey(t *testing.T) {
	sc, _, diags := Load("f.yaml", []byte(everyKey), nil)
	// The service's sidecar carries circuitBreakers and retries to load every key;
	// that they act only on a client's is TestInboundSidecarWarnsOfOutboundSettings's.
	diags = slices.DeleteFunc(diags, func(d Diagnostic) bool {
		return d.Severity == Warning && strings.Contains(d.Msg, "has no effect on a service's sidecar")
	})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	us := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Microsecond} }
	ms := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Millisecond} }
	pct := func(f float64) *Percent { return &Percent{Fraction: f} }
	bw := func(bits float64) *Bandwidth { return &Bandwidth{BitsPerSecond: bits} }
	s := sc.Spec

	wantNet := Network{
		Latency: *us(100), LocalLatency: us(20),
		Jitter: us(20), JitterDistribution: JitterNormal, Bandwidth: bw(10e9), Loss: pct(0.001), Correlation: pct(0.25),
		CongestionControl: CongestionReno,
		Links: []LinkOverride{
			{Target: Selector{Node: "worker-1"}, Peer: &Selector{Service: "db"}, Direction: DirectionTo,
				Link: Link{Latency: ms(2), Jitter: us(500), JitterDistribution: JitterUniform, Bandwidth: bw(800e6), Loss: pct(0.01), Correlation: pct(0.5)}},
			{Target: Selector{Pod: "web-0"}, Direction: DirectionBoth, Link: Link{Latency: ms(1)}},
		},
	}
	if !reflect.DeepEqual(s.Cluster.Network, wantNet) {
		t.Errorf("network\n%+v\nwant\n%+v", s.Cluster.Network, wantNet)
	}

	web := s.Services[0]
	if *web.Pod.ResponseBytes != 16384 || *web.Pod.MaxConcurrentStreams != 100 {
		t.Errorf("web pod: responseBytes %d, maxConcurrentStreams %d; want 16384, 100", *web.Pod.ResponseBytes, *web.Pod.MaxConcurrentStreams)
	}
	cpu := resource.MustParse("2")
	wantWebSidecar := &Sidecar{
		Concurrency: ptr(4), CPU: &cpu, PerRequestCPU: us(250), UpstreamProtocol: ProtocolHTTP1, LBPolicy: LBRoundRobin,
		CircuitBreakers: CircuitBreakers{MaxConnections: ptr[int64](1024), MaxPendingRequests: ptr[int64](1024), MaxRequests: ptr[int64](1024), MaxRetries: ptr[int64](3)},
		Retries:         &Retries{Attempts: ptr(3), PerTryTimeout: ms(500), RetryOn: []string{"5xx", "reset", "connect-failure"}},
	}
	if !reflect.DeepEqual(web.Sidecar, wantWebSidecar) {
		t.Errorf("web sidecar\n%+v\nwant\n%+v", web.Sidecar, wantWebSidecar)
	}
	if db := s.Services[1]; db.Sidecar != nil || *db.Pod.ResponseBytes != 200 {
		t.Errorf("db: sidecar %+v, responseBytes %d; want none and 200", db.Sidecar, *db.Pod.ResponseBytes)
	}

	c := s.Clients[0]
	if want := (Request{Method: "POST", HeaderBytes: ptr[int64](300), BodyBytes: 4096}); !reflect.DeepEqual(c.Request, want) {
		t.Errorf("request %+v, want %+v", c.Request, want)
	}
	if c.Connections.Protocol != ProtocolHTTP2 {
		t.Errorf("protocol %q, want http2", c.Connections.Protocol)
	}
	if c.Sidecar == nil || c.Sidecar.UpstreamProtocol != ProtocolHTTP2 || *c.Sidecar.Concurrency != 2 || c.Sidecar.LBPolicy != LBLeastRequest {
		t.Errorf("client sidecar %+v, want http2 upstream and Istio's defaults", c.Sidecar)
	}

	sec := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Second} }
	end := func(n int) *metav1.Duration { d := sec(n); return &d }
	wantFaults := []Fault{
		{Name: "flaky", Kind: FaultLoss, Start: sec(5), End: end(10), Target: Selector{Service: "web"}, Peer: &Selector{Client: "caller"},
			Direction: DirectionBoth, Loss: pct(0.05), Correlation: pct(0.1)},
		{Name: "slow", Kind: FaultDelay, Start: sec(10), End: end(30), Target: Selector{Pod: "web-1"}, Direction: DirectionFrom,
			Latency: ms(50), Jitter: ms(5)},
		{Kind: FaultBandwidth, Start: sec(12), End: end(14), Target: Selector{Node: "worker-0"}, Direction: DirectionTo, Rate: bw(1e6)},
		{Kind: FaultPartition, Start: sec(15), End: end(16), Target: Selector{Service: "db"}, Direction: DirectionTo},
		{Name: "kill", Kind: FaultPodKill, Start: sec(20), Target: Selector{Service: "web"}},
	}
	if !reflect.DeepEqual(s.Faults, wantFaults) {
		t.Errorf("faults\n%+v\nwant\n%+v", s.Faults, wantFaults)
	}

	wantReport := Report{Histogram: []metav1.Duration{{}, *ms(1), *ms(2), *ms(5), *ms(10)}, Samples: ptr(500), SlowThreshold: ms(500)}
	if !reflect.DeepEqual(s.Report, wantReport) {
		t.Errorf("report %+v, want %+v", s.Report, wantReport)
	}
}

func TestSetNetwork(t *testing.T) {
	cases := []struct {
		name  string
		sets  []string
		check func(*Scenario) bool
	}{
		{"loss", []string{"spec.cluster.network.loss=3%"},
			func(s *Scenario) bool { return *s.Spec.Cluster.Network.Loss == Percent{Fraction: 0.03} }},
		{"zero loss", []string{"spec.cluster.network.loss=0%"},
			func(s *Scenario) bool { return *s.Spec.Cluster.Network.Loss == Percent{} }},
		{"loss and correlation", []string{"spec.cluster.network.loss=0.5%", "spec.cluster.network.correlation=25%"},
			func(s *Scenario) bool {
				n := s.Spec.Cluster.Network
				return n.Loss.Fraction == 0.005 && n.Correlation.Fraction == 0.25
			}},
		{"bandwidth", []string{"spec.cluster.network.bandwidth=100Mbit"},
			func(s *Scenario) bool { return s.Spec.Cluster.Network.Bandwidth.BitsPerSecond == 100e6 }},
		{"bandwidth in bytes", []string{"spec.cluster.network.bandwidth=1mbps"},
			func(s *Scenario) bool { return s.Spec.Cluster.Network.Bandwidth.BitsPerSecond == 8e6 }},
		{"jitter defaults its distribution", []string{"spec.cluster.network.jitter=1ms"},
			func(s *Scenario) bool { return s.Spec.Cluster.Network.JitterDistribution == JitterUniform }},
		{"a fault", []string{"spec.faults[0].kind=loss", "spec.faults[0].loss=3%", "spec.faults[0].target.service=web", "spec.faults[0].start=2s"},
			func(s *Scenario) bool {
				f := s.Spec.Faults[0]
				return f.Loss.Fraction == 0.03 && f.Target.Service == "web" && f.Start.Duration == 2*time.Second &&
					f.End.Duration == 10*time.Second && f.Direction == DirectionTo
			}},
		{"a link override", []string{"spec.cluster.network.links[0].target.pod=web-1", "spec.cluster.network.links[0].link.bandwidth=10mbit"},
			func(s *Scenario) bool {
				o := s.Spec.Cluster.Network.Links[0]
				return o.Link.Bandwidth.BitsPerSecond == 10e6 && o.Direction == DirectionBoth
			}},
		{"request", []string{"spec.clients[0].request.method=POST", "spec.clients[0].request.bodyBytes=1000"},
			func(s *Scenario) bool {
				r := s.Spec.Clients[0].Request
				return r.Method == "POST" && r.BodyBytes == 1000 && *r.HeaderBytes == 200
			}},
		{"a sidecar", []string{"spec.services[0].sidecar.concurrency=4"},
			func(s *Scenario) bool {
				sc := s.Spec.Services[0].Sidecar
				return *sc.Concurrency == 4 && sc.LBPolicy == LBLeastRequest && *sc.Retries.Attempts == 2
			}},
		{"report samples", []string{"spec.report.samples=0"},
			func(s *Scenario) bool { return *s.Spec.Report.Samples == 0 }},
		{"sizes as quantities", []string{"spec.clients[0].request.bodyBytes=1Mi", "spec.services[0].pod.responseBytes=2k"},
			func(s *Scenario) bool {
				return s.Spec.Clients[0].Request.BodyBytes == 1<<20 && *s.Spec.Services[0].Pod.ResponseBytes == 2000
			}},
		{"max concurrent streams", []string{"spec.services[0].pod.maxConcurrentStreams=100"},
			func(s *Scenario) bool { return *s.Spec.Services[0].Pod.MaxConcurrentStreams == 100 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(netBase), tc.sets)
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			if !tc.check(sc) {
				t.Errorf("--set %v not applied: %+v", tc.sets, sc.Spec)
			}
		})
	}
}

func TestSetNetworkErrors(t *testing.T) {
	cases := []struct {
		name string
		sets []string
		want string
	}{
		{"loss without percent sign", []string{"spec.cluster.network.loss=3"},
			`f.yaml: --set spec.cluster.network.loss=3: spec.cluster.network.loss: invalid percentage "3": write it with a percent sign, e.g. "3%"`},
		{"bandwidth unit", []string{"spec.cluster.network.bandwidth=10mb"},
			`f.yaml: --set spec.cluster.network.bandwidth=10mb: spec.cluster.network.bandwidth: invalid bandwidth "10mb": unknown unit "mb"; use bit`},
		{"correlation without loss", []string{"spec.cluster.network.correlation=5%"},
			`f.yaml: --set spec.cluster.network.correlation=5%: spec.cluster.network.correlation: applies only with loss`},
		{"incomplete fault", []string{"spec.faults[0].kind=loss"},
			"f.yaml: --set spec.faults[0].kind=loss: spec.faults[0].target: is required: one of service, client, pod or node, e.g. {service: web}\n" +
				"f.yaml: --set spec.faults[0].kind=loss: spec.faults[0].loss: is required by kind loss: the share of packets dropped, e.g. \"3%\""},
		{"pod out of range", []string{"spec.faults[0].kind=partition", "spec.faults[0].target.pod=web-9"},
			`f.yaml: --set spec.faults[0].target.pod=web-9: spec.faults[0].target.pod: no pod web-9: service web has 2 replicas and no autoscaler, so its pods are web-0 and web-1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(netBase), tc.sets)
			if sc != nil || !diags.HasErrors() {
				t.Fatalf("--set %v: no error; diagnostics: %v", tc.sets, diags)
			}
			if got := diags.Error(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant a prefix:\n%s", got, tc.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"web", "web", 0}, {"wbe", "web", 1}, {"ab", "ba", 1}, {"abc", "ca", 3}, {"web", "webs", 1}, {"callr", "caller", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// A Gilbert-Elliott model takes netem's defaults for what it leaves out: the bad
// state loses every packet (1-h = 100%), the good state none (1-k = 0%).
func TestGilbertElliottDefaults(t *testing.T) {
	sc := mustLoad(t, network("gilbertElliott: {p: 1%, r: 25%}"))
	g := sc.Spec.Cluster.Network.GilbertElliott
	want := GilbertElliott{P: &Percent{0.01}, R: &Percent{0.25}, BadLoss: &Percent{1}, GoodLoss: &Percent{}}
	if !reflect.DeepEqual(*g, want) {
		t.Errorf("got p %v r %v bad %v good %v, want 1%% 25%% 100%% 0%%", g.P, g.R, g.BadLoss, g.GoodLoss)
	}
}

// HTTP/2 windows: the pod's default to Go's server, the client's to Go's transport
// only with http2, and both take byte quantities.
func TestHTTP2Windows(t *testing.T) {
	sc := mustLoad(t, caller("connections: {protocol: http2, http2: {streamWindowBytes: 64Ki}}"))
	c := sc.Spec.Clients[0].Connections.HTTP2
	if *c.StreamWindowBytes != 64<<10 || *c.ConnectionWindowBytes != 1<<30 {
		t.Errorf("client windows %d, %d; want 65536 and Go's 1 GiB", *c.StreamWindowBytes, *c.ConnectionWindowBytes)
	}
	if p := sc.Spec.Services[0].Pod.HTTP2; *p.StreamWindowBytes != 1<<20 || *p.ConnectionWindowBytes != 1<<20 {
		t.Errorf("pod windows %d, %d; want Go's server's 1 MiB each", *p.StreamWindowBytes, *p.ConnectionWindowBytes)
	}
	if sc := mustLoad(t, caller("connections: {protocol: http1}")); sc.Spec.Clients[0].Connections.HTTP2 != nil {
		t.Error("an http1 client got HTTP/2 windows")
	}
}

// Outbound settings on a service's sidecar, which proxies only requests coming in,
// change nothing in the simulation: a warning says so at the field. On a client's
// sidecar they act, and nothing is said.
func TestInboundSidecarWarnsOfOutboundSettings(t *testing.T) {
	const doc = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  duration: 10s
  services:
  - name: web
    replicas: 2
    pod: {serviceTime: {distribution: constant, value: 1ms}}
    sidecar: %s
  clients:
  - name: c
    target: web
    threads: 2
    sidecar: %s
`
	for _, c := range []struct {
		name, service, client string
		warned                []string
	}{
		{"breakers on the service", "{circuitBreakers: {maxRequests: 1}}", "{}", []string{"spec.services[0].sidecar.circuitBreakers"}},
		{"retries on the service", "{retries: {attempts: 0}}", "{}", []string{"spec.services[0].sidecar.retries"}},
		{"both on the client", "{concurrency: 4}", "{circuitBreakers: {maxRequests: 1}, retries: {attempts: 0}}", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, diags := Load("s.yaml", []byte(fmt.Sprintf(doc, c.service, c.client)), nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var warned []string
			for _, d := range diags {
				if path, msg, _ := strings.Cut(d.Msg, ": "); d.Severity == Warning && strings.HasPrefix(msg, "has no effect on a service's sidecar") {
					warned = append(warned, path)
				}
			}
			if !slices.Equal(warned, c.warned) {
				t.Errorf("warned at %v, want %v (%v)", warned, c.warned, diags)
			}
		})
	}
}
