package simulate

import (
	"fmt"

	"trafficlab/model/dist"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate/lifecycle"
)

// Calls: a service's pods calling other services (spec.services[].pod.calls). A pod
// calls through callers of its own: per Service it calls, a client pod on its node
// with the pod's client library and pools, made at its first call, whose open-loop
// slots carry one call each. kube-proxy on the node picks each new connection's pod,
// as for any client. A request at the app holds its worker while its calls are out
// (jobCalling) and goes on when the step's last call has ended.

// callSpec is one call of a service's steps.
type callSpec struct {
	edge        int32 // in e.edges
	caller      int32 // the edge's place among its service's, as pods index their callers
	timeout     sim.Time
	retries     int32
	count       int32
	probability float64
	bodyBytes   int64
	optional    bool
}

// callStep is one step of a service's calls: one call, or calls made at once.
type callStep []callSpec

// edge is one service's calls to another, and what they did.
type edge struct {
	from, to                    int32
	dep                         int32 // the calling pods' callers
	requests, attempts, retries int64
	errors, attemptErrors       errorCounts
	latency                     result.Latencies
}

// callSlot is the call a service pod's caller slot carries.
type callSlot struct {
	job    int32 // the request at the calling pod, while its serial matches
	serial uint32
	spec   *callSpec
	left   int32    // calls still to make after this one (count)
	tries  int32    // attempts made of this call
	start  sim.Time // when the call began
	// path is its branch's critical path so far (critical.go).
	path []pathItem
}

// jobCalls is where a request at a pod with calls stands.
type jobCalls struct {
	step    int32 // the next step to start
	pending int32 // calls of the current step not yet ended
	failed  bool  // a call that is not optional failed: the answer is a 503
	callsNS int64 // time its steps of calls took (in spent's dependency part too)
	// deadline is its caller's (propagateDeadline); 0 when unknown or not propagated.
	deadline sim.Time
}

// addCalls sets up every service's call steps, with one edge and one deployment of
// callers per service and Service it calls.
func (e *Engine) addCalls() error {
	for si := range e.services {
		svc := &e.services[si]
		pod := &svc.spec.Pod
		if len(pod.Calls) == 0 {
			continue
		}
		path := fmt.Sprintf("spec.services[%d]", si)
		e.graph = true
		svc.propagate = pod.Client.PropagateDeadline
		if pod.AfterCalls != nil {
			after, err := dist.New(pod.AfterCalls.Spec())
			if err != nil {
				return fieldError(path+".pod.afterCalls", err)
			}
			svc.after = &after
		}
		for i := range pod.Calls {
			var step callStep
			for _, c := range pod.Calls[i].Calls() {
				step = append(step, e.callSpec(int32(si), c))
			}
			svc.calls = append(svc.calls, step)
		}
	}
	e.svcFigures = make([]serviceFigures, len(e.services))
	return nil
}

// callSpec is call c of service si, on the edge to its Service, made first if new.
func (e *Engine) callSpec(si int32, c *scenario.Call) callSpec {
	svc := &e.services[si]
	to := e.serviceIndex(c.Service)
	k := int32(0)
	for ; int(k) < len(svc.edges) && e.edges[svc.edges[k]].to != to; k++ {
	}
	if int(k) == len(svc.edges) {
		cc := svc.spec.Pod.Client
		// The app's own CPU per call and connection; a pod's calls burn no steady
		// CPU of a load generator's.
		work := cc.Work
		work.Steady = nil
		as := &scenario.Client{Name: svc.name, Target: c.Service, Library: cc.Library, Timeout: cc.Timeout,
			Connections: cc.Connections, Request: cc.Request, Replicas: 1, Work: work}
		d := e.newDeployment(as, to)
		d.from = si
		e.deps = append(e.deps, d)
		svc.edges = append(svc.edges, int32(len(e.edges)))
		e.edges = append(e.edges, edge{from: si, to: to, dep: int32(len(e.deps) - 1)})
	}
	return callSpec{edge: svc.edges[k], caller: k, timeout: sim.Duration(c.Timeout.Duration), retries: int32(c.Retries),
		count: int32(*c.Count), probability: *c.Probability, bodyBytes: *c.RequestBytes, optional: c.Optional}
}

// callsNext moves request ji at a pod with calls on: it starts the next step that
// makes a call, or the CPU after the calls. It reports false when nothing is left
// before the answer.
func (e *Engine) callsNext(ji int32) bool {
	j := &e.jobs[ji]
	svc := &e.services[e.pods[j.pod].svc]
	jc := &e.jobCalls[ji]
	for !jc.failed && int(jc.step) < len(svc.calls) {
		step := svc.calls[jc.step]
		jc.step++
		if e.startStep(ji, step) {
			// Sending the calls made jobs, which may have moved the table.
			j = &e.jobs[ji]
			j.state = jobCalling
			j.mark = e.k.Now()
			return true
		}
	}
	if jc.failed {
		j.unavailable = true
		return false
	}
	if int(jc.step) == len(svc.calls) && svc.after != nil {
		jc.step++
		p := &e.pods[j.pod]
		j.wait = 0
		e.onCore(ji, svc.after.Sample(p.rng))
		return true
	}
	return false
}

// startStep makes the calls of step that request ji draws, and reports whether it
// made any.
func (e *Engine) startStep(ji int32, step callStep) bool {
	p := &e.pods[e.jobs[ji].pod]
	jc := &e.jobCalls[ji]
	// Held while the calls start, so that one failing at once cannot end the step.
	jc.pending = 1
	for i := range step {
		c := &step[i]
		if c.probability < 1 && p.rng.Float64() >= c.probability {
			continue
		}
		si := e.callSlot(e.jobs[ji].pod, c.caller)
		cs := &e.callSlots[e.slots[si].call]
		*cs = callSlot{job: ji, serial: e.jobs[ji].serial, spec: c, left: c.count - 1, start: e.k.Now(), path: cs.path[:0]}
		jc.pending++
		if !e.attempt(si) {
			// The caller's deadline has passed: the call fails before it is sent.
			e.callEnded(si, false, errTimeout, -1, nil)
		}
	}
	jc.pending--
	return jc.pending > 0
}

// callSlot is a free caller slot of pod pi for the edge at place k of its service.
func (e *Engine) callSlot(pi, k int32) int32 {
	p := &e.pods[pi]
	if p.callers == nil {
		p.callers = make([]int32, len(e.services[p.svc].edges))
		for i := range p.callers {
			p.callers[i] = -1
		}
	}
	ci := p.callers[k]
	if ci < 0 {
		ed := &e.edges[e.services[p.svc].edges[k]]
		d := &e.deps[ed.dep]
		ci = int32(len(e.cpods))
		// With a sidecar, the calls leave through the pod's Envoy, which balances per
		// request over the callee's endpoints.
		// Its calls' CPU is the app's: it runs on the pod's own container.
		cp := clientPod{dep: ed.dep, node: p.node, entry: p.node, name: p.name, envoy: p.envoy, from: pi, grp: p.grp,
			resolver: e.resolverFor(d, p.name)}
		cp.pool = e.newPool(d, ci)
		e.cpods = append(e.cpods, cp)
		d.pods = append(d.pods, ci)
		p.callers[k] = ci
	}
	cp := &e.cpods[ci]
	if n := len(cp.free); n > 0 {
		si := cp.free[n-1]
		cp.free = cp.free[:n-1]
		return si
	}
	si := e.newSlot(ci, -1)
	e.slots[si].call = int32(len(e.callSlots))
	e.callSlots = append(e.callSlots, callSlot{})
	return si
}

// attempt sends the next attempt of slot si's call, with the call's timeout, cut to
// its caller's remaining time when the service propagates deadlines. It reports
// false, sending nothing, when no time is left.
func (e *Engine) attempt(si int32) bool {
	s := &e.slots[si]
	cs := &e.callSlots[s.call]
	now := e.k.Now()
	deadline := now + cs.spec.timeout
	if dl := e.jobCalls[cs.job].deadline; dl > 0 && dl < deadline {
		if dl <= now {
			return false
		}
		deadline = dl
	}
	cs.tries++
	e.callsSent++
	ed := &e.edges[cs.spec.edge]
	ed.attempts++
	d := &e.deps[ed.dep]
	d.sent++
	s.sent = now
	s.deadline = deadline
	// Calls on one slot may have shorter timeouts than the pending timer's: a timer
	// that is no longer the slot's own finds timerAt moved (onTimeout).
	if s.timerAt == 0 || deadline < s.timerAt {
		s.timerAt = deadline
		e.k.At(deadline, e.evTimeout, si, 0)
	}
	e.prepare(si, d)
	return true
}

// callAnswered: slot si's attempt was answered by job ji (j, a copy: it is freed);
// its connection went back to the pool. A 503 is a failed attempt.
func (e *Engine) callAnswered(si, ji int32, j *job) {
	if j.unavailable {
		e.callFailed(si, errUnavailable, -1)
		return
	}
	s := &e.slots[si]
	d := &e.deps[e.cpods[s.cpod].dep]
	now := e.k.Now()
	d.requests++
	d.heldNS += int64(now - s.sent - s.waited)
	var spent spent
	e.answeredBy(j, now-s.sent, &spent) // the callee pod's diagnosis; slow counts are the clients'

	e.callEnded(si, true, 0, ji, j)
}

// callFailed: slot si's attempt failed with kind, caused by pod cause (see fail).
// The call tries again while it has retries and its request is still waiting.
func (e *Engine) callFailed(si int32, kind uint8, cause int32) {
	s := &e.slots[si]
	s.state = idle
	cs := &e.callSlots[s.call]
	ed := &e.edges[cs.spec.edge]
	ed.attemptErrors.add(kind)
	e.deps[ed.dep].errors++
	e.blame(kind, cause)
	if cs.tries <= cs.spec.retries && e.waiting(cs) && e.attempt(si) {
		ed.retries++
		return
	}
	e.callEnded(si, false, kind, -1, nil)
}

// blame counts a failure against pod cause when its removal was under way.
func (e *Engine) blame(kind uint8, cause int32) {
	if cause >= 0 && e.life.Phase(cause) >= lifecycle.Draining {
		e.pods[cause].errors.add(kind)
	}
}

// callEnded: slot si's call ended, answered (ok, by job calleeJob, a copy callee)
// or failed with kind. The branch makes its next call (count), or frees the slot;
// the request goes on when its step's last call has ended, that call's branch being
// the step's critical path.
func (e *Engine) callEnded(si int32, ok bool, kind uint8, calleeJob int32, callee *job) {
	s := &e.slots[si]
	s.state = idle
	cs := &e.callSlots[s.call]
	now := e.k.Now()
	ed := &e.edges[cs.spec.edge]
	ed.requests++
	if ok {
		ed.latency.Record(int64(now - cs.start))
	} else {
		ed.errors.add(kind)
	}
	e.branchCall(cs, calleeJob, callee)
	ji := cs.job
	if !e.waiting(cs) {
		e.cpods[s.cpod].free = append(e.cpods[s.cpod].free, si)
		return // the request is gone with its pod
	}
	jc := &e.jobCalls[ji]
	if !ok && !cs.spec.optional {
		jc.failed = true
	}
	if cs.left > 0 && !jc.failed {
		cs.left--
		cs.tries = 0
		cs.start = now
		if e.attempt(si) {
			return
		}
		e.callEnded(si, false, errTimeout, -1, nil)
		return
	}
	e.cpods[s.cpod].free = append(e.cpods[s.cpod].free, si)
	if jc.pending--; jc.pending > 0 {
		return
	}
	j := &e.jobs[ji]
	took := int64(now - j.mark)
	j.spent[partDependency] += took
	jc.callsNS += took
	for _, it := range cs.path {
		e.paths[ji] = addItem(e.paths[ji], it.via, it.pod, it.part, it.ns)
	}
	e.handled(ji)
}

// waiting tells whether the request that made call cs still waits for it.
func (e *Engine) waiting(cs *callSlot) bool {
	j := &e.jobs[cs.job]
	return j.serial == cs.serial && j.state != jobFree
}

// startCalls readies request ji at a pod with calls for its steps.
func (e *Engine) startCalls(ji int32) {
	e.growCalls(ji)
	jc := jobCalls{}
	if e.services[e.pods[e.jobs[ji].pod].svc].propagate {
		jc.deadline = e.callerDeadline(ji)
	}
	e.jobCalls[ji] = jc
	e.paths[ji] = e.paths[ji][:0]
}

// growCalls makes the tables by job hold job ji.
func (e *Engine) growCalls(ji int32) {
	if n := max(len(e.jobs), int(ji)+1); len(e.jobCalls) < n {
		e.jobCalls = append(e.jobCalls, make([]jobCalls, n-len(e.jobCalls))...)
		e.paths = append(e.paths, make([][]pathItem, n-len(e.paths))...)
	}
}

// callerDeadline is when request ji's caller gives up on it: the deadline of the
// slot that sent it (through an outbound envoy's attempt, the app's request to it).
func (e *Engine) callerDeadline(ji int32) sim.Time {
	j := &e.jobs[ji]
	if j.attempt {
		j = &e.jobs[j.parent]
	}
	if j.slot < 0 {
		return 0
	}
	s := &e.slots[j.slot]
	if s.gen != j.gen {
		return e.k.Now() // its caller has given up already
	}
	return s.deadline
}

// dropCalls ends the calls of pod pi, whose process exited: the kernel closes its
// connections, and the pods it called see them close. Every call of the pod is cut
// before any connection is let go, so that the room a closing connection frees
// goes to no other call of the dying pod. A call cut counts as failed, closed.
func (e *Engine) dropCalls(pi int32) {
	for _, ci := range e.pods[pi].callers {
		if ci < 0 {
			continue
		}
		for _, si := range e.cpods[ci].slots {
			s := &e.slots[si]
			if s.state == idle {
				continue
			}
			s.gen++ // no longer a waiter any pool hands a connection to
			if j := &e.jobs[s.job]; s.state == inFlight && j.outbound && j.serial == s.jobSerial && j.state != jobFree {
				e.mesh.Leaving(s.job)
			}
			ed := &e.edges[e.callSlots[s.call].spec.edge]
			ed.requests++
			ed.errors.add(errClosed)
			ed.attemptErrors.add(errClosed)
		}
	}
	for _, ci := range e.pods[pi].callers {
		if ci < 0 {
			continue
		}
		cp := &e.cpods[ci]
		for _, si := range cp.slots {
			s := &e.slots[si]
			if s.state == idle {
				continue
			}
			if s.state == inFlight || s.state == dialing || s.state == opening {
				e.letGo(si, false)
			}
			s.state = idle
			cp.free = append(cp.free, si)
		}
		e.closeIdle(ci)
	}
}

// closeIdle closes the connections client pod ci keeps idle.
func (e *Engine) closeIdle(ci int32) {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	p := &e.pools[cp.pool]
	for len(p.Muxed()) > 0 {
		if id := p.Muxed()[0]; p.Retire(&e.conns, id) {
			e.closeConn(d, id)
		}
	}
	for {
		id, ok, expired := p.TakeIdle(e.k.Now(), &e.conns, e.expired[:0])
		for _, x := range expired {
			e.closeConn(d, x)
		}
		e.expired = expired
		if !ok {
			return
		}
		p.Drop()
		e.closeConn(d, id)
	}
}
