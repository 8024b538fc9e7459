// Package scenario defines the trafficlab scenario document: its types, strict YAML
// decoding with line and column positions, `--set` overrides, defaults and validation.
//
// Where a field has a Kubernetes equivalent it uses the Kubernetes name and type:
// durations are metav1.Duration (Go syntax: 250us, 10ms, 1m30s) and CPU is a
// resource.Quantity (500m, 2).
package scenario

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion and Kind identify a scenario document.
const (
	APIVersion = "trafficlab/v1alpha1"
	Kind       = "Scenario"
)

// Scenario is one document: the cluster, the services in it and the clients calling them.
type Scenario struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   Metadata `yaml:"metadata"`
	Spec       Spec     `yaml:"spec"`
}

// Metadata names the scenario; the name appears in every result.
type Metadata struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Spec is everything a run needs.
type Spec struct {
	// Duration of simulated time. Required.
	Duration metav1.Duration `yaml:"duration"`
	// Seed of every random stream; same seed, same result.
	Seed     int64     `yaml:"seed"`
	Cluster  Cluster   `yaml:"cluster"`
	Services []Service `yaml:"services"`
	Clients  []Client  `yaml:"clients"`
}

// Proxy modes of kube-proxy.
const (
	ProxyIptables  = "iptables"
	ProxyNftables  = "nftables"
	ProxyIPVS      = "ipvs"
	ProxyUserspace = "userspace"
)

// IPVS schedulers trafficlab models (ipvsadm names).
const (
	IPVSRoundRobin       = "rr"
	IPVSLeastConnection  = "lc"
	IPVSSourceHashing    = "sh"
	IPVSShortestExpected = "sed"
	IPVSNeverQueue       = "nq"
)

// Cluster is the nodes, the network between pods and the kube-proxy mode.
type Cluster struct {
	// ProxyMode is kube-proxy's --proxy-mode: iptables (default), nftables, ipvs, userspace.
	ProxyMode string `yaml:"proxyMode"`
	// IPVSScheduler is kube-proxy's --ipvs-scheduler: rr (default), lc, sh, sed, nq.
	IPVSScheduler string     `yaml:"ipvsScheduler"`
	Nodes         []NodePool `yaml:"nodes"`
	Network       Network    `yaml:"network"`
}

// NodePool is Count identical nodes named NAME-0, NAME-1, ...
type NodePool struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
	// CPU is the node's allocatable cores, shared by the pods on it. Unset: unlimited.
	CPU *resource.Quantity `yaml:"cpu"`
}

// Network is the pod network.
type Network struct {
	// Latency is the one-way delay of one hop: a packet from one pod to another.
	Latency metav1.Duration `yaml:"latency"`
	// LocalLatency is the one-way delay of a packet that never leaves the client's node,
	// such as the ICMP reply of kube-proxy's REJECT rule. Default 20us.
	LocalLatency *metav1.Duration `yaml:"localLatency"`
}

// Service is a ClusterIP Service and the Deployment behind it.
type Service struct {
	Name     string `yaml:"name"`
	Replicas int    `yaml:"replicas"`
	Pod      Pod    `yaml:"pod"`
}

// Pod is the application container of every replica.
type Pod struct {
	// CPU is the container's CPU limit in cores, shared by all its running requests.
	// Unset: no limit, the pod may use every core of its node.
	CPU *resource.Quantity `yaml:"cpu"`
	// Concurrency is the number of app worker threads; requests beyond it queue. 0 = unbounded.
	Concurrency int `yaml:"concurrency"`
	// ServiceTime is the CPU work of one request on an idle core.
	ServiceTime Distribution `yaml:"serviceTime"`
	// WaitTime is off-CPU time per request (I/O, a dependency) that holds a worker
	// but no core. Unset: none.
	WaitTime *Distribution `yaml:"waitTime"`
	// AcceptCost is the CPU work to accept a new connection, paid before its first request.
	AcceptCost metav1.Duration `yaml:"acceptCost"`
}

// Distribution kinds.
const (
	DistConstant    = "constant"
	DistExponential = "exponential"
	DistLognormal   = "lognormal"
	DistUniform     = "uniform"
	DistEmpirical   = "empirical"
)

// Distribution of a duration.
//
//	constant:    value
//	exponential: mean
//	lognormal:   mean and either p99 or sigma (of the underlying normal)
//	uniform:     min and max
//	empirical:   samples, drawn with equal probability
type Distribution struct {
	Distribution string            `yaml:"distribution"`
	Value        metav1.Duration   `yaml:"value"`
	Mean         metav1.Duration   `yaml:"mean"`
	P99          metav1.Duration   `yaml:"p99"`
	Sigma        float64           `yaml:"sigma"`
	Min          metav1.Duration   `yaml:"min"`
	Max          metav1.Duration   `yaml:"max"`
	Samples      []metav1.Duration `yaml:"samples"`
}

// Arrival processes of an open-loop client.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
)

// Client is a Deployment of client pods calling one Service.
type Client struct {
	Name   string `yaml:"name"`
	Target string `yaml:"target"`
	// Replicas is the number of client pods. Default 1.
	Replicas int `yaml:"replicas"`
	// Threads per client pod, each in a closed loop: send, wait for the answer, think, repeat.
	Threads int `yaml:"threads"`
	// Rate per client pod for an open loop (`1000/s`). Exclusive with Threads.
	Rate *Rate `yaml:"rate"`
	// Arrival process of the open loop: constant (default, as vegeta) or poisson.
	Arrival string `yaml:"arrival"`
	// MaxInFlight bounds concurrent open-loop requests per client pod; an arrival that
	// finds them all busy is counted as not sent. 0 = unbounded.
	MaxInFlight int `yaml:"maxInFlight"`
	// ThinkTime between a thread's answer and its next request. Unset: none.
	ThinkTime *Distribution `yaml:"thinkTime"`
	// Overhead is the client's own time per request before it is sent (building it,
	// or starting a process, as `curl` in a shell loop does). Default 0.
	Overhead metav1.Duration `yaml:"overhead"`
	// Timeout of one request, from sending to the last byte of the answer. Default: the
	// library's own default when it has one (.NET 100s, ab and vegeta 30s, fortio 3s),
	// else 30s.
	Timeout *metav1.Duration `yaml:"timeout"`
	// Library sets the connection defaults of a real client library (see `trafficlab
	// libraries`); fields set under Connections win.
	Library     string      `yaml:"library"`
	Connections Connections `yaml:"connections"`
}

// Connection reuse strategies.
const (
	ReuseNone      = "none"
	ReusePerThread = "per-thread"
	ReuseShared    = "shared"
)

// Protocols.
const (
	ProtocolHTTP1 = "http1"
	ProtocolHTTP2 = "http2"
)

// Connections is how a client pools its connections. Unset fields take the library's
// default, or the generic default noted on each.
type Connections struct {
	// Reuse: none (a new connection per request), per-thread (a pool per thread),
	// shared (one pool per client pod). Default shared.
	Reuse string `yaml:"reuse"`
	// MaxPerHost caps connections per pool; requests beyond it wait. 0 = unlimited.
	MaxPerHost *int `yaml:"maxPerHost"`
	// MaxIdlePerHost caps idle connections kept per pool; extra ones close after use.
	// 0 = unlimited.
	MaxIdlePerHost *int `yaml:"maxIdlePerHost"`
	// IdleTimeout closes a connection idle for this long. 0 = never.
	IdleTimeout *metav1.Duration `yaml:"idleTimeout"`
	// MaxLifetime retires a connection this old when it is next returned to the pool
	// (.NET PooledConnectionLifetime). 0 = never.
	MaxLifetime *metav1.Duration `yaml:"maxLifetime"`
	// Protocol: http1 (one request per connection at a time).
	Protocol string `yaml:"protocol"`
}
