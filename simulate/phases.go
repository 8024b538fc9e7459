package simulate

import "trafficlab/sim"

// loadCallers are the client pods' callers that the load generators drive
// (loadgen.Callers).
type loadCallers struct{ e *Engine }

// Threads: closed-loop threads that are idle begin their next request, after the
// client's overhead; threads are made on first use. A thread still busy from the
// last phase carries on when its request ends.
func (c loadCallers) Threads(ci int32, n int) {
	e := c.e
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	for t := len(cp.threads); t < n; t++ {
		cp.threads = append(cp.threads, e.newSlot(ci, int32(t)))
	}
	for _, si := range cp.threads[:n] {
		if s := &e.slots[si]; s.state == idle && !s.scheduled {
			s.scheduled = true
			e.k.After(d.overhead, e.evReady, si, s.gen)
		}
	}
}

// Arrive: an open-loop client pod's next request is due. Requests that find every
// slot busy are counted as not sent: the schedule is kept, nothing is hidden. A
// client whose CPU is behind sends it when it catches up (clientcpu.go).
func (c loadCallers) Arrive(ci int32) {
	e := c.e
	e.stats.tlOffered++
	e.deps[e.cpods[ci].dep].due++
	if e.behind(ci) {
		return
	}
	e.startArrival(ci, e.k.Now())
}

// Ended: client pod ci's phase is over; arrivals it is behind on are not sent.
func (c loadCallers) Ended(ci int32) { c.e.dropLate(ci) }

// startArrival sends an open-loop request of client pod ci that fell due at due
// (now, or earlier when the client fell behind) on a free slot.
func (e *Engine) startArrival(ci int32, due sim.Time) {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	var si int32
	if n := len(cp.free); n > 0 {
		si = cp.free[n-1]
		cp.free = cp.free[:n-1]
	} else if max := d.spec.MaxInFlight; max == 0 || len(cp.slots) < max {
		if e.openSlots >= e.liveLimit {
			e.stop(e.outstanding())
			return
		}
		e.openSlots++
		si = e.newSlot(ci, -1)
	} else {
		e.stats.notSent++
		d.notSent++
		return
	}
	s := &e.slots[si]
	s.open, s.due = true, due+d.overhead
	if d.overhead > 0 {
		if cp.grp != nil {
			s.waking = true // it is about to be prepared: it holds one of the senders
			cp.waking++
		}
		s.scheduled = true
		e.k.After(d.overhead, e.evReady, si, s.gen)
		return
	}
	e.issue(si)
}

// mayIssue reports whether slot si may send another request in its pod's phase.
func (e *Engine) mayIssue(si int32) bool {
	s := &e.slots[si]
	return e.load.MayIssue(s.cpod, s.thread)
}

// completed counts an answered or failed request toward its phase.
func (e *Engine) completed(si int32) {
	s := &e.slots[si]
	e.load.Completed(s.cpod, s.epoch)
}

// abortRun ends client pod ci's run at once, as ab does at its first receive error:
// requests in flight are abandoned and their connections closed.
func (e *Engine) abortRun(ci int32) {
	cp := &e.cpods[ci]
	cp.aborted++
	if r := e.load.RunOf(ci); r != nil {
		r.Aborted = true
	}
	for _, si := range cp.slots {
		s := &e.slots[si]
		if s.state == idle && !s.scheduled {
			continue
		}
		if s.state != idle {
			e.stats.abandoned++ // sent, and now never answered nor failed
		}
		if s.state == inFlight || s.state == dialing || s.state == opening {
			e.letGo(si, false)
		}
		e.woke(si)
		s.state = idle
		s.scheduled = false
		s.gen++
		if s.thread < 0 {
			cp.free = append(cp.free, si)
		}
	}
	if e.load.Active(ci) {
		e.load.End(ci)
	}
}
