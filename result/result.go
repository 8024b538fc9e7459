// Package result is the contract between engines and reports: every engine fills a
// Result, every report reads only a Result.
package result

import "trafficlab/model/kubeproxy"

// Result of one run. JSON field names are a public interface: add, never rename.
type Result struct {
	// Engine that ran it: simulate or emulate.
	Engine string `json:"engine"`
	// Scenario is the scenario's metadata.name.
	Scenario string `json:"scenario"`
	// Seed of the run's random streams.
	Seed int64 `json:"seed"`
	// DurationS is the time the run covered: the scenario's duration, or less when
	// it was interrupted.
	DurationS float64 `json:"duration_s"`
	// Interrupted is set when SIGINT or SIGTERM stopped the run early: every figure,
	// rates included, covers DurationS, not PlannedDurationS.
	Interrupted bool `json:"interrupted,omitempty"`
	// PlannedDurationS is the duration the run was to cover; set only when it was
	// interrupted.
	PlannedDurationS float64 `json:"planned_duration_s,omitempty"`
	// Origin is what the run was asked to run; absent when it was not recorded.
	Origin *Origin `json:"origin,omitempty"`
	// Cluster is the cluster a run of the cluster engine ran on, and what it does
	// differently from the scenario.
	Cluster *ClusterRun `json:"cluster,omitempty"`
	// ProxyMode is kube-proxy's mode: iptables, nftables, ipvs or userspace. On the
	// cluster engine, the cluster's when its kube-proxy ConfigMap says it.
	ProxyMode kubeproxy.Mode `json:"proxy_mode"`
	// IPVSScheduler is set in ipvs mode: rr, lc, sh, sed or nq.
	IPVSScheduler string `json:"ipvs_scheduler,omitempty"`

	// Requests counts the run's requests by outcome.
	Requests Requests `json:"requests"`
	// Errors counts the failed requests by kind.
	Errors Errors `json:"errors"`
	// ThroughputRPS is successful requests per second of the run.
	ThroughputRPS float64 `json:"throughput_rps"`
	// RateRPS is requests sent per second of the run.
	RateRPS float64 `json:"rate_rps"`
	// LatencyMS summarises successful requests, from sending to the last byte received.
	LatencyMS Latency `json:"latency_ms"`

	// Pods are every server pod that existed during the run, removed ones included.
	Pods []Pod `json:"pods"`
	// Nodes are the cluster's nodes.
	Nodes []Node `json:"nodes"`
	// Clients are the client Deployments.
	Clients []Client `json:"clients"`

	// TimelineIntervalS is the length of one timeline interval: 1 s, wider for runs
	// longer than an hour (at most 3,600 points).
	TimelineIntervalS float64 `json:"timeline_interval_s"`
	// Timeline is the run interval by interval.
	Timeline []Point `json:"timeline"`
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
	// Slow counts the successful requests over the slow threshold.
	Slow int64 `json:"slow"`
	// SlowShare is Slow's share of the successful requests.
	SlowShare float64 `json:"slow_share"`
	// Suspects rank the node resources whose waits make up the slow requests' time,
	// worst first; empty when no request was slow.
	Suspects []Suspect `json:"suspects,omitempty"`
	// Background are the workloads that share nodes without serving traffic.
	Background []Background `json:"background,omitempty"`
	// Ended sums up every request that ended, failed ones included, as vegeta's
	// report does; nil when the engine did not keep it.
	Ended *Ended `json:"ended,omitempty"`
	// Overloads are the services whose clients offered more requests than their
	// pods could serve; empty when every service kept up.
	Overloads []Overload `json:"overloads,omitempty"`
	// Services are the server Deployments as the scenario configured them: how many
	// pods they asked for and how those pods shut down. Absent from results written
	// before it existed.
	Services []Service `json:"services,omitempty"`
	// Edges are the services' calls to one another, in the order the scenario lists
	// the callers and their calls; absent when no service calls another.
	Edges []Edge `json:"edges,omitempty"`
	// SlowPath is where the slow requests' time went along their critical path across
	// the services they called, by service and kind, the largest first (each at least
	// 1 % of it); absent when no service calls another or no request was slow.
	SlowPath []PathShare `json:"slow_path,omitempty"`
	// Faults are the faults that ran (spec.faults), in the scenario's order; those
	// due after the run's end are left out.
	Faults []Fault `json:"faults,omitempty"`
}

// Service is the configuration of a server Deployment that decides how its pods
// end: what the reports' advice on removed pods starts from.
type Service struct {
	// Name of the service.
	Name string `json:"name"`
	// Replicas is the Deployment's spec.replicas at the start.
	Replicas int `json:"replicas"`
	// OnSigterm is what the app does on SIGTERM: exit (at once) or drain (stop
	// accepting, close idle connections, finish the requests in progress, then exit).
	OnSigterm string `json:"on_sigterm"`
	// DrainTimeoutS bounds a drain; 0 when the drain lasts until SIGKILL, or the app
	// exits at once.
	DrainTimeoutS float64 `json:"drain_timeout_s,omitempty"`
	// PreStopS is how long after its deletion a pod keeps serving before SIGTERM: its
	// preStop hook's time, cut to the grace period; 0 without a hook.
	PreStopS float64 `json:"pre_stop_s"`
	// TerminationGracePeriodS is terminationGracePeriodSeconds: from the deletion to
	// SIGKILL, preStop included.
	TerminationGracePeriodS float64 `json:"termination_grace_period_s"`
	// GRPCMaxConnectionAgeS is its gRPC server's maxConnectionAge; 0 for none.
	GRPCMaxConnectionAgeS float64 `json:"grpc_max_connection_age_s,omitempty"`
	// GRPCMaxConnectionAgeGraceS is how long after the age's GOAWAY its gRPC server
	// closes the connection; 0 for never.
	GRPCMaxConnectionAgeGraceS float64 `json:"grpc_max_connection_age_grace_s,omitempty"`
	// Headless: it has no ClusterIP (clusterIP: None); clients connect to the pods
	// its name resolves to.
	Headless bool `json:"headless,omitempty"`
	// IdleTimeoutS is how long its app keeps an HTTP/1.1 connection no request
	// comes on (pod.idleTimeout); 0 for ever.
	IdleTimeoutS float64 `json:"idle_timeout_s,omitempty"`
	// IdleCloseResets counts requests that reached a connection its app had
	// already closed as idle, and were reset; 0 where the engine cannot tell.
	IdleCloseResets int64 `json:"idle_close_resets,omitempty"`
	// Calls is set when the scenario's services call one another; the figures below
	// are then the service's own, as its pods saw them.
	Calls bool `json:"calls,omitempty"`
	// Requests its pods answered, failed answers included.
	Requests int64 `json:"requests,omitempty"`
	// Errors are the requests its pods answered with a 503 because a call they made
	// failed after its retries.
	Errors int64 `json:"errors,omitempty"`
	// LatencyMS is the time its pods held a request: from reaching the app to the
	// answer leaving it (queueing, CPU, waits and calls), for the requests answered.
	LatencyMS *Latency `json:"latency_ms,omitempty"`
}

// PathShare is one part of the slow requests' critical path across services: a
// service's own time of one kind (work, queue, ...), reached by the clients'
// requests or by Caller's calls, or the time on the way (network) of Caller's calls
// to Service (with neither named, the clients' own network and connection waits).
type PathShare struct {
	// Caller is the service whose calls reached it; empty for the clients' requests.
	Caller string `json:"caller,omitempty"`
	// Service is the service whose time it is, or which the calls on the way went to.
	Service string `json:"service,omitempty"`
	// Part is work, queue, cpu, throttled, disk, dependency (waitTime) or network.
	Part string `json:"part"`
	// ShareOfTail is its share of the slow requests' time.
	ShareOfTail float64 `json:"share_of_tail"`
	// Pod is the service's pod with the largest share of it; empty for time on the
	// way.
	Pod string `json:"pod,omitempty"`
	// PodShare is that pod's share of the slow requests' time, 0 to 1; absent with
	// no pod.
	PodShare float64 `json:"pod_share,omitempty"`
}

// Resolution is how a client resolves a headless Service's name, as its library
// does.
type Resolution struct {
	// CacheS is how long it keeps an answer: 0 looks the name up for every new
	// connection, -1 keeps the first answer for the run.
	CacheS float64 `json:"cache_s"`
	// Pick is the address a new connection takes: first, rotate (the next in
	// turn) or random.
	Pick string `json:"pick"`
	// OneAddress: a connection tries no other address when its own refuses.
	OneAddress bool `json:"one_address,omitempty"`
	// ReresolveS: a gRPC channel keeps its addresses, and resolves again after it
	// loses a connection, at most once per this many seconds; 0 for other clients.
	ReresolveS float64 `json:"reresolve_s,omitempty"`
	// SkipsEarly: a channel that loses a connection sooner than ReresolveS after
	// its last resolution does not resolve again, rather than wait.
	SkipsEarly bool `json:"skips_early,omitempty"`
}

// Edge is one service's calls to another: every call its pods made to it.
type Edge struct {
	// From is the calling service.
	From string `json:"from"`
	// To is the service called.
	To string `json:"to"`
	// Requests are the calls that ended, answered or failed after their retries.
	Requests int64 `json:"requests"`
	// Attempts are the tries made for them, retries included, each counted when it
	// starts: one still waiting for a pooled connection counts.
	Attempts int64 `json:"attempts"`
	// Retries are the attempts after a failed one.
	Retries int64 `json:"retries"`
	// Errors are the calls that failed after their retries, by the error of their last
	// attempt.
	Errors Errors `json:"errors"`
	// AttemptErrors are the attempts that failed, by error, retried ones included.
	AttemptErrors Errors `json:"attempt_errors"`
	// LatencyMS is the answered calls' latency as the caller saw it: from its first
	// attempt to the last byte of the answer, connection waits and retries included.
	LatencyMS Latency `json:"latency_ms"`
	// ConnectionsOpened by the calling pods to the called service's pods.
	ConnectionsOpened int64 `json:"connections_opened"`
	// PeakOpen is the most of those connections open at any instant.
	PeakOpen int64 `json:"peak_open_connections"`
	// PodsReached is how many distinct pods of the called service those connections
	// went to.
	PodsReached int `json:"pods_reached"`
}

// Fault is one fault that ran.
type Fault struct {
	// Name of the fault (spec.faults[].name); empty when it had none.
	Name string `json:"name,omitempty"`
	// Kind: loss, delay, bandwidth, partition (every packet dropped) or pod-kill.
	Kind string `json:"kind"`
	// Target is the pods it acted on, as the scenario selected them: "pod web-1",
	// "service web", "client load", "node pool-0".
	Target string `json:"target"`
	// Peer limits a network fault to the target's packets to and from these pods,
	// written as Target; empty for every pod.
	Peer string `json:"peer,omitempty"`
	// Direction of a network fault: the packets the target sends (to), receives
	// (from), or both.
	Direction string `json:"direction,omitempty"`
	// StartS is when it started, from the start of the run.
	StartS float64 `json:"start_s"`
	// EndS is when it ended: a network fault at its end or the run's, whichever came
	// first; a pod-kill, which acts at once, at its start.
	EndS float64 `json:"end_s"`
}

// Ended is what vegeta's report (lib/metrics.go, Metrics.Add and Close) computes
// from the requests that ended, Requests.Total of them: latencies over all of them,
// failures at their time to failure; the window they were sent in; their bytes,
// codes and distinct errors. Times are nanoseconds since the run's start.
type Ended struct {
	// LatencyMS summarises every ended request's latency.
	LatencyMS Latency `json:"latency_ms"`
	// LatencySumNS is the exact sum of their latencies, in nanoseconds.
	LatencySumNS int64 `json:"latency_sum_ns"`
	// LatencyMinNS is the exact smallest latency, in nanoseconds.
	LatencyMinNS int64 `json:"latency_min_ns"`
	// LatencyMaxNS is the exact largest latency, in nanoseconds.
	LatencyMaxNS int64 `json:"latency_max_ns"`
	// FirstSentNS is when the first of them was sent.
	FirstSentNS int64 `json:"first_sent_ns"`
	// LastSentNS is when the last of them was sent.
	LastSentNS int64 `json:"last_sent_ns"`
	// LastEndNS is when the last of them ended.
	LastEndNS int64 `json:"last_end_ns"`
	// StartUnixNS is the run's start on the wall clock, in Unix nanoseconds, for a
	// run that had one (a real vegeta attack, load or emulate); 0 for a simulated one.
	StartUnixNS int64 `json:"start_unix_ns,omitempty"`
	// BytesOut are the request bodies of the requests answered, in bytes; a
	// request without an answer counts none, as in vegeta.
	BytesOut int64 `json:"bytes_out"`
	// BytesIn are the answers' body bytes.
	BytesIn int64 `json:"bytes_in"`
	// StatusCodes counts them by HTTP status, "0" for no answer.
	StatusCodes map[string]int64 `json:"status_codes"`
	// Errors are the distinct failures, in the order they first ended (load and
	// emulate keep the first 100: a message naming a connection is distinct per one).
	Errors []EndedError `json:"errors,omitempty"`
}

// EndedError is one distinct failure: its kind (as Errors names it; empty for one
// no kind describes) on a request of this method to this service, or the message
// the client wrote when it is known (a real vegeta attack's, load's, emulate's).
type EndedError struct {
	// Kind is the failure's kind as Errors names it; empty for one no kind describes.
	Kind string `json:"kind,omitempty"`
	// Service is the Service the failed request was sent to.
	Service string `json:"service,omitempty"`
	// Method is the failed request's HTTP method.
	Method string `json:"method,omitempty"`
	// Message is the error as the client wrote it, when known (a real vegeta
	// attack's; load's and emulate's, worded as Go's http.Client would).
	Message string `json:"message,omitempty"`
}

// ClusterRun is the cluster the cluster engine ran on, as it found it.
type ClusterRun struct {
	// Server is the API server's URL.
	Server string `json:"server"`
	// Version is the API server's Kubernetes version, as it reports it: v1.36.3.
	Version string `json:"version"`
	// Namespace is the namespace the run's objects were in.
	Namespace string `json:"namespace"`
	// Image is the trafficlab image the run's pods ran.
	Image string `json:"image"`
	// ProxyMode is kube-proxy's mode from its ConfigMap (kube-system/kube-proxy, as
	// kubeadm writes it); empty when the cluster has no such ConfigMap.
	ProxyMode string `json:"proxy_mode,omitempty"`
	// ProxyMinSyncPeriodS is the minSyncPeriod of that mode's section of the
	// ConfigMap, in seconds; absent when the ConfigMap does not set it.
	ProxyMinSyncPeriodS *float64 `json:"proxy_min_sync_period_s,omitempty"`
	// MetricsServer says the resource metrics API (metrics.k8s.io) answered, which
	// an HPA on CPU needs.
	MetricsServer bool `json:"metrics_server"`
	// Differences are what the cluster decides otherwise than the scenario says,
	// each a sentence.
	Differences []string `json:"differences,omitempty"`
}

// Origin is how a run was asked for, so that two runs of one file tell apart: the
// file and the command line's overrides of it, in the order they applied.
type Origin struct {
	// File is the scenario file as given; empty for the built-in example.
	File string `json:"file,omitempty"`
	// Sets are the --set overrides, PATH=VALUE, in the order given (a later one wins).
	Sets []string `json:"sets,omitempty"`
	// Seed is --seed when given; it overrides the file's spec.seed.
	Seed *int64 `json:"seed,omitempty"`
	// DurationS is --duration in seconds when given; it overrides the file's
	// spec.duration.
	DurationS float64 `json:"duration_s,omitempty"`
	// Scale is emulate's --scale when given.
	Scale float64 `json:"scale,omitempty"`
}

// Overload is a service that got more requests than were answered in time because
// a resource ran out: its pods' or its clients' connection pools. It holds the
// rates, what saturated, and an estimate of what would carry the load.
type Overload struct {
	// Service is the overloaded Service's name.
	Service string `json:"service"`
	// OfferedRPS is the requests per second its clients sent it, open-loop arrivals
	// that found no free slot included.
	OfferedRPS float64 `json:"offered_rps"`
	// ServedRPS is the requests per second its clients got answers to in time.
	ServedRPS float64 `json:"served_rps"`
	// FinishedRPS is the requests per second its pods finished, answered in time or
	// after their clients had given up.
	FinishedRPS float64 `json:"finished_rps"`
	// Saturated names what ran out: "cpu" (its pods used all of their CPU limits),
	// "node_cpu" (without a limit, the cores of the nodes they ran on), "workers"
	// (requests queued for an app worker) and "pool" (its clients' requests waited
	// for a pooled connection).
	Saturated []string `json:"saturated"`
	// NodeCores are the cores of the nodes its pods ran on, when node_cpu ran out.
	NodeCores float64 `json:"node_cores,omitempty"`
	// PodsCores is the CPU its pods used, in cores over the run; set when
	// node_cpu ran out.
	PodsCores float64 `json:"pods_cores,omitempty"`
	// NodeProxyCores is the CPU kube-proxy's relaying used on the nodes its pods
	// ran on, in cores over the run; set when node_cpu ran out.
	NodeProxyCores float64 `json:"node_proxy_cores,omitempty"`
	// NodeClientCores is the CPU client pods' own work used on the nodes its pods
	// ran on, in cores over the run; set when node_cpu ran out.
	NodeClientCores float64 `json:"node_client_cores,omitempty"`
	// NodeOtherCores is the CPU everything else used on those nodes (other
	// services' pods, sidecars, background workloads), in cores over the run; set
	// when node_cpu ran out.
	NodeOtherCores float64 `json:"node_other_cores,omitempty"`
	// CPUUtilization is its pods' CPU over what they may use, over their lives (a
	// share, 1 = all of it).
	CPUUtilization float64 `json:"cpu_utilization"`
	// ThrottledShare is the share of CFS periods in which its pods ran out of quota
	// (0 without a CPU limit).
	ThrottledShare float64 `json:"throttled_share"`
	// QueuedAtEnd are the requests waiting for an app worker at the end, those
	// their clients had given up on included.
	QueuedAtEnd int64 `json:"queued_at_end"`
	// QueuedAbandonedAtEnd are the requests of QueuedAtEnd their clients had given
	// up on.
	QueuedAbandonedAtEnd int64 `json:"queued_abandoned_at_end"`
	// PoolWaitersAtEnd are the requests its clients held waiting for a pooled
	// connection at the end.
	PoolWaitersAtEnd int64 `json:"pool_waiters_at_end"`
	// PoolWaited are the requests that waited for a pooled connection, got one or
	// not; those waiting at the end left out.
	PoolWaited int64 `json:"pool_waited"`
	// PoolWaitMS is the mean wait of the PoolWaited requests, in ms.
	PoolWaitMS float64 `json:"pool_wait_ms"`
	// PoolTimedOut are the requests that timed out still waiting for a pooled
	// connection: no pod ever saw them.
	PoolTimedOut int64 `json:"pool_timed_out"`
	// PoolConnections is the most connections its clients' pools may hold to it:
	// maxPerHost for each client pod's pool (0: unbounded).
	PoolConnections int `json:"pool_connections"`
	// PoolHoldMS is the mean time a request answered in time held its pooled
	// connection, in ms.
	PoolHoldMS float64 `json:"pool_hold_ms"`
	// ConnectionsNeeded is the fewest pooled connections that could carry
	// OfferedRPS at all (OfferedRPS × PoolHoldMS, Little's law); 0 unless pool ran
	// out.
	ConnectionsNeeded int `json:"connections_needed,omitempty"`
	// MaxPerHostNeeded is ConnectionsNeeded shared over the client pods' pools.
	MaxPerHostNeeded int `json:"max_per_host_needed,omitempty"`
	// PoolPath is the scenario field that bounds the pool; empty unless pool ran out.
	PoolPath string `json:"pool_path,omitempty"`
	// CPUPerRequestMS is the CPU its pods spent per request they finished, in ms.
	CPUPerRequestMS float64 `json:"cpu_per_request_ms"`
	// CoresPerPod is the mean number of cores a pod got.
	CoresPerPod float64 `json:"cores_per_pod"`
	// HoldMS is the mean time a request held an app worker, in ms.
	HoldMS float64 `json:"hold_ms"`
	// Workers is the app workers a pod has (0: unbounded).
	Workers int `json:"workers"`
	// Replicas are its pods serving at the end.
	Replicas int `json:"replicas"`
	// PendingAtEnd are its pods no node could take at the end.
	PendingAtEnd int `json:"pending_at_end"`
	// ReplicasNeeded is the fewest pods that could serve OfferedRPS at all (each
	// below full use of what saturated); 0 when more replicas would not help
	// (node_cpu alone: they share the cores; pool alone: the pods kept up).
	ReplicasNeeded int `json:"replicas_needed"`
	// PodRequestCores is a pod's CPU request, what the scheduler fits on nodes.
	PodRequestCores float64 `json:"pod_request_cores,omitempty"`
	// PodsFit is the most of its pods the nodes' allocatable CPU takes beside the
	// other workloads' requests, when fewer than ReplicasNeeded fit; 0 otherwise.
	PodsFit int `json:"pods_fit,omitempty"`
	// NodesNeeded is how many more nodes of the largest kind the pods that do not
	// fit need; 0 unless PodsFit is set.
	NodesNeeded int `json:"nodes_needed,omitempty"`
	// NodeCoresEach are the allocatable cores of that kind of node.
	NodeCoresEach float64 `json:"node_cores_each,omitempty"`
	// ReplicasPath is the scenario field that sets its replicas: the autoscaler's
	// maxReplicas, or replicas, the count the run starts with, also when Replicas
	// already reach ReplicasNeeded (the queue built while fewer served); empty
	// without ReplicasNeeded.
	ReplicasPath string `json:"replicas_path"`
	// Sweep is the axis of the sweep that finds the fewest of what ran out with no
	// errors; nil when no sweep over one field can (pods that would not fit, more
	// cores). The report writes the command from it and Origin.
	Sweep *OverloadSweep `json:"sweep,omitempty"`
}

// OverloadSweep is a sweep axis: the scenario field and its range.
type OverloadSweep struct {
	// Path is the scenario field swept.
	Path string `json:"path"`
	// From is its first value.
	From int `json:"from"`
	// To is its last value, included.
	To int `json:"to"`
}

// Wait is where requests' time went, in milliseconds: mean per request, or summed,
// as the field holding it says. CPU is time runnable but waiting for a core taken by
// others; Throttled is time stalled by the container's own CFS quota; Disk is time
// blocked writing the access log; Queue is time waiting for an app worker;
// Dependency is off-CPU waiting (a call to a dependency); Network is the rest of the
// latency: the network, the client and sidecars.
type Wait struct {
	// Work is time running on a core: the request's own CPU work.
	Work float64 `json:"work"`
	// Queue is time waiting for an app worker.
	Queue float64 `json:"queue"`
	// CPU is time runnable but waiting for a core taken by others.
	CPU float64 `json:"cpu"`
	// Throttled is time stalled by the container's own CFS quota.
	Throttled float64 `json:"throttled"`
	// Disk is time blocked writing the access log.
	Disk float64 `json:"disk"`
	// Dependency is off-CPU waiting, such as a call to a dependency.
	Dependency float64 `json:"dependency"`
	// Network is the rest of the latency: the network, the client and sidecars.
	Network float64 `json:"network"`
}

// Suspect is one node resource and how much of the slow requests' time waiting for
// it explains.
type Suspect struct {
	// Node whose resource it is.
	Node string `json:"node"`
	// Resource: cpu (contention for cores), throttled (CPU limits), disk, queue (app
	// workers), dependency or network.
	Resource string `json:"resource"`
	// Neighbour is the workload on the node that used the resource most, other than
	// the slow pods' own service; empty when it is the pods themselves.
	Neighbour string `json:"neighbour,omitempty"`
	// ShareOfTail is the share of all slow requests' latency spent waiting for this
	// resource on this node; SlowRequests is how many slow requests waited on it.
	ShareOfTail float64 `json:"share_of_tail"`
	// SlowRequests is how many slow requests waited on it.
	SlowRequests int64 `json:"slow_requests"`
}

// Background is a workload that served no traffic.
type Background struct {
	// Name of the workload (spec.background[].name).
	Name string `json:"name"`
	// Node it ran on.
	Node string `json:"node"`
	// CPUCores is the mean cores it used.
	CPUCores float64 `json:"cpu_cores"`
	// DiskWrittenBytes is what it wrote over the run.
	DiskWrittenBytes int64 `json:"disk_written_bytes"`
	// DiskBytesPerSecond is what it wrote per second, on average.
	DiskBytesPerSecond float64 `json:"disk_bytes_per_second"`
}

// A sidecar's directions (Sidecar.Direction).
const (
	SidecarInbound  = "inbound"
	SidecarOutbound = "outbound"
	SidecarBoth     = "both"
)

// Sidecar is one Envoy proxy: how busy its worker threads and its CPU were.
type Sidecar struct {
	// Pod the sidecar is in.
	Pod string `json:"pod"`
	// Node the pod ran on, whose cores the sidecar's workers used; empty when not
	// recorded.
	Node string `json:"node,omitempty"`
	// Direction: inbound (in front of a service's app), outbound (a client's), or
	// both (a service's whose app also called other services through it: its
	// requests count both ways).
	Direction string `json:"direction"`
	// Workers is its worker threads (Envoy's --concurrency).
	Workers int `json:"workers"`
	// WorkerUtilization is the mean share of time its workers were busy, over its life
	// in the run; a value near 1 means requests queue for a worker.
	WorkerUtilization float64 `json:"worker_utilization"`
	// CPUUtilization is the CPU used over its limit (or over the node's cores without
	// one); CPUCores the mean cores used.
	CPUUtilization float64 `json:"cpu_utilization"`
	// CPUCores is the mean cores it used.
	CPUCores float64 `json:"cpu_cores"`
	// CPULimit is its container's CPU limit in cores; 0 = none.
	CPULimit float64 `json:"cpu_limit"`
	// Requests it proxied.
	Requests int64 `json:"requests"`
	// Retries it made under its retry policy.
	Retries int64 `json:"retries"`
	// Overflows are requests a circuit breaker refused.
	Overflows int64 `json:"overflows"`
	// HTTP503 counts every 503 it answered.
	HTTP503 int64 `json:"http_503"`
	// NoSuchHost: a headless Service's name did not resolve, because it had no
	// ready pod (DNS answers NXDOMAIN). Present only when some did.
	NoSuchHost int64 `json:"no_such_host,omitempty"`
}

// TCP counts segment-level events over all connections of the run.
type TCP struct {
	// Segments sent, retransmissions included.
	Segments int64 `json:"segments"`
	// Retransmits counts every segment sent again.
	Retransmits int64 `json:"retransmits"`
	// FastRetransmits are retransmissions on duplicate ACKs or SACK (RACK), without
	// waiting for a timer.
	FastRetransmits int64 `json:"fast_retransmits"`
	// RTOEvents are retransmission timeouts: a wait of at least 200 ms (Linux's
	// minimum RTO) with nothing acknowledged.
	RTOEvents int64 `json:"rto_events"`
	// TLPEvents are tail loss probes: Linux resending the last segment when its ACK
	// is late.
	TLPEvents int64 `json:"tlp_events"`
	// SynRetransmits are SYNs sent again (after 1 s, then doubling).
	SynRetransmits int64 `json:"syn_retransmits"`
	// Connections is how many TCP connections were opened; WorstConnections lists
	// the ones with the most retransmissions, worst first.
	Connections int64 `json:"connections"`
	// WorstConnections are the connections with the most retransmissions, worst first.
	WorstConnections []TCPConn `json:"worst_connections,omitempty"`
}

// TCPConn is one connection's retransmission record.
type TCPConn struct {
	// Client pod that opened it.
	Client string `json:"client"`
	// Pod it went to.
	Pod string `json:"pod"`
	// OpenedS is when it was opened.
	OpenedS float64 `json:"opened_s"`
	// ClosedS is when it closed; null if it was open at the end.
	ClosedS *float64 `json:"closed_s"`
	// Retransmits of its segments.
	Retransmits int64 `json:"retransmits"`
	// RTOEvents are its retransmission timeouts.
	RTOEvents int64 `json:"rto_events"`
	// TLPEvents are its tail loss probes.
	TLPEvents int64 `json:"tlp_events"`
}

// Bucket is one latency bucket: [FromMS, ToMS), the last one open-ended (ToMS nil).
type Bucket struct {
	// FromMS is the bucket's lower bound, included.
	FromMS float64 `json:"from_ms"`
	// ToMS is its upper bound, excluded; null for the last, open-ended bucket.
	ToMS *float64 `json:"to_ms"`
	// Count of requests in it.
	Count int64 `json:"count"`
	// Share of all counted requests in it.
	Share float64 `json:"share"`
}

// Sample is one request: when it was sent, how long it took, and its error kind if
// it failed (its latency is then the time to the failure).
type Sample struct {
	// TS is when it was sent.
	TS float64 `json:"t_s"`
	// LatencyMS is how long it took, to its answer or its failure.
	LatencyMS float64 `json:"latency_ms"`
	// Error is its error kind as Errors names it; absent on success.
	Error string `json:"error,omitempty"`
}

// ScaleEvent is one change of a Deployment's spec.replicas by its autoscaler.
type ScaleEvent struct {
	// TS is when the HPA changed spec.replicas.
	TS float64 `json:"t_s"`
	// Service whose Deployment it scaled.
	Service string `json:"service"`
	// From is spec.replicas before.
	From int `json:"from"`
	// To is spec.replicas after.
	To int `json:"to"`
	// Reason is the metric and target that triggered it, as the HPA reports it.
	Reason string `json:"reason"`
	// Deleted names the pods a scale-in chose to delete.
	Deleted []string `json:"deleted,omitempty"`
	// Created names the pods a scale-out added.
	Created []string `json:"created,omitempty"`
	// Unschedulable says why pods it created could not be placed at once; they wait
	// Pending until a node has room (see Pending).
	Unschedulable []string `json:"unschedulable,omitempty"`
}

// Rollout is one rollout of a Deployment (kubectl rollout restart): a new
// ReplicaSet replacing the old pods under the Deployment's strategy.
type Rollout struct {
	// Service whose Deployment rolled out.
	Service string `json:"service"`
	// Strategy: RollingUpdate or Recreate.
	Strategy string `json:"strategy"`
	// StartS is when it started.
	StartS float64 `json:"start_s"`
	// DoneS is when every pod was new and available; nil if it had not finished.
	DoneS *float64 `json:"done_s"`
	// Created are the new pods, in the order it created them.
	Created []string `json:"created,omitempty"`
	// Deleted are the old pods, in the order it replaced them.
	Deleted []string `json:"deleted,omitempty"`
	// Unschedulable says why new pods could not be placed at once.
	Unschedulable []string `json:"unschedulable,omitempty"`
}

// PendingPod is a pod that no node could take when the run ended.
type PendingPod struct {
	// Name of the pod.
	Name string `json:"name"`
	// Service it belongs to.
	Service string `json:"service"`
	// SinceS is when it was created and began waiting.
	SinceS float64 `json:"since_s"`
	// Reason is the scheduler's last message, as kubectl describe shows it.
	Reason string `json:"reason"`
}

// Requests counts requests by outcome. Total = OK + Failed; requests still in flight
// when the run ended, abandoned ones and open-loop arrivals that found no free slot
// are counted apart: the requests sent are Total + InFlight + Abandoned.
type Requests struct {
	// Total is every request that finished: OK + Failed.
	Total int64 `json:"total"`
	// OK are the requests answered in time.
	OK int64 `json:"ok"`
	// Failed are the requests that ended in an error (see Errors).
	Failed int64 `json:"failed"`
	// InFlight are the requests still unanswered when the run ended.
	InFlight int64 `json:"in_flight"`
	// NotSent are open-loop arrivals that found every slot of maxInFlight busy.
	NotSent int64 `json:"not_sent"`
	// Behind are open-loop arrivals a client had not sent when their phase ended,
	// because its CPU could not keep up with its rate.
	Behind int64 `json:"behind_schedule,omitempty"`
	// Retried counts requests a client library resent on another connection, without
	// the caller seeing an error, after a reused connection failed under them.
	Retried int64 `json:"retried"`
	// Abandoned are requests sent but given up without a result when their client
	// aborted its run (ab at a receive error); they are in no other count.
	Abandoned int64 `json:"abandoned,omitempty"`
}

// Errors counts failed requests by kind, named as the client sees them.
type Errors struct {
	// Timeout: no answer within the client's timeout.
	Timeout int64 `json:"timeout"`
	// ConnectionRefused: the connection was refused (RST to the SYN, or kube-proxy's
	// REJECT of a Service without endpoints).
	ConnectionRefused int64 `json:"connection_refused"`
	// ConnectionReset: the connection was reset with the request on it.
	ConnectionReset int64 `json:"connection_reset"`
	// ConnectionClosed: the server closed the connection before any answer (the
	// client reads EOF), as when the app exits with the request read.
	ConnectionClosed int64 `json:"connection_closed"`
	// HTTP503: a sidecar answered 503: no ready endpoint, a circuit breaker overflowed,
	// or the connection to the pod failed beyond its retries.
	HTTP503 int64 `json:"http_503"`
	// NoSuchHost: a headless Service's name did not resolve, because it had no
	// ready pod (DNS answers NXDOMAIN). Present only when some did.
	NoSuchHost int64 `json:"no_such_host,omitempty"`
}

// Latency percentiles and extremes in milliseconds.
type Latency struct {
	// Min is the fastest.
	Min float64 `json:"min"`
	// Mean is the average.
	Mean float64 `json:"mean"`
	// P50 is the median.
	P50 float64 `json:"p50"`
	// P90 is the 90th percentile.
	P90 float64 `json:"p90"`
	// P95 is the 95th percentile.
	P95 float64 `json:"p95"`
	// P99 is the 99th percentile.
	P99 float64 `json:"p99"`
	// P999 is the 99.9th percentile.
	P999 float64 `json:"p999"`
	// Max is the slowest.
	Max float64 `json:"max"`
}

// Pod is one server pod.
type Pod struct {
	// Name of the pod, SERVICE-N.
	Name string `json:"name"`
	// Service it belongs to.
	Service string `json:"service"`
	// Node it ran on.
	Node string `json:"node"`
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
	// StartS is when the pod was created.
	StartS float64 `json:"start_s"`
	// PendingS is how long it waited for a node before being scheduled.
	PendingS float64 `json:"pending_s,omitempty"`
	// ReadyS is when it first became Ready; null if never.
	ReadyS *float64 `json:"ready_s"`
	// DeletedS is when its deletion began; null if it was not deleted.
	DeletedS *float64 `json:"deleted_s"`
	// EndS is when its process ended; null if it was running at the end.
	EndS *float64 `json:"end_s"`
	// Errors are the failed requests this pod's shutdown caused: connections refused
	// or reset by it, requests cut off by its exit, timeouts waiting on its gone IP.
	Errors Errors `json:"errors"`
	// QoSClass is Kubernetes' class from the pod's requests and limits.
	QoSClass string `json:"qos_class"`
	// Slow counts the pod's successful requests over the slow threshold.
	Slow int64 `json:"slow"`
	// SlowShare is Slow's share of its successful requests.
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
	// Periods are the 100 ms CFS periods in which it had runnable work (nr_periods).
	Periods int64 `json:"nr_periods"`
	// ThrottledPeriods are the periods in which it ran out of quota (nr_throttled).
	ThrottledPeriods int64 `json:"nr_throttled"`
	// ThrottledS is the time its threads spent throttled (throttled_usec).
	ThrottledS float64 `json:"throttled_s"`
}

// Node is one node and what ran on it.
type Node struct {
	// Name of the node, POOL-N.
	Name string `json:"name"`
	// CPU cores; 0 = unlimited.
	CPU float64 `json:"cpu"`
	// CPUUtilization is the CPU its containers used (pods, sidecars, client pods,
	// kube-proxy relaying, background workloads) over its cores and the run; 0 with
	// unlimited CPU.
	CPUUtilization float64 `json:"cpu_utilization"`
	// ClientCPUCores is the part of it client pods used, in cores over the run.
	ClientCPUCores float64 `json:"client_cpu_cores,omitempty"`
	// ProxyCPUCores is the part of it kube-proxy's process used relaying
	// (userspace mode), in cores over the run.
	ProxyCPUCores float64 `json:"proxy_cpu_cores,omitempty"`
	// Pods is how many service pods ran on it over the run.
	Pods int `json:"pods"`
	// DiskUtilization is the share of time its disk was busy writing; 0 without a
	// disk limit.
	DiskUtilization float64 `json:"disk_utilization"`
	// DiskMaxWaitMS is the longest a write queued for its disk.
	DiskMaxWaitMS float64 `json:"disk_max_wait_ms"`
	// NICTxUtilization is the share of time its network interface was transmitting
	// out; set when the node has a bandwidth.
	NICTxUtilization float64 `json:"nic_tx_utilization,omitempty"`
	// NICRxUtilization is the share of time it was receiving; set when the node has
	// a bandwidth.
	NICRxUtilization float64 `json:"nic_rx_utilization,omitempty"`
	// NICMaxWaitMS is the longest a packet queued for the interface, either way.
	NICMaxWaitMS float64 `json:"nic_max_wait_ms,omitempty"`
	// Slow counts successful requests over the slow threshold served by pods on the
	// node.
	Slow int64 `json:"slow"`
	// SlowShare is Slow's share of the requests its pods served successfully.
	SlowShare float64 `json:"slow_share"`
}

// Client is one client Deployment.
type Client struct {
	// Name of the client Deployment.
	Name string `json:"name"`
	// TimeoutS is the client's timeout of one request; 0 when not recorded.
	TimeoutS float64 `json:"timeout_s,omitempty"`
	// Target is the service it called.
	Target string `json:"target"`
	// Replicas is its number of client pods.
	Replicas int `json:"replicas"`
	// Threads per client pod (closed loop) or 0.
	Threads int `json:"threads"`
	// RatePerPod is requests/s per pod (open loop) or 0.
	RatePerPod float64 `json:"rate_per_pod"`
	// ClosedLoop is set when threads that wait for each answer sent some of its
	// requests (threads, or a phase with threads): their rate then follows the
	// latency, so it says nothing about the load the latency was measured under.
	ClosedLoop bool `json:"closed_loop,omitempty"`
	// Library is the client library profile; empty for none.
	Library string `json:"library"`
	// Reuse is the connection reuse: none, per-thread or shared.
	Reuse string `json:"reuse"`
	// Protocol is what it speaks when it is not HTTP/1.1: http2 or grpc.
	Protocol string `json:"protocol,omitempty"`
	// LoadBalancing is a gRPC channel's policy: pick_first or round_robin.
	LoadBalancing string `json:"load_balancing,omitempty"`
	// Resolution is how it resolved its target's name, when the target is headless.
	Resolution *Resolution `json:"resolution,omitempty"`
	// MaxPerHost caps connections per pool; 0 = unlimited.
	MaxPerHost int `json:"max_per_host"`
	// MaxIdle caps idle connections kept per pool; 0 = unlimited.
	MaxIdle int `json:"max_idle_per_host"`
	// MaxLifetimeS is the pool's connection lifetime in seconds; 0 = unlimited.
	MaxLifetimeS float64 `json:"max_lifetime_s"`
	// ConnectionsOpened over the run.
	ConnectionsOpened int64 `json:"connections_opened"`
	// PeakOpen is the most connections open at any instant.
	PeakOpen int64 `json:"peak_open_connections"`
	// OpenAtEnd is the connections open when the run ended.
	OpenAtEnd int64 `json:"open_connections_at_end"`
	// PodsReached is how many distinct server pods this client's connections went to.
	PodsReached int `json:"pods_reached"`
	// Held is, for a client whose connections carried 10 requests or more each,
	// the connections each of its pods opened, by the server pod they reached:
	// which client pod holds which connections to which pod. Absent otherwise.
	Held []HeldConnections `json:"held,omitempty"`
	// Requests it finished, answered or failed.
	Requests int64 `json:"requests"`
	// Errors are its failed requests.
	Errors int64 `json:"errors"`
	// Sent counts the requests it sent: finished, in flight at the end, or
	// abandoned (its library's resends on another connection not counted); 0 when
	// not recorded.
	Sent int64 `json:"sent,omitempty"`
	// Due counts its open-loop arrivals that fell due, sent or not; 0 without an
	// open loop or when not recorded.
	Due int64 `json:"due,omitempty"`
	// RunsAborted counts runs the tool ended at a receive error, as ab does.
	RunsAborted int64 `json:"runs_aborted"`
	// CPUCores is the CPU its pods' own work used (clients[].work), in cores over
	// the run; absent when the client's work is not modelled.
	CPUCores float64 `json:"cpu_cores,omitempty"`
	// CPUPerRequestMS is that CPU per request sent, in ms; absent when the
	// client's work is not modelled.
	CPUPerRequestMS float64 `json:"cpu_per_request_ms,omitempty"`
	// Pods are its pods' CPU, when its work is modelled.
	Pods []ClientPod `json:"pods,omitempty"`
	// Behind counts open-loop arrivals it had not sent when their phase ended (or
	// the run did), because its CPU could not keep up with its rate.
	Behind int64 `json:"behind_schedule,omitempty"`
	// MaxLateS is the longest it sent an open-loop request after the request fell
	// due, in seconds; 0 when it never fell behind.
	MaxLateS float64 `json:"max_late_s,omitempty"`
	// Runs are the client's phases in the order they ran (repeats included), over
	// all its pods; absent for a client without phases.
	Runs []Run `json:"runs,omitempty"`
}

// ClientPod is one client pod's own CPU.
type ClientPod struct {
	// Name of the pod, CLIENT-N.
	Name string `json:"name"`
	// Node it ran on.
	Node string `json:"node"`
	// CPUCores it used on average over the run.
	CPUCores float64 `json:"cpu_cores"`
	// CPUUtilization is its CPU over what it could use: its limit, else its
	// node's cores; 0 when both are unlimited.
	CPUUtilization float64 `json:"cpu_utilization"`
	// CPULimit is its CPU limit in cores; 0 for none.
	CPULimit float64 `json:"cpu_limit,omitempty"`
}

// LongLived tells whether connections carried 10 requests or more each, so that
// which pod each reached decides the spread: the threshold of Client.Held.
func LongLived(requests, connections int64) bool {
	return connections > 0 && requests >= 10*connections
}

// HeldConnections are the connections one client pod opened over the run, by the
// server pod they reached.
type HeldConnections struct {
	// Pod is the client pod, CLIENT-N.
	Pod string `json:"pod"`
	// To counts its connections by server pod name.
	To map[string]int64 `json:"to"`
}

// Run is one phase of a client's load as it ran.
type Run struct {
	// Phase is its index in the scenario's phase list.
	Phase int `json:"phase"`
	// Name is the phase's name, if it has one.
	Name string `json:"name,omitempty"`
	// StartS is when the first pod started it.
	StartS float64 `json:"start_s"`
	// EndS is when it ended, or the simulation's end if it was still running.
	EndS float64 `json:"end_s"`
	// Requests it finished, answered or failed.
	Requests int64 `json:"requests"`
	// Errors are its failed requests.
	Errors int64 `json:"errors"`
	// Aborted is true when the tool ended it at a receive error, as ab does.
	Aborted bool `json:"aborted"`
}

// Point is one interval of the timeline.
type Point struct {
	// TS is the interval's start.
	TS float64 `json:"t_s"`
	// Replicas per service at the interval's end: pods not terminating, Pending
	// ones included.
	Replicas map[string]int `json:"replicas"`
	// DesiredReplicas per service is the Deployment's spec.replicas.
	DesiredReplicas map[string]int `json:"desired_replicas"`
	// ReadyEndpoints per service are the ready endpoints of its EndpointSlice.
	ReadyEndpoints map[string]int `json:"ready_endpoints"`
	// Offered are the requests the clients sent in the interval, open-loop arrivals
	// that found no free slot included: the load, where Requests is what finished.
	// Absent from results written before it existed.
	Offered int64 `json:"offered,omitempty"`
	// Requests finished in the interval, answered or failed.
	Requests int64 `json:"requests"`
	// Errors are the interval's failed requests.
	Errors int64 `json:"errors"`
	// ErrorsByKind splits Errors; absent when there were none.
	ErrorsByKind *Errors `json:"errors_by_kind,omitempty"`
	// P50MS is the median latency of the interval's successful requests (2
	// significant digits, as all four percentiles).
	P50MS float64 `json:"p50_ms"`
	// P90MS is their 90th percentile.
	P90MS float64 `json:"p90_ms"`
	// P99MS is their 99th percentile.
	P99MS float64 `json:"p99_ms"`
	// P999MS is their 99.9th percentile.
	P999MS float64 `json:"p999_ms"`
	// Slow counts the interval's successful requests over the slow threshold.
	Slow int64 `json:"slow"`
	// PodRequests are the requests each pod finished in the interval; pods that
	// finished none are left out, and a run with more than 200 pods has none.
	PodRequests map[string]int64 `json:"pod_requests,omitempty"`
	// NodeCPUCores is the mean cores each node's containers used in the interval;
	// absent with a single node.
	NodeCPUCores map[string]float64 `json:"node_cpu_cores,omitempty"`
	// ServiceP99MS is, when services call services, each service's 99th percentile
	// of the time its pods held the requests they answered in the interval
	// (services[].latency_ms's), ms; services that answered none are left out.
	ServiceP99MS map[string]float64 `json:"service_p99_ms,omitempty"`
}

// Percentile is one step of the latency spectrum: Percentile of the successful
// requests took at most MS; Count is how many that is.
type Percentile struct {
	// Percentile, from 0 to 100.
	Percentile float64 `json:"percentile"`
	// MS is the latency at most which that share of requests took.
	MS float64 `json:"ms"`
	// Count is how many requests that is.
	Count int64 `json:"count"`
}
