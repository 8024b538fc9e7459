// Package result is the contract between engines and reports: every engine fills a
// Result, every report reads only a Result.
package result

// Result of one run. JSON field names are a public interface (DESIGN.md): add, never rename.
type Result struct {
	Engine    string  `json:"engine"`
	Scenario  string  `json:"scenario"`
	Seed      int64   `json:"seed"`
	DurationS float64 `json:"duration_s"`
	ProxyMode string  `json:"proxy_mode"`
	// IPVSScheduler is set in ipvs mode: rr, lc, sh, sed or nq.
	IPVSScheduler string `json:"ipvs_scheduler,omitempty"`

	Requests Requests `json:"requests"`
	Errors   Errors   `json:"errors"`
	// ThroughputRPS is successful requests per second; RateRPS is requests sent per second.
	ThroughputRPS float64 `json:"throughput_rps"`
	RateRPS       float64 `json:"rate_rps"`
	// LatencyMS summarises successful requests, from sending to the last byte received.
	LatencyMS Latency `json:"latency_ms"`

	Pods    []Pod    `json:"pods"`
	Nodes   []Node   `json:"nodes"`
	Clients []Client `json:"clients"`

	TimelineIntervalS float64 `json:"timeline_interval_s"`
	Timeline          []Point `json:"timeline"`
	// ScaleEvents are the autoscaler's changes of a Deployment's replicas, in order.
	ScaleEvents []ScaleEvent `json:"scale_events"`
	// Rollouts are the Deployments' rollouts, in order.
	Rollouts []Rollout `json:"rollouts,omitempty"`
	// Pending are pods still waiting for a node at the end.
	Pending []PendingPod `json:"pending,omitempty"`

	// Sidecars are the Envoy proxies of the run, on service pods and client pods.
	Sidecars []Sidecar `json:"sidecars,omitempty"`
	// TCP is set when the run modelled TCP segments (loss, jitter, bandwidth, HTTP/2).
	TCP *TCP `json:"tcp,omitempty"`
	// Histogram counts requests in the scenario's report.histogram buckets, as
	// vegeta's hist reporter does.
	Histogram []Bucket `json:"histogram,omitempty"`
	// Samples is a uniform sample of requests (reservoir sampling, bounded by the
	// scenario's report.samples) for latency-over-time plots.
	Samples []Sample `json:"samples,omitempty"`
	// LatencySpectrum is the percentile distribution of successful requests'
	// latency (HdrHistogram's, five steps per halving of the tail), for plots.
	LatencySpectrum []Percentile `json:"latency_spectrum,omitempty"`

	// SlowThresholdMS is the latency above which a successful request counts as slow
	// (the scenario's report.slowThreshold); Slow counts them and SlowShare is their
	// share of successful requests.
	SlowThresholdMS float64 `json:"slow_threshold_ms"`
	Slow            int64   `json:"slow"`
	SlowShare       float64 `json:"slow_share"`
	// Suspects rank the node resources whose waits make up the slow requests' time,
	// worst first; empty when no request was slow.
	Suspects []Suspect `json:"suspects,omitempty"`
	// Background are the workloads that share nodes without serving traffic.
	Background []Background `json:"background,omitempty"`
	// Overloads are the services whose clients offered more requests than their
	// pods could serve; empty when every service kept up.
	Overloads []Overload `json:"overloads,omitempty"`
}

// Overload is a service that got more requests than its pods served because a
// resource of theirs ran out: the rates, what saturated, and an estimate of the
// replicas that would carry the load.
type Overload struct {
	Service string `json:"service"`
	// OfferedRPS is the requests per second its clients sent it, open-loop arrivals
	// that found no free slot included; ServedRPS the requests per second its pods
	// finished, answered in time or not.
	OfferedRPS float64 `json:"offered_rps"`
	ServedRPS  float64 `json:"served_rps"`
	// Saturated names what ran out: "cpu" (its pods used all of their CPU limits),
	// "node_cpu" (without a limit, the cores of the nodes they ran on) and "workers"
	// (requests queued for an app worker).
	Saturated []string `json:"saturated"`
	// NodeCores are the cores of the nodes its pods ran on, when node_cpu ran out.
	NodeCores float64 `json:"node_cores,omitempty"`
	// CPUUtilization is its pods' CPU over what they may use, over their lives;
	// ThrottledShare the share of CFS periods in which they ran out of quota (0
	// without a CPU limit).
	CPUUtilization float64 `json:"cpu_utilization"`
	ThrottledShare float64 `json:"throttled_share"`
	// QueuedAtEnd are requests waiting for an app worker at the end; PoolWaitersAtEnd
	// requests its clients held waiting for a pooled connection.
	QueuedAtEnd      int64 `json:"queued_at_end"`
	PoolWaitersAtEnd int64 `json:"pool_waiters_at_end"`
	// CPUPerRequestMS is the CPU its pods spent per request they finished;
	// CoresPerPod the mean cores a pod got; HoldMS the mean time a request held an
	// app worker; Workers the workers a pod has (0: unbounded).
	CPUPerRequestMS float64 `json:"cpu_per_request_ms"`
	CoresPerPod     float64 `json:"cores_per_pod"`
	HoldMS          float64 `json:"hold_ms"`
	Workers         int     `json:"workers"`
	// Replicas are its pods serving at the end; ReplicasNeeded the fewest that
	// could serve OfferedRPS at all (each below full use of what saturated), 0
	// when more replicas would not help (node_cpu alone: they share the cores).
	Replicas       int `json:"replicas"`
	ReplicasNeeded int `json:"replicas_needed"`
	// Sweep is the trafficlab command that finds the fewest replicas with no errors,
	// FILE standing for the scenario; ReplicasPath the field it varies. Empty
	// without ReplicasNeeded.
	ReplicasPath string `json:"replicas_path"`
	Sweep        string `json:"sweep"`
}

// Wait is where requests' time went, in milliseconds: mean per request, or summed,
// as the field holding it says. CPU is time runnable but waiting for a core taken by
// others; Throttled is time stalled by the container's own CFS quota; Disk is time
// blocked writing the access log; Queue is time waiting for an app worker;
// Dependency is off-CPU waiting (a call to a dependency); Network is the rest of the
// latency: the network, the client and sidecars.
type Wait struct {
	Work       float64 `json:"work"`
	Queue      float64 `json:"queue"`
	CPU        float64 `json:"cpu"`
	Throttled  float64 `json:"throttled"`
	Disk       float64 `json:"disk"`
	Dependency float64 `json:"dependency"`
	Network    float64 `json:"network"`
}

// Suspect is one node resource and how much of the slow requests' time waiting for
// it explains.
type Suspect struct {
	Node string `json:"node"`
	// Resource: cpu (contention for cores), throttled (CPU limits), disk, queue (app
	// workers), dependency or network.
	Resource string `json:"resource"`
	// Neighbour is the workload on the node that used the resource most, other than
	// the slow pods' own service; empty when it is the pods themselves.
	Neighbour string `json:"neighbour,omitempty"`
	// ShareOfTail is the share of all slow requests' latency spent waiting for this
	// resource on this node; SlowRequests is how many slow requests waited on it.
	ShareOfTail  float64 `json:"share_of_tail"`
	SlowRequests int64   `json:"slow_requests"`
}

// Background is a workload that served no traffic.
type Background struct {
	Name     string  `json:"name"`
	Node     string  `json:"node"`
	CPUCores float64 `json:"cpu_cores"` // mean cores used
	// DiskWrittenBytes over the run; DiskBytesPerSecond the mean.
	DiskWrittenBytes   int64   `json:"disk_written_bytes"`
	DiskBytesPerSecond float64 `json:"disk_bytes_per_second"`
}

// Sidecar is one Envoy proxy: how busy its worker threads and its CPU were.
type Sidecar struct {
	Pod string `json:"pod"`
	// Direction: inbound (in front of a service's app) or outbound (a client's).
	Direction string `json:"direction"`
	Workers   int    `json:"workers"`
	// WorkerUtilization is the mean share of time its workers were busy, over its life
	// in the run; a value near 1 means requests queue for a worker.
	WorkerUtilization float64 `json:"worker_utilization"`
	// CPUUtilization is the CPU used over its limit (or over the node's cores without
	// one); CPUCores the mean cores used.
	CPUUtilization float64 `json:"cpu_utilization"`
	CPUCores       float64 `json:"cpu_cores"`
	CPULimit       float64 `json:"cpu_limit"` // cores; 0 = none
	Requests       int64   `json:"requests"`
	Retries        int64   `json:"retries"`
	// Overflows are requests a circuit breaker refused; HTTP503 every 503 it answered.
	Overflows int64 `json:"overflows"`
	HTTP503   int64 `json:"http_503"`
}

// TCP counts segment-level events over all connections of the run.
type TCP struct {
	Segments        int64 `json:"segments"`
	Retransmits     int64 `json:"retransmits"`
	FastRetransmits int64 `json:"fast_retransmits"`
	RTOEvents       int64 `json:"rto_events"`
	TLPEvents       int64 `json:"tlp_events"`
	SynRetransmits  int64 `json:"syn_retransmits"`
	// Connections is how many TCP connections were opened; WorstConnections lists
	// the ones with the most retransmissions, worst first.
	Connections      int64     `json:"connections"`
	WorstConnections []TCPConn `json:"worst_connections,omitempty"`
}

// TCPConn is one connection's retransmission record.
type TCPConn struct {
	Client      string   `json:"client"`
	Pod         string   `json:"pod"`
	OpenedS     float64  `json:"opened_s"`
	ClosedS     *float64 `json:"closed_s"` // nil: open at the end
	Retransmits int64    `json:"retransmits"`
	RTOEvents   int64    `json:"rto_events"`
	TLPEvents   int64    `json:"tlp_events"`
}

// Bucket is one latency bucket: [FromMS, ToMS), the last one open-ended (ToMS nil).
type Bucket struct {
	FromMS float64  `json:"from_ms"`
	ToMS   *float64 `json:"to_ms"`
	Count  int64    `json:"count"`
	Share  float64  `json:"share"`
}

// Sample is one request: when it was sent, how long it took, and its error kind if
// it failed (its latency is then the time to the failure).
type Sample struct {
	TS        float64 `json:"t_s"`
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

// ScaleEvent is one change of a Deployment's spec.replicas by its autoscaler.
type ScaleEvent struct {
	TS      float64 `json:"t_s"`
	Service string  `json:"service"`
	From    int     `json:"from"`
	To      int     `json:"to"`
	// Reason is the metric and target that triggered it, as the HPA reports it.
	Reason string `json:"reason"`
	// Deleted names the pods a scale-in chose to delete; Created the pods a
	// scale-out added.
	Deleted []string `json:"deleted,omitempty"`
	Created []string `json:"created,omitempty"`
	// Unschedulable says why pods it created could not be placed at once; they wait
	// Pending until a node has room (see Pending).
	Unschedulable []string `json:"unschedulable,omitempty"`
}

// Rollout is one rollout of a Deployment (kubectl rollout restart): a new
// ReplicaSet replacing the old pods under the Deployment's strategy.
type Rollout struct {
	Service string `json:"service"`
	// Strategy: RollingUpdate or Recreate.
	Strategy string  `json:"strategy"`
	StartS   float64 `json:"start_s"`
	// DoneS is when every pod was new and available; nil if it had not finished.
	DoneS *float64 `json:"done_s"`
	// Created are the new pods; Deleted the old ones, in the order it replaced them.
	Created []string `json:"created,omitempty"`
	Deleted []string `json:"deleted,omitempty"`
	// Unschedulable says why new pods could not be placed at once.
	Unschedulable []string `json:"unschedulable,omitempty"`
}

// PendingPod is a pod that no node could take when the run ended.
type PendingPod struct {
	Name    string  `json:"name"`
	Service string  `json:"service"`
	SinceS  float64 `json:"since_s"`
	// Reason is the scheduler's last message, as kubectl describe shows it.
	Reason string `json:"reason"`
}

// Requests counts requests by outcome. Total = OK + Failed; requests still in flight
// when the run ended, abandoned ones and open-loop arrivals that found no free slot
// are counted apart: the requests sent are Total + InFlight + Abandoned.
type Requests struct {
	Total    int64 `json:"total"`
	OK       int64 `json:"ok"`
	Failed   int64 `json:"failed"`
	InFlight int64 `json:"in_flight"`
	NotSent  int64 `json:"not_sent"`
	// Retried counts requests a client library resent on another connection, without
	// the caller seeing an error, after a reused connection failed under them.
	Retried int64 `json:"retried"`
	// Abandoned are requests sent but given up without a result when their client
	// aborted its run (ab at a receive error); they are in no other count.
	Abandoned int64 `json:"abandoned,omitempty"`
}

// Errors counts failed requests by kind, named as the client sees them.
type Errors struct {
	Timeout           int64 `json:"timeout"`
	ConnectionRefused int64 `json:"connection_refused"`
	ConnectionReset   int64 `json:"connection_reset"`
	// ConnectionClosed: the server closed the connection before any answer (the
	// client reads EOF), as when the app exits with the request read.
	ConnectionClosed int64 `json:"connection_closed"`
	// HTTP503: a sidecar answered 503: no ready endpoint, a circuit breaker overflowed,
	// or the connection to the pod failed beyond its retries.
	HTTP503 int64 `json:"http_503"`
}

// Total is the sum of all kinds.
func (e Errors) Total() int64 {
	return e.Timeout + e.ConnectionRefused + e.ConnectionReset + e.ConnectionClosed + e.HTTP503
}

// Latency percentiles and extremes in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Pod is one server pod.
type Pod struct {
	Name    string `json:"name"`
	Service string `json:"service"`
	Node    string `json:"node"`
	// Requests the pod finished (including ones whose client had already given up).
	Requests int64 `json:"requests"`
	// Connections accepted.
	Connections int64 `json:"connections"`
	// InProgress are the requests it had accepted and not finished when the run
	// ended: on a worker, or queued for one.
	InProgress int64 `json:"in_progress,omitempty"`
	// CPUUtilization is CPU time used over the cores the pod may use (its limit, or its
	// node's cores) over its lifetime, 0..1; 0 when neither limits it.
	CPUUtilization float64 `json:"cpu_utilization"`
	// CPUCores is the average number of cores used.
	CPUCores float64 `json:"cpu_cores"`
	// StartS is when the pod was created; ReadyS when it first became Ready (null if
	// never); DeletedS when its deletion began; EndS when its process ended.
	StartS float64 `json:"start_s"`
	// PendingS is how long it waited for a node before being scheduled.
	PendingS float64  `json:"pending_s,omitempty"`
	ReadyS   *float64 `json:"ready_s"`
	DeletedS *float64 `json:"deleted_s"`
	EndS     *float64 `json:"end_s"`
	// Errors are the failed requests this pod's shutdown caused: connections refused
	// or reset by it, requests cut off by its exit, timeouts waiting on its gone IP.
	Errors Errors `json:"errors"`
	// QoSClass is Kubernetes' class from the pod's requests and limits.
	QoSClass string `json:"qos_class"`
	// Slow counts the pod's successful requests over the slow threshold; SlowShare
	// their share of its successful requests.
	Slow      int64   `json:"slow"`
	SlowShare float64 `json:"slow_share"`
	// WaitMS is the mean per request answered of where its time went.
	WaitMS Wait `json:"wait_ms"`
	// Throttling is the container's CFS bandwidth statistics (cgroup cpu.stat); nil
	// without a CPU limit.
	Throttling *Throttling `json:"throttling,omitempty"`
	// LogBlocked counts requests whose access-log write blocked on a full pipe.
	LogBlocked int64 `json:"log_blocked,omitempty"`
}

// Throttling is a container's cpu.stat: periods with runnable work, periods in
// which it ran out of quota, and the time it spent throttled.
type Throttling struct {
	Periods          int64   `json:"nr_periods"`
	ThrottledPeriods int64   `json:"nr_throttled"`
	ThrottledS       float64 `json:"throttled_s"`
}

// Node is one node and what ran on it.
type Node struct {
	Name string `json:"name"`
	// CPU cores; 0 = unlimited.
	CPU            float64 `json:"cpu"`
	CPUUtilization float64 `json:"cpu_utilization"`
	Pods           int     `json:"pods"`
	// DiskUtilization is the share of time its disk was busy writing; 0 without a
	// disk limit. DiskMaxWaitMS is the longest a write queued for it.
	DiskUtilization float64 `json:"disk_utilization"`
	DiskMaxWaitMS   float64 `json:"disk_max_wait_ms"`
	// NIC figures are set when the node's network interface has a bandwidth: the
	// share of time it was transmitting out (Tx) and in (Rx), and the longest a
	// packet queued for it either way.
	NICTxUtilization float64 `json:"nic_tx_utilization,omitempty"`
	NICRxUtilization float64 `json:"nic_rx_utilization,omitempty"`
	NICMaxWaitMS     float64 `json:"nic_max_wait_ms,omitempty"`
	// Slow counts successful requests over the slow threshold served by pods on the
	// node; SlowShare their share of the requests its pods served successfully.
	Slow      int64   `json:"slow"`
	SlowShare float64 `json:"slow_share"`
}

// Client is one client Deployment.
type Client struct {
	Name     string `json:"name"`
	Target   string `json:"target"`
	Replicas int    `json:"replicas"`
	// Threads per client pod (closed loop) or 0; RatePerPod requests/s per pod (open loop) or 0.
	Threads    int     `json:"threads"`
	RatePerPod float64 `json:"rate_per_pod"`
	Library    string  `json:"library"`
	Reuse      string  `json:"reuse"`
	MaxPerHost int     `json:"max_per_host"`
	MaxIdle    int     `json:"max_idle_per_host"`
	// MaxLifetimeS is the pool's connection lifetime in seconds; 0 = unlimited.
	MaxLifetimeS float64 `json:"max_lifetime_s"`
	// ConnectionsOpened over the run; PeakOpen at any instant; OpenAtEnd when it ended.
	ConnectionsOpened int64 `json:"connections_opened"`
	PeakOpen          int64 `json:"peak_open_connections"`
	OpenAtEnd         int64 `json:"open_connections_at_end"`
	// PodsReached is how many distinct server pods this client's connections went to.
	PodsReached int   `json:"pods_reached"`
	Requests    int64 `json:"requests"`
	Errors      int64 `json:"errors"`
	// RunsAborted counts runs the tool ended at a receive error, as ab does.
	RunsAborted int64 `json:"runs_aborted"`
	// Runs are the client's phases in the order they ran (repeats included), over
	// all its pods; absent for a client without phases.
	Runs []Run `json:"runs,omitempty"`
}

// Run is one phase of a client's load as it ran.
type Run struct {
	Phase    int     `json:"phase"` // index in the scenario's phase list
	Name     string  `json:"name,omitempty"`
	StartS   float64 `json:"start_s"`
	EndS     float64 `json:"end_s"` // the run's end, or the simulation's if still running
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Aborted  bool    `json:"aborted"`
}

// Point is one interval of the timeline.
type Point struct {
	TS float64 `json:"t_s"`
	// Replicas per service at the interval's end: pods not terminating, Pending
	// ones included;
	// DesiredReplicas is the Deployment's spec.replicas; ReadyEndpoints the ready
	// endpoints of its EndpointSlice.
	Replicas        map[string]int `json:"replicas"`
	DesiredReplicas map[string]int `json:"desired_replicas"`
	ReadyEndpoints  map[string]int `json:"ready_endpoints"`
	Requests        int64          `json:"requests"`
	Errors          int64          `json:"errors"`
	// ErrorsByKind splits Errors; absent when there were none.
	ErrorsByKind *Errors `json:"errors_by_kind,omitempty"`
	// Percentiles of the interval's successful requests (2 significant digits).
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p999_ms"`
	// Slow counts the interval's successful requests over the slow threshold.
	Slow int64 `json:"slow"`
	// PodRequests are the requests each pod finished in the interval; pods that
	// finished none are left out, and a run with more than 200 pods has none.
	PodRequests map[string]int64 `json:"pod_requests,omitempty"`
	// NodeCPUCores is the mean cores each node's containers used in the interval;
	// absent with a single node.
	NodeCPUCores map[string]float64 `json:"node_cpu_cores,omitempty"`
}

// Percentile is one step of the latency spectrum: Percentile of the successful
// requests took at most MS; Count is how many that is.
type Percentile struct {
	Percentile float64 `json:"percentile"`
	MS         float64 `json:"ms"`
	Count      int64   `json:"count"`
}
