package mesh

import (
	"slices"

	"trafficlab/model/client"
	"trafficlab/model/sidecar"
	"trafficlab/sim"
)

// istioConnectTimeout is MeshConfig.connectTimeout's default (istio/api
// mesh/v1alpha1/config.proto: "Default connect timeout for dynamic clusters ... 10s").
const istioConnectTimeout = 10 * sim.Time(1e9)

// Attempt names an outbound envoy's attempt as the request at the pod carries it:
// the envoy's request (and its serial) and the connection it went on.
type Attempt struct {
	Req  int32
	Gen  uint32
	Conn client.ConnID
	Seq  uint32
}

// current tells whether attempt a is still its request's attempt in progress.
func (m *Mesh) current(a Attempt) bool {
	t := &m.tasks[a.Req]
	return t.live && t.serial == a.Gen && t.upConn == a.Conn && t.upSeq == a.Seq
}

// Out: the app of client pod caller sent request ji (its job's serial) for service
// svc to its pod's envoy ei on connection id, over loopback. A service pod's envoy
// relays its app's calls as a client's does, on the same workers as its inbound
// requests (Istio's one Envoy per pod, both ways).
func (m *Mesh) Out(ei, ji int32, serial uint32, caller, svc int32, id client.ConnID, newConn bool) {
	*m.task(ji) = task{envoy: ei, worker: m.workerOf(id), stage: stageIn, upConn: -1, out: true, live: true,
		serial: serial, svc: svc, caller: caller}
	if m.envoys[ei].inbound {
		m.envoys[ei].calls = true
	}
	m.k.After(m.loopback(newConn), m.evProxyIn, ji, 0)
}

// onProxyIn: the app's request reached its sidecar over loopback.
func (m *Mesh) onProxyIn(ev sim.Event) {
	if !m.awaited(ev.Obj) {
		m.apps.Free(ev.Obj)
		return
	}
	t := &m.tasks[ev.Obj]
	m.enqueue(t.envoy, t.worker, ev.Obj)
}

// route picks the upstream pod of outbound request di and sends it there: Envoy's
// router with the worker's load balancer, avoiding pods already tried on a retry.
func (m *Mesh) route(di int32) {
	if !m.awaited(di) {
		m.apps.Free(di)
		return
	}
	d := &m.tasks[di]
	x := &m.envoys[d.envoy]
	d.upConn, d.failing = -1, false
	x.hosts = x.hosts[:0]
	for _, pod := range m.up.Endpoints(x.node, d.svc) {
		for int(pod) >= len(x.active) {
			x.active = append(x.active, 0)
		}
		x.hosts = append(x.hosts, sidecar.Host{ID: pod, Active: x.active[pod]})
	}
	if len(x.hosts) == 0 {
		// "no healthy upstream": a local 503.
		m.unavailable(di, -1)
		return
	}
	if !x.breakerOf(d.svc).TryAcquire(sidecar.Requests) {
		x.overflows++
		m.unavailable(di, -1)
		return
	}
	wk := &x.workers[d.worker]
	i := sidecar.PickAvoiding(x.balancerOf(d.worker, d.svc), x.hosts, x.rng, d.tried[:min(int(d.tries), len(d.tried))], sidecar.IstioHostSelectionRetryMaxAttempts)
	pod := x.hosts[i].ID
	if int(d.tries) < len(d.tried) {
		d.tried[d.tries] = pod
	}
	d.tries++
	d.target = pod
	x.active[pod]++
	m.serial++
	d.attemptSerial = m.serial
	if x.retry.PerTryTimeout > 0 {
		m.k.After(x.retry.PerTryTimeout, m.evPerTry, di, d.attemptSerial)
	}
	pi, ok := wk.pools[pod]
	if !ok {
		pi = m.up.NewPool(d.caller, d.svc, x.http2)
		for int(pi) >= len(m.poolEnvoy) {
			m.poolEnvoy = append(m.poolEnvoy, -1)
			m.poolSvc = append(m.poolSvc, -1)
		}
		m.poolEnvoy[pi], m.poolSvc[pi] = d.envoy, d.svc
		wk.pools[pod] = pi
	}
	m.acquire(di, pi)
}

// acquire puts outbound request di on a connection of pool pi, opens one, or queues.
func (m *Mesh) acquire(di, pi int32) {
	d := &m.tasks[di]
	x := &m.envoys[d.envoy]
	p := m.pool(pi)
	now := m.k.Now()
	d.pool = pi
	if x.http2 {
		m.up.GoAways(pi)
		if id, ok, _ := p.TakeStream(now, m.conns(), nil); ok {
			m.send(di, id, false)
			return
		}
	} else {
		for {
			id, ok, _ := p.TakeIdle(now, m.conns(), nil)
			if !ok {
				break
			}
			if m.up.ServerClosed(id) {
				// Envoy has read the server's FIN and closed its side.
				p.Drop()
				m.CloseUp(id)
				continue
			}
			m.send(di, id, false)
			return
		}
	}
	// Envoy opens a connection past max_connections only when the pool has none
	// (conn_pool_base.cc tryCreateNewConnection).
	b := x.breakerOf(d.svc)
	switch {
	case b.TryAcquire(sidecar.Connections):
	case p.Open() == 0:
		b.Acquire(sidecar.Connections)
	default:
		if !b.TryAcquire(sidecar.PendingRequests) {
			x.overflows++
			m.end(di)
			m.unavailable(di, -1)
			return
		}
		d.waiting = true
		p.Wait(client.Waiter{Slot: di, Gen: d.serial})
		return
	}
	p.Opening()
	m.dial(di, pi)
}

// dial connects outbound request di's envoy to its target pod directly (pod IP).
func (m *Mesh) dial(di, pi int32) {
	d := &m.tasks[di]
	x := &m.envoys[d.envoy]
	switch m.up.Reach(d.target) {
	case Accepts:
	case Refuses:
		// Refused: Envoy's connect-failure, one round trip later.
		m.failAttempt(di, sidecar.ConnectFailure, 2*m.cfg.Hop)
		return
	default:
		// No answer: Envoy gives up at the cluster's connect timeout (Istio's mesh
		// connectTimeout, 10 s), unless the app's own timeout comes first.
		m.failAttempt(di, sidecar.ConnectFailure, istioConnectTimeout)
		return
	}
	id := m.up.Dial(d.caller, d.target, pi)
	if x.http2 {
		m.pool(pi).AddStreamConn(m.conns(), id)
	}
	m.send(di, id, true)
	if m.up.Wired(id) {
		// Lost SYNs: Envoy gives up on the handshake at the connect timeout, long
		// before Linux's SYN retries would (127 s).
		m.k.After(istioConnectTimeout, m.evConnectTimeout, di, m.tasks[di].attemptSerial)
	}
}

// onConnectTimeout: outbound request di's new connection has not carried its
// request to the pod within the connect timeout: a connect-failure, which Istio
// retries.
func (m *Mesh) onConnectTimeout(ev sim.Event) {
	d := &m.tasks[ev.Obj]
	if d.attemptSerial != ev.Gen || !d.live || d.upConn < 0 ||
		m.seq(d.upConn) != d.upSeq || !m.up.OnItsWay(d.child, d.childSerial) {
		return
	}
	m.failAttempt(ev.Obj, sidecar.ConnectFailure, 0)
}

// send sends outbound request di on upstream connection id as a request of its own
// at the target pod.
func (m *Mesh) send(di int32, id client.ConnID, newConn bool) {
	d := &m.tasks[di]
	d.upConn, d.upSeq = id, m.seq(id)
	child, serial := m.up.Send(di, d.serial, id, newConn)
	d = &m.tasks[di]
	d.child, d.childSerial = child, serial
}

// AttemptAnswered: the answer to attempt a reached the outbound envoy (the answer
// closes its connection when closeAfter). It reports whether the worker relays it
// to the app, which still waits.
func (m *Mesh) AttemptAnswered(a Attempt, closeAfter bool) bool {
	d := &m.tasks[a.Req]
	if !m.current(a) || d.failing {
		return false // the attempt was given up meanwhile
	}
	live := m.awaited(a.Req)
	// An HTTP/1.1 request whose client went away was reset upstream: Envoy closes that
	// connection rather than reuse it mid-answer.
	m.release(d.pool, a.Conn, closeAfter || !live)
	m.end(a.Req)
	if !live {
		m.apps.Free(a.Req)
		return false
	}
	d.stage = stageOut
	m.enqueue(d.envoy, d.worker, a.Req)
	return true
}

// end releases what outbound request di's attempt held.
func (m *Mesh) end(di int32) {
	d := &m.tasks[di]
	x := &m.envoys[d.envoy]
	x.breakerOf(d.svc).Release(sidecar.Requests)
	x.active[d.target]--
	m.releaseRetry(d)
	d.upConn = -1
}

// release returns upstream connection id to pool pi after an attempt, or closes it.
func (m *Mesh) release(pi int32, id client.ConnID, close bool) {
	p := m.pool(pi)
	x := &m.envoys[m.poolEnvoy[pi]]
	now := m.k.Now()
	var out client.Outcome
	var w client.Waiter
	switch {
	case x.http2:
		// A stream whose client went away is reset (RST_STREAM); the connection stays.
		out, w = p.EndStream(now, m.conns(), id, m.pendingFn)
	case close:
		p.Drop()
		out = client.Closed
	default:
		out, w = p.Release(now, m.conns(), id, m.pendingFn)
	}
	switch out {
	case client.Handed:
		x.breakerOf(m.poolSvc[pi]).Release(sidecar.PendingRequests)
		m.send(w.Slot, id, false)
	case client.Closed:
		m.CloseUp(id)
		m.Wake(pi)
	}
}

// Wake lets the oldest pending request of envoy pool pi open a connection.
func (m *Mesh) Wake(pi int32) {
	p := m.pool(pi)
	x := &m.envoys[m.poolEnvoy[pi]]
	if !p.HasWaiters() {
		return
	}
	b := x.breakerOf(m.poolSvc[pi])
	counted := b.TryAcquire(sidecar.Connections)
	if !counted && p.Open() > 0 {
		return
	}
	w, ok := p.NextWaiter(m.pendingFn)
	if !ok {
		if counted {
			b.Release(sidecar.Connections)
		}
		return
	}
	if !counted {
		// A pool with no connection opens one past max_connections, as acquire.
		b.Acquire(sidecar.Connections)
	}
	b.Release(sidecar.PendingRequests)
	p.Opening()
	m.dial(w.Slot, pi)
}

// pending tells whether a pending request still wants a connection; one that
// does not leaves the queue, and releases what it held.
func (m *Mesh) pending(w client.Waiter) bool {
	d := &m.tasks[w.Slot]
	if d.serial != w.Gen || !d.waiting {
		return false // abandoned meanwhile
	}
	d.waiting = false
	if m.awaited(w.Slot) {
		return true
	}
	m.envoys[d.envoy].breakerOf(d.svc).Release(sidecar.PendingRequests)
	m.end(w.Slot)
	m.apps.Free(w.Slot)
	return false
}

// Leaving: the app of outbound request di is about to give up on it with every other
// request of its pod (its process exited), before any is cancelled: the room one
// frees must go to none of the others.
func (m *Mesh) Leaving(di int32) { m.tasks[di].gone = true }

// awaited tells whether the app still waits for outbound request di.
func (m *Mesh) awaited(di int32) bool { return !m.tasks[di].gone }

// Abandon: the app gave up on outbound request di and reset or closed its
// connection to the sidecar; the engine tells every time its app stops waiting for
// a request it sent to its sidecar. Envoy's router cancels the upstream request at once
// (router.cc onDownstreamReset → resetAll): a pending request leaves the queue, an
// HTTP/1.1 attempt closes its connection, an HTTP/2 one resets its stream. It
// reports whether the request ended here; one elsewhere (a worker's queue,
// loopback, a retry's backoff) is dropped where it next surfaces.
func (m *Mesh) Abandon(di int32) bool {
	t := &m.tasks[di]
	t.gone = true
	return !t.failing && m.cancel(di)
}

// cancel resets outbound request di's attempt as Envoy's router does: a pending
// request leaves the queue, an HTTP/1.1 attempt closes its connection, an HTTP/2 one
// resets its stream; what it held is released. False when there was nothing to
// cancel (the attempt is between stages, or its failure is on its way).
func (m *Mesh) cancel(di int32) bool {
	d := &m.tasks[di]
	x := &m.envoys[d.envoy]
	switch {
	case d.waiting:
		d.waiting = false
		x.breakerOf(d.svc).Release(sidecar.PendingRequests)
	case d.upConn >= 0 && m.seq(d.upConn) == d.upSeq:
		d.failing = true // what the closing connection loses must not fail it again
		if x.http2 {
			m.up.ResetStream(d.child, d.childSerial)
		}
		m.release(d.pool, d.upConn, true)
	case d.upConn >= 0:
		// Its connection is gone and no failure came of it (a stream still waiting
		// for credit): the attempt is over.
	default:
		return false
	}
	m.end(di)
	return true
}

// CloseUp closes an upstream connection of an envoy.
func (m *Mesh) CloseUp(id client.ConnID) {
	c := m.conns().Get(id)
	m.envoys[m.poolEnvoy[c.Pool]].breakerOf(m.poolSvc[c.Pool]).Release(sidecar.Connections)
	m.up.Close(id)
}

// Forget closes the outbound envoys' idle connections to a pod whose IP is gone
// (their FIN or reset came long ago) and drops the pools left empty, so that neither
// the pools nor the Connections circuit breaker keep counting them.
func (m *Mesh) Forget(pod int32) {
	conns := m.conns()
	for ei := range m.envoys {
		x := &m.envoys[ei]
		for w := range x.workers {
			pi, ok := x.workers[w].pools[pod]
			if !ok {
				continue
			}
			p := m.pool(pi)
			for {
				id, ok, _ := p.TakeIdle(m.k.Now(), conns, nil)
				if !ok {
					break
				}
				p.Drop()
				m.CloseUp(id)
			}
			for _, id := range slices.Clone(p.Muxed()) {
				if p.Retire(conns, id) {
					m.CloseUp(id)
				}
			}
			if p.Open() == 0 && !p.HasWaiters() {
				delete(x.workers[w].pools, pod)
			}
		}
	}
}
