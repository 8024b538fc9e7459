// Package scenario defines the trafficlab scenario document: its types, strict YAML
// decoding with line and column positions, `--set` overrides, defaults and validation.
//
// Where a field has a Kubernetes equivalent it uses the Kubernetes name and type:
// durations are metav1.Duration (Go syntax: 250us, 10ms, 1m30s) and CPU is a
// resource.Quantity (500m, 2).
package scenario

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
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
	// Faults are timed disturbances of links and pods.
	Faults []Fault `yaml:"faults"`
	// Background is workloads that serve no traffic but share their nodes: a pod
	// that writes to disk or burns CPU.
	Background []Background `yaml:"background"`
	Report     Report       `yaml:"report"`
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
	// EndpointPropagation is how long an EndpointSlice change takes to reach each
	// node's kube-proxy, before its own sync.
	EndpointPropagation EndpointPropagation `yaml:"endpointPropagation"`
	// MinSyncPeriod is kube-proxy's --iptables-min-sync-period (or the nftables one):
	// a node reprograms its rules at most this often. Default 1s.
	MinSyncPeriod *metav1.Duration `yaml:"minSyncPeriod"`
	// PodNetworkTeardown is the time from a pod's last container exiting to its IP
	// being released (the sandbox stopped); from then on a packet to it gets no answer
	// instead of a reset. Default 1s.
	PodNetworkTeardown *metav1.Duration `yaml:"podNetworkTeardown"`
}

// EndpointPropagation is the delay from a pod's status change to the EndpointSlice
// reaching one node's kube-proxy: the kubelet's status update, the EndpointSlice
// controller and the watch. Each node draws its own delay, uniform in
// [latency, latency+jitter].
type EndpointPropagation struct {
	Latency *metav1.Duration `yaml:"latency"`
	Jitter  *metav1.Duration `yaml:"jitter"`
}

// NodePool is Count identical nodes named NAME-0, NAME-1, ...
type NodePool struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
	// CPU is the node's allocatable cores, shared by the pods on it. Unset: unlimited.
	CPU *resource.Quantity `yaml:"cpu"`
	// Disk is the node's disk, where container logs go. Unset: writes never wait.
	Disk *Disk `yaml:"disk"`
	// Labels of every node of the pool, for nodeSelector and affinity; each node also
	// has kubernetes.io/hostname set to its name.
	Labels map[string]string `yaml:"labels"`
	// Taints keep pods that do not tolerate them off the pool's nodes.
	Taints []corev1.Taint `yaml:"taints"`
	// Bandwidth is the node's network interface rate, each way (as cloud instances
	// limit it), shared by the pods on it for traffic to other nodes: 10gbit.
	// Unset: unlimited.
	Bandwidth *Bandwidth `yaml:"bandwidth"`
}

// Network is the pod network.
type Network struct {
	// Latency is the one-way delay of one hop: a packet from one pod to another.
	Latency metav1.Duration `yaml:"latency"`
	// LocalLatency is the one-way delay of a packet that never leaves the client's node,
	// such as the ICMP reply of kube-proxy's REJECT rule, or a hop over loopback
	// between an app and its sidecar. Default 20us.
	LocalLatency *metav1.Duration `yaml:"localLatency"`
	// Jitter, JitterDistribution, Bandwidth, Loss and Correlation apply to every hop
	// between pods, each direction on its own; see Link. JitterDistribution (default
	// uniform) is set only with Jitter, Correlation only with Loss.
	Jitter             *metav1.Duration `yaml:"jitter"`
	JitterDistribution string           `yaml:"jitterDistribution"`
	Bandwidth          *Bandwidth       `yaml:"bandwidth"`
	Loss               *Percent         `yaml:"loss"`
	Correlation        *Percent         `yaml:"correlation"`
	GilbertElliott     *GilbertElliott  `yaml:"gilbertElliott"`
	// Links override the network between some pods and others.
	Links []LinkOverride `yaml:"links"`
	// CongestionControl is the pods' net.ipv4.tcp_congestion_control: cubic (the
	// Linux default) or reno. It matters where TCP runs segment by segment.
	CongestionControl string `yaml:"congestionControl"`
}

// Service is a ClusterIP Service and the Deployment behind it.
type Service struct {
	Name string `yaml:"name"`
	// Replicas at the start; with an autoscaler, its initial replica count.
	Replicas int `yaml:"replicas"`
	Pod      Pod `yaml:"pod"`
	// Autoscaler is a HorizontalPodAutoscaler on the Deployment.
	Autoscaler *Autoscaler `yaml:"autoscaler"`
	// Sidecar puts an Envoy proxy in front of the app in every pod.
	Sidecar *Sidecar `yaml:"sidecar"`
	// Strategy is the Deployment's (apps/v1): RollingUpdate (default, maxSurge and
	// maxUnavailable 25 %) or Recreate. It governs Rollouts.
	Strategy appsv1.DeploymentStrategy `yaml:"strategy"`
	// MinReadySeconds is the Deployment's: a new pod counts as available only after
	// being Ready this long. Default 0.
	MinReadySeconds int32 `yaml:"minReadySeconds"`
	// Rollouts replace every pod of the Deployment, as `kubectl rollout restart`
	// does: a new ReplicaSet whose pods the scheduler places afresh.
	Rollouts []Rollout `yaml:"rollouts"`
}

// Rollout is one rollout of the Deployment's pod template.
type Rollout struct {
	// At is when it starts.
	At metav1.Duration `yaml:"at"`
}

// Autoscaler is an autoscaling/v2 HorizontalPodAutoscalerSpec without scaleTargetRef
// (the target is the service's Deployment), plus the controller's settings.
type Autoscaler struct {
	MinReplicas *int32                                         `yaml:"minReplicas"`
	MaxReplicas int32                                          `yaml:"maxReplicas"`
	Metrics     []autoscalingv2.MetricSpec                     `yaml:"metrics"`
	Behavior    *autoscalingv2.HorizontalPodAutoscalerBehavior `yaml:"behavior"`
	Controller  HPAController                                  `yaml:"controller"`
}

// HPAController is kube-controller-manager's HPA flags and metrics-server's
// resolution, which a cluster may change (R2 ran with 10 s intervals).
type HPAController struct {
	// SyncPeriod: --horizontal-pod-autoscaler-sync-period. Default 15s.
	SyncPeriod *metav1.Duration `yaml:"syncPeriod"`
	// Tolerance: --horizontal-pod-autoscaler-tolerance. Default 0.1.
	Tolerance *float64 `yaml:"tolerance"`
	// DownscaleStabilization: --horizontal-pod-autoscaler-downscale-stabilization.
	// Default 5m.
	DownscaleStabilization *metav1.Duration `yaml:"downscaleStabilization"`
	// CPUInitializationPeriod: --horizontal-pod-autoscaler-cpu-initialization-period.
	// Default 5m.
	CPUInitializationPeriod *metav1.Duration `yaml:"cpuInitializationPeriod"`
	// InitialReadinessDelay: --horizontal-pod-autoscaler-initial-readiness-delay.
	// Default 30s.
	InitialReadinessDelay *metav1.Duration `yaml:"initialReadinessDelay"`
	// MetricResolution: metrics-server's --metric-resolution, the interval between
	// its scrapes of each kubelet and so the window of a CPU reading. Default 15s.
	MetricResolution *metav1.Duration `yaml:"metricResolution"`
}

// Pod is the application container of every replica.
type Pod struct {
	// CPU is the container's CPU limit in cores, shared by all its running requests,
	// as resources.limits.cpu (set one of the two). Unset: no limit, the pod may use
	// every core of its node.
	CPU *resource.Quantity `yaml:"cpu"`
	// Resources are the container's requests and limits, as in a Pod spec. A CPU limit
	// is enforced as the kernel does (CFS quota per 100 ms period); the CPU request
	// weighs the pod's share of a busy node and counts for scheduling.
	Resources corev1.ResourceRequirements `yaml:"resources"`
	// AccessLog is a line the app writes to stdout for every request.
	AccessLog *AccessLog `yaml:"accessLog"`
	// Labels of the pods; app: SERVICE is always added.
	Labels map[string]string `yaml:"labels"`
	// NodeSelector, Affinity, Tolerations and NodeName place the pods as in a Pod spec.
	NodeSelector map[string]string   `yaml:"nodeSelector"`
	Affinity     *corev1.Affinity    `yaml:"affinity"`
	Tolerations  []corev1.Toleration `yaml:"tolerations"`
	NodeName     string              `yaml:"nodeName"`
	// Concurrency is the number of app worker threads; requests beyond it queue. 0 = unbounded.
	Concurrency int `yaml:"concurrency"`
	// ServiceTime is the CPU work of one request on an idle core.
	ServiceTime Distribution `yaml:"serviceTime"`
	// WaitTime is off-CPU time per request that holds a worker but no core, such as
	// a call to a dependency with its own latency. Unset: none.
	WaitTime *Distribution `yaml:"waitTime"`
	// AcceptCost is the CPU work to accept a new connection, paid before its first request.
	AcceptCost metav1.Duration `yaml:"acceptCost"`

	// StartupDelay is the time from a pod's creation to its app listening: scheduling,
	// image pull and container start. Default 2s.
	StartupDelay *Distribution `yaml:"startupDelay"`
	// ReadinessProbe gates the pod's endpoint. Unset: ready as soon as the app listens.
	ReadinessProbe *Probe `yaml:"readinessProbe"`
	// Lifecycle hooks; only preStop is modelled.
	Lifecycle *Lifecycle `yaml:"lifecycle"`
	// TerminationGracePeriodSeconds as Kubernetes counts it: from the deletion,
	// preStop included, to SIGKILL. Default 30.
	TerminationGracePeriodSeconds *int64 `yaml:"terminationGracePeriodSeconds"`
	// OnSigterm is what the app does when it gets SIGTERM.
	OnSigterm OnSigterm `yaml:"onSigterm"`
	// ResponseBytes is the size of an answer, status line and headers included, as an
	// integer or a Kubernetes quantity (16Ki). Default 200, an assumption: a small answer.
	ResponseBytes *int64 `yaml:"responseBytes"`
	// MaxConcurrentStreams is the app's HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS.
	// Default 250 (Go's net/http server: golang.org/x/net/http2 defaultMaxStreams).
	MaxConcurrentStreams *int `yaml:"maxConcurrentStreams"`
	// HTTP2 is the app's HTTP/2 receive windows, for request bodies. Default: Go's
	// net/http server, 1 MiB per stream and per connection.
	HTTP2 *HTTP2Windows `yaml:"http2"`
}

// HTTP2Windows are a receiver's HTTP/2 flow-control windows (RFC 9113 section 5.2):
// how many DATA bytes a sender may have unconsumed per stream
// (SETTINGS_INITIAL_WINDOW_SIZE) and per connection. The receiver returns credit
// with WINDOW_UPDATE as its application reads.
type HTTP2Windows struct {
	StreamWindowBytes     *int64 `yaml:"streamWindowBytes"`
	ConnectionWindowBytes *int64 `yaml:"connectionWindowBytes"`
}

// Probe is a readinessProbe's timing, with Kubernetes' field names and defaults
// (period 10, timeout 1, success 1, failure 3). The probe succeeds while the app
// listens and is not shutting down.
type Probe struct {
	InitialDelaySeconds int32  `yaml:"initialDelaySeconds"`
	PeriodSeconds       *int32 `yaml:"periodSeconds"`
	TimeoutSeconds      *int32 `yaml:"timeoutSeconds"`
	SuccessThreshold    *int32 `yaml:"successThreshold"`
	FailureThreshold    *int32 `yaml:"failureThreshold"`
}

// Lifecycle is a container's lifecycle hooks.
type Lifecycle struct {
	PreStop *LifecycleHandler `yaml:"preStop"`
}

// LifecycleHandler is a hook: a sleep action, or a command that runs for a while.
type LifecycleHandler struct {
	Sleep *SleepAction `yaml:"sleep"`
	Exec  *ExecAction  `yaml:"exec"`
}

// SleepAction is Kubernetes' lifecycle sleep action.
type SleepAction struct {
	Seconds int64 `yaml:"seconds"`
}

// ExecAction is a command hook. Duration is how long it runs; when left out it is
// read from a command of the form `sleep N` (directly or through `sh -c`).
type ExecAction struct {
	Command  []string         `yaml:"command"`
	Duration *metav1.Duration `yaml:"duration"`
}

// What an app does on SIGTERM.
const (
	// SigtermExit: the process ends at once (the default of most servers without a
	// signal handler, and of a container whose PID 1 ignores nothing).
	SigtermExit = "exit"
	// SigtermDrain: stop accepting, close idle keep-alive connections, finish the
	// requests in progress answering them with Connection: close, then exit.
	SigtermDrain = "drain"
)

// OnSigterm is the app's shutdown behaviour.
type OnSigterm struct {
	// Action: exit (default) or drain.
	Action string `yaml:"action"`
	// DrainTimeout bounds a drain; what is still in progress then is cut off. Unset:
	// until SIGKILL.
	DrainTimeout *metav1.Duration `yaml:"drainTimeout"`
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
	// RateCurve makes the open loop's rate per client pod follow a curve over time,
	// instead of Rate.
	RateCurve *RateCurve `yaml:"rateCurve"`
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
	// Phases replace Threads and Rate with a sequence of load steps: each closed
	// loop (threads) or open loop (rate), ending after a duration or a request count.
	Phases []Phase `yaml:"phases"`
	// Repeat runs the phase list this many times. Default 1.
	Repeat int `yaml:"repeat"`
	// Request is what each request sends.
	Request Request `yaml:"request"`
	// Sidecar puts an Envoy proxy in every client pod; requests then go through it.
	Sidecar *Sidecar `yaml:"sidecar"`
}

// Phase is one step of a client's load. A phase by request count ends when all its
// requests are answered, as an `ab -n` run does; the next starts then.
type Phase struct {
	Name     string           `yaml:"name"`
	Duration *metav1.Duration `yaml:"duration"`
	Requests int64            `yaml:"requests"`
	Threads  int              `yaml:"threads"`
	Rate     *Rate            `yaml:"rate"`
	// RampTo makes an open-loop phase's rate change linearly from Rate to RampTo
	// over its duration.
	RampTo *Rate `yaml:"rampTo"`
	// Pause after the phase before the next one starts.
	Pause *metav1.Duration `yaml:"pause"`
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
	// Protocol: http1 (one request per connection at a time) or http2 (every request
	// of the pool multiplexed on one connection per host while the server's stream
	// limit allows, as Go's and .NET's clients do by default). Default http1.
	Protocol string `yaml:"protocol"`
	// HTTP2 is the client's HTTP/2 receive windows, for answers; with http2 only.
	// Default: Go's transport, 4 MiB per stream and 1 GiB per connection.
	HTTP2 *HTTP2Windows `yaml:"http2"`
}
