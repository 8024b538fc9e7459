package load

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"trafficlab/result"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram ranges as simulate/engine.go's stats: 1 ns to 1 hour, 3 significant
// digits for the run and 2 for each timeline interval.
const (
	histMax        = int64(3600e9)
	maxTimeline    = 3600 // points, as simulate's maxTimelinePoints: memory stays flat
	maxPodSeries   = 200  // pods with a per-interval series, as simulate's maxPodSeries
	ringSize       = 4    // timeline intervals a shard holds before the collector takes them
	collectLatency = 250 * time.Millisecond
)

// stats collects outcomes from every worker. Workers record into shards, each with
// its own lock, so that recording costs an uncontended lock and no allocation;
// a collector takes the finished timeline intervals from the shards once per
// interval and keeps only their counts and percentiles: memory does not grow with
// the run's length.
type stats struct {
	start   time.Time
	cfg     *Config // what ended requests were: their method, target and body
	step    time.Duration
	n       int64 // intervals in the run
	shards  []shard
	notSent atomic.Int64
	// Open loops: arrivals that fell due, those never sent because the generator
	// was behind when their phase ended, and the latest it sent one (ns).
	due, behind, maxLate atomic.Int64

	// onInterval, when set, is given each interval's histogram once it is final.
	onInterval func(sec int64, h *hdr.Histogram)

	mu        sync.Mutex
	collected int64          // intervals before this one are final
	open      map[int64]*agg // intervals taken from some shards, not final yet
	points    []Point
}

// shard is one lock's worth of counters.
type shard struct {
	mu      sync.Mutex
	total   *hdr.Histogram
	counts  [nKinds]int64
	retried int64
	slow    int64
	noPod   int64
	other   map[string]int64
	pods    map[string]*podCount
	ended   ended
	win     [ringSize]window
	spill   []window // intervals pushed out of the ring before the collector came
	_       [64]byte // keeps neighbouring shards' locks off one cache line
}

type podCount struct{ requests, errors, slow int64 }

// window is one timeline interval of one shard; sec < 0 when empty.
type window struct {
	sec      int64
	requests int64
	slow     int64
	errs     [nKinds]int64
	hist     *hdr.Histogram
	pods     map[string]int64
}

// agg is one timeline interval summed over the shards that reported it.
type agg struct {
	requests int64
	slow     int64
	errs     [nKinds]int64
	hist     *hdr.Histogram
	pods     map[string]int64
}

func newStats(start time.Time, run time.Duration) *stats {
	s := &stats{start: start, step: time.Second, open: map[int64]*agg{}}
	if n := math.Ceil(float64(run) / float64(s.step)); n > maxTimeline {
		s.step = time.Duration(math.Ceil(float64(run)/maxTimeline/1e9)) * time.Second
	}
	s.n = int64(math.Ceil(float64(run) / float64(s.step)))
	s.shards = make([]shard, min(16, 2*runtime.GOMAXPROCS(0)))
	for i := range s.shards {
		sh := &s.shards[i]
		sh.total = hdr.New(1, histMax, 3)
		sh.other = map[string]int64{}
		sh.pods = map[string]*podCount{}
		sh.ended = newEnded()
		for j := range sh.win {
			sh.win[j] = window{sec: -1, hist: hdr.New(1, histMax, 2), pods: map[string]int64{}}
		}
	}
	return s
}

// fellBehind counts n arrivals the generator had not sent when their phase ended.
func (s *stats) fellBehind(n int64) {
	s.due.Add(n)
	s.behind.Add(n)
}

// sentLate notes an arrival sent late after it fell due.
func (s *stats) sentLate(late time.Duration) {
	for cur := s.maxLate.Load(); int64(late) > cur && !s.maxLate.CompareAndSwap(cur, int64(late)); cur = s.maxLate.Load() {
	}
}

// intervals is the number of timeline intervals in the run.
func (s *stats) intervals() int64 { return s.n }

// shard is the shard of worker i.
func (s *stats) shard(i int) *shard { return &s.shards[i%len(s.shards)] }

// outcome is one finished request.
type outcome struct {
	// sent is the request's start, from which its latency counts: an open loop's
	// intended start, a closed loop's send. vegeta stamps a request when a worker
	// takes its tick (lib/attack.go, Attacker.hit) and starts another worker when
	// none is free, so while it has workers to spare its stamp is the intended
	// start too; ours is even when the generator falls behind (coordinated
	// omission, see LatencyMS).
	sent    time.Time
	end     time.Time
	latency time.Duration
	kind    kind
	code    int   // the status of an answer read whole; 0 without one, as vegeta's
	bytesIn int64 // the answer's body bytes, with a code
	err     error // the round trip's, if it failed
	pod     string
	retried bool
	other   string // kindOther: what it was
}

func clampLatency(d time.Duration) int64 { return min(max(int64(d), 1), histMax) }

// record adds one outcome. Abandoned requests are counted as in flight only.
func (s *stats) record(sh *shard, o *outcome) {
	// An answer racing the end of the run counts in the last interval.
	sec := min(int64(o.end.Sub(s.start)/s.step), s.n-1)
	sh.mu.Lock()
	sh.counts[o.kind]++
	if o.kind == kindAbandoned {
		sh.mu.Unlock()
		return
	}
	sh.ended.add(o, max(int64(o.sent.Sub(s.start)), 0), max(int64(o.end.Sub(s.start)), 0), s.cfg)
	if o.retried {
		sh.retried++
	}
	if o.kind == kindOther {
		key := o.other
		if _, ok := sh.other[key]; !ok && len(sh.other) >= maxOtherKeys {
			key = "(other errors beyond the first 20 kinds)"
		}
		sh.other[key]++
	}
	w := sh.window(sec)
	w.requests++
	// Slow answers are counted exactly, per interval and per pod, as simulate's.
	slow := o.kind == kindOK && s.cfg.SlowThreshold > 0 && o.latency > s.cfg.SlowThreshold
	if o.kind == kindOK {
		v := clampLatency(o.latency)
		_ = sh.total.RecordValue(v)
		_ = w.hist.RecordValue(v)
		if slow {
			sh.slow++
			w.slow++
		}
	} else {
		w.errs[o.kind]++
	}
	if o.pod == "" {
		if o.kind == kindOK || o.kind == kindUnavailable {
			sh.noPod++
		}
	} else {
		pc := sh.pods[o.pod]
		if pc == nil {
			pc = &podCount{}
			sh.pods[o.pod] = pc
		}
		pc.requests++
		if o.kind != kindOK {
			pc.errors++
		}
		if slow {
			pc.slow++
		}
		w.pods[o.pod]++
	}
	sh.mu.Unlock()
}

// window is the shard's window for interval sec. One the collector has not taken
// yet moves to the spill list (rare: only if the collector is late by more than
// the ring), so no count is ever lost.
func (sh *shard) window(sec int64) *window {
	w := &sh.win[sec%ringSize]
	if w.sec == sec {
		return w
	}
	if w.sec >= 0 {
		sh.spill = append(sh.spill, *w)
		w.hist, w.pods = hdr.New(1, histMax, 2), map[string]int64{}
	}
	w.sec, w.requests, w.slow, w.errs = sec, 0, 0, [nKinds]int64{}
	return w
}

// collect takes every interval before upTo from the shards and makes the points of
// those that are final.
func (s *stats) collect(upTo int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := range sh.win {
			if w := &sh.win[j]; w.sec >= 0 && w.sec < upTo {
				s.take(w)
				w.sec = -1
				w.hist.Reset()
				clear(w.pods)
			}
		}
		kept := sh.spill[:0]
		for k := range sh.spill {
			if w := &sh.spill[k]; w.sec < upTo {
				s.take(w)
			} else {
				kept = append(kept, *w)
			}
		}
		sh.spill = kept
		sh.mu.Unlock()
	}
	for ; s.collected < upTo; s.collected++ {
		a := s.open[s.collected]
		delete(s.open, s.collected)
		s.points = append(s.points, s.point(s.collected, a))
		if s.onInterval != nil && a != nil {
			s.onInterval(s.collected, a.hist)
		}
	}
}

// take adds a shard's window into its interval's aggregate; an interval already
// final (a request recorded very late) only adds its counts.
func (s *stats) take(w *window) {
	if w.sec < s.collected {
		p := &s.points[w.sec]
		p.Requests += w.requests
		p.Slow += w.slow
		for k, n := range w.errs {
			p.Errors += n
			if n > 0 {
				if p.ErrorsByKind == nil {
					p.ErrorsByKind = map[string]int64{}
				}
				p.ErrorsByKind[kind(k).String()] += n
			}
		}
		return
	}
	a := s.open[w.sec]
	if a == nil {
		a = &agg{hist: hdr.New(1, histMax, 2), pods: map[string]int64{}}
		s.open[w.sec] = a
	}
	a.requests += w.requests
	a.slow += w.slow
	for k, n := range w.errs {
		a.errs[k] += n
	}
	a.hist.Merge(w.hist)
	for p, n := range w.pods {
		a.pods[p] += n
	}
}

func (s *stats) point(sec int64, a *agg) Point {
	p := Point{TS: float64(sec) * s.step.Seconds()}
	if a == nil {
		return p
	}
	p.Requests = a.requests
	p.Slow = a.slow
	for k, n := range a.errs {
		if n > 0 {
			p.Errors += n
			if p.ErrorsByKind == nil {
				p.ErrorsByKind = map[string]int64{}
			}
			p.ErrorsByKind[kind(k).String()] = n
		}
	}
	if h := a.hist; h.TotalCount() > 0 {
		p.P50MS, p.P90MS = result.MS(h.ValueAtQuantile(50)), result.MS(h.ValueAtQuantile(90))
		p.P99MS, p.P999MS = result.MS(h.ValueAtQuantile(99)), result.MS(h.ValueAtQuantile(99.9))
	}
	if len(a.pods) > 0 && len(a.pods) <= maxPodSeries {
		p.PodRequests = a.pods
	}
	return p
}

// collector closes timeline intervals as they end, until stop is closed.
func (s *stats) collector(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTimer(s.step + collectLatency)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			// Intervals that ended collectLatency ago are final: a worker records its
			// outcome right after reading the clock.
			upTo := int64(now.Sub(s.start)-collectLatency) / int64(s.step)
			s.collect(upTo)
			next := s.start.Add(time.Duration(upTo+1)*s.step + collectLatency)
			t.Reset(time.Until(next))
		}
	}
}
