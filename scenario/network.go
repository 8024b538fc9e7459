package scenario

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Percent is a share written as a percentage with its sign: "3%", "0.5%", "100%",
// between 0% and 100%. A bare number is refused: "3" could be 3% or a fraction.
type Percent struct {
	Fraction float64 // 0.03 for "3%"
}

// Bandwidth is a link rate written as tc and Chaos Mesh write it: bit, kbit, mbit,
// gbit, tbit (bits per second) or bps, kbps, mbps, gbps, tbps (BYTES per second, as in
// tc: "10mbps" is 80 megabits per second), case-insensitive, with decimal prefixes
// (k = 1000): "100mbit", "1gbit", "10mbps". It is greater than 0.
type Bandwidth struct {
	BitsPerSecond float64
}

// TCP congestion control algorithms.
const (
	CongestionCubic = "cubic"
	CongestionReno  = "reno"
)

// Jitter distributions of a link, as tc netem names them.
const (
	JitterUniform = "uniform"
	JitterNormal  = "normal"
)

// Link is how packets fare on one direction of a hop between two pods. Every field is
// optional; what a Link leaves out comes from the level below it (a fault over a link
// override over the cluster's network).
type Link struct {
	// Latency is the one-way delay. Unset: the level below's.
	Latency *metav1.Duration `yaml:"latency"`
	// Jitter varies each packet's delay around Latency (tc netem's jitter: uniform in
	// ±jitter unless JitterDistribution says normal, where it is the standard
	// deviation). Packets may then overtake each other, as with netem.
	// JitterDistribution applies to the Jitter of the same link, and is set (default
	// uniform) exactly when Jitter is: it is not taken from the level below.
	Jitter *metav1.Duration `yaml:"jitter"`
	// JitterDistribution shapes this link's Jitter: uniform in ±jitter, or normal
	// with jitter as the standard deviation. Default: uniform.
	JitterDistribution string `yaml:"jitterDistribution"`
	// Bandwidth serialises packets at this rate, queueing the excess. Unset: unlimited.
	Bandwidth *Bandwidth `yaml:"bandwidth"`
	// Loss drops each packet with this probability. Unset: the level below's.
	Loss *Percent `yaml:"loss"`
	// Correlation makes losses come in bursts, as Chaos Mesh's and netem's loss
	// correlation does: a packet after a lost one is lost with probability
	// correlation + (1-correlation)·loss; the long-run loss rate stays Loss (a Gilbert
	// model with the same mean). It applies to the Loss of the same link only.
	Correlation *Percent `yaml:"correlation"`
	// GilbertElliott replaces loss and correlation with netem's four-parameter burst
	// model.
	GilbertElliott *GilbertElliott `yaml:"gilbertElliott"`
}

// GilbertElliott is tc netem's `loss gemodel p r 1-h 1-k`: a good and a bad state, P
// the chance per packet to go from good to bad and R back, BadLoss (netem's 1-h,
// default 100%) and GoodLoss (1-k, default 0%) the loss rate in each. Its mean loss
// is (R·GoodLoss + P·BadLoss)/(P+R); with the defaults a burst lasts 1/R packets.
type GilbertElliott struct {
	// P is the chance per packet to go from the good state to the bad one. Required.
	P *Percent `yaml:"p"`
	// R is the chance per packet to go from the bad state back to the good one.
	// Required.
	R *Percent `yaml:"r"`
	// BadLoss is the loss rate in the bad state (netem's 1-h). Default: 100%.
	BadLoss *Percent `yaml:"badLoss"`
	// GoodLoss is the loss rate in the good state (netem's 1-k). Default: 0%.
	GoodLoss *Percent `yaml:"goodLoss"`
}

// Selector picks the pods a link override or a fault applies to: every pod of a
// service or of a client Deployment, one pod by name, or every pod on a node.
// Exactly one field is set. Pods are named SERVICE-N or CLIENT-N (a service's later
// pods, from its autoscaler or replacing killed ones, take the next numbers); nodes
// POOL-N.
type Selector struct {
	// Service picks every pod of the service with this name, later ones included.
	Service string `yaml:"service"`
	// Client picks every pod of the client Deployment with this name.
	Client string `yaml:"client"`
	// Pod picks one pod by name, SERVICE-N or CLIENT-N.
	Pod string `yaml:"pod"`
	// Node picks every pod on one node, POOL-N.
	Node string `yaml:"node"`
}

// Directions of a link override or fault, as Chaos Mesh's NetworkChaos names them.
const (
	// DirectionTo: packets the target sends (to the peer, when one is set).
	DirectionTo = "to"
	// DirectionFrom: packets the target receives (from the peer, when one is set).
	DirectionFrom = "from"
	// DirectionBoth: either way.
	DirectionBoth = "both"
)

// LinkOverride sets the link between the target's pods and the peer's (every other
// pod when Peer is unset), in one direction or both: a slow node pair, a lossy pod.
type LinkOverride struct {
	// Target is the pods whose links are set. Required.
	Target Selector `yaml:"target"`
	// Peer is the pods at the other end. Unset: every other pod.
	Peer *Selector `yaml:"peer"`
	// Direction: packets the target sends (to), receives (from) or both, as Chaos
	// Mesh names them. Default: both.
	Direction string `yaml:"direction"`
	// Link is what the packets meet; at least one key set. What it leaves out comes
	// from the cluster's network.
	Link Link `yaml:"link"`
}

// Fault kinds.
const (
	FaultLoss      = "loss"
	FaultDelay     = "delay"
	FaultBandwidth = "bandwidth"
	FaultPartition = "partition"
	FaultPodKill   = "pod-kill"
)

// Fault is a timed disturbance, as Chaos Mesh's NetworkChaos and PodChaos inject
// them: from Start to End the links of the target's pods (to the peer's, or to every
// pod) lose, delay or throttle packets, or drop all of them (partition); pod-kill
// deletes the target's pods at Start with a zero grace period.
//
// A pod-kill targets service pods: a service, one of its pods, or a node (the service
// pods on it; client pods are never killed). It has no End, Direction or Peer: those
// stay unset.
type Fault struct {
	// Name of the fault, unique among faults, for reading the result. Optional.
	Name string `yaml:"name"`
	// Kind: loss, delay, bandwidth, partition (every packet dropped) or pod-kill.
	// Required.
	Kind string `yaml:"kind"`
	// Start of the fault, from the start of the run, before spec.duration. Default: 0.
	Start metav1.Duration `yaml:"start"`
	// End of a network fault, after start and not after spec.duration; a pod-kill has
	// none. Default: spec.duration, the end of the run.
	End *metav1.Duration `yaml:"end"`
	// Target is the pods the fault acts on. Required.
	Target Selector `yaml:"target"`
	// Peer limits a network fault to the target's packets to and from these pods.
	// Unset: every pod.
	Peer *Selector `yaml:"peer"`
	// Direction of a network fault: packets the target sends (to), receives (from) or
	// both. Default: to, as in Chaos Mesh.
	Direction string `yaml:"direction"`
	// Loss of kind loss: the share of packets dropped, on top of the link's own loss
	// (the two compound, as a netem qdisc on the pod's interface would).
	Loss *Percent `yaml:"loss"`
	// Correlation of kind loss: makes the losses come in bursts, as Link's; it
	// replaces the link's own correlation while the fault lasts. Unset: the link's.
	Correlation *Percent `yaml:"correlation"`
	// Latency of kind delay: added to each packet's delay.
	Latency *metav1.Duration `yaml:"latency"`
	// Jitter of kind delay: combined with the link's own jitter as an independent
	// variation (the square root of the sum of squares), in the link's jitter
	// distribution. Unset: none added.
	Jitter *metav1.Duration `yaml:"jitter"`
	// Rate of kind bandwidth: packets are held to it, or to the link's own bandwidth
	// where that is narrower.
	Rate *Bandwidth `yaml:"rate"`
}

// Request is what a client sends: its size decides how many TCP segments it takes.
// Sizes are bytes, as an integer or a Kubernetes quantity (16Ki, 1M).
type Request struct {
	// Method of the requests, case-sensitive. GET, HEAD, PUT and DELETE are
	// idempotent, which decides whether a library resends one on a stale connection.
	// Default: GET.
	Method string `yaml:"method"`
	// HeaderBytes is the request line and headers, at least 1. Default: 200, an
	// assumption (a request line and a handful of headers).
	HeaderBytes *int64 `yaml:"headerBytes"`
	// BodyBytes is the body. Default: 0.
	BodyBytes int64 `yaml:"bodyBytes"`
}

// Load-balancing policies of a sidecar, as Envoy names them.
const (
	LBRoundRobin   = "ROUND_ROBIN"
	LBLeastRequest = "LEAST_REQUEST"
	LBRandom       = "RANDOM"
)

// Sidecar is an Envoy proxy in the pod, as Istio injects it: inbound requests to a
// service's pod pass through it, and a client pod's outbound requests go through it
// to the service's pods directly (Envoy balances per request over the endpoints, not
// through the ClusterIP).
type Sidecar struct {
	// Concurrency is Envoy's --concurrency, its worker threads, at least 1 (Istio's 0,
	// a worker per host CPU, is not modelled). Default: as Istio 1.18 and later derive
	// it, the proxy's CPU limit rounded up to whole cores: 2 with Istio's default
	// limit of 2 cores.
	Concurrency *int `yaml:"concurrency"`
	// CPU is the proxy container's CPU limit (the sidecar.istio.io/proxyCPULimit
	// annotation), greater than 0; it also sets the default concurrency. Unset: no
	// limit on the proxy's CPU, and concurrency from Istio's default limit, 2 cores.
	CPU *resource.Quantity `yaml:"cpu"`
	// PerRequestCPU is a worker's time to proxy one request and its answer. Default:
	// 200us (Istio 1.24's performance page: 0.20 vCPU per 1000 requests per second
	// through one sidecar).
	PerRequestCPU *metav1.Duration `yaml:"perRequestCPU"`
	// UpstreamProtocol to the next hop; with http2 on a client sidecar, the server's
	// sidecar accepts it (Istio's h2UpgradePolicy). Default: http1, Istio's without a
	// DestinationRule.
	UpstreamProtocol string `yaml:"upstreamProtocol"`
	// LBPolicy is Envoy's load balancer over the service's endpoints, per request.
	// Default: LEAST_REQUEST, Istio's since 1.14.
	LBPolicy string `yaml:"lbPolicy"`
	// CircuitBreakers are Envoy's per-cluster thresholds, on a client's sidecar: its
	// outbound requests to the service's pods. On a service's sidecar they are not
	// modelled, and validation warns.
	CircuitBreakers CircuitBreakers `yaml:"circuitBreakers"`
	// Retries is the route's retry policy, on a client's sidecar (the caller's
	// route); on a service's sidecar it has no effect, and validation warns. Unset:
	// Istio's default policy.
	Retries *Retries `yaml:"retries"`
}

// CircuitBreakers are Envoy's per-cluster thresholds; requests beyond them fail with
// 503 at once. Unset: Istio's (2^32-1 each, in effect unlimited).
type CircuitBreakers struct {
	// MaxConnections to all the cluster's endpoints together, at least 1. Default:
	// 4294967295, Istio's.
	MaxConnections *int64 `yaml:"maxConnections"`
	// MaxPendingRequests waiting for a connection, at least 1. Default: 4294967295,
	// Istio's.
	MaxPendingRequests *int64 `yaml:"maxPendingRequests"`
	// MaxRequests in flight to the cluster, at least 1. Default: 4294967295, Istio's.
	MaxRequests *int64 `yaml:"maxRequests"`
	// MaxRetries in flight to the cluster, at least 1. Default: 4294967295, Istio's.
	MaxRetries *int64 `yaml:"maxRetries"`
}

// Retries is the route's retry policy. Unset: Istio's default, 2 attempts on
// connect-failure, refused-stream, unavailable, cancelled and retriable-status-codes,
// preferring hosts not tried yet.
//
// Attempts is the number of retries after the first try; 0 turns retries off. Left out
// it is 2 even when Retries is given: unlike an Istio VirtualService, where a retries
// block without attempts disables retries. RetryOn left out is Istio's list; an empty
// list retries nothing.
type Retries struct {
	// Attempts is the number of retries after the first try, not negative; 0 turns
	// retries off. Default: 2.
	Attempts *int `yaml:"attempts"`
	// PerTryTimeout bounds each attempt. Unset: none.
	PerTryTimeout *metav1.Duration `yaml:"perTryTimeout"`
	// RetryOn lists Envoy's retry conditions (x-envoy-retry-on, and the gRPC ones
	// Istio uses). Default: connect-failure, refused-stream, unavailable, cancelled
	// and retriable-status-codes (503), Istio's.
	RetryOn []string `yaml:"retryOn"`
}

// Report settings.
type Report struct {
	// Histogram is the upper bounds of the latency buckets in the histogram report, as
	// vegeta's hist[0,2ms,4ms,6ms]: the first is the lower bound of the first bucket.
	// At least two, strictly increasing. Unset: no histogram.
	// For example [0, 2ms, 4ms, 6ms].
	Histogram []metav1.Duration `yaml:"histogram"`
	// Samples bounds the per-request latency-over-time sample; 0 keeps none.
	// Default: 10000.
	Samples *int `yaml:"samples"`
	// SlowThreshold is the latency above which a request counts as slow, for the
	// slow share per node, per pod and over time. Default: 500ms.
	SlowThreshold *metav1.Duration `yaml:"slowThreshold"`
}
