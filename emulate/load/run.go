package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"trafficlab/emulate/cpuclock"
	"trafficlab/model/client"
	"trafficlab/model/dist"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Why a run stopped sending, as context causes.
var (
	errDuration    = errors.New("duration")
	errMaxRequests = errors.New("max_requests")
	errPhasesDone  = errors.New("phases")
)

// Run sends the configured load and reports what it measured. It returns when the
// duration is over, every phase has run and its requests are answered, MaxRequests
// are sent and answered, or ctx is cancelled (the report then covers what ran);
// requests still in flight then are abandoned. The error is for a configuration
// that cannot run.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	r.clock = newSleeper()
	defer r.clock.close()
	r.waitForStart(ctx)
	cpuAtStart := cpuclock.Process()
	r.stats = newStats(r.start, cfg.Duration)
	r.stats.cfg = &r.cfg
	r.stats.onInterval = cfg.OnInterval
	r.issueCtx, r.stopIssue = context.WithCancelCause(ctx)
	r.flightCtx, r.abandon = context.WithCancel(ctx)
	deadline := time.AfterFunc(cfg.Duration, func() {
		r.stopIssue(errDuration)
		r.abandon()
	})
	stop, collected := make(chan struct{}), make(chan struct{})
	go r.stats.collector(stop, collected)

	r.control()
	r.wg.Wait()
	end := time.Now()
	deadline.Stop()
	r.release()
	close(stop)
	<-collected

	ran := end.Sub(r.start)
	r.stats.collect(min(int64(ran/r.stats.step)+1, r.stats.intervals()))
	rep := r.report(min(ran, cfg.Duration), r.endReason())
	rep.CPUS = result.Round((cpuclock.Process() - cpuAtStart).Seconds(), 6)
	return rep, nil
}

// newRunner checks cfg, fills in its defaults and prepares what every request
// shares: the request itself, the open loop's slot limit and the shared pool.
func newRunner(cfg Config) (*runner, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	think, err := dist.New(cfg.ThinkTime.Spec())
	if err != nil {
		return nil, fmt.Errorf("think time: %w", err)
	}
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
	}
	if cfg.Arrival == "" {
		cfg.Arrival = scenario.ArrivalConstant
	}
	r := &runner{cfg: cfg, think: think, thinks: cfg.ThinkTime != nil,
		maxRequests: cfg.maxRequests(), tracker: newTracker(namedDial(&cfg)), jobs: make(chan job)}
	switch cfg.client() {
	case clientGRPC:
	case ClientNetHTTP:
		if r.tmpl, r.body, err = template(&cfg); err != nil {
			return nil, err
		}
	default:
		if r.h1, err = newH1Request(&cfg); err != nil {
			return nil, err
		}
	}
	r.slotLimit = maxSlots
	if cfg.MaxInFlight > 0 {
		r.slotLimit = int64(cfg.MaxInFlight)
	}
	if cfg.Conn.Reuse != scenario.ReusePerThread {
		r.shared = r.newPool()
	}
	return r, nil
}

// waitForStart sets the run's start: now, or cfg.Start, waited for unless ctx ends
// first.
func (r *runner) waitForStart(ctx context.Context) {
	r.start = time.Now()
	if r.cfg.Start.IsZero() {
		return
	}
	if wait := time.Until(r.cfg.Start); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	r.start = r.cfg.Start
}

// release abandons what is still in flight, ends the phases and closes the pools.
func (r *runner) release() {
	r.abandon()
	for _, pr := range r.phases {
		pr.cancel()
	}
	r.mu.Lock()
	for _, p := range r.pools {
		p.close()
	}
	r.mu.Unlock()
}

// endReason names what stopped the issuing of requests: the duration, MaxRequests,
// the phases' end, or else a cancelled ctx.
func (r *runner) endReason() string {
	switch cause := context.Cause(r.issueCtx); {
	case errors.Is(cause, errDuration):
		return errDuration.Error()
	case errors.Is(cause, errMaxRequests):
		return errMaxRequests.Error()
	case errors.Is(cause, errPhasesDone):
		return errPhasesDone.Error()
	}
	return "canceled"
}

// template is the request every worker sends (each with its own context), and its
// body.
func template(cfg *Config) (*http.Request, []byte, error) {
	req, err := http.NewRequest(cfg.Method, cfg.Target, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("request: %w", err)
	}
	var body []byte
	if cfg.BodyBytes > 0 {
		body = make([]byte, cfg.BodyBytes)
		req.ContentLength = cfg.BodyBytes
		// GetBody lets the transport resend the request on another connection
		// (net/http transport.go rewindBody), as for a request without a body.
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	// Request line and the headers Go writes on its own (transfer.go, request.go
	// write): Host, User-Agent, Content-Length; padding reaches HeaderBytes.
	size := len(req.Method) + 1 + len(req.URL.RequestURI()) + len(" HTTP/1.1\r\n") +
		len("Host: \r\n") + len(req.Host) + len("User-Agent: Go-http-client/1.1\r\n") + len("\r\n")
	if body != nil {
		size += len("Content-Length: \r\n") + len(strconv.FormatInt(cfg.BodyBytes, 10))
	}
	const pad = "X-Trafficlab-Pad: \r\n"
	if n := cfg.HeaderBytes - int64(size) - int64(len(pad)); n > 0 {
		req.Header.Set("X-Trafficlab-Pad", strings.Repeat("x", int(min(n, 64<<10))))
	}
	return req, body, nil
}

// exchanger is a connection pool: it sends a request and reads the answer.
type exchanger interface {
	// exchange sends one request of phase pr, sent at now, and reads the answer to
	// its last byte, at end.
	exchange(w *worker, pr *phaseRun, now time.Time) (status int, pod string, end time.Time, err error)
	// close closes the idle connections, at the end of the run.
	close()
}

// newPool makes a pool on the run's HTTP client.
func (r *runner) newPool() exchanger {
	var p exchanger
	switch {
	case r.cfg.client() == clientGRPC:
		p = newGRPCPool(r)
	case r.h1 != nil:
		p = newH1Pool(r)
	default:
		p = newGoPool(r)
	}
	r.pools = append(r.pools, p)
	return p
}

// runner is one Run in progress.
type runner struct {
	cfg         Config
	think       dist.Sampler
	thinks      bool
	h1          *h1request    // the trafficlab client's request
	tmpl        *http.Request // net/http's
	body        []byte
	maxRequests int64
	start       time.Time
	stats       *stats
	tracker     *tracker
	clock       *sleeper
	shared      exchanger // every worker's pool, unless reuse is per-thread

	// issueCtx ends when nothing more may be sent; flightCtx when what is in flight
	// is abandoned (the duration is over, or ctx was cancelled).
	issueCtx  context.Context
	stopIssue context.CancelCauseFunc
	flightCtx context.Context
	abandon   context.CancelFunc

	sent    atomic.Int64
	aborted atomic.Int64
	cur     atomic.Pointer[phaseRun]

	// Open loop: arrivals go to an idle slot through jobs, or start a new one.
	jobs      chan job
	slots     atomic.Int64
	slotLimit int64

	wg      sync.WaitGroup // threads, slots and arrival generators
	mu      sync.Mutex
	workers int
	pools   []exchanger
	threads []*worker
	phases  []*phaseRun // control's goroutine only
}

// job is one open-loop arrival handed to a slot.
type job struct {
	pr *phaseRun
	at time.Time // intended start
}

// takeSend counts a request about to be sent, or stops the run at MaxRequests.
func (r *runner) takeSend() bool {
	if r.sent.Add(1) > r.maxRequests {
		r.sent.Add(-1)
		r.stopIssue(errMaxRequests)
		return false
	}
	return true
}

// phaseRun is one run of a phase (phase i of the repeated list), or a pause.
type phaseRun struct {
	index   int
	ph      Phase
	threads int // closed-loop threads allowed to send; 0 in open loops and pauses
	begun   time.Time
	// ctx parents the phase's requests: an aborted run abandons them.
	ctx          context.Context
	cancel       context.CancelFunc
	issued, done atomic.Int64
	over         chan struct{} // closed when the phase ends
	finished     chan struct{} // closed when its requests are answered, or it aborted
	endOnce      sync.Once
	finishOnce   sync.Once
	aborted      atomic.Bool
}

func (r *runner) newPhaseRun(i int, ph Phase) *phaseRun {
	pr := &phaseRun{index: i, ph: ph, begun: time.Now(), over: make(chan struct{}), finished: make(chan struct{})}
	if i == 0 {
		// The first phase begins at the run's start, as simulate's does, however
		// late a generator short of CPU gets here: its first arrivals are then
		// due already, and count late or behind schedule.
		pr.begun = r.start
	}
	if !ph.openLoop() {
		pr.threads = ph.Threads
	}
	pr.ctx, pr.cancel = context.WithCancel(r.flightCtx)
	r.phases = append(r.phases, pr)
	return pr
}

// take reserves one of the phase's requests, if it has a count.
func (p *phaseRun) take() bool { return p.ph.Requests == 0 || p.issued.Add(1) <= p.ph.Requests }

func (p *phaseRun) end()    { p.endOnce.Do(func() { close(p.over) }) }
func (p *phaseRun) finish() { p.finishOnce.Do(func() { close(p.finished) }) }

func (p *phaseRun) ended() bool {
	select {
	case <-p.over:
		return true
	default:
		return false
	}
}

// completed counts an outcome toward its phase, as simulate/loadgen Completed
// does: a phase by request count finishes with its last answer, and a run of a
// tool that aborts on errors ends at the first one (abort true). Reports whether
// this outcome aborted the run.
func (p *phaseRun) completed(k kind, abort bool) bool {
	if k == kindAbandoned || p.ended() {
		return false
	}
	if abort && p.aborted.CompareAndSwap(false, true) {
		p.cancel()
		p.finish()
		return true
	}
	if p.ph.Requests > 0 && p.done.Add(1) >= p.ph.Requests {
		p.finish()
	}
	return false
}

// control runs the phases in order, as simulate/phases.go does: each ends after
// its duration, once its requests are answered, or when it aborts; then its pause.
// Requests in flight when a phase ends finish on their own.
func (r *runner) control() {
	n := len(r.cfg.Phases) * max(1, r.cfg.Repeat)
	var prev *phaseRun
	// Each new phase is published before the previous one ends, so a thread that
	// sees a phase end finds its successor (or the run stopped).
	next := func(pr *phaseRun) {
		r.cur.Store(pr)
		if prev != nil {
			prev.end()
		}
		prev = pr
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	wait := func(d time.Duration, finished <-chan struct{}) {
		var limit <-chan time.Time
		if d > 0 {
			timer.Reset(d)
			limit = timer.C
		}
		select {
		case <-limit:
		case <-finished:
		case <-r.issueCtx.Done():
		}
		timer.Stop()
	}
	for i := 0; i < n && r.issueCtx.Err() == nil; i++ {
		ph := r.cfg.Phases[i%len(r.cfg.Phases)]
		pr := r.newPhaseRun(i, ph)
		next(pr)
		if ph.openLoop() {
			r.wg.Add(1)
			go r.arrivals(pr)
		} else {
			r.startThreads(ph.Threads)
		}
		wait(ph.Duration, pr.finished)
		if ph.Pause > 0 && i+1 < n && r.issueCtx.Err() == nil {
			pause := &phaseRun{index: -1, over: make(chan struct{}), finished: make(chan struct{})}
			next(pause)
			wait(ph.Pause, nil)
		}
	}
	// Stopped before the last phase ends, so that threads see the stop first.
	r.stopIssue(errPhasesDone)
	if prev != nil {
		prev.end()
	}
}

// startThreads starts closed-loop threads up to n. Threads persist across phases
// (with their connections), as simulate's slots do.
func (r *runner) startThreads(n int) {
	for i := len(r.threads); i < n; i++ {
		w := r.newWorker("thread", i)
		r.threads = append(r.threads, w)
		r.wg.Add(1)
		go r.thread(w)
	}
}

// thread is one closed-loop thread: overhead, request, answer, think time, again,
// while its phase lets it.
func (r *runner) thread(w *worker) {
	defer r.wg.Done()
	for r.issueCtx.Err() == nil {
		pr := r.cur.Load()
		if pr.ended() {
			continue // its successor is published already, or the run stopped
		}
		if w.idx >= pr.threads || !pr.take() {
			select {
			case <-pr.over:
			case <-r.issueCtx.Done():
			}
			continue
		}
		if r.cfg.Overhead > 0 && !w.sleep(r.cfg.Overhead) {
			return
		}
		if !r.takeSend() {
			return
		}
		now := time.Now()
		w.do(pr, now, now)
		if r.thinks {
			if d := time.Duration(r.think.Sample(w.rng)); d > 0 && !w.sleep(d) {
				return
			}
		}
	}
}

// arrivals generates an open-loop phase's arrivals at their intended times. A
// generator short of CPU turns to an arrival only after its time: it sends it at
// once, and the ones after it, until it has caught up, as vegeta's pacer does
// (lib/pacer.go: no wait once behind). Arrivals still unsent when the phase ends
// are never sent: they are counted behind schedule (simulate/clientcpu.go dropLate).
func (r *runner) arrivals(pr *phaseRun) {
	defer r.wg.Done()
	sch := newSchedule(pr.ph, r.cfg.Arrival, sim.Stream(r.cfg.Seed, "load/"+r.cfg.Name+"/arrivals/"+strconv.Itoa(pr.index)))
	var timer *time.Timer
	wk := newWaker()
	for {
		off, ok := sch.next()
		if !ok {
			return
		}
		at := pr.begun.Add(off)
		// An arrival due at the run's end or after is not the run's: without this
		// the one due as the deadline's timer fires could be sent before it stops
		// the run.
		if !at.Before(r.start.Add(r.cfg.Duration)) {
			return
		}
		// Every arrival but the phase's first is late when it is due before the
		// generator is done with the one before it.
		late := time.Since(at)
		if !r.clock.waitUntil(at, &timer, &wk, pr.over, r.issueCtx.Done()) || pr.ended() || r.issueCtx.Err() != nil {
			end := time.Now()
			if runEnd := r.start.Add(r.cfg.Duration); runEnd.Before(end) {
				end = runEnd
			}
			r.stats.fellBehind(sch.dueBefore(pr.begun, end))
			return
		}
		if late > 0 && sch.k > 1 {
			r.stats.sentLate(late)
		}
		r.stats.due.Add(1)
		r.dispatch(job{pr: pr, at: at})
	}
}

// schedule is an open-loop phase's arrival times, as simulate/phases.go
// nextArrival places them: the first at the phase's start, then every 1/rate
// (constant) or after exponential gaps (poisson); a ramp places the k-th where the
// expected count reaches k (or a sum of k unit exponentials).
type schedule struct {
	ph      Phase
	poisson bool
	rng     *rand.Rand
	rp      client.Ramp
	k       int64   // arrivals given so far
	off     float64 // the last one's, in seconds from the phase's start
	lambda  float64 // expected count so far
}

func newSchedule(ph Phase, arrival string, rng *rand.Rand) *schedule {
	return &schedule{ph: ph, poisson: arrival == scenario.ArrivalPoisson, rng: rng,
		rp: client.Ramp{R0: ph.Rate, R1: ph.RampTo, Span: ph.Duration.Seconds()}}
}

// next is the next arrival's time from the phase's start; false when the phase has
// no more.
func (s *schedule) next() (time.Duration, bool) {
	ph := s.ph
	if ph.Requests > 0 && s.k >= ph.Requests {
		return 0, false
	}
	if s.k > 0 {
		switch {
		case ph.RampTo > 0:
			x := float64(s.k)
			if s.poisson {
				s.lambda += s.rng.ExpFloat64()
				x = s.lambda
			}
			t, ok := s.rp.At(x)
			if !ok {
				return 0, false
			}
			s.off = t
		case s.poisson:
			s.off += s.rng.ExpFloat64() / ph.Rate
		default:
			// The k-th at k/rate exactly, so rounding never drifts.
			s.off = float64(s.k) / ph.Rate
		}
	}
	if ph.Duration > 0 && s.off >= ph.Duration.Seconds() {
		return 0, false
	}
	s.k++
	return time.Duration(s.off * 1e9), true
}

// dueBefore counts the arrival last given, not sent, and those after it that fell
// due before end, for a phase begun at begun.
func (s *schedule) dueBefore(begun, end time.Time) int64 {
	var n int64
	for off, ok := time.Duration(s.off*1e9), true; ok && begun.Add(off).Before(end); off, ok = s.next() {
		n++
	}
	return n
}

// dispatch hands an arrival to an idle slot, or a new one while there may be more;
// without either it is not sent, as in simulate/caller.go onArrival. An arrival
// that is late (the generator fell behind) keeps its intended start, so the delay
// shows in its latency.
func (r *runner) dispatch(j job) {
	if !r.takeSend() {
		return
	}
	select {
	case r.jobs <- j:
		return
	default:
	}
	for n := r.slots.Load(); n < r.slotLimit; n = r.slots.Load() {
		if r.slots.CompareAndSwap(n, n+1) {
			w := r.newWorker("slot", int(n))
			r.wg.Add(1)
			go r.slot(w, j)
			return
		}
	}
	r.sent.Add(-1)
	r.stats.notSent.Add(1)
}

// slot serves open-loop arrivals one at a time.
func (r *runner) slot(w *worker, j job) {
	defer r.wg.Done()
	for {
		intended := j.at.Add(r.cfg.Overhead)
		if !w.sleepUntil(intended) {
			return
		}
		if r.issueCtx.Err() != nil {
			// Its time came before the end, but a generator short of CPU got to it
			// only after: it was never sent.
			r.sent.Add(-1)
			r.stats.behind.Add(1)
			return
		}
		w.do(j.pr, intended, time.Now())
		select {
		case j = <-r.jobs:
		case <-r.issueCtx.Done():
			return
		}
	}
}

// worker is a closed-loop thread or an open-loop slot: one request at a time, its
// own random stream, pool (per-thread reuse) and stats shard.
type worker struct {
	r    *runner
	idx  int
	sh   *shard
	pool exchanger
	rng  *rand.Rand

	trace httptrace.ClientTrace
	// ctx parents the worker's requests in phase pr, carrying its trace; built once
	// per phase, so a request adds only its deadline (net/http) or nothing.
	pr        *phaseRun
	ctx       context.Context
	ctxCancel context.CancelFunc
	stopAfter func() bool
	timer     *time.Timer

	// The connection of the request in progress: set by the trace, possibly from
	// the HTTP/2 transport's goroutine, or by the trafficlab client.
	conn    atomic.Pointer[conn]
	retried atomic.Bool
	// The trafficlab client's: the connection to interrupt when the run abandons
	// the request, the channel a pool hands it a connection through, and the last
	// pod name seen, so that an unchanged name costs no allocation.
	active  atomic.Pointer[h1conn]
	grant   chan grant
	lastPod string
	waker   waker
	// bodyIn is the body bytes of the last answer the worker's exchange read.
	bodyIn int64
}

func (r *runner) newWorker(role string, idx int) *worker {
	w := &worker{r: r, idx: idx, grant: make(chan grant, 1), waker: newWaker()}
	w.rng = sim.Stream(r.cfg.Seed, "load/"+r.cfg.Name+"/"+role+"/"+strconv.Itoa(idx))
	w.trace.GotConn = w.gotConn
	r.mu.Lock()
	defer r.mu.Unlock()
	w.sh = r.stats.shard(r.workers)
	r.workers++
	w.pool = r.shared
	if w.pool == nil {
		w.pool = r.newPool()
	}
	return w
}

// setPhase prepares the worker's context for requests of phase pr.
func (w *worker) setPhase(pr *phaseRun) {
	if w.pr == pr {
		return
	}
	if w.stopAfter != nil {
		w.stopAfter()
	}
	if w.ctxCancel != nil {
		w.ctxCancel()
	}
	// A context of the worker's own under the phase's, so the per-request deadline
	// registers with it and not with one context shared by all workers.
	base, cancel := context.WithCancel(pr.ctx)
	w.pr, w.ctx, w.ctxCancel = pr, httptrace.WithClientTrace(base, &w.trace), cancel
	if w.r.h1 != nil {
		w.stopAfter = context.AfterFunc(base, w.interrupt)
	}
}

// interrupt cuts the trafficlab client's request in progress short, when the run
// abandons it: a deadline in the past wakes its read or write at once.
func (w *worker) interrupt() {
	if c := w.active.Load(); c != nil {
		_ = c.tc.SetDeadline(time.Unix(1, 0))
	}
}

// podName is the pod header's value as a string, the last one's when unchanged.
func (w *worker) podName(v []byte) string {
	if string(v) != w.lastPod {
		w.lastPod = string(v)
	}
	return w.lastPod
}

// timerFor is the worker's timer, set to fire after d.
func (w *worker) timerFor(d time.Duration) *time.Timer {
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	return w.timer
}

// sleep waits d, or until the run stops sending (false).
func (w *worker) sleep(d time.Duration) bool { return w.sleepUntil(time.Now().Add(d)) }

func (w *worker) sleepUntil(at time.Time) bool {
	return w.r.clock.waitUntil(at, &w.timer, &w.waker, w.r.issueCtx.Done(), nil)
}

// gotConn notes the connection a request got. A second one for the same request
// means the Transport resent it; one past its max lifetime is retired before the
// request is written on it (see conn.Write).
func (w *worker) gotConn(info httptrace.GotConnInfo) {
	c, ok := info.Conn.(*conn)
	if !ok {
		return
	}
	if prev := w.conn.Swap(c); prev != nil && !prev.retired.Load() {
		w.retried.Store(true)
	}
	p, _ := w.pool.(*goPool)
	if p != nil && p.lifetime > 0 && !p.h2 && info.Reused && time.Since(c.born) >= p.lifetime && c.retired.CompareAndSwap(false, true) {
		c.t.retired.Add(1)
	}
}

// do sends one request of phase pr, started (intended) at intended and sent now,
// and records the outcome.
func (w *worker) do(pr *phaseRun, intended, now time.Time) {
	r := w.r
	w.setPhase(pr)
	w.conn.Store(nil)
	w.retried.Store(false)
	w.bodyIn = 0
	status, pod, end, err := w.pool.exchange(w, pr, now)
	o := outcome{sent: intended, end: end, pod: pod, latency: end.Sub(intended), retried: w.retried.Load(), err: err}
	switch {
	case err != nil && pr.ctx.Err() != nil:
		o.kind = kindAbandoned // whatever the error says, the run cut it off
	case err != nil:
		o.kind = classify(err)
	default:
		o.kind = statusKind(status)
		o.code, o.bytesIn = status, w.bodyIn
	}
	if c := w.conn.Load(); c != nil && pod != "" {
		c.notePod(pod)
	}
	if o.kind == kindOther {
		o.other = otherKey(err, status)
	}
	r.stats.record(w.sh, &o)
	// A tool that aborts its run does so on a failed exchange (refused, reset, timed
	// out), not on an error status nor on a connection closed before the answer
	// (simulate/caller.go fail).
	abort := r.cfg.AbortsRun && err != nil && o.kind != kindClosed && o.kind != kindAbandoned
	if pr.completed(o.kind, abort) {
		r.aborted.Add(1)
	}
}

// describe is the load in a few words.
func describe(c *Config) string {
	var parts []string
	for _, p := range c.Phases {
		s := ""
		switch {
		case p.Rate > 0 && p.RampTo > 0:
			s = fmt.Sprintf("%s→%s %s", scenario.Rate{PerSecond: p.Rate}, scenario.Rate{PerSecond: p.RampTo}, c.Arrival)
		case p.Rate > 0:
			s = fmt.Sprintf("%s %s", scenario.Rate{PerSecond: p.Rate}, c.Arrival)
		case p.Threads == 1:
			s = "1 thread"
		default:
			s = fmt.Sprintf("%d threads", p.Threads)
		}
		if p.Duration > 0 {
			s += " for " + p.Duration.String()
		}
		if p.Requests > 0 {
			s += fmt.Sprintf(" × %d requests", p.Requests)
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, ", then ")
	if c.Repeat > 1 {
		s = fmt.Sprintf("(%s) ×%d", s, c.Repeat)
	}
	return s
}
