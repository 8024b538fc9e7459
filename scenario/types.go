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

	"trafficlab/model/kubeproxy"
)

// APIVersion and Kind identify a scenario document.
const (
	APIVersion = "trafficlab/v1alpha1"
	Kind       = "Scenario"
)

// Scenario is one document: the cluster, the services in it and the clients calling them.
type Scenario struct {
	// APIVersion of the document format, trafficlab/v1alpha1. Required.
	APIVersion string `yaml:"apiVersion"`
	// Kind of document, Scenario. Required.
	Kind string `yaml:"kind"`
	// Metadata names and describes the scenario. Required.
	Metadata Metadata `yaml:"metadata"`
	// Spec is the cluster, its services and its clients. Required.
	Spec Spec `yaml:"spec"`
}

// Metadata names the scenario; the name appears in every result.
type Metadata struct {
	// Name of the scenario, reported in every result. Required.
	Name string `yaml:"name"`
	// Description is free text: what the scenario reproduces and what to look for.
	// `trafficlab examples` lists the first line of each example's.
	Description string `yaml:"description"`
}

// Spec is everything a run needs.
type Spec struct {
	// Duration of simulated time, greater than 0. Required.
	Duration metav1.Duration `yaml:"duration"`
	// Seed of every random stream; same seed, same result (--seed overrides it).
	// Default: 0.
	Seed int64 `yaml:"seed"`
	// Cluster is the nodes, the pod network and kube-proxy.
	Cluster Cluster `yaml:"cluster"`
	// Services are the ClusterIP Services called, each with the Deployment behind it.
	Services []Service `yaml:"services"`
	// Clients are the Deployments of client pods that call the services.
	Clients []Client `yaml:"clients"`
	// Faults are timed disturbances of links and pods.
	Faults []Fault `yaml:"faults"`
	// Background is workloads that serve no traffic but share their nodes: a pod
	// that writes to disk or burns CPU.
	Background []Background `yaml:"background"`
	// Report is what the result keeps beyond the totals: histogram buckets, samples,
	// the slow threshold.
	Report Report `yaml:"report"`
}

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
	// ProxyMode is kube-proxy's --proxy-mode, which decides how a Service's
	// connections are spread: iptables and nftables pick an endpoint at random per
	// connection, ipvs by its scheduler, userspace round robin with retries of a
	// refused dial. Default: iptables.
	ProxyMode kubeproxy.Mode `yaml:"proxyMode"`
	// ProxyWork is the CPU kube-proxy's own process spends relaying connections in
	// userspace mode, on the node that relays them. Unset fields take the figures
	// measured for a relay built as the userspace proxier is (`trafficlab
	// libraries` lists them). The other modes rewrite packets in the kernel and
	// spend none in a process.
	ProxyWork ProxyWork `yaml:"proxyWork"`
	// IPVSScheduler is kube-proxy's --ipvs-scheduler, with proxyMode ipvs only:
	// ipvsadm's round robin, least connection, source hashing, shortest expected
	// delay, never queue. Default: rr.
	IPVSScheduler string `yaml:"ipvsScheduler"`
	// Nodes are pools of identical nodes, named POOL-0, POOL-1, ... Unset: one pool
	// "worker" of 3 nodes with unlimited CPU.
	Nodes []NodePool `yaml:"nodes"`
	// Network is the pod network: delay, loss and bandwidth of every hop, overrides
	// between some pods, and TCP's congestion control.
	Network Network `yaml:"network"`
	// EndpointPropagation is how long an EndpointSlice change takes to reach each
	// node's kube-proxy, before its own sync.
	EndpointPropagation EndpointPropagation `yaml:"endpointPropagation"`
	// MinSyncPeriod is kube-proxy's --iptables-min-sync-period (or the nftables one):
	// a node reprograms its rules at most this often. Default: 1s.
	MinSyncPeriod *metav1.Duration `yaml:"minSyncPeriod"`
	// PodNetworkTeardown is the time from a pod's last container exiting to its IP
	// being released (the sandbox stopped); from then on a packet to it gets no answer
	// instead of a reset. Default: 1s, an assumption (a CNI releases an IP about a
	// second after the last container exits).
	PodNetworkTeardown *metav1.Duration `yaml:"podNetworkTeardown"`
}

// EndpointPropagation is the delay from a pod's status change to the EndpointSlice
// reaching one node's kube-proxy: the kubelet's status update, the EndpointSlice
// controller and the watch. Each node draws its own delay, uniform in
// [latency, latency+jitter].
type EndpointPropagation struct {
	// Latency is the least delay. Default: 200ms, an assumption for a small, quiet
	// cluster.
	Latency *metav1.Duration `yaml:"latency"`
	// Jitter is the spread above Latency. Default: 300ms.
	Jitter *metav1.Duration `yaml:"jitter"`
}

// NodePool is Count identical nodes named NAME-0, NAME-1, ...
type NodePool struct {
	// Name of the pool, a DNS label; its nodes are NAME-0, NAME-1, ... Required.
	Name string `yaml:"name"`
	// Count of nodes, at least 1. Required.
	Count int `yaml:"count"`
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
	// Default: 0.
	Latency metav1.Duration `yaml:"latency"`
	// LocalLatency is the one-way delay of a packet that never leaves the client's node,
	// such as the ICMP reply of kube-proxy's REJECT rule, or a hop over loopback
	// between an app and its sidecar. Default: 20us.
	LocalLatency *metav1.Duration `yaml:"localLatency"`
	// Jitter varies every hop's delay, each direction on its own, as tc netem's
	// jitter: see Link. Unset: none.
	Jitter *metav1.Duration `yaml:"jitter"`
	// JitterDistribution shapes Jitter: uniform in ±jitter, or normal with jitter as
	// the standard deviation. Set only with Jitter. Default: uniform.
	JitterDistribution string `yaml:"jitterDistribution"`
	// Bandwidth serialises every hop's packets at this rate, queueing the excess.
	// Unset: unlimited.
	Bandwidth *Bandwidth `yaml:"bandwidth"`
	// Loss drops each packet of every hop with this probability. Unset: none.
	Loss *Percent `yaml:"loss"`
	// Correlation makes Loss come in bursts, as netem's loss correlation: see Link.
	// Set only with Loss.
	Correlation *Percent `yaml:"correlation"`
	// GilbertElliott is netem's four-parameter burst-loss model for every hop,
	// instead of Loss and Correlation.
	GilbertElliott *GilbertElliott `yaml:"gilbertElliott"`
	// Links override the network between some pods and others.
	Links []LinkOverride `yaml:"links"`
	// CongestionControl is the pods' net.ipv4.tcp_congestion_control: cubic (the
	// Linux default) or reno. It matters where TCP runs segment by segment (loss,
	// jitter, bandwidth, HTTP/2). Default: cubic.
	CongestionControl string `yaml:"congestionControl"`
}

// Service is a Service and the Deployment behind it.
type Service struct {
	// Name of the Service and its Deployment, a DNS label; clients target it by this
	// name, and its pods are NAME-0, NAME-1, ... Required.
	Name string `yaml:"name"`
	// ClusterIP: None makes the Service headless: kube-proxy programs nothing for
	// it, and cluster DNS answers its name with the ready pods' own addresses, a
	// new random order each time, as CoreDNS does. Each client's library then
	// picks a pod for every new connection (see `trafficlab libraries`, DNS
	// column), and a gRPC channel with round_robin connects to each. Unset: a
	// ClusterIP, which kube-proxy balances.
	ClusterIP string `yaml:"clusterIP"`
	// Replicas at the start; with an autoscaler, its initial replica count. 0 pods
	// make kube-proxy reject the ClusterIP. Default: 0.
	Replicas int `yaml:"replicas"`
	// Pod is the pod template: the app's container, its resources, how it serves
	// requests, starts and stops. Required.
	Pod Pod `yaml:"pod"`
	// Autoscaler is a HorizontalPodAutoscaler on the Deployment. Unset: none.
	Autoscaler *Autoscaler `yaml:"autoscaler"`
	// Sidecar puts an Envoy proxy in front of the app in every pod. Unset: none.
	Sidecar *Sidecar `yaml:"sidecar"`
	// Strategy is the Deployment's (apps/v1): RollingUpdate, with maxSurge and
	// maxUnavailable 25 % each unless set, or Recreate. It governs Rollouts. Default:
	// RollingUpdate.
	Strategy appsv1.DeploymentStrategy `yaml:"strategy"`
	// MinReadySeconds is the Deployment's: a new pod counts as available only after
	// being Ready this long. Default: 0.
	MinReadySeconds int32 `yaml:"minReadySeconds"`
	// Rollouts replace every pod of the Deployment, as `kubectl rollout restart`
	// does: a new ReplicaSet whose pods the scheduler places afresh.
	Rollouts []Rollout `yaml:"rollouts"`
}

// Rollout is one rollout of the Deployment's pod template.
type Rollout struct {
	// At is when it starts, from the start of the run. Default: 0.
	At metav1.Duration `yaml:"at"`
}

// Autoscaler is an autoscaling/v2 HorizontalPodAutoscalerSpec on the service's
// Deployment, plus the controller's settings.
type Autoscaler struct {
	// ScaleTargetRef is the HPA's target, accepted as a manifest writes it: it must
	// name the service's own Deployment (kind Deployment, apiVersion apps/v1).
	// Unset: that Deployment.
	ScaleTargetRef *autoscalingv2.CrossVersionObjectReference `yaml:"scaleTargetRef"`
	// MinReplicas is the HPA's lower bound, at least 1 (scale to zero is an alpha
	// feature, not modelled). Default: 1.
	MinReplicas *int32 `yaml:"minReplicas"`
	// MaxReplicas is the HPA's upper bound, at least minReplicas. Required.
	MaxReplicas int32 `yaml:"maxReplicas"`
	// Metrics the HPA scales on, as in autoscaling/v2; trafficlab models type
	// Resource with resource cpu, as a Utilization of the CPU request or an
	// AverageValue per pod. Unset: 80 % average CPU utilization, as Kubernetes
	// defaults it.
	Metrics []autoscalingv2.MetricSpec `yaml:"metrics"`
	// Behavior is the HPA's scale-up and scale-down rules (stabilization windows,
	// policies, select policy). Unset: Kubernetes' default rules.
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `yaml:"behavior"`
	// Controller is kube-controller-manager's and metrics-server's settings.
	Controller HPAController `yaml:"controller"`
}

// HPAController is kube-controller-manager's HPA flags and metrics-server's
// resolution, which a cluster may change (R2 ran with 10 s intervals).
type HPAController struct {
	// SyncPeriod: --horizontal-pod-autoscaler-sync-period, how often the HPA
	// recomputes. Default: 15s.
	SyncPeriod *metav1.Duration `yaml:"syncPeriod"`
	// Tolerance: --horizontal-pod-autoscaler-tolerance, a fraction of the target
	// within which the HPA does not scale, from 0 to less than 1. Default: 0.1.
	Tolerance *float64 `yaml:"tolerance"`
	// DownscaleStabilization: --horizontal-pod-autoscaler-downscale-stabilization,
	// the window of past recommendations a scale-in takes the highest of, unless
	// behavior.scaleDown sets its own. Default: 5m.
	DownscaleStabilization *metav1.Duration `yaml:"downscaleStabilization"`
	// CPUInitializationPeriod: --horizontal-pod-autoscaler-cpu-initialization-period:
	// for this long after a pod starts, its CPU reading counts only if it is Ready and
	// a whole metric window has passed since it became Ready. Default: 5m.
	CPUInitializationPeriod *metav1.Duration `yaml:"cpuInitializationPeriod"`
	// InitialReadinessDelay: --horizontal-pod-autoscaler-initial-readiness-delay:
	// after the initialization period, a pod that is not Ready is left out only if it
	// has never been Ready (its last readiness change came within this delay of its
	// start). Default: 30s.
	InitialReadinessDelay *metav1.Duration `yaml:"initialReadinessDelay"`
	// MetricResolution: metrics-server's --metric-resolution, the interval between
	// its scrapes of each kubelet and so the window of a CPU reading. Default: 15s.
	MetricResolution *metav1.Duration `yaml:"metricResolution"`
}

// Pod is the application container of every replica.
type Pod struct {
	// Containers are the pod's containers as a Pod spec lists them, for a pod
	// copied from a manifest. The app container gives the pod its resources,
	// readinessProbe and preStop hook, as if they were written here at pod level
	// (set each in one place); its image, command, env and ports are accepted and
	// not used. The other containers are not modelled: their CPU is neither
	// requested nor spent, and validation warns. Unset: the keys below alone.
	Containers []corev1.Container `yaml:"containers"`
	// App names the app container among containers. Default: the only one that
	// is not a mesh's proxy (istio-proxy, linkerd-proxy).
	App string `yaml:"app"`
	// CPU is the container's CPU limit in cores, shared by all its running requests,
	// as resources.limits.cpu (set one of the two), greater than 0. Unset: no limit,
	// the pod may use every core of its node.
	CPU *resource.Quantity `yaml:"cpu"`
	// Resources are the container's requests and limits, as in a Pod spec. A CPU limit
	// is enforced as the kernel does (CFS quota per 100 ms period); the CPU request
	// weighs the pod's share of a busy node and counts for scheduling. Resources are
	// cpu and memory; a limit without a request sets the request, as the API server
	// defaults it.
	Resources corev1.ResourceRequirements `yaml:"resources"`
	// AccessLog is a line the app writes to stdout for every request. Unset: none.
	AccessLog *AccessLog `yaml:"accessLog"`
	// Labels of the pods; app: SERVICE is always added.
	Labels map[string]string `yaml:"labels"`
	// NodeSelector places the pods on nodes with these labels, as in a Pod spec.
	NodeSelector map[string]string `yaml:"nodeSelector"`
	// Affinity is node affinity and pod (anti-)affinity as in a Pod spec, which
	// kube-scheduler's filters and scores apply.
	Affinity *corev1.Affinity `yaml:"affinity"`
	// Tolerations let the pods onto nodes with matching taints, as in a Pod spec.
	Tolerations []corev1.Toleration `yaml:"tolerations"`
	// TopologySpreadConstraints spread the pods over nodes, zones or any node
	// label, as in a Pod spec and as kube-scheduler's PodTopologySpread applies
	// them: DoNotSchedule ones keep a pod off a node that would make the skew
	// too big (a pod no node takes stays Pending), ScheduleAnyway ones score.
	// matchLabelKeys join the label selector with the pod's own values; the
	// pods carry no pod-template-hash label, so a key of it is ignored. Unset:
	// the system default spreading over hostnames and zones.
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `yaml:"topologySpreadConstraints"`
	// NodeName pins every pod to one node (POOL-N), bypassing the scheduler, as in a
	// Pod spec.
	NodeName string `yaml:"nodeName"`
	// Concurrency is the number of app worker threads; requests beyond it queue.
	// Default: 0, unbounded.
	Concurrency int `yaml:"concurrency"`
	// ServiceTime is the CPU work of one request on an idle core. Required.
	ServiceTime Distribution `yaml:"serviceTime"`
	// WaitTime is off-CPU time per request that holds a worker but no core, such as
	// a call to a dependency with its own latency. Unset: none.
	WaitTime *Distribution `yaml:"waitTime"`
	// AcceptCost is the CPU work to accept a new connection, paid before its first
	// request: the knob for a host whose connections are expensive (TLS, a slow
	// accept path). Default: 0.
	AcceptCost metav1.Duration `yaml:"acceptCost"`
	// IdleTimeout: the app closes an HTTP/1.1 connection that has had no request
	// for this long, as Node's server.keepAliveTimeout (5s), Go's
	// http.Server.IdleTimeout (none), nginx's keepalive_timeout (75s) or
	// Kestrel's KeepAliveTimeout (130s) do. A client that reuses the connection as
	// the close travels to it sends its request into a closed socket. Not applied
	// behind a sidecar, whose own timeout governs. Default: 0, never.
	IdleTimeout metav1.Duration `yaml:"idleTimeout"`
	// GRPC is the app's gRPC server settings, for clients that speak protocol grpc
	// to it. Unset: a gRPC server's defaults, which never close a connection.
	GRPC *GRPCServer `yaml:"grpc"`
	// Calls are the steps every request takes through other Services of the scenario,
	// in order, after serviceTime and waitTime: each step one call, or calls made at
	// once (parallel). A request holds its worker while it waits for them, as a
	// thread-per-request server does, and no CPU. Unset: none; the app answers alone.
	Calls []Call `yaml:"calls"`
	// AfterCalls is CPU work after the calls, before the answer, on an idle core.
	// With calls only. Unset: none.
	AfterCalls *Distribution `yaml:"afterCalls"`
	// Client is how the pods make their calls: the library, pools, timeout and requests
	// of a client, one set of pools per pod and called Service. With calls only.
	// Unset: a client's defaults.
	Client *CallClient `yaml:"client"`

	// StartupDelay is the time from a pod's creation to its app listening: scheduling,
	// image pull and container start. Default: 2s, constant (a typical pod;
	// Kubernetes' start-up SLO is 5 s at the 99th percentile).
	StartupDelay *Distribution `yaml:"startupDelay"`
	// ReadinessProbe gates the pod's endpoint. Unset: ready as soon as the app listens.
	ReadinessProbe *Probe `yaml:"readinessProbe"`
	// Lifecycle hooks; only preStop is modelled. Unset: none.
	Lifecycle *Lifecycle `yaml:"lifecycle"`
	// TerminationGracePeriodSeconds as Kubernetes counts it: from the deletion,
	// preStop included, to SIGKILL. Default: 30.
	TerminationGracePeriodSeconds *int64 `yaml:"terminationGracePeriodSeconds"`
	// OnSigterm is what the app does when it gets SIGTERM: exit at once, or drain.
	OnSigterm OnSigterm `yaml:"onSigterm"`
	// ResponseBytes is the size of an answer, status line and headers included, as an
	// integer or a Kubernetes quantity (16Ki), at least 1. Default: 200, an
	// assumption (a small answer).
	ResponseBytes *int64 `yaml:"responseBytes"`
	// MaxConcurrentStreams is the app's HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS, at
	// least 1, a gRPC server's too (grpc.MaxConcurrentStreams, which grpc-go leaves
	// unlimited unless set). Default: 250, Go's net/http server
	// (golang.org/x/net/http2 defaultMaxStreams).
	MaxConcurrentStreams *int `yaml:"maxConcurrentStreams"`
	// HTTP2 is the app's HTTP/2 receive windows, for request bodies. Default: 1 MiB
	// per stream and per connection, Go's net/http server.
	HTTP2 *HTTP2Windows `yaml:"http2"`
}

// HTTP2Windows are a receiver's HTTP/2 flow-control windows (RFC 9113 section 5.2):
// how many DATA bytes a sender may have unconsumed per stream
// (SETTINGS_INITIAL_WINDOW_SIZE) and per connection. The receiver returns credit
// with WINDOW_UPDATE as its application reads.
type HTTP2Windows struct {
	// StreamWindowBytes is the window of each stream (SETTINGS_INITIAL_WINDOW_SIZE),
	// 1 to 2^31-1. Default: the server's or the client's, as the key holding it says.
	StreamWindowBytes *int64 `yaml:"streamWindowBytes"`
	// ConnectionWindowBytes is the window of the whole connection, 1 to 2^31-1.
	// Default: the server's or the client's, as the key holding it says.
	ConnectionWindowBytes *int64 `yaml:"connectionWindowBytes"`
}

// Probe is a readinessProbe's timing, with Kubernetes' field names and defaults
// (period 10, timeout 1, success 1, failure 3). The probe succeeds while the app
// listens and is not shutting down.
type Probe struct {
	// HTTPGet is a Pod spec's HTTP probe handler, accepted as a manifest writes it
	// (set at most one handler). Whichever handler a probe has, it succeeds while
	// the app listens and is not shutting down: its timing is what a run plays.
	// Unset: the same.
	HTTPGet *corev1.HTTPGetAction `yaml:"httpGet"`
	// TCPSocket is a Pod spec's TCP probe handler, accepted as HTTPGet is.
	TCPSocket *corev1.TCPSocketAction `yaml:"tcpSocket"`
	// Exec is a Pod spec's command probe handler, accepted as HTTPGet is.
	Exec *corev1.ExecAction `yaml:"exec"`
	// GRPC is a Pod spec's gRPC health-check probe handler, accepted as HTTPGet is.
	GRPC *corev1.GRPCAction `yaml:"grpc"`
	// InitialDelaySeconds after the container starts before the first probe.
	// Default: 0.
	InitialDelaySeconds int32 `yaml:"initialDelaySeconds"`
	// PeriodSeconds between probes, at least 1. Default: 10.
	PeriodSeconds *int32 `yaml:"periodSeconds"`
	// TimeoutSeconds a probe may take, at least 1. Default: 1.
	TimeoutSeconds *int32 `yaml:"timeoutSeconds"`
	// SuccessThreshold is the consecutive successes that make the pod Ready, at
	// least 1. Default: 1.
	SuccessThreshold *int32 `yaml:"successThreshold"`
	// FailureThreshold is the consecutive failures that make it not Ready, at least
	// 1. Default: 3.
	FailureThreshold *int32 `yaml:"failureThreshold"`
}

// Lifecycle is a container's lifecycle hooks.
type Lifecycle struct {
	// PreStop runs when the pod is deleted, before SIGTERM; the grace period counts
	// it, and the kubelet cuts it when the grace period ends (and skips it with a
	// grace period of 0).
	PreStop *LifecycleHandler `yaml:"preStop"`
}

// LifecycleHandler is a hook: a sleep action, or a command that runs for a while.
type LifecycleHandler struct {
	// Sleep waits a number of seconds. Set it or Exec.
	Sleep *SleepAction `yaml:"sleep"`
	// Exec runs a command for a while. Set it or Sleep.
	Exec *ExecAction `yaml:"exec"`
}

// SleepAction is Kubernetes' lifecycle sleep action.
type SleepAction struct {
	// Seconds to sleep, not negative. Default: 0.
	Seconds int64 `yaml:"seconds"`
}

// ExecAction is a command hook. Duration is how long it runs; when left out it is
// read from a command of the form `sleep N` (directly or through `sh -c`).
type ExecAction struct {
	// Command the hook runs, as in a Pod spec: [sh, -c, "sleep 10"]. Required.
	Command []string `yaml:"command"`
	// Duration the command runs. Unset: read from `sleep N` (N in seconds, or with
	// GNU sleep's suffix s, m, h or d); any other command needs it.
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
	// Action: exit at once, or drain (stop accepting, close idle connections, finish
	// what is in progress with Connection: close, then exit). Default: exit.
	Action string `yaml:"action"`
	// DrainTimeout bounds a drain, with action drain only; what is still in progress
	// then is cut off. Unset: until SIGKILL.
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
	// Distribution is the kind, which decides the keys it reads. Required.
	Distribution string `yaml:"distribution"`
	// Value of a constant.
	Value metav1.Duration `yaml:"value"`
	// Mean of an exponential or a lognormal, greater than 0.
	Mean metav1.Duration `yaml:"mean"`
	// P99 of a lognormal, greater than its mean: the lognormal's sigma is solved from
	// the two. Set it or Sigma.
	P99 metav1.Duration `yaml:"p99"`
	// Sigma of a lognormal: the standard deviation of the underlying normal, greater
	// than 0. Set it or P99.
	Sigma float64 `yaml:"sigma"`
	// Min of a uniform, not above Max. Default: 0.
	Min metav1.Duration `yaml:"min"`
	// Max of a uniform, greater than 0.
	Max metav1.Duration `yaml:"max"`
	// Samples of an empirical distribution, at least one, each drawn with equal
	// probability.
	Samples []metav1.Duration `yaml:"samples"`
}

// Arrival processes of an open-loop client.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
)

// Client is a Deployment of client pods calling one Service.
type Client struct {
	// Name of the client Deployment, a DNS label; its pods are NAME-0, NAME-1, ...
	// Required.
	Name string `yaml:"name"`
	// Target is the name of the service it calls, through the service's ClusterIP
	// (or its own sidecar). Required.
	Target string `yaml:"target"`
	// Replicas is the number of client pods, at least 1. Default: 1.
	Replicas int `yaml:"replicas"`
	// Threads per client pod, each in a closed loop: send, wait for the answer, think,
	// repeat. Set it, rate, rateCurve or phases.
	Threads int `yaml:"threads"`
	// Rate per client pod for an open loop (`1000/s`): requests start on schedule,
	// whether or not earlier ones were answered. Exclusive with Threads.
	Rate *Rate `yaml:"rate"`
	// RateCurve makes the open loop's rate per client pod follow a curve over time,
	// instead of Rate. Exclusive with Threads, Rate and Phases.
	RateCurve *RateCurve `yaml:"rateCurve"`
	// Arrival process of the open loop: constant intervals (as vegeta sends) or
	// poisson. Default: constant.
	Arrival string `yaml:"arrival"`
	// MaxInFlight bounds concurrent open-loop requests per client pod; an arrival that
	// finds them all busy is counted as not sent. Default: 0, unbounded.
	MaxInFlight int `yaml:"maxInFlight"`
	// ThinkTime between a thread's answer and its next request, in a closed loop.
	// Unset: none.
	ThinkTime *Distribution `yaml:"thinkTime"`
	// Overhead is the client's own time per request before it is sent (building it,
	// or starting a process, as `curl` in a shell loop does). Default: 0.
	Overhead metav1.Duration `yaml:"overhead"`
	// Timeout of one request, from sending to the last byte of the answer, greater
	// than 0. Default: the library's own timeout when it has one (`trafficlab
	// libraries`), else 30s.
	Timeout *metav1.Duration `yaml:"timeout"`
	// Library sets the connection defaults of a real client library (see `trafficlab
	// libraries`); fields set under Connections win. Unset: the generic defaults
	// noted under Connections.
	Library string `yaml:"library"`
	// Connections is how the client pools its connections.
	Connections Connections `yaml:"connections"`
	// Phases replace Threads and Rate with a sequence of load steps: each closed
	// loop (threads) or open loop (rate), ending after a duration or a request count.
	// Unset: one load for the whole run.
	Phases []Phase `yaml:"phases"`
	// Repeat runs the phase list this many times, with phases only. Default: 1.
	Repeat int `yaml:"repeat"`
	// Request is what each request sends: its method and sizes.
	Request Request `yaml:"request"`
	// Sidecar puts an Envoy proxy in every client pod; requests then go through it.
	// Unset: none.
	Sidecar *Sidecar `yaml:"sidecar"`
	// Work is the CPU the client's own process spends on its node: per request and
	// per connection it opens. Unset fields take the library's measured costs
	// (`trafficlab libraries`), else 0 (not modelled).
	Work ClientWork `yaml:"work"`
	// Resources of each client pod's container, as in a Pod spec: the CPU request
	// weighs its share of a busy node and counts for scheduling; a CPU limit stalls
	// it by CFS quota, and a client that cannot keep up with its rate falls behind.
	// Unset: none.
	Resources corev1.ResourceRequirements `yaml:"resources"`
	// Placement lets the scheduler place the client's pods with constraints, such
	// as a node of their own for a load generator outside the cluster. Unset: any
	// node.
	Placement *Placement `yaml:"placement"`
	// EntryNode is the node, POOL-N, where the client's connections enter the
	// cluster, as connections to an ExternalIP or a NodePort do: that node's
	// kube-proxy picks the pod and, in userspace mode, relays the bytes. The leg
	// to it is not a hop of its own. Unset: the client pod's own node, as for a
	// ClusterIP called from inside.
	EntryNode string `yaml:"entryNode"`
}

// ProxyWork is the CPU a relaying kube-proxy spends, on an idle core.
type ProxyWork struct {
	// PerConnection is the CPU to accept a connection, dial the endpoint, start
	// the two copies and close both sockets. It runs before the dial.
	PerConnection *metav1.Duration `yaml:"perConnection"`
	// PerRequest is the CPU to relay one request and its answer, the system
	// calls of each copy whatever their size. It runs before the request goes on
	// to the pod.
	PerRequest *metav1.Duration `yaml:"perRequest"`
	// PerKiB is the CPU to copy one KiB, counting a request and its answer. It
	// runs with PerRequest.
	PerKiB *metav1.Duration `yaml:"perKiB"`
}

// ClientWork is the CPU a client spends itself, on an idle core.
type ClientWork struct {
	// PerRequest is the CPU to build a request and read its answer, in the library
	// and the kernel (a process start for `curl` in a shell loop). It runs before
	// the request is sent, so it counts in its latency. Default: the library's.
	PerRequest *metav1.Duration `yaml:"perRequest"`
	// PerConnection is the CPU to open and later close one TCP connection: socket,
	// connect, the handshake's packets. It runs before the dial. Default: the
	// library's.
	PerConnection *metav1.Duration `yaml:"perConnection"`
	// Steady is the CPU, in cores, the client's process burns for the whole run
	// whatever it sends: a load generator's pacer, timers and runtime. Default:
	// the library's.
	Steady *resource.Quantity `yaml:"steady"`
}

// Phase is one step of a client's load. A phase by request count ends when all its
// requests are answered, as an `ab -n` run does; the next starts then.
type Phase struct {
	// Name of the phase in the result's runs. Optional.
	Name string `yaml:"name"`
	// Duration after which the phase ends, greater than 0. Set it or Requests.
	Duration *metav1.Duration `yaml:"duration"`
	// Requests per client pod, at least 1: the phase sends this many over all its
	// threads and ends when each is answered or failed, as an `ab -n` run. Set it
	// or Duration.
	Requests int64 `yaml:"requests"`
	// Threads of a closed-loop phase, at least 1. Set it or Rate.
	Threads int `yaml:"threads"`
	// Rate per client pod of an open-loop phase. Set it or Threads.
	Rate *Rate `yaml:"rate"`
	// RampTo makes an open-loop phase's rate change linearly from Rate to RampTo
	// over its duration (a phase by duration only). Unset: a constant rate.
	RampTo *Rate `yaml:"rampTo"`
	// Pause after the phase before the next one starts. Unset: none.
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
	// ProtocolGRPC is gRPC: HTTP/2 underneath, its calls multiplexed on a
	// channel's connection, the channel's behaviour its library's.
	ProtocolGRPC = "grpc"
)

// ClusterIPNone is a headless Service's clusterIP.
const ClusterIPNone = "None"

// gRPC load-balancing policies.
const (
	PickFirst  = "pick_first"
	RoundRobin = "round_robin"
)

// Headless tells whether the Service has no ClusterIP.
func (s *Service) Headless() bool { return s.ClusterIP == ClusterIPNone }

// Multiplexed tells whether protocol multiplexes requests as HTTP/2 streams on a
// connection: http2 and grpc.
func Multiplexed(protocol string) bool { return protocol == ProtocolHTTP2 || protocol == ProtocolGRPC }

// GRPCServer is a gRPC server's connection settings, as grpc-go's
// keepalive.ServerParameters define them (grpc-java's NettyServerBuilder has the
// same).
type GRPCServer struct {
	// MaxConnectionAge: the server sends GOAWAY on a connection this old, give or
	// take a uniform 10 % drawn per connection (grpc-go
	// internal/transport/http2_server.go getJitter); the client then opens a new
	// one, which kube-proxy may send to another pod, so a pool of pinned channels
	// spreads again over the pods, new ones included. Calls in progress finish on
	// the old connection; one that reaches the server a round trip after the
	// GOAWAY is refused, and its library sends it again on the new connection.
	// Unset: never.
	MaxConnectionAge *metav1.Duration `yaml:"maxConnectionAge"`
	// MaxConnectionAgeGrace: this long after its age's GOAWAY, the server closes
	// the connection, and a second after that (grpc-go waits for its client to
	// close first) the calls still on it fail, closed (grpc-go http2_server.go
	// keepalive and NewServerTransport). Unset: never, grpc-go's default.
	MaxConnectionAgeGrace *metav1.Duration `yaml:"maxConnectionAgeGrace"`
}

// Connections is how a client pools its connections. Unset fields take the library's
// default, or the generic default noted on each.
type Connections struct {
	// Reuse: none (a new connection per request), per-thread (a pool per thread),
	// shared (one pool per client pod). Default: shared.
	Reuse string `yaml:"reuse"`
	// MaxPerHost caps connections per pool; requests beyond it wait. Default: 0,
	// unlimited.
	MaxPerHost *int `yaml:"maxPerHost"`
	// MaxIdlePerHost caps idle connections kept per pool; extra ones close after use.
	// Default: 0, unlimited.
	MaxIdlePerHost *int `yaml:"maxIdlePerHost"`
	// IdleTimeout closes a connection idle for this long. Default: 0, never.
	IdleTimeout *metav1.Duration `yaml:"idleTimeout"`
	// MaxLifetime retires a connection this old when it is next returned to the pool
	// (.NET PooledConnectionLifetime). Default: 0, never.
	MaxLifetime *metav1.Duration `yaml:"maxLifetime"`
	// Protocol: http1 (one request per connection at a time), http2 (every request
	// of the pool multiplexed on one connection per host while the server's stream
	// limit allows, as Go's and .NET's clients do by default) or grpc (calls
	// multiplexed as http2's, on the connection of a gRPC channel, which a grpc-*
	// library keeps as gRPC does). Default: http1, or the library's.
	Protocol string `yaml:"protocol"`
	// LoadBalancing is a gRPC channel's policy: pick_first (one connection, to the
	// first address its target resolves to) or round_robin (a connection to every
	// address, calls taken in turn). Behind a ClusterIP both see one address;
	// round_robin spreads only over a headless Service. With grpc only. Default:
	// the library's policy, pick_first for every gRPC library.
	LoadBalancing string `yaml:"loadBalancing"`
	// HTTP2 is the client's HTTP/2 receive windows, for answers; with http2 only.
	// Default: 4 MiB per stream and 1 GiB per connection, Go's transport.
	HTTP2 *HTTP2Windows `yaml:"http2"`
}
