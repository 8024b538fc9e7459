// Package loadgen is the simulator's load-generator subsystem: what each client
// pod's load tool decides about when to send. A client Deployment's Plan is its
// phases in order, repeated: each a closed loop (threads) or an open loop (a rate,
// a ramp or a rate curve), ending after a duration or once a number of requests
// are answered (as an `ab -n` run ends), then an optional pause. The generator owns
// each pod's place in its plan and its arrival schedule; the requests themselves
// are the engine's callers', which it drives through Callers.
package loadgen

import (
	"math/rand/v2"
	"time"

	"trafficlab/model/client"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Callers are the client pods' callers that a generator drives.
type Callers interface {
	// Threads starts the current phase of client pod ci as a closed loop of n
	// threads: each idle one begins its next request.
	Threads(ci int32, n int)
	// Arrive is an open-loop request of client pod ci falling due now.
	Arrive(ci int32)
	// Ended: client pod ci's phase is over; it issues nothing more in it.
	Ended(ci int32)
}

// Plan is one client Deployment's load.
type Plan struct {
	phases  []scenario.Phase
	curve   Curve // the rate over the run, or nil
	poisson bool
	runs    int   // phases × repeat
	stats   []Run // per run, when the client has phases; else nil
}

// Run sums one run (a phase of the repeated list) over a Deployment's pods.
type Run struct {
	Start, End       sim.Time // -1 until it starts, ends
	Requests, Errors int64
	Aborted          bool
}

// pod is one client pod's place in its plan.
type pod struct {
	plan     int32
	rng      *rand.Rand // its poisson arrivals
	phase    int        // index into the phase list repeated; runs when all are done
	epoch    uint32     // changes at each phase boundary; events of an older one are stale
	active   bool       // the phase is issuing requests
	begun    sim.Time
	issued   int64 // requests issued, answered or failed in this phase
	done     int64
	threads  int         // closed loop: threads in this phase
	interval float64     // open loop without a ramp: ns between arrivals
	ramp     client.Ramp // open loop with a ramp
	segment  int         // open loop on a rate curve: the current segment
	arrivals int64
	lambda   float64 // open loop, poisson: expected arrivals up to the next one
}

// Generator is the load generators of a run's client pods.
type Generator struct {
	k                                   *sim.Kernel
	c                                   Callers
	plans                               []Plan
	pods                                []pod
	evArrival, evPhaseEnd, evPhaseStart uint8
}

// New registers the generators' events with k.
func New(k *sim.Kernel, c Callers) *Generator {
	g := &Generator{k: k, c: c}
	g.evArrival = k.Register(g.onArrival)
	g.evPhaseEnd = k.Register(g.onPhaseEnd)
	g.evPhaseStart = k.Register(g.onPhaseStart)
	return g
}

// AddPlan adds client c's plan for a run of the given length, as the next client.
func (g *Generator) AddPlan(c *scenario.Client, run time.Duration) {
	p := Plan{phases: c.Phases, poisson: c.Arrival == scenario.ArrivalPoisson}
	if len(p.phases) == 0 {
		// Threads or a rate for the whole run: one phase without end.
		p.phases = []scenario.Phase{{Threads: c.Threads, Rate: c.Rate}}
	}
	if c.RateCurve != nil {
		p.curve = NewCurve(c.RateCurve, run)
		p.phases = []scenario.Phase{{Rate: &scenario.Rate{PerSecond: p.curve[0].ramp.R0}}}
	}
	p.runs = len(p.phases) * max(c.Repeat, 1)
	if len(c.Phases) > 0 {
		p.stats = make([]Run, p.runs)
		for i := range p.stats {
			p.stats[i].Start, p.stats[i].End = -1, -1
		}
	}
	g.plans = append(g.plans, p)
}

// AddPod adds the next client pod, running plan; Start begins it.
func (g *Generator) AddPod(plan int32, rng *rand.Rand) {
	g.pods = append(g.pods, pod{plan: plan, rng: rng})
}

func (p *Plan) phase(i int) *scenario.Phase { return &p.phases[i%len(p.phases)] }

// RunOf is the stats of client pod ci's current run, or nil without phases.
func (g *Generator) RunOf(ci int32) *Run {
	cp := &g.pods[ci]
	p := &g.plans[cp.plan]
	if p.stats == nil || cp.phase >= len(p.stats) {
		return nil
	}
	return &p.stats[cp.phase]
}

// Current tells whether a request of client pod ci issued in epoch belongs to the
// phase running now.
func (g *Generator) Current(ci int32, epoch uint32) bool {
	cp := &g.pods[ci]
	return epoch == cp.epoch && cp.active
}

// Start begins client pod ci's current phase.
func (g *Generator) Start(ci int32) {
	cp := &g.pods[ci]
	p := &g.plans[cp.plan]
	ph := p.phase(cp.phase)
	now := g.k.Now()
	cp.epoch++
	cp.active = true
	cp.begun = now
	cp.issued, cp.done, cp.arrivals, cp.lambda = 0, 0, 0, 0
	if r := g.RunOf(ci); r != nil && (r.Start < 0 || now < r.Start) {
		r.Start = now
	}
	if ph.Duration != nil {
		g.k.After(sim.Duration(ph.Duration.Duration), g.evPhaseEnd, ci, cp.epoch)
	}
	if ph.Rate != nil {
		cp.threads = 0
		cp.interval = 1e9 / ph.Rate.PerSecond
		cp.ramp = client.Ramp{}
		cp.segment = 0
		if ph.RampTo != nil {
			cp.ramp = client.Ramp{R0: ph.Rate.PerSecond, R1: ph.RampTo.PerSecond, Span: ph.Duration.Seconds()}
		}
		g.k.At(now, g.evArrival, ci, cp.epoch)
		return
	}
	cp.threads = ph.Threads
	g.c.Threads(ci, ph.Threads)
}

// onPhaseEnd: a phase's duration is over. Requests in flight finish; no new ones.
func (g *Generator) onPhaseEnd(ev sim.Event) {
	if cp := &g.pods[ev.Obj]; cp.epoch == ev.Gen && cp.active {
		g.End(ev.Obj)
	}
}

// End moves client pod ci on to its next phase, after the pause.
func (g *Generator) End(ci int32) {
	cp := &g.pods[ci]
	p := &g.plans[cp.plan]
	pause := p.phase(cp.phase).Pause
	if r := g.RunOf(ci); r != nil {
		r.End = max(r.End, g.k.Now())
	}
	cp.active = false
	cp.epoch++
	cp.phase++
	g.c.Ended(ci)
	if cp.phase >= p.runs {
		return
	}
	wait := sim.Time(0)
	if pause != nil {
		wait = sim.Duration(pause.Duration)
	}
	g.k.After(wait, g.evPhaseStart, ci, cp.epoch)
}

func (g *Generator) onPhaseStart(ev sim.Event) {
	if g.pods[ev.Obj].epoch == ev.Gen {
		g.Start(ev.Obj)
	}
}

// Active tells whether client pod ci's phase is issuing requests.
func (g *Generator) Active(ci int32) bool { return g.pods[ci].active }

// MayIssue reports whether client pod ci may send another request in its phase:
// from closed-loop thread number thread, or from the open loop when thread is -1.
func (g *Generator) MayIssue(ci, thread int32) bool {
	cp := &g.pods[ci]
	if !cp.active {
		return false
	}
	if thread >= 0 && int(thread) >= cp.threads {
		return false
	}
	n := g.plans[cp.plan].phase(cp.phase).Requests
	return n == 0 || cp.issued < n
}

// Issued counts a request client pod ci sent now, and returns the epoch it carries.
func (g *Generator) Issued(ci int32) uint32 {
	cp := &g.pods[ci]
	cp.issued++
	return cp.epoch
}

// Completed counts an answered or failed request of client pod ci issued in epoch
// toward its phase, which ends when a phase by request count has them all.
func (g *Generator) Completed(ci int32, epoch uint32) {
	cp := &g.pods[ci]
	if epoch != cp.epoch || !cp.active {
		return
	}
	cp.done++
	if r := g.RunOf(ci); r != nil {
		r.Requests++
	}
	if n := g.plans[cp.plan].phase(cp.phase).Requests; n > 0 && cp.done >= n {
		g.End(ci)
	}
}

// onArrival: an open-loop arrival of client pod ci is due; the next is scheduled
// before the callers take this one.
func (g *Generator) onArrival(ev sim.Event) {
	ci := ev.Obj
	cp := &g.pods[ci]
	if ev.Gen != cp.epoch || !cp.active {
		return
	}
	cp.arrivals++
	g.nextArrival(ci)
	g.c.Arrive(ci)
}

// nextArrival schedules client pod ci's next open-loop arrival, unless the phase
// has no more.
func (g *Generator) nextArrival(ci int32) {
	cp := &g.pods[ci]
	p := &g.plans[cp.plan]
	ph := p.phase(cp.phase)
	if ph.Requests > 0 && cp.arrivals >= ph.Requests {
		return
	}
	var at sim.Time
	switch {
	case p.curve != nil:
		x := float64(cp.arrivals)
		if p.poisson {
			cp.lambda += cp.rng.ExpFloat64()
			x = cp.lambda
		}
		t, ok := p.curve.At(x, &cp.segment)
		if !ok {
			return
		}
		at = sim.Time(t * 1e9)
	case cp.ramp.Span > 0:
		// The next arrival where the expected count reaches the next whole number
		// (constant) or the next sum of unit exponentials (poisson).
		x := float64(cp.arrivals)
		if p.poisson {
			cp.lambda += cp.rng.ExpFloat64()
			x = cp.lambda
		}
		t, ok := cp.ramp.At(x)
		if !ok {
			return
		}
		at = cp.begun + sim.Time(t*1e9)
	case p.poisson:
		at = g.k.Now() + sim.Time(cp.rng.ExpFloat64()*cp.interval)
	default:
		// Constant rate: the k-th arrival at k·interval exactly, so rounding never drifts.
		at = cp.begun + sim.Time(float64(cp.arrivals)*cp.interval)
	}
	if ph.Duration != nil && at >= cp.begun+sim.Duration(ph.Duration.Duration) {
		return
	}
	g.k.At(at, g.evArrival, ci, cp.epoch)
}

// Runs is plan's runs that started, for the Result; a run still going ends at end.
func (g *Generator) Runs(plan int32, end sim.Time) []result.Run {
	p := &g.plans[plan]
	var out []result.Run
	for i, rs := range p.stats {
		if rs.Start < 0 {
			break
		}
		e := rs.End
		if e < 0 {
			e = end
		}
		out = append(out, result.Run{
			Phase: i % len(p.phases), Name: p.phase(i).Name, StartS: rs.Start.Seconds(), EndS: e.Seconds(),
			Requests: rs.Requests, Errors: rs.Errors, Aborted: rs.Aborted,
		})
	}
	return out
}
