package simulate

import (
	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/model/sidecar"
	"trafficlab/sim"
)

// dialEnvoy connects slot si's app to its pod's sidecar over loopback; the connection
// stays on one worker.
func (e *Engine) dialEnvoy(si int32) {
	s := &e.slots[si]
	cp := &e.cpods[s.cpod]
	d := &e.deps[cp.dep]
	id := e.conns.New(-1, s.pool, e.k.Now())
	e.trackConn(id)
	x := &e.envoys[cp.envoy]
	e.connWorker[id] = int16(sidecar.AssignWorker(x.rng, len(x.workers)))
	if d.http2 {
		e.pools[s.pool].AddStreamConn(&e.conns, id)
	}
	d.open++
	d.opened++
	d.peak = max(d.peak, d.open)
	e.send(si, id, true)
}

// route picks the upstream pod of outbound job di and sends it there: Envoy's
// router with the worker's load balancer, avoiding pods already tried on a retry.
func (e *Engine) route(di int32) {
	d := &e.jobs[di]
	x := &e.envoys[d.envoy]
	if !e.downstreamLive(di) {
		e.freeJob(di)
		return
	}
	d.upConn, d.failing = -1, false
	x.hosts = x.hosts[:0]
	for _, pod := range e.routing.Programmed(x.node, x.svc) {
		x.hosts = append(x.hosts, sidecar.Host{ID: pod, Active: x.active[pod]})
	}
	if len(x.hosts) == 0 {
		// "no healthy upstream": a local 503.
		e.unavailable(di, -1)
		return
	}
	if !x.breaker.TryAcquire(sidecar.Requests) {
		x.overflows++
		e.unavailable(di, -1)
		return
	}
	wk := &x.workers[d.worker]
	i := sidecar.PickAvoiding(wk.lb, x.hosts, x.rng, d.tried[:min(int(d.tries), len(d.tried))], sidecar.IstioHostSelectionRetryMaxAttempts)
	pod := x.hosts[i].ID
	if int(d.tries) < len(d.tried) {
		d.tried[d.tries] = pod
	}
	d.tries++
	d.target = pod
	x.active[pod]++
	e.serial++
	d.attemptSerial = e.serial
	if x.retry.PerTryTimeout > 0 {
		e.k.After(x.retry.PerTryTimeout, e.evPerTry, di, d.attemptSerial)
	}
	pi, ok := wk.pools[pod]
	if !ok {
		pi = e.newPool(&e.deps[e.cpods[x.owner].dep], x.owner)
		e.pools[pi].Limits = client.Limits{}
		if x.http2 {
			e.pools[pi].Streams = e.services[x.svc].streams
		}
		e.poolEnvoy[pi] = d.envoy
		wk.pools[pod] = pi
	}
	e.upAcquire(di, pi)
}

// upAcquire puts outbound job di on a connection of pool pi, opens one, or queues.
func (e *Engine) upAcquire(di, pi int32) {
	d := &e.jobs[di]
	x := &e.envoys[d.envoy]
	p := &e.pools[pi]
	now := e.k.Now()
	d.pool = pi
	if x.http2 {
		e.goAways(pi)
		if id, ok, _ := p.TakeStream(now, &e.conns, nil); ok {
			e.upSend(di, id, false)
			return
		}
	} else {
		for {
			id, ok, _ := p.TakeIdle(now, &e.conns, nil)
			if !ok {
				break
			}
			if e.serverClosed(id) {
				// Envoy has read the server's FIN and closed its side.
				p.Drop()
				e.closeUp(id)
				continue
			}
			e.upSend(di, id, false)
			return
		}
	}
	// Envoy opens a connection past max_connections only when the pool has none
	// (conn_pool_base.cc tryCreateNewConnection).
	switch {
	case x.breaker.TryAcquire(sidecar.Connections):
	case p.Open() == 0:
		x.breaker.Acquire(sidecar.Connections)
	default:
		if !x.breaker.TryAcquire(sidecar.PendingRequests) {
			x.overflows++
			e.upEnd(di, pi)
			e.unavailable(di, -1)
			return
		}
		d.waiting = true
		p.Wait(client.Waiter{Slot: di, Gen: d.serial})
		return
	}
	p.Opening()
	e.upDial(di, pi)
}

// upDial connects outbound job di's envoy to its target pod directly (pod IP).
func (e *Engine) upDial(di, pi int32) {
	d := &e.jobs[di]
	x := &e.envoys[d.envoy]
	switch e.pods[d.target].phase {
	case podRunning:
	case podDraining, podExited:
		// Refused: Envoy's connect-failure, one round trip later.
		e.failAttempt(di, sidecar.ConnectFailure, 2*e.hop)
		return
	default:
		// No answer: Envoy gives up at the cluster's connect timeout (Istio's mesh
		// connectTimeout, 10 s), unless the app's own timeout comes first.
		e.failAttempt(di, sidecar.ConnectFailure, istioConnectTimeout)
		return
	}
	id := e.conns.New(d.target, pi, e.k.Now())
	e.openWire(id, clientEnd(x.owner), d.target)
	if x.http2 {
		e.pools[pi].AddStreamConn(&e.conns, id)
	}
	e.upSend(di, id, true)
	if e.wire[id] >= 0 {
		// Lost SYNs: Envoy gives up on the handshake at the connect timeout, long
		// before Linux's SYN retries would (127 s).
		e.k.After(istioConnectTimeout, e.evConnectTimeout, di, e.jobs[di].attemptSerial)
	}
}

// onConnectTimeout: outbound job di's new connection has not carried its request to
// the pod within the connect timeout: a connect-failure, which Istio retries.
func (e *Engine) onConnectTimeout(ev sim.Event) {
	d := &e.jobs[ev.Obj]
	if d.attemptSerial != ev.Gen || d.state == jobFree || d.upConn < 0 ||
		e.connSeq[d.upConn] != d.upSeq || e.jobs[d.child].serial != d.childSerial || e.jobs[d.child].delivered {
		return
	}
	e.failAttempt(ev.Obj, sidecar.ConnectFailure, 0)
}

// upSend sends outbound job di's request on upstream connection id as a new job at
// the target pod.
func (e *Engine) upSend(di int32, id client.ConnID, newConn bool) {
	d := &e.jobs[di]
	d.upConn, d.upSeq = id, e.connSeq[id]
	c := e.conns.Get(id)
	dep := &e.deps[e.cpods[e.envoys[d.envoy].owner].dep]
	dep.reach(c.Pod, len(e.pods))
	ui := e.newJob(job{slot: -1, gen: d.serial, attempt: true, parent: di, pod: c.Pod, state: jobWire, newConn: newConn, conn: id, seq: e.connSeq[id], envoy: -1})
	d = &e.jobs[di]
	d.child, d.childSerial = ui, e.jobs[ui].serial
	if e.wire[id] >= 0 {
		e.sendMessage(id, netw.Up, dep.headerBytes, dep.bodyBytes, ui)
		return
	}
	delay := e.hop
	if newConn {
		delay = 3 * e.hop
	}
	e.k.After(delay, e.evArrive, ui, 0)
}

// upDone: the answer to upstream job ui reached the outbound envoy; the worker relays
// it to the app.
func (e *Engine) upDone(ui int32) {
	u := e.jobs[ui]
	e.freeJob(ui)
	di := u.parent
	d := &e.jobs[di]
	if d.serial != u.gen || d.upConn != u.conn || d.upSeq != u.seq || d.failing {
		return // the attempt was given up meanwhile
	}
	live := e.downstreamLive(di)
	// An HTTP/1.1 request whose client went away was reset upstream: Envoy closes that
	// connection rather than reuse it mid-answer.
	e.upRelease(d.pool, u.conn, u.closeAfter || !live)
	e.upEnd(di, d.pool)
	if !live {
		e.freeJob(di)
		return
	}
	d.stage = stageOut
	d.spent, d.served = u.spent, u.served
	e.enqueue(d.envoy, d.worker, di)
}

// upEnd releases what outbound job di's attempt held.
func (e *Engine) upEnd(di, pi int32) {
	d := &e.jobs[di]
	x := &e.envoys[d.envoy]
	x.breaker.Release(sidecar.Requests)
	if x.active[d.target]--; x.active[d.target] == 0 {
		delete(x.active, d.target)
	}
	if d.retryHeld {
		x.breaker.Release(sidecar.Retries)
		d.retryHeld = false
	}
	d.upConn = -1
}

// upRelease returns upstream connection id to pool pi after an attempt, or closes it.
func (e *Engine) upRelease(pi int32, id client.ConnID, close bool) {
	p := &e.pools[pi]
	x := &e.envoys[e.poolEnvoy[pi]]
	var out client.Outcome
	var w client.Waiter
	switch {
	case x.http2:
		// A stream whose client went away is reset (RST_STREAM); the connection stays.
		out, w = p.EndStream(e.k.Now(), &e.conns, id, e.upLive)
	case close:
		p.Drop()
		out = client.Closed
	default:
		out, w = p.Release(e.k.Now(), &e.conns, id, e.upLive)
	}
	switch out {
	case client.Handed:
		x.breaker.Release(sidecar.PendingRequests)
		e.upSend(w.Slot, id, false)
	case client.Closed:
		e.closeUp(id)
		e.upWake(pi)
	}
}

// upWake lets the oldest pending request of pool pi open a connection.
func (e *Engine) upWake(pi int32) {
	p := &e.pools[pi]
	x := &e.envoys[e.poolEnvoy[pi]]
	if !p.HasWaiters() {
		return
	}
	counted := x.breaker.TryAcquire(sidecar.Connections)
	if !counted && p.Open() > 0 {
		return
	}
	w, ok := p.NextWaiter(e.upLive)
	if !ok {
		if counted {
			x.breaker.Release(sidecar.Connections)
		}
		return
	}
	if !counted {
		// A pool with no connection opens one past max_connections, as upAcquire.
		x.breaker.Acquire(sidecar.Connections)
	}
	x.breaker.Release(sidecar.PendingRequests)
	p.Opening()
	e.upDial(w.Slot, pi)
}

// upLive tells whether a pending request still wants a connection; one that does not
// leaves the queue, and releases what it held.
func (e *Engine) upLive(w client.Waiter) bool {
	d := &e.jobs[w.Slot]
	if d.serial != w.Gen || !d.waiting {
		return false // abandoned meanwhile
	}
	d.waiting = false
	if e.downstreamLive(w.Slot) {
		return true
	}
	e.envoys[d.envoy].breaker.Release(sidecar.PendingRequests)
	e.upEnd(w.Slot, d.pool)
	e.freeJob(w.Slot)
	return false
}

// abandon: the app gave up on outbound job di (serial) and reset or closed its
// connection to the sidecar. Envoy's router cancels the upstream request at once
// (router.cc onDownstreamReset → resetAll): a pending request leaves the queue, an
// HTTP/1.1 attempt closes its connection, an HTTP/2 one resets its stream. A job
// elsewhere (a worker's queue, loopback, a retry's backoff) is dropped where it
// next surfaces.
func (e *Engine) abandon(di int32, serial uint32) {
	d := &e.jobs[di]
	if d.serial != serial || d.state == jobFree || d.envoy < 0 || d.failing || !e.cancelAttempt(di) {
		return
	}
	e.freeJob(di)
}

// cancelAttempt resets outbound job di's attempt as Envoy's router does: a pending
// request leaves the queue, an HTTP/1.1 attempt closes its connection, an HTTP/2 one
// resets its stream; what it held is released. False when there was nothing to
// cancel (the attempt is between stages, or its failure is on its way).
func (e *Engine) cancelAttempt(di int32) bool {
	d := &e.jobs[di]
	x := &e.envoys[d.envoy]
	switch {
	case d.waiting:
		d.waiting = false
		x.breaker.Release(sidecar.PendingRequests)
	case d.upConn >= 0 && e.connSeq[d.upConn] == d.upSeq:
		d.failing = true // what the closing connection loses must not fail it again
		if x.http2 {
			e.resetStream(d.child, d.childSerial)
		}
		e.upRelease(d.pool, d.upConn, true)
	case d.upConn >= 0:
		// Its connection is gone and no failure came of it (a stream still waiting
		// for credit): the attempt is over.
	default:
		return false
	}
	e.upEnd(di, d.pool)
	return true
}

// closeUp closes an upstream connection of an envoy.
func (e *Engine) closeUp(id client.ConnID) {
	c := e.conns.Get(id)
	e.envoys[e.poolEnvoy[c.Pool]].breaker.Release(sidecar.Connections)
	e.closeWire(id)
	e.conns.Free(id)
}

// onUpFail: outbound job di's attempt failed (refused connection, reset, or the
// connection closed under it). Envoy retries what its policy covers on another pod,
// after its backoff; the rest reaches the app as a 503.
func (e *Engine) onUpFail(ev sim.Event) {
	di := ev.Obj
	d := &e.jobs[di]
	if d.serial != ev.Gen || d.state == jobFree {
		return
	}
	x := &e.envoys[d.envoy]
	pi := d.pool
	switch {
	case d.upConn >= 0 && e.connSeq[d.upConn] == d.upSeq && x.http2 && d.failure == sidecar.RefusedStream:
		// GOAWAY: the connection takes no new streams; the others on it finish.
		if e.pools[pi].Retire(&e.conns, d.upConn) {
			e.closeUp(d.upConn)
		} else {
			e.upRelease(pi, d.upConn, false)
		}
	case d.upConn >= 0 && e.connSeq[d.upConn] == d.upSeq:
		p := &e.pools[pi]
		if x.http2 {
			p.DropStreamConn(&e.conns, d.upConn)
		} else {
			p.Drop()
		}
		e.closeUp(d.upConn)
		e.upWake(pi)
	case d.upConn < 0:
		e.pools[pi].Drop() // a dial that failed
		x.breaker.Release(sidecar.Connections)
	}
	e.upEnd(di, pi)
	e.retryOr503(di)
}

// retryOr503 decides what follows outbound job di's failed attempt: another attempt
// after Envoy's backoff when the retry policy covers the failure, else a 503.
func (e *Engine) retryOr503(di int32) {
	d := &e.jobs[di]
	x := &e.envoys[d.envoy]
	d.failing = false
	if !e.downstreamLive(di) {
		e.freeJob(di)
		return
	}
	a := sidecar.Attempt{End: d.failure, RequestSent: d.failure != sidecar.ConnectFailure}
	switch x.retry.Decide(a, int(d.tries)-1, x.breaker) {
	case sidecar.RetryYes:
		x.retries++
		d.retryHeld = true
		e.k.After(sidecar.Backoff(int(d.tries), 0, 0, x.rng), e.evProxyRetry, di, d.serial)
	default:
		e.unavailable(di, d.target)
	}
}

// onPerTry: the retry policy's per-try timeout of outbound job di's attempt fired.
// Envoy resets the attempt (router.cc onPerTryTimeoutCommon): a pending request leaves
// the queue, an HTTP/1.1 connection closes, an HTTP/2 stream is reset; then the retry
// policy decides.
func (e *Engine) onPerTry(ev sim.Event) {
	di := ev.Obj
	d := &e.jobs[di]
	if d.attemptSerial != ev.Gen || d.state == jobFree || d.failing || !e.cancelAttempt(di) {
		return
	}
	d.failure = sidecar.PerTryTimeout
	e.retryOr503(di)
}

func (e *Engine) onProxyRetry(ev sim.Event) {
	if d := &e.jobs[ev.Obj]; d.serial == ev.Gen && d.state != jobFree {
		e.route(ev.Obj)
	}
}

// unavailable answers outbound job di with a 503, caused by pod cause (-1: none).
func (e *Engine) unavailable(di, cause int32) {
	d := &e.jobs[di]
	e.envoys[d.envoy].unavailable++
	d.cause = cause
	e.k.After(e.local, e.evUnavailable, di, d.serial)
}

// onUnavailable: the app reads the 503; its loopback connection stays usable.
func (e *Engine) onUnavailable(ev sim.Event) {
	di := ev.Obj
	d := e.jobs[di]
	if d.serial != ev.Gen || d.state == jobFree {
		return
	}
	e.freeJob(di)
	s := &e.slots[d.slot]
	if s.gen != d.gen || s.state != inFlight {
		return
	}
	cp := &e.cpods[s.cpod]
	dep := &e.deps[cp.dep]
	s.state = idle
	e.release(dep, s.pool, s.conn, false)
	e.fail(d.slot, errUnavailable, d.cause)
}

// connFailed tells whoever sent job ji, after delay, that its connection failed with
// kind: the client app, or the outbound envoy whose attempt it is.
func (e *Engine) connFailed(ji int32, kind uint8, delay sim.Time) {
	j := &e.jobs[ji]
	if !j.attempt {
		ev := e.resetEvent()
		switch kind {
		case errClosed:
			ev = e.evClosed
		case errRefused:
			ev = e.evRefused
		case errRefusedStream:
			ev = e.evRefusedStream
		}
		e.k.After(delay, ev, j.slot, j.gen)
		return
	}
	d := &e.jobs[j.parent]
	if d.serial != j.gen || d.upConn != j.conn || d.upSeq != j.seq {
		return // the envoy has given up on this attempt already
	}
	failure := sidecar.Reset
	if kind == errRefusedStream {
		failure = sidecar.RefusedStream
	}
	e.failAttempt(j.parent, failure, delay)
}

// failAttempt tells outbound job di, after delay, that its attempt failed; once per
// attempt.
func (e *Engine) failAttempt(di int32, failure sidecar.AttemptEnd, delay sim.Time) {
	d := &e.jobs[di]
	if d.failing {
		return
	}
	d.failing, d.failure = true, failure
	e.k.After(delay, e.evUpFail, di, d.serial)
}

// multiplexed tells whether connection id, as a job saw it (seq), is still open and
// carries HTTP/2.
func (e *Engine) multiplexed(id client.ConnID, seq uint32) bool {
	return e.connSeq[id] == seq && e.conns.Get(id).Open && e.pools[e.conns.Get(id).Pool].Streams > 0
}
