package simulate

import (
	"trafficlab/model/client"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// A client pod runs its deployment's phases in order, repeated: each closed loop
// (threads) or open loop (rate), ending after a duration or once a number of requests
// are answered (as an `ab -n` run ends), then an optional pause.

func (d *deployment) phase(i int) *scenario.Phase { return &d.phases[i%len(d.phases)] }

// runStats sums one run (a phase of the repeated list) over a deployment's pods.
type runStats struct {
	start, end       sim.Time // -1 until it starts, ends
	requests, errors int64
	aborted          bool
}

// run is the stats of client pod cp's current run, or nil without phases.
func (d *deployment) run(cp *clientPod) *runStats {
	if d.runStats == nil || cp.phase >= len(d.runStats) {
		return nil
	}
	return &d.runStats[cp.phase]
}

// startPhase begins client pod ci's current phase.
func (e *Engine) startPhase(ci int32) {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	ph := d.phase(cp.phase)
	now := e.k.Now()
	cp.epoch++
	cp.active = true
	cp.begun = now
	cp.issued, cp.done, cp.arrivals, cp.lambda = 0, 0, 0, 0
	if r := d.run(cp); r != nil && (r.start < 0 || now < r.start) {
		r.start = now
	}
	if ph.Duration != nil {
		e.k.After(sim.Duration(ph.Duration.Duration), e.evPhaseEnd, ci, cp.epoch)
	}
	if ph.Rate != nil {
		cp.threadsOn = 0
		cp.interval = 1e9 / ph.Rate.PerSecond
		cp.ramp = client.Ramp{}
		cp.segment = 0
		if ph.RampTo != nil {
			cp.ramp = client.Ramp{R0: ph.Rate.PerSecond, R1: ph.RampTo.PerSecond, Span: ph.Duration.Seconds()}
		}
		e.k.At(now, e.evArrival, ci, cp.epoch)
		return
	}
	cp.threadsOn = ph.Threads
	for t := len(cp.threads); t < ph.Threads; t++ {
		cp.threads = append(cp.threads, e.newSlot(ci, int32(t)))
	}
	for _, si := range cp.threads[:ph.Threads] {
		// A thread still busy from the last phase carries on when its request ends.
		if s := &e.slots[si]; s.state == idle && !s.scheduled {
			s.scheduled = true
			e.k.After(d.overhead, e.evReady, si, s.gen)
		}
	}
}

// onPhaseEnd: a phase's duration is over. Requests in flight finish; no new ones.
func (e *Engine) onPhaseEnd(ev sim.Event) {
	if cp := &e.cpods[ev.Obj]; cp.epoch == ev.Gen && cp.active {
		e.endPhase(ev.Obj)
	}
}

// endPhase moves client pod ci on to its next phase, after the pause.
func (e *Engine) endPhase(ci int32) {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	pause := d.phase(cp.phase).Pause
	if r := d.run(cp); r != nil {
		r.end = max(r.end, e.k.Now())
	}
	cp.active = false
	cp.epoch++
	cp.phase++
	if cp.phase >= d.runs {
		return
	}
	wait := sim.Time(0)
	if pause != nil {
		wait = sim.Duration(pause.Duration)
	}
	e.k.After(wait, e.evPhaseStart, ci, cp.epoch)
}

func (e *Engine) onPhaseStart(ev sim.Event) {
	if e.cpods[ev.Obj].epoch == ev.Gen {
		e.startPhase(ev.Obj)
	}
}

// mayIssue reports whether slot si may send another request in its pod's phase.
func (e *Engine) mayIssue(si int32) bool {
	s := &e.slots[si]
	cp := &e.cpods[s.cpod]
	if !cp.active {
		return false
	}
	if s.thread >= 0 && int(s.thread) >= cp.threadsOn {
		return false
	}
	n := e.deps[cp.dep].phase(cp.phase).Requests
	return n == 0 || cp.issued < n
}

// completed counts an answered or failed request toward its phase, which ends when a
// phase by request count has them all.
func (e *Engine) completed(si int32) {
	s := &e.slots[si]
	cp := &e.cpods[s.cpod]
	if s.epoch != cp.epoch || !cp.active {
		return
	}
	cp.done++
	if r := e.deps[cp.dep].run(cp); r != nil {
		r.requests++
	}
	if n := e.deps[cp.dep].phase(cp.phase).Requests; n > 0 && cp.done >= n {
		e.endPhase(s.cpod)
	}
}

// nextArrival schedules client pod ci's next open-loop arrival, unless the phase
// has no more.
func (e *Engine) nextArrival(ci int32) {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	ph := d.phase(cp.phase)
	if ph.Requests > 0 && cp.arrivals >= ph.Requests {
		return
	}
	var at sim.Time
	switch {
	case d.curve != nil:
		x := float64(cp.arrivals)
		if d.poisson {
			cp.lambda += cp.rng.ExpFloat64()
			x = cp.lambda
		}
		t, ok := d.curve.at(x, &cp.segment)
		if !ok {
			return
		}
		at = sim.Time(t * 1e9)
	case cp.ramp.Span > 0:
		// The next arrival where the expected count reaches the next whole number
		// (constant) or the next sum of unit exponentials (poisson).
		x := float64(cp.arrivals)
		if d.poisson {
			cp.lambda += cp.rng.ExpFloat64()
			x = cp.lambda
		}
		t, ok := cp.ramp.At(x)
		if !ok {
			return
		}
		at = cp.begun + sim.Time(t*1e9)
	case d.poisson:
		at = e.k.Now() + sim.Time(cp.rng.ExpFloat64()*cp.interval)
	default:
		// Constant rate: the k-th arrival at k·interval exactly, so rounding never drifts.
		at = cp.begun + sim.Time(float64(cp.arrivals)*cp.interval)
	}
	if ph.Duration != nil && at >= cp.begun+sim.Duration(ph.Duration.Duration) {
		return
	}
	e.k.At(at, e.evArrival, ci, cp.epoch)
}

// abortRun ends client pod ci's run at once, as ab does at its first receive error:
// requests in flight are abandoned and their connections closed.
func (e *Engine) abortRun(ci int32) {
	cp := &e.cpods[ci]
	cp.aborted++
	if r := e.deps[cp.dep].run(cp); r != nil {
		r.aborted = true
	}
	for _, si := range cp.slots {
		s := &e.slots[si]
		if s.state == idle && !s.scheduled {
			continue
		}
		if s.state != idle {
			e.stats.abandoned++ // sent, and now never answered nor failed
		}
		if s.state == inFlight || s.state == dialing {
			e.letGo(si, false)
		}
		s.state = idle
		s.scheduled = false
		s.gen++
		if s.thread < 0 {
			cp.free = append(cp.free, si)
		}
	}
	if cp.active {
		e.endPhase(ci)
	}
}

// registerPhases registers the event kinds of client phases events with the kernel.
func (e *Engine) registerPhases() {
	e.evPhaseEnd = e.k.Register(e.onPhaseEnd)
	e.evPhaseStart = e.k.Register(e.onPhaseStart)
}
