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
}

// Requests counts requests by outcome. Total = OK + Failed; requests still in flight
// when the run ended and open-loop arrivals that found no free slot are counted apart.
type Requests struct {
	Total    int64 `json:"total"`
	OK       int64 `json:"ok"`
	Failed   int64 `json:"failed"`
	InFlight int64 `json:"in_flight"`
	NotSent  int64 `json:"not_sent"`
}

// Errors counts failed requests by kind, named as the client sees them.
type Errors struct {
	Timeout           int64 `json:"timeout"`
	ConnectionRefused int64 `json:"connection_refused"`
	ConnectionReset   int64 `json:"connection_reset"`
}

// Total is the sum of all kinds.
func (e Errors) Total() int64 { return e.Timeout + e.ConnectionRefused + e.ConnectionReset }

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
	// CPUUtilization is CPU time used over the cores the pod may use (its limit, or its
	// node's cores) over its lifetime, 0..1; 0 when neither limits it.
	CPUUtilization float64 `json:"cpu_utilization"`
	// CPUCores is the average number of cores used.
	CPUCores float64  `json:"cpu_cores"`
	StartS   float64  `json:"start_s"`
	EndS     *float64 `json:"end_s"`
}

// Node is one node and what ran on it.
type Node struct {
	Name string `json:"name"`
	// CPU cores; 0 = unlimited.
	CPU            float64 `json:"cpu"`
	CPUUtilization float64 `json:"cpu_utilization"`
	Pods           int     `json:"pods"`
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
}

// Point is one interval of the timeline.
type Point struct {
	TS       float64        `json:"t_s"`
	Replicas map[string]int `json:"replicas"`
	Requests int64          `json:"requests"`
	Errors   int64          `json:"errors"`
	P99MS    float64        `json:"p99_ms"`
}
