package load

import (
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/result"
)

// Report is what one Run measured. Counts and names follow result.Result, so an
// emulated scenario's Result is filled from Reports directly.
type Report struct {
	Target  string `json:"target"`
	Client  string `json:"client,omitempty"`
	Library string `json:"library,omitempty"`
	// Pool is the connection settings the run used, the library's filled in.
	Pool Pool `json:"pool"`
	// Load is the load as given: "5 threads", "200/s poisson", "2 phases ×3".
	Load string `json:"load"`
	Seed int64  `json:"seed"`
	// DurationS is the run's wall time, from the first request to the last answer.
	DurationS float64 `json:"duration_s"`
	// EndReason: duration, phases (every phase ran), max_requests or canceled.
	EndReason string `json:"end_reason"`
	// CPUS is the CPU the generator's process spent from the start to the load's
	// end, in seconds.
	CPUS float64 `json:"cpu_s,omitempty"`
	// Requests: Total = OK + Failed; InFlight were cut off by the end of the run or
	// an aborted run; NotSent found no free slot (open loop); Behind were due but not
	// yet sent when their phase ended (open loop); Retried were resent by Go's
	// transport on another connection after a reused one failed.
	Requests result.Requests `json:"requests"`
	// Sent counts the requests sent, resends not counted; Due the open-loop
	// arrivals that fell due, sent or not; MaxLateS the latest the generator sent
	// one after it fell due, in seconds, 0 if never.
	Sent     int64         `json:"sent"`
	Due      int64         `json:"due,omitempty"`
	MaxLateS float64       `json:"max_late_s,omitempty"`
	Errors   result.Errors `json:"errors"`
	// OtherErrors are failures none of the simulator's kinds describes, by message
	// or status (http_500); they count in Requests.Failed.
	OtherErrors   map[string]int64 `json:"other_errors,omitempty"`
	ThroughputRPS float64          `json:"throughput_rps"` // answered per second
	RateRPS       float64          `json:"rate_rps"`       // sent per second
	// LatencyMS is over the successful requests, from each request's start (an open
	// loop's intended start).
	LatencyMS       result.Latency      `json:"latency_ms"`
	LatencySpectrum []result.Percentile `json:"latency_spectrum,omitempty"`
	Connections     ConnStats           `json:"connections"`
	// Pods are the pods that answered, by name, from the X-Trafficlab-Pod header.
	Pods        []Pod `json:"pods"`
	PodsReached int   `json:"pods_reached"`
	// Slow counts the answers over Config.SlowThreshold; 0 without one.
	Slow int64 `json:"slow,omitempty"`
	// NoPodHeader counts answers without the header (a server that is not a pod).
	NoPodHeader int64 `json:"no_pod_header"`
	RunsAborted int64 `json:"runs_aborted,omitempty"`

	TimelineIntervalS float64 `json:"timeline_interval_s"`
	Timeline          []Point `json:"timeline"`
	// Latency is the histogram of successful requests' latencies in nanoseconds.
	Latency *hdr.Histogram `json:"-"`

	// Ended sums up every request that ended, failures included, as vegeta's
	// report does (result.Ended), its times since the run's start and StartUnixNS
	// the start on the wall clock.
	Ended *result.Ended `json:"ended"`
	// EndedTally is Ended's tally, histogram included, and EndedErrorsAtNS when
	// each of Ended.Errors first ended, since the run's start: what merging Reports
	// needs.
	EndedTally      result.EndedTally `json:"-"`
	EndedErrorsAtNS []int64           `json:"-"`
}

// Pool is the connection settings of a run, 0 meaning unlimited or never.
type Pool struct {
	Reuse          string  `json:"reuse"`
	Protocol       string  `json:"protocol"`
	MaxPerHost     int     `json:"max_per_host"`
	MaxIdlePerHost int     `json:"max_idle_per_host"`
	IdleTimeoutS   float64 `json:"idle_timeout_s"`
	MaxLifetimeS   float64 `json:"max_lifetime_s"`
}

func poolOf(c Connections) Pool {
	return Pool{
		Reuse: c.Reuse, Protocol: c.Protocol, MaxPerHost: c.MaxPerHost, MaxIdlePerHost: c.MaxIdlePerHost,
		IdleTimeoutS: c.IdleTimeout.Seconds(), MaxLifetimeS: c.MaxLifetime.Seconds(),
	}
}

// ConnStats counts the connections of the run.
type ConnStats struct {
	Opened   int64 `json:"opened"`
	PeakOpen int64 `json:"peak_open"`
	// OpenAtEnd is still open after the run closed its pools: 0 unless a server
	// keeps a connection the client let go of half-closed.
	OpenAtEnd    int64 `json:"open_at_end"`
	DialFailures int64 `json:"dial_failures"`
	// Retired were dropped for being older than the max lifetime (HTTP/2: Transports).
	Retired int64 `json:"retired"`
	// Unpinned reached more than one pod: something between balanced per request.
	Unpinned int64 `json:"unpinned"`
}

// Pod is one pod's share: answers it gave (Errors of them an error status) and
// connections whose first answer came from it.
type Pod struct {
	Name        string `json:"name"`
	Requests    int64  `json:"requests"`
	Errors      int64  `json:"errors"`
	Connections int64  `json:"connections"`
	// Slow counts its answers over Config.SlowThreshold.
	Slow int64 `json:"slow,omitempty"`
}

// Point is one timeline interval, by the time requests finished in it.
type Point struct {
	TS       float64 `json:"t_s"`
	Requests int64   `json:"requests"`
	// Slow counts the interval's answers over Config.SlowThreshold.
	Slow         int64            `json:"slow,omitempty"`
	Errors       int64            `json:"errors"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind,omitempty"`
	// Percentiles of the interval's successful requests (2 significant digits).
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p999_ms"`
	// PodRequests are the answers each pod gave in the interval.
	PodRequests map[string]int64 `json:"pod_requests,omitempty"`
}

// report sums the shards into a Report.
func (r *runner) report(elapsed time.Duration, reason string) *Report {
	s := r.stats
	rep := &Report{
		Target: r.cfg.Target, Client: r.cfg.Name, Library: r.cfg.Library,
		Pool: poolOf(r.cfg.Conn), Load: describe(&r.cfg), Seed: r.cfg.Seed,
		DurationS: result.Round(elapsed.Seconds(), 3), EndReason: reason,
		TimelineIntervalS: s.step.Seconds(), Latency: hdr.New(1, histMax, 3),
	}
	var counts [nKinds]int64
	pods := map[string]*podCount{}
	all := newEnded()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for k, n := range sh.counts {
			counts[k] += n
		}
		rep.Requests.Retried += sh.retried
		rep.Slow += sh.slow
		rep.NoPodHeader += sh.noPod
		rep.Latency.Merge(sh.total)
		all.merge(&sh.ended)
		for key, n := range sh.other {
			if rep.OtherErrors == nil {
				rep.OtherErrors = map[string]int64{}
			}
			rep.OtherErrors[key] += n
		}
		for name, pc := range sh.pods {
			if pods[name] == nil {
				pods[name] = &podCount{}
			}
			pods[name].requests += pc.requests
			pods[name].errors += pc.errors
			pods[name].slow += pc.slow
		}
		sh.mu.Unlock()
	}
	rep.Errors = result.Errors{}
	for k := range result.ErrorKinds {
		rep.Errors.Add(k, counts[firstErrorKind+kind(k)])
	}
	failed := rep.Errors.Total() + counts[kindOther]
	rep.Requests.OK = counts[kindOK]
	rep.Requests.Failed = failed
	rep.Requests.Total = counts[kindOK] + failed
	rep.Requests.InFlight = counts[kindAbandoned]
	rep.Requests.NotSent = s.notSent.Load()
	rep.Requests.Behind = s.behind.Load()
	rep.Sent, rep.Due = r.sent.Load(), s.due.Load()
	rep.MaxLateS = result.Round(time.Duration(s.maxLate.Load()).Seconds(), 6)
	if sec := elapsed.Seconds(); sec > 0 {
		rep.ThroughputRPS = result.Round(float64(rep.Requests.OK)/sec, 3)
		rep.RateRPS = result.Round(float64(r.sent.Load())/sec, 3)
	}
	rep.LatencyMS = result.LatencyOf(rep.Latency)
	rep.LatencySpectrum = result.SpectrumOf(rep.Latency)
	rep.Ended, rep.EndedTally = all.result(s.start.UnixNano()), all.EndedTally
	for _, f := range all.errors {
		rep.EndedErrorsAtNS = append(rep.EndedErrorsAtNS, f.at)
	}
	t := r.tracker
	rep.Connections = ConnStats{
		Opened: t.opened.Load(), PeakOpen: t.peak.Load(), OpenAtEnd: t.open.Load(), DialFailures: t.dialFailures.Load(),
		Retired: t.retired.Load(), Unpinned: t.unpinned.Load(),
	}
	t.mu.Lock()
	for name, pc := range pods {
		rep.Pods = append(rep.Pods, Pod{Name: name, Requests: pc.requests, Errors: pc.errors, Connections: t.podConns[name], Slow: pc.slow})
	}
	t.mu.Unlock()
	slices.SortFunc(rep.Pods, func(a, b Pod) int { return podOrder(a.Name, b.Name) })
	rep.PodsReached = len(rep.Pods)
	rep.RunsAborted = r.aborted.Load()
	s.mu.Lock()
	rep.Timeline = s.points
	s.mu.Unlock()
	return rep
}

// podOrder sorts pod names as people number them: webapp1-2 before webapp1-10.
func podOrder(a, b string) int {
	ia, ib := trailingNumber(a), trailingNumber(b)
	if pa, pb := a[:len(a)-len(ia)], b[:len(b)-len(ib)]; pa == pb && ia != "" && ib != "" && len(ia) != len(ib) {
		return len(ia) - len(ib)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func trailingNumber(s string) string {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[i:]
}
