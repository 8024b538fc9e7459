package simulate

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// stats collects results while the run streams by.
type stats struct {
	latency  *hdr.Histogram // successful requests, ns
	interval *hdr.Histogram // this timeline interval's successes, ns
	step     sim.Time
	ok       int64
	errors   errorCounts
	notSent  int64
	behind   int64 // open-loop arrivals a client's CPU had not caught up with at its phase's end
	sent     int64
	retries  int64 // requests a library resent after a stale connection failed
	// abandoned counts requests in progress when their client aborted its run.
	abandoned int64
	// okMin and okMax are the exact extremes of latency's values, which the
	// histogram knows only to its bucket (result.LatencyBetween).
	okMin     int64
	okMax     int64
	slow      int64 // successes over the slow threshold
	tlSlow    int64
	tlOffered int64 // requests sent or due to be sent in this timeline interval
	tlReq     int64
	tlErr     errorCounts
	timeline  []point
	buckets   buckets
	samples   reservoir
	ended     ended
}

// errorCounts counts failed requests by error kind (errTimeout, errRefused, ...).
type errorCounts [errKinds]int64

func (c *errorCounts) add(kind uint8) { c[kind]++ }

func (c *errorCounts) total() int64 {
	n := int64(0)
	for _, v := range c {
		n += v
	}
	return n
}

type point struct {
	t                   sim.Time
	offered             int64
	requests            int64
	errors              errorCounts
	p50, p90, p99, p999 int64
	slow                int64
	services            []serviceSample
	// podRequests are requests each pod finished in the interval (by pod id, pods
	// that finished none left out); nodeCPU the core-seconds each node's
	// containers used in it.
	podRequests []podCount
	nodeCPU     []float64
	svcP99      []int64 // with calls: each service's p99 at its pods, ns (0: none)
}

// podCount is one pod's requests in a timeline interval.
type podCount struct {
	pod      int32
	requests int64
}

// serviceSample is one service's replicas at the end of a timeline interval.
type serviceSample struct {
	desired, current, ready int
}

// maxTimelinePoints bounds the timeline so memory stays flat however long the run.
const maxTimelinePoints = 3600

// maxPodSeries bounds the per-pod series: a run with more pods has none, so that
// memory and the Result stay small (200 pods × 3,600 points is at most 8.6 MB).
const maxPodSeries = 200

func (s *stats) init(end sim.Time, report *scenario.Report, seed int64) {
	s.buckets.init(report.Histogram)
	s.samples.init(*report.Samples, sim.Stream(seed, "samples"))
	// 1 ns to 1 hour at 3 significant digits: about 0.3 MB, whatever the run length.
	s.latency = hdr.New(1, int64(3600e9), 3)
	s.interval = hdr.New(1, int64(3600e9), 2)
	s.ended.EndedTally = result.NewEndedTally()
	s.step = sim.Time(1e9)
	if n := math.Ceil(float64(end) / float64(s.step)); n > maxTimelinePoints {
		s.step = sim.Time(math.Ceil(float64(end)/maxTimelinePoints/1e9)) * 1e9
	}
	s.timeline = make([]point, 0, (end+s.step-1)/s.step)
}

func (s *stats) success(sent, now sim.Time) {
	s.ok++
	s.record(sent, now, -1)
	v := int64(now - sent)
	if v < 1 {
		v = 1
	}
	// Values above the histogram's hour are clamped rather than lost.
	if v > s.latency.HighestTrackableValue() {
		v = s.latency.HighestTrackableValue()
	}
	_ = s.latency.RecordValue(v)
	if s.ok == 1 || v < s.okMin {
		s.okMin = v
	}
	s.okMax = max(s.okMax, v)
	_ = s.interval.RecordValue(v)
	s.tlReq++
}

func (s *stats) failure(kind uint8, sent, now sim.Time) {
	s.record(sent, now, int8(kind))
	s.errors.add(kind)
	s.tlReq++
	s.tlErr.add(kind)
}

// closeInterval appends the timeline point of the interval starting at start.
func (s *stats) closeInterval(start sim.Time) {
	p := point{t: start, offered: s.tlOffered, requests: s.tlReq, errors: s.tlErr, slow: s.tlSlow}
	if s.interval.TotalCount() > 0 {
		p.p50, p.p90 = s.interval.ValueAtQuantile(50), s.interval.ValueAtQuantile(90)
		p.p99, p.p999 = s.interval.ValueAtQuantile(99), s.interval.ValueAtQuantile(99.9)
	}
	s.timeline = append(s.timeline, p)
	s.tlOffered, s.tlReq, s.tlErr, s.tlSlow = 0, 0, errorCounts{}, 0
	s.interval.Reset()
}

// closeInterval ends the timeline interval starting at start, with each service's
// replicas as they stand.
func (e *Engine) closeInterval(start sim.Time) {
	e.stats.closeInterval(start)
	p := &e.stats.timeline[len(e.stats.timeline)-1]
	p.services = make([]serviceSample, len(e.services))
	for i := range e.services {
		p.services[i] = e.replicaCounts(int32(i))
	}
	for i := range e.pods[:min(len(e.pods), maxPodSeries+1)] {
		pd := &e.pods[i]
		if n := pd.requests - pd.tlRequests; n > 0 {
			p.podRequests = append(p.podRequests, podCount{pod: int32(i), requests: n})
			pd.tlRequests = pd.requests
		}
	}
	p.nodeCPU = e.nodeCPU(min(start+e.stats.step, e.end))
	if e.graph {
		p.svcP99 = e.intervalP99s()
	}
	for i, used := range p.nodeCPU {
		p.nodeCPU[i], e.nodeUsedAt[i] = used-e.nodeUsedAt[i], used
	}
}

// onTick closes a timeline interval and schedules the next.
func (e *Engine) onTick(ev sim.Event) {
	now := e.k.Now()
	e.closeInterval(now - e.stats.step)
	if next := now + e.stats.step; next < e.end {
		e.k.At(next, e.evTick, 0, 0)
	}
}

// registerTimeline registers the event kinds of the timeline events with the kernel.
func (e *Engine) registerTimeline() {
	e.evTick = e.k.Register(e.onTick)
}

// replicaCounts is service si's Deployment spec.replicas, its pods that are not
// terminating (Pending ones included), and its ready endpoints in the EndpointSlice.
func (e *Engine) replicaCounts(si int32) serviceSample {
	svc := &e.services[si]
	s := serviceSample{desired: e.deployments.Replicas(si), current: e.deployments.Active(si)}
	for _, id := range svc.pods {
		if st := e.life.Pod(id); st.Ready && !st.Deleting {
			s.ready++
		}
	}
	return s
}
