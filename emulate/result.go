package emulate

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/emulate/cgroup"
	"trafficlab/emulate/load"
	"trafficlab/model/node"
	"trafficlab/result"
	"trafficlab/scenario"
)

// result fills the Result simulate fills, from the client pods' reports and the
// pods' control groups. Counts per pod come from the clients' side: the answers
// each pod gave, named by its X-Trafficlab-Pod header.
func (c *cluster) result() *result.Result {
	spec := &c.sc.Spec
	dur := c.ran.Seconds()
	r := &result.Result{
		Engine: "emulate", Scenario: c.sc.Metadata.Name, Seed: spec.Seed, DurationS: dur,
		ProxyMode: spec.Cluster.ProxyMode, TimelineIntervalS: 1,
		SlowThresholdMS: float64(spec.Report.SlowThreshold.Duration) / 1e6,
		// How each service was configured, as simulate records it (addFigures
		// adds what the pods did when services call services).
		Services: c.sc.ServiceConfigs(),
	}
	all := hdr.New(1, int64(time.Hour), 3)
	perPod := map[string]load.Pod{}
	var reps []*load.Report
	for _, cp := range c.clients {
		rep := cp.report
		if rep == nil {
			continue
		}
		reps = append(reps, rep)
		addRequests(&r.Requests, rep.Requests)
		r.Errors.AddAll(rep.Errors)
		if rep.Latency != nil {
			all.Merge(rep.Latency)
		}
		for _, p := range rep.Pods {
			sum := perPod[p.Name]
			sum.Requests += p.Requests
			sum.Errors += p.Errors
			sum.Connections += p.Connections
			perPod[p.Name] = sum
		}
		r.TimelineIntervalS = rep.TimelineIntervalS
	}
	if dur > 0 {
		r.ThroughputRPS = result.Round(float64(r.Requests.OK)/dur, 3)
		r.RateRPS = result.Round(float64(r.Requests.Total+r.Requests.InFlight)/dur, 3)
	}
	r.LatencyMS = result.LatencyOf(all)
	r.LatencySpectrum = result.SpectrumOf(all)
	r.Slow = slowCount(all, spec.Report.SlowThreshold.Duration)
	if r.Requests.OK > 0 {
		r.SlowShare = result.Round(float64(r.Slow)/float64(r.Requests.OK), 6)
	}
	r.Ended = mergeEnded(reps)
	r.Pods, r.Nodes = c.podResults(perPod, dur)
	r.Clients = c.clientResults()
	r.Timeline = c.timelineResult(r.TimelineIntervalS)
	r.ScaleEvents, r.Rollouts = c.replayedUntil(c.ran)
	return r
}

// mergeEnded sums up the client pods' ended requests as one vegeta report of them
// all would: sums add, extremes and the sending window span them all, and the
// distinct errors come in the order first seen. Every client pod starts at one
// instant (cluster.start, each load.Config.Start), so their times since the start
// share an epoch. nil when a Report has no Ended.
func mergeEnded(reps []*load.Report) *result.Ended {
	all := result.NewEndedTally()
	codes := map[string]int64{}
	var start *int64
	for _, rep := range reps {
		x := rep.Ended
		if x == nil {
			return nil
		}
		if rep.Requests.Total == 0 {
			continue // its zero extremes are no request's
		}
		if start == nil {
			start = &x.StartUnixNS
		}
		all.Merge(&rep.EndedTally)
		for code, k := range x.StatusCodes {
			codes[code] += k
		}
	}
	sum := all.Ended()
	sum.StatusCodes = codes
	if start != nil {
		sum.StartUnixNS = *start
	}
	sum.Errors = load.MergeEndedErrors(reps)
	return sum
}

func addRequests(sum *result.Requests, r result.Requests) {
	sum.Total += r.Total
	sum.OK += r.OK
	sum.Failed += r.Failed
	sum.InFlight += r.InFlight
	sum.NotSent += r.NotSent
	sum.Behind += r.Behind
	sum.Retried += r.Retried
}

// slowCount is how many recorded latencies exceed threshold (0: none counted), to
// the histogram's precision.
func slowCount(h *hdr.Histogram, threshold time.Duration) int64 {
	if threshold <= 0 {
		return 0
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.From > int64(threshold) {
			n += b.Count
		}
	}
	return n
}

// podResults are the service pods and the nodes, in layout order.
func (c *cluster) podResults(perPod map[string]load.Pod, dur float64) ([]result.Pod, []result.Node) {
	cores := nodeCores(c)
	nodeUsed := map[string]float64{}
	nodePods := map[string]int{}
	var pods []result.Pod
	for _, s := range c.servers {
		spec := &c.sc.Spec.Services[serviceIndex(c.sc, s.service)].Pod
		counted := perPod[s.name]
		rp := result.Pod{
			Name: s.name, Service: s.service, Node: s.node, StartS: result.Round(s.created.Seconds(), 6),
			Requests: counted.Requests, Connections: counted.Connections,
			QoSClass: string(node.QOSClass(spec.Resources.Requests, spec.Resources.Limits)),
		}
		if s.readyAt >= 0 {
			rp.ReadyS = secondsPtr(s.readyAt)
		}
		if s.deleting {
			rp.DeletedS = secondsPtr(s.deletedAt)
		}
		// CPU figures are over the pod's life within the run, as simulate's.
		life := dur - s.created.Seconds()
		if s.gone {
			rp.EndS = secondsPtr(s.ended)
			life = (s.ended - s.created).Seconds()
		}
		used, err := s.cpu()
		if err == nil && life > 0 {
			rp.CPUCores = result.Round(used.Seconds()/life, 4)
			capacity := cores[s.node]
			if spec.CPU != nil {
				capacity = spec.CPU.AsApproximateFloat64()
			}
			if capacity > 0 {
				rp.CPUUtilization = result.Round(used.Seconds()/(capacity*life), 4)
			}
			nodeUsed[s.node] += used.Seconds()
		}
		if spec.CPU != nil {
			if st, err := s.group.Stat(); err == nil {
				st = since(st, s.bandwidthAtStart)
				rp.Throttling = &result.Throttling{Periods: st.Periods, ThrottledPeriods: st.Throttled, ThrottledS: result.Round(st.ThrottledTime.Seconds(), 6)}
			}
		}
		if !s.gone {
			nodePods[s.node]++ // as simulate counts them: those running at the end
		}
		pods = append(pods, rp)
	}
	// Client pods spend their node's CPU too, as in simulate.
	clientUsed := map[string]float64{}
	for _, cp := range c.clients {
		clientUsed[cp.placed.Node] += cp.cpuUsed.Seconds()
		nodeUsed[cp.placed.Node] += cp.cpuUsed.Seconds()
	}
	var nodes []result.Node
	for _, n := range c.layout.Nodes {
		rn := result.Node{Name: n, CPU: cores[n], Pods: nodePods[n]}
		if dur > 0 {
			rn.ClientCPUCores = result.Round(clientUsed[n]/dur, 4)
		}
		if cores[n] > 0 && dur > 0 {
			rn.CPUUtilization = result.Round(nodeUsed[n]/(cores[n]*dur), 4)
		}
		nodes = append(nodes, rn)
	}
	return pods, nodes
}

func secondsPtr(d time.Duration) *float64 {
	s := result.Round(d.Seconds(), 6)
	return &s
}

func since(now, start cgroup.Bandwidth) cgroup.Bandwidth {
	return cgroup.Bandwidth{Periods: now.Periods - start.Periods, Throttled: now.Throttled - start.Throttled,
		ThrottledTime: now.ThrottledTime - start.ThrottledTime}
}

// nodeCores is each node's allocatable CPU in cores; 0 when unset.
func nodeCores(c *cluster) map[string]float64 {
	out := map[string]float64{}
	i := 0
	for _, pool := range c.sc.Spec.Cluster.Nodes {
		for range pool.Count {
			if pool.CPU != nil {
				out[c.layout.Nodes[i]] = pool.CPU.AsApproximateFloat64()
			}
			i++
		}
	}
	return out
}

// clientResults sums each client Deployment's pods. PeakOpen is the sum of its
// pods' peaks, which may not have come at one instant.
func (c *cluster) clientResults() []result.Client {
	cores, dur := nodeCores(c), c.ran.Seconds()
	var out []result.Client
	for i := range c.sc.Spec.Clients {
		spec := &c.sc.Spec.Clients[i]
		rc := result.Client{Name: spec.Name, Target: spec.Target, Replicas: spec.Replicas, Threads: spec.Threads,
			Library: spec.Library, Reuse: spec.Connections.Reuse}
		if spec.Connections.Protocol != scenario.ProtocolHTTP1 {
			rc.Protocol = spec.Connections.Protocol
		}
		rc.LoadBalancing = spec.Connections.LoadBalancing
		if c.sc.Spec.Services[serviceIndex(c.sc, spec.Target)].Headless() {
			rc.Resolution = scenario.ClientResolution(spec.Library)
		}
		if spec.Connections.MaxPerHost != nil {
			rc.MaxPerHost = *spec.Connections.MaxPerHost
		}
		if spec.Connections.MaxIdlePerHost != nil {
			rc.MaxIdle = *spec.Connections.MaxIdlePerHost
		}
		if spec.Connections.MaxLifetime != nil {
			rc.MaxLifetimeS = spec.Connections.MaxLifetime.Duration.Seconds()
		}
		if spec.Rate != nil {
			rc.RatePerPod = spec.Rate.PerSecond
		}
		var reached []string
		used := 0.0 // core-seconds its pods' load generators spent
		for _, cp := range c.clients {
			rep := cp.report
			if cp.placed.Index != i || rep == nil {
				continue
			}
			rc.Sent += rep.Sent
			rc.Due += rep.Due
			rc.Behind += rep.Requests.Behind
			rc.MaxLateS = max(rc.MaxLateS, rep.MaxLateS)
			rc.Pods = append(rc.Pods, cp.cpuResult(cores[cp.placed.Node], dur))
			used += cp.cpuUsed.Seconds()
			rc.ConnectionsOpened += rep.Connections.Opened
			rc.PeakOpen += rep.Connections.PeakOpen
			rc.OpenAtEnd += rep.Connections.OpenAtEnd
			rc.Requests += rep.Requests.Total
			rc.Errors += rep.Requests.Failed
			rc.RunsAborted += rep.RunsAborted
			h := result.HeldConnections{Pod: cp.placed.Name, To: map[string]int64{}}
			for _, p := range rep.Pods {
				if !slices.Contains(reached, p.Name) {
					reached = append(reached, p.Name)
				}
				if p.Connections > 0 {
					h.To[p.Name] = p.Connections
				}
			}
			rc.Held = append(rc.Held, h)
		}
		rc.PodsReached = len(reached)
		if !result.LongLived(rc.Requests, rc.ConnectionsOpened) {
			rc.Held = nil
		}
		if dur > 0 {
			rc.CPUCores = result.Round(used/dur, 4)
		}
		if rc.Sent > 0 {
			rc.CPUPerRequestMS = result.Round(used/float64(rc.Sent)*1e3, 6)
		}
		out = append(out, rc)
	}
	return out
}

// cpuResult is the CPU the pod's load generator used over the run's dur seconds,
// against its limit or else its node's cores.
func (cp *clientPod) cpuResult(nodeCores, dur float64) result.ClientPod {
	p := result.ClientPod{Name: cp.placed.Name, Node: cp.placed.Node, CPULimit: cp.limit}
	if dur <= 0 {
		return p
	}
	used := cp.cpuUsed.Seconds()
	p.CPUCores = result.Round(used/dur, 4)
	if capacity := cmp.Or(cp.limit, nodeCores); capacity > 0 {
		p.CPUUtilization = result.Round(used/(capacity*dur), 4)
	}
	return p
}

// timelineResult adds up the client pods' timelines, interval by interval, with
// percentiles from their merged histograms.
func (c *cluster) timelineResult(step float64) []result.Point {
	var out []result.Point
	for i := 0; ; i++ {
		var pt *result.Point
		for _, cp := range c.clients {
			if cp.report == nil || i >= len(cp.report.Timeline) {
				continue
			}
			lp := cp.report.Timeline[i]
			if pt == nil {
				pt = &result.Point{TS: lp.TS}
				pt.Replicas, pt.ReadyEndpoints = c.replicasAt(time.Duration((lp.TS + step) * 1e9))
				pt.DesiredReplicas = pt.Replicas
			}
			pt.Requests += lp.Requests
			pt.Errors += lp.Errors
			for kind, n := range lp.ErrorsByKind {
				if pt.ErrorsByKind == nil {
					pt.ErrorsByKind = &result.Errors{}
				}
				if k, ok := result.ErrorKindNamed(kind); ok { // "other" counts in the totals only
					pt.ErrorsByKind.Add(k, n)
				}
			}
			for pod, n := range lp.PodRequests {
				if pt.PodRequests == nil {
					pt.PodRequests = map[string]int64{}
				}
				pt.PodRequests[pod] += n
			}
		}
		if pt == nil {
			return out
		}
		p := c.tl.percentiles(int64(i))
		pt.P50MS, pt.P90MS, pt.P99MS, pt.P999MS = p[0], p[1], p[2], p[3]
		out = append(out, *pt)
	}
}

// replayedUntil is the scale events, and the simulation's rollouts that began
// before the run ended (all of them, unless it was interrupted); a rollout not done
// by then is not done.
func (c *cluster) replayedUntil(ran time.Duration) ([]result.ScaleEvent, []result.Rollout) {
	end := ran.Seconds()
	events := c.scaleEvents // the live HPAs', made during the run
	var rollouts []result.Rollout
	for _, r := range c.replay.rollouts {
		if r.StartS <= end {
			if r.DoneS != nil && *r.DoneS > end {
				r.DoneS = nil
			}
			rollouts = append(rollouts, r)
		}
	}
	return events, rollouts
}

// replicasAt counts each service's pods at time t since the start: those created
// and not yet deleting, and of them the ready endpoints.
func (c *cluster) replicasAt(t time.Duration) (replicas, ready map[string]int) {
	replicas, ready = map[string]int{}, map[string]int{}
	for i := range c.sc.Spec.Services {
		name := c.sc.Spec.Services[i].Name
		replicas[name], ready[name] = 0, 0
	}
	for _, s := range c.servers {
		if s.created > t || s.deleting && s.deletedAt <= t {
			continue
		}
		replicas[s.service]++
		if s.readyAt >= 0 && s.readyAt <= t && !(s.gone && s.ended <= t) {
			ready[s.service]++
		}
	}
	return replicas, ready
}

// timeline merges the client pods' per-interval latency histograms as their loads
// hand them over, and keeps only each interval's percentiles once every load has
// passed it: memory stays flat however long the run.
type timeline struct {
	mu   sync.Mutex
	last []int64 // per load, the last interval it handed over; MaxInt64 once it ended
	open map[int64]*hdr.Histogram
	pct  map[int64][4]float64
}

func newTimeline(loads int) *timeline {
	t := &timeline{last: make([]int64, loads), open: map[int64]*hdr.Histogram{}, pct: map[int64][4]float64{}}
	for i := range t.last {
		t.last[i] = -1
	}
	return t
}

// adder is load i's Config.OnInterval: loads hand their intervals over in order.
func (t *timeline) adder(i int) func(sec int64, h *hdr.Histogram) {
	return func(sec int64, h *hdr.Histogram) {
		t.mu.Lock()
		defer t.mu.Unlock()
		m := t.open[sec]
		if m == nil {
			m = hdr.New(1, int64(time.Hour), 2)
			t.open[sec] = m
		}
		m.Merge(h)
		t.last[i] = sec
		t.settle()
	}
}

// ended notes that load i has ended: it hands nothing more over.
func (t *timeline) ended(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last[i] = math.MaxInt64
	t.settle()
}

// settle reduces the intervals every load has passed to percentiles.
func (t *timeline) settle() {
	upTo := slices.Min(t.last)
	for sec, h := range t.open {
		if sec <= upTo {
			t.pct[sec] = [4]float64{result.MS(h.ValueAtQuantile(50)), result.MS(h.ValueAtQuantile(90)),
				result.MS(h.ValueAtQuantile(99)), result.MS(h.ValueAtQuantile(99.9))}
			delete(t.open, sec)
		}
	}
}

func (t *timeline) percentiles(sec int64) [4]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pct[sec]
}
