package simulate

import (
	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/result"
	"trafficlab/sim"
	"trafficlab/simulate/lifecycle"
)

// onReady: a slot's overhead or think time is over.
func (e *Engine) onReady(ev sim.Event) {
	si := ev.Obj
	s := &e.slots[si]
	if s.gen != ev.Gen || !s.scheduled {
		return // the run was aborted meanwhile (abortRun counted it out of waking)
	}
	s.scheduled = false
	e.woke(si)
	if s.thread >= 0 && !e.mayIssue(si) {
		return
	}
	e.issue(si)
}

// issue sends a new request from slot si.
func (e *Engine) issue(si int32) {
	s := &e.slots[si]
	d := &e.deps[e.cpods[s.cpod].dep]
	now := e.k.Now()
	s.epoch = e.load.Issued(s.cpod)
	s.sent = now
	if s.open {
		// An open loop's request counts from when it fell due (after the client's
		// overhead), so that a client that fell behind shows the delay; its
		// library's timeout starts when it is made.
		s.sent = min(now, s.due)
	}
	s.deadline = now + d.timeout
	s.seq = uint64(e.stats.sent)
	e.stats.sent++
	if !s.open {
		e.stats.tlOffered++ // an open loop's was counted when it fell due
	}
	s.open = false
	d.sent++
	if s.timerAt == 0 {
		s.timerAt = s.deadline
		e.k.At(s.deadline, e.evTimeout, si, 0)
	}
	e.prepare(si, d)
}

// prepare has slot si's request built on its client's own CPU, when it spends any
// (clientcpu.go), then gets it a connection.
func (e *Engine) prepare(si int32, d *clientDeployment) {
	if d.reqCPU == 0 {
		e.acquire(si)
		return
	}
	s := &e.slots[si]
	s.gen++
	s.state = preparing
	s.expired = false
	e.work(si, d.reqCPU, true)
}

// acquire gets slot si's request a connection: an idle one from its pool, a new one,
// or a place in the queue for one.
func (e *Engine) acquire(si int32) {
	s := &e.slots[si]
	d := &e.deps[e.cpods[s.cpod].dep]
	now := e.k.Now()
	s.gen++
	s.attempt = 0
	s.accepted = false
	s.pod = -1
	s.waited = 0
	p := &e.pools[s.pool]
	if d.roundRobin {
		e.goAways(s.pool)
		if e.acquireRoundRobin(si) {
			return
		}
		p.Opening()
		e.open(si)
		return
	}
	if d.http2 {
		e.goAways(s.pool)
		id, ok, expired := p.TakeStream(now, &e.conns, e.expired[:0])
		for _, x := range expired {
			e.closeConn(d, x)
		}
		e.expired = expired
		if ok {
			e.send(si, id, false)
			return
		}
	}
	for !d.noReuse && !d.http2 {
		id, ok, expired := p.TakeIdle(now, &e.conns, e.expired[:0])
		for _, x := range expired {
			e.closeConn(d, x)
		}
		e.expired = expired
		if !ok {
			break
		}
		if e.serverClosed(id) && now-e.conns.Get(id).LastUsed >= d.uncheckedIdle {
			// The server's FIN has arrived: most libraries check an idle connection
			// before reuse (Go's read loop sees EOF, .NET and urllib3 poll the socket)
			// and drop it. One that does not sends on it, and fails or resends.
			p.Drop()
			e.closeConn(d, id)
			continue
		}
		e.send(si, id, false)
		return
	}
	if !p.CanOpen() {
		s.state = waitingConn
		s.waitFrom = now
		p.Wait(client.Waiter{Slot: si, Gen: s.gen})
		return
	}
	p.Opening()
	e.open(si)
}

// open sets a new connection up for slot si on its client's CPU, then dials it.
func (e *Engine) open(si int32) {
	d := &e.deps[e.cpods[e.slots[si].cpod].dep]
	if d.connCPU == 0 {
		e.dial(si)
		return
	}
	if d.http2 {
		// Other requests must find the connection in the pool at once to share it.
		e.work(si, d.connCPU, false)
		e.dial(si)
		return
	}
	e.gotConn(si)
	s := &e.slots[si]
	s.state = opening
	s.expired = false
	e.work(si, d.connCPU, true)
}

// Error kinds, as the client sees them: result's, as bytes.
const (
	errTimeout     = uint8(result.ErrorTimeout)
	errRefused     = uint8(result.ErrorConnectionRefused)
	errReset       = uint8(result.ErrorConnectionReset)
	errClosed      = uint8(result.ErrorConnectionClosed) // EOF before any answer: the server closed the connection
	errUnavailable = uint8(result.ErrorHTTP503)          // a 503 from a sidecar: no upstream, overflow, or retries spent
	errNoSuchHost  = uint8(result.ErrorNoSuchHost)       // a headless Service's name did not resolve
	errKinds       = uint8(result.ErrorKinds)
	// errRefusedStream is not an error the client sees: an HTTP/2 stream the server
	// refused after GOAWAY, which the client resends.
	errRefusedStream = errKinds
)

// onRefusedStream: slot si's HTTP/2 stream was refused by a server that sent GOAWAY.
// The connection takes no new streams; the request goes again on another, unseen by
// the caller (Go's http2 transport shouldRetryRequest, .NET's SocketsHttpHandler).
func (e *Engine) onRefusedStream(ev sim.Event) {
	si := ev.Obj
	s := &e.slots[si]
	if s.gen != ev.Gen || s.state != inFlight {
		return
	}
	d := &e.deps[e.cpods[s.cpod].dep]
	if e.connSeq[s.conn] == s.connSeq {
		e.pools[s.pool].Retire(&e.conns, s.conn)
		e.endStream(d, s.pool, s.conn)
	}
	s.state = idle
	if s.call < 0 {
		e.stats.retries++
	}
	e.acquire(si)
}

// connError: a connection attempt failed (a refusal, or a reset when a userspace
// proxy had accepted it first), or the connection under a request was reset or
// closed. The pool's room goes to the oldest waiter before this slot tries again,
// as Go hands a freed per-host slot to the next waiter in line.
//
// A library that resends idempotent requests does so, on another connection and
// without the caller seeing an error, when a reused connection failed before any
// answer: the server may have closed it while the request was on its way (see
// library.Profile.RetriesStaleIdempotent). A new connection's failure is final.
func (e *Engine) connError(ev sim.Event, kind uint8) {
	si := ev.Obj
	s := &e.slots[si]
	if s.gen != ev.Gen || (s.state != dialing && s.state != inFlight) {
		return
	}
	d := &e.deps[e.cpods[s.cpod].dep]
	if s.state == inFlight && !s.fresh && d.retriesStale {
		if s.call < 0 {
			e.stats.retries++
		}
		e.letGo(si, false)
		e.acquire(si)
		return
	}
	cause := s.pod
	e.letGo(si, false)
	e.fail(si, kind, cause)
}

// letGo gives up slot si's connection, or its dial, and passes the pool's room to the
// oldest waiter.
//
// On HTTP/2 a failed connection takes all its streams down; the first of them to
// hear closes it. A cancelled stream (cancel true: the client's timeout) only ends
// the stream, with RST_STREAM, and the connection stays.
func (e *Engine) letGo(si int32, cancel bool) {
	s := &e.slots[si]
	d := &e.deps[e.cpods[s.cpod].dep]
	p := &e.pools[s.pool]
	// The app resets or closes its connection to its sidecar, which cancels the
	// upstream request; the mesh hears of every request its app gives up.
	if s.state == inFlight {
		if j := &e.jobs[s.job]; j.outbound && j.serial == s.jobSerial && j.state != jobFree && e.mesh.Abandon(s.job) {
			e.freeJob(s.job)
		}
	}
	switch {
	case s.state != inFlight:
		p.Drop() // a dial that failed or was given up
	case e.connSeq[s.conn] != s.connSeq:
		// The connection is closed already: another stream's failure, or TCP's.
	case d.http2 && cancel:
		e.resetStream(s.job, s.jobSerial)
		e.endStream(d, s.pool, s.conn)
		s.state = idle
		return
	case d.http2:
		p.DropStreamConn(&e.conns, s.conn)
		e.closeConn(d, s.conn)
	default:
		p.Drop()
		e.closeConn(d, s.conn)
	}
	s.state = idle
	e.wakeWaiter(s.pool)
}

// send puts slot si's request on connection id.
func (e *Engine) send(si int32, id client.ConnID, newConn bool) {
	e.gotConn(si)
	s := &e.slots[si]
	s.state = inFlight
	s.conn = id
	s.connSeq = e.connSeq[id]
	s.fresh = newConn
	c := e.conns.Get(id)
	s.pod = c.Pod
	j := e.newJob(job{slot: si, gen: s.gen, pod: c.Pod, state: jobWire, newConn: newConn, conn: id, seq: s.connSeq})
	s.job, s.jobSerial = j, e.jobs[j].serial
	if c.Pod < 0 {
		// To the client pod's sidecar, over loopback.
		e.jobs[j].outbound = true
		e.mesh.Out(e.cpods[s.cpod].envoy, j, s.jobSerial, s.cpod, e.deps[e.cpods[s.cpod].dep].svc, id, newConn)
		return
	}
	if e.relayReqCPU > 0 || e.relayKiBCPU > 0 {
		// The node's userspace proxy copies the request and, later, its answer.
		e.toProxy(si, j, e.copyCPU(&e.deps[e.cpods[s.cpod].dep], e.bodyOf(si)))
		return
	}
	e.transmit(si)
}

// bodyOf is the body slot si's request carries: its client's, or its call's.
func (e *Engine) bodyOf(si int32) int64 {
	s := &e.slots[si]
	if s.call >= 0 {
		return e.callSlots[s.call].spec.bodyBytes
	}
	return e.deps[e.cpods[s.cpod].dep].bodyBytes
}

// transmit puts slot si's request, its job made, on the wire to its pod.
func (e *Engine) transmit(si int32) {
	s := &e.slots[si]
	id, j := s.conn, s.job
	if e.wired(id) {
		e.sendMessage(id, netw.Up, e.deps[e.cpods[s.cpod].dep].headerBytes, e.bodyOf(si), j)
		return
	}
	delay := e.hop + e.relay
	if s.fresh {
		// SYN, SYN-ACK, then the request rides behind the ACK: 1.5 round trips, to
		// the pod, and in userspace mode to the node's proxy first.
		delay = 3 * (e.hop + e.relay)
	}
	e.k.After(delay, e.evArrive, j, 0)
}

// respond: the last byte of job ji's answer reached the client.
func (e *Engine) respond(ji int32) {
	if e.jobs[ji].attempt {
		e.attemptAnswered(ji)
		return
	}
	j := e.jobs[ji]
	e.freeJob(ji)
	si := j.slot
	s := &e.slots[si]
	if s.gen != j.gen || s.state != inFlight {
		return // the client gave up on this request
	}
	now := e.k.Now()
	cp := &e.cpods[s.cpod]
	d := &e.deps[cp.dep]
	if s.call >= 0 || j.unavailable {
		s.state = idle
		e.release(d, s.pool, s.conn, j.closeAfter)
		if j.unavailable {
			e.svcFigures[e.pods[j.served].svc].errors++ // the app's own 503: a call it made failed
		}
		if s.call >= 0 {
			e.callAnswered(si, ji, &j)
			return
		}
		e.fail(si, errUnavailable, -1)
		return
	}
	e.stats.success(s.sent, now)
	e.stats.ended.add(s.sent, now, -1, d.bodyBytes, int64(e.services[d.svc].respBytes))
	if e.onRequest != nil {
		e.streamRequest(si, -1, j.served)
	}
	e.observe(&j, now-s.sent)
	if e.graph && now-s.sent > e.slowAfter {
		e.tailPath(ji, &j, now-s.sent)
	}
	d.requests++
	d.heldNS += int64(now - s.sent - s.waited)
	s.state = idle
	e.release(d, s.pool, s.conn, j.closeAfter)
	e.completed(si)
	e.next(si)
}

// onTimeout: a slot's timer fired. Timers are lazy: one pending per slot at most, moved
// forward instead of cancelled, so a request costs no timer event unless it is slow.
func (e *Engine) onTimeout(ev sim.Event) {
	si := ev.Obj
	s := &e.slots[si]
	if e.k.Now() != s.timerAt {
		return // a timer a shorter call's replaced (attempt)
	}
	s.timerAt = 0
	if s.state == idle {
		return
	}
	now := e.k.Now()
	if s.deadline > now {
		s.timerAt = s.deadline
		e.k.At(s.deadline, e.evTimeout, si, 0)
		return
	}
	if s.state == preparing || s.state == opening {
		s.expired = true // it fails once its CPU work is done (clientcpu.go worked)
		return
	}
	// A timeout is a removal's doing only when the pod's process had ended: the SYN
	// or the request went to an IP that nothing answered from (see arrive and dial).
	// A live pod that answered too late (overload, CPU throttling) or packets lost on
	// the way caused no removal error: pods[].errors counts only those.
	cause := int32(-1)
	if s.state != waitingConn && s.pod >= 0 && e.life.Phase(s.pod) >= lifecycle.Exited {
		cause = s.pod
	}
	if s.state == waitingConn {
		d := &e.deps[e.cpods[s.cpod].dep]
		d.poolTimedOut++
		d.poolWaited++
		d.poolWaitNS += int64(now - s.waitFrom)
	}
	if s.state == inFlight || s.state == dialing || s.state == opening {
		// Go's and .NET's clients close an HTTP/1.1 connection whose request was
		// cancelled, and reset only the stream on HTTP/2.
		e.letGo(si, true)
	}
	e.fail(si, errTimeout, cause)
}

// fail ends slot si's request as failed with error kind, caused by pod cause (-1:
// none, as when no endpoint exists). The pod is blamed only once its removal is
// under way (draining, exited or gone): a live pod's failures, such as a sidecar's
// per-try timeout on a slow answer, are not a removal's doing. A client library that
// aborts its run at a receive error (ab) does so here: an EOF is only counted.
func (e *Engine) fail(si int32, kind uint8, cause int32) {
	s := &e.slots[si]
	if s.call >= 0 {
		e.callFailed(si, kind, cause)
		return
	}
	s.state = idle
	cp := &e.cpods[s.cpod]
	d := &e.deps[cp.dep]
	d.errors++
	e.stats.failure(kind, s.sent, e.k.Now())
	answered := int64(0) // a sidecar's 503 is an answer: the body was sent
	if kind == errUnavailable {
		answered = d.bodyBytes
	}
	e.stats.ended.add(s.sent, e.k.Now(), int(kind), answered, 0)
	e.stats.ended.seen(kind, d, e.services[d.svc].name)
	if e.onRequest != nil {
		e.streamRequest(si, int(kind), cause)
	}
	e.blame(kind, cause)
	r := e.load.RunOf(s.cpod)
	current := e.load.Current(s.cpod, s.epoch)
	if r != nil && current {
		r.Errors++
	}
	if d.abortsRun && kind != errClosed && current {
		if r != nil {
			r.Requests++
		}
		e.abortRun(s.cpod)
		return
	}
	e.completed(si)
	e.next(si)
}

// next starts the slot's next request (closed loop) or frees it (open loop).
func (e *Engine) next(si int32) {
	s := &e.slots[si]
	cp := &e.cpods[s.cpod]
	if s.thread < 0 {
		cp.free = append(cp.free, si)
		return
	}
	if !e.mayIssue(si) {
		return
	}
	d := &e.deps[cp.dep]
	delay := d.overhead
	if d.hasThink {
		delay += sim.Time(d.think.Sample(s.rng))
	}
	if delay == 0 && s.sent == e.k.Now() {
		// The request took no simulated time (no latency, no work, or refused at
		// once with a local latency of 0): the next one waits the clock's
		// nanosecond, or the loop would never let time advance.
		delay = 1
	}
	if delay == 0 {
		e.issue(si)
		return
	}
	s.scheduled = true
	e.k.After(delay, e.evReady, si, s.gen)
}

// registerCallers registers the event kinds of the caller's events with the kernel.
func (e *Engine) registerCallers() {
	e.evReady = e.k.Register(e.onReady)
	e.evResponse = e.k.Register(e.onResponse)
	e.evTimeout = e.k.Register(e.onTimeout)
	e.evRefused = e.k.Register(e.onRefused)
	e.evReset = e.k.Register(e.onReset)
	e.evClosed = e.k.Register(e.onClosed)
	e.evRedial = e.k.Register(e.onRedial)
	e.evNoSuchHost = e.k.Register(e.onNoSuchHost)
	e.evRefusedStream = e.k.Register(e.onRefusedStream)
	e.evClientCPU = e.k.Register(e.onClientCPU)
	e.evProxyCPU = e.k.Register(e.onProxyCPU)
	e.evSweep = e.k.Register(e.onSweep)
}

// onResponse: an answer reached its caller.
func (e *Engine) onResponse(ev sim.Event) { e.respond(ev.Obj) }

// onRefused, onReset and onClosed: a connection failed under a request.
func (e *Engine) onRefused(ev sim.Event) { e.connError(ev, errRefused) }
func (e *Engine) onReset(ev sim.Event)   { e.connError(ev, errReset) }
func (e *Engine) onClosed(ev sim.Event)  { e.connError(ev, errClosed) }
