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
	// Latency is the one-way delay.
	Latency *metav1.Duration `yaml:"latency"`
	// Jitter varies each packet's delay around Latency (tc netem's jitter: uniform in
	// ±jitter unless JitterDistribution says normal, where it is the standard
	// deviation). Packets may then overtake each other, as with netem.
	// JitterDistribution applies to the Jitter of the same link, and is set (default
	// uniform) exactly when Jitter is: it is not taken from the level below.
	Jitter             *metav1.Duration `yaml:"jitter"`
	JitterDistribution string           `yaml:"jitterDistribution"`
	// Bandwidth serialises packets at this rate, queueing the excess. Unset: unlimited.
	Bandwidth *Bandwidth `yaml:"bandwidth"`
	// Loss drops each packet with this probability.
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
	P        *Percent `yaml:"p"`
	R        *Percent `yaml:"r"`
	BadLoss  *Percent `yaml:"badLoss"`
	GoodLoss *Percent `yaml:"goodLoss"`
}

// Selector picks the pods a link override or a fault applies to: every pod of a
// service or of a client Deployment, one pod by name, or every pod on a node.
// Exactly one field is set. Pods are named SERVICE-N or CLIENT-N (a service's later
// pods, from its autoscaler or replacing killed ones, take the next numbers); nodes
// POOL-N.
type Selector struct {
	Service string `yaml:"service"`
	Client  string `yaml:"client"`
	Pod     string `yaml:"pod"`
	Node    string `yaml:"node"`
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
	Target Selector  `yaml:"target"`
	Peer   *Selector `yaml:"peer"`
	// Direction: to, from or both (default both).
	Direction string `yaml:"direction"`
	Link      Link   `yaml:"link"`
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
	Name string `yaml:"name"`
	// Kind: loss, delay, bandwidth, partition or pod-kill.
	Kind   string           `yaml:"kind"`
	Start  metav1.Duration  `yaml:"start"`
	End    *metav1.Duration `yaml:"end"` // default: spec.duration, the end of the run
	Target Selector         `yaml:"target"`
	Peer   *Selector        `yaml:"peer"`
	// Direction: to (default, as in Chaos Mesh), from or both.
	Direction string `yaml:"direction"`
	// loss: Loss and Correlation.
	Loss        *Percent `yaml:"loss"`
	Correlation *Percent `yaml:"correlation"`
	// delay: Latency added to each packet, with Jitter.
	Latency *metav1.Duration `yaml:"latency"`
	Jitter  *metav1.Duration `yaml:"jitter"`
	// bandwidth: Rate.
	Rate *Bandwidth `yaml:"rate"`
}

// Request is what a client sends: its size decides how many TCP segments it takes.
// Sizes are bytes, as an integer or a Kubernetes quantity (16Ki, 1M).
type Request struct {
	// Method: GET (default), POST, PUT, DELETE, ... GET, HEAD, PUT and DELETE are
	// idempotent, which decides whether a library resends one on a stale connection.
	Method string `yaml:"method"`
	// HeaderBytes is the request line and headers. Default 200, an assumption: a
	// request line and a handful of headers.
	HeaderBytes *int64 `yaml:"headerBytes"`
	// BodyBytes is the body. Default 0.
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
	// Concurrency is Envoy's --concurrency, its worker threads. Default 2 (Istio's
	// proxy.istio.io/config concurrency when unset).
	Concurrency *int `yaml:"concurrency"`
	// CPU is the proxy container's CPU limit. Unset: none.
	// (Istio 1.18+ derives concurrency from this limit when concurrency is unset;
	// trafficlab keeps 2, the value Istio documents for unset concurrency.)
	CPU *resource.Quantity `yaml:"cpu"`
	// PerRequestCPU is a worker's time to proxy one request and its answer. Default
	// 500us: Istio's performance page measures 0.5 vCPU per 1000 requests per second.
	PerRequestCPU *metav1.Duration `yaml:"perRequestCPU"`
	// UpstreamProtocol: http1 or http2, to the next hop. Default http1; with http2 on a
	// client sidecar, the server's sidecar accepts it (Istio's h2UpgradePolicy).
	UpstreamProtocol string `yaml:"upstreamProtocol"`
	// LBPolicy: ROUND_ROBIN, LEAST_REQUEST (default, as Istio since 1.14) or RANDOM.
	LBPolicy        string          `yaml:"lbPolicy"`
	CircuitBreakers CircuitBreakers `yaml:"circuitBreakers"`
	Retries         *Retries        `yaml:"retries"`
}

// CircuitBreakers are Envoy's per-cluster thresholds; requests beyond them fail with
// 503 at once. Unset: Istio's (2^32-1 each, in effect unlimited).
type CircuitBreakers struct {
	MaxConnections     *int64 `yaml:"maxConnections"`
	MaxPendingRequests *int64 `yaml:"maxPendingRequests"`
	MaxRequests        *int64 `yaml:"maxRequests"`
	MaxRetries         *int64 `yaml:"maxRetries"`
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
	Attempts *int `yaml:"attempts"`
	// PerTryTimeout bounds each attempt. Unset: none.
	PerTryTimeout *metav1.Duration `yaml:"perTryTimeout"`
	// RetryOn lists Envoy's retry conditions.
	RetryOn []string `yaml:"retryOn"`
}

// Report settings.
type Report struct {
	// Histogram is the upper bounds of the latency buckets in the histogram report, as
	// vegeta's hist[0,2ms,4ms,6ms]: the first is the lower bound of the first bucket.
	// At least two, strictly increasing. Unset: no histogram.
	Histogram []metav1.Duration `yaml:"histogram"`
	// Samples bounds the per-request latency-over-time sample; 0 keeps none. Default
	// 10000.
	Samples *int `yaml:"samples"`
	// SlowThreshold is the latency above which a request counts as slow, for the
	// slow share per node, per pod and over time. Default 500ms.
	SlowThreshold *metav1.Duration `yaml:"slowThreshold"`
}
