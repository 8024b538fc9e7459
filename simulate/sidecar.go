package simulate

import (
	"math/rand/v2"
	"slices"

	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/model/node"
	"trafficlab/model/sidecar"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Sidecars: Envoy as Istio injects it (model/sidecar has the policies and their
// sources). An envoy runs a few worker threads; each downstream connection stays on
// the worker that accepted it, and a worker handles its requests one task at a time:
// reading and routing a request, then relaying its answer, each costing half the
// sidecar's per-request CPU on that worker. The workers share the proxy container's
// CPU on the node, so a CPU limit below the worker count slows them all; above it the
// worker count is the cap (R5).
//
// An inbound envoy (on a service's pod) passes requests to its app over loopback,
// reusing its idle connections to the app. An outbound envoy (on a client pod) takes
// the app's requests over loopback and sends each to a pod it picks itself, per
// request, among the endpoints of the target service: Istio's sidecars route to pod
// IPs, not through the ClusterIP, so kube-proxy's per-connection pinning is gone. Each
// worker keeps its own pool per upstream pod (HTTP/1.1: a request per connection;
// HTTP/2: streams on one connection), under the envoy's circuit breakers; a failed
// connection attempt is retried on another pod per the retry policy, and what cannot
// be served comes back to the app as a 503.

// Stages of a job inside an envoy.
const (
	stageIn  uint8 = iota + 1 // the request is being read and routed
	stageOut                  // the answer is being relayed back
)

// envoy is one sidecar proxy.
type envoy struct {
	name    string
	inbound bool  // on a service pod, else on a client pod
	owner   int32 // the service pod, or the client pod
	node    int32
	svc     int32 // outbound: the service it routes to
	grp     *node.Group
	limit   float64 // CPU limit, cores; 0 = none
	half    int64   // worker CPU per request and direction, ns
	http2   bool    // upstream protocol (outbound)
	workers []worker
	breaker *sidecar.Breaker
	retry   sidecar.RetryPolicy
	rng     *rand.Rand
	active  map[int32]int32 // requests in progress per upstream pod (LEAST_REQUEST)
	hosts   []sidecar.Host  // scratch
	created sim.Time

	requests, overflows, retries, unavailable int64
}

type worker struct {
	busy    bool
	since   sim.Time
	busyNs  sim.Time
	queue   sim.FIFO[int32]
	lb      sidecar.Balancer
	pools   map[int32]int32 // outbound: upstream pod → pool
	appIdle int             // inbound: idle connections to the app
}

// addEnvoy builds the sidecar spec s in pod owner (a service pod when inbound, else a
// client pod) on node n.
func (e *Engine) addEnvoy(s *scenario.Sidecar, inbound bool, owner, n, svc int32, name string) int32 {
	ei := int32(len(e.envoys))
	limit := 0.0
	if s.CPU != nil {
		limit = s.CPU.AsApproximateFloat64()
	}
	// Istio requests 100m for its proxy, whatever the limit; cpu.weight follows it.
	weight := float64(node.CPUWeight(sidecar.IstioProxyCPURequestMilli))
	x := envoy{
		name: name, inbound: inbound, owner: owner, node: n, svc: svc,
		grp: e.nodes[n].cpu.AddGroup(-ei-1, weight, e.limitQuota(limit, "sidecar/"+name)), limit: limit,
		half: int64(s.PerRequestCPU.Duration) / 2, http2: s.UpstreamProtocol == scenario.ProtocolHTTP2,
		breaker: sidecar.NewBreaker(sidecar.Thresholds{
			MaxConnections: uint32(*s.CircuitBreakers.MaxConnections), MaxPendingRequests: uint32(*s.CircuitBreakers.MaxPendingRequests),
			MaxRequests: uint32(*s.CircuitBreakers.MaxRequests), MaxRetries: uint32(*s.CircuitBreakers.MaxRetries),
		}),
		rng: sim.Stream(e.sc.Spec.Seed, "sidecar/"+name), active: map[int32]int32{}, created: e.k.Now(),
	}
	x.retry = retryPolicy(s.Retries)
	x.workers = make([]worker, *s.Concurrency)
	for w := range x.workers {
		lb, err := sidecar.NewBalancer(s.LBPolicy, x.rng)
		if err != nil {
			panic(err) // validation admits only known policies
		}
		x.workers[w].lb = lb
		x.workers[w].pools = map[int32]int32{}
	}
	e.envoys = append(e.envoys, x)
	return ei
}

// retryPolicy is Istio's route retry policy with the scenario's attempts and
// conditions.
func retryPolicy(r *scenario.Retries) sidecar.RetryPolicy {
	p := sidecar.IstioOutboundRetryPolicy()
	p.NumRetries = *r.Attempts
	p.RetryOn, p.RetriableStatusCodes = 0, nil
	for _, c := range r.RetryOn {
		on, codes, err := sidecar.ParseRetryOn(c)
		if err != nil {
			panic(err) // validation admits only known conditions
		}
		p.RetryOn |= on
		p.RetriableStatusCodes = append(p.RetriableStatusCodes, codes...)
	}
	if r.PerTryTimeout != nil {
		p.PerTryTimeout = sim.Duration(r.PerTryTimeout.Duration)
	}
	return p
}

// enqueue gives job ji's current stage to worker w of envoy ei.
func (e *Engine) enqueue(ei int32, w int16, ji int32) {
	wk := &e.envoys[ei].workers[w]
	if wk.busy {
		wk.queue.Push(ji)
		return
	}
	e.runTask(ei, w, ji)
}

func (e *Engine) runTask(ei int32, w int16, ji int32) {
	x := &e.envoys[ei]
	wk := &x.workers[w]
	wk.busy = true
	wk.since = e.k.Now()
	if x.half == 0 {
		e.taskDone(ei, ji)
		return
	}
	x.grp.Start(e.k.Now(), ji, x.half)
}

// onProxyCPU: a worker's task finished on the CPU.
func (e *Engine) onProxyCPU(ev sim.Event) {
	g := e.envoys[ev.Obj].grp
	if ev.Gen != g.Gen {
		return
	}
	e.done = g.Finish(e.k.Now(), e.done[:0])
	// taskDone may start tasks that finish in the same instant; work on a copy.
	done := append(e.doneProxy[:0], e.done...)
	for _, ji := range done {
		e.taskDone(ev.Obj, ji)
	}
	e.doneProxy = done
}

// taskDone: worker of job ji finished its stage; the worker takes its next task.
func (e *Engine) taskDone(ei, ji int32) {
	x := &e.envoys[ei]
	w := e.jobs[ji].worker
	wk := &x.workers[w]
	now := e.k.Now()
	wk.busy = false
	wk.busyNs += now - wk.since
	j := &e.jobs[ji]
	switch {
	case x.inbound && j.stage == stageIn:
		x.requests++
		newConn := wk.appIdle == 0
		if !newConn {
			wk.appIdle--
		}
		j.newConn = newConn
		e.k.After(e.loopback(newConn), e.evLocalIn, ji, 0)
	case x.inbound:
		e.reply(ji)
	case j.stage == stageIn:
		x.requests++
		e.route(ji)
	default:
		e.k.After(e.local, e.evResponse, ji, 0)
	}
	for !wk.busy {
		next, ok := wk.queue.Pop()
		if !ok {
			break
		}
		if !x.inbound && !e.downstreamLive(next) {
			e.freeJob(next)
			continue
		}
		e.runTask(ei, w, next)
	}
}

// loopback is the delay of a message over loopback, with the handshake on a new
// connection.
func (e *Engine) loopback(newConn bool) sim.Time {
	if newConn {
		return 3 * e.local
	}
	return e.local
}

// downstreamLive tells whether the app still waits for outbound job di.
func (e *Engine) downstreamLive(di int32) bool {
	d := &e.jobs[di]
	s := &e.slots[d.slot]
	return s.gen == d.gen && s.state == inFlight
}

// onProxyIn: the app's request reached its sidecar over loopback.
func (e *Engine) onProxyIn(ev sim.Event) {
	j := &e.jobs[ev.Obj]
	if !e.downstreamLive(ev.Obj) {
		e.freeJob(ev.Obj)
		return
	}
	e.enqueue(j.envoy, j.worker, ev.Obj)
}

// Inbound.

// envoyIn: a request reached a pod with a sidecar; the worker of its connection
// takes it.
func (e *Engine) envoyIn(ji int32) {
	j := &e.jobs[ji]
	p := &e.pods[j.pod]
	if j.newConn {
		e.connWorker[j.conn] = int16(sidecar.AssignWorker(e.envoys[p.envoy].rng, len(e.envoys[p.envoy].workers)))
		p.connections++
	}
	j.envoy = p.envoy
	j.worker = e.connWorker[j.conn]
	j.stage = stageIn
	e.enqueue(p.envoy, j.worker, ji)
}

// onLocalIn: the request crossed loopback from the sidecar to the app.
func (e *Engine) onLocalIn(ev sim.Event) { e.appArrive(ev.Obj) }

// stopEnvoy ends pod id's inbound sidecar with the pod: the kernel closes the
// connections its requests came on (now + back for the client to hear).
func (e *Engine) stopEnvoy(id int32, back sim.Time) {
	p := &e.pods[id]
	if p.envoy < 0 {
		return
	}
	x := &e.envoys[p.envoy]
	now := e.k.Now()
	e.doneProxy = x.grp.Abort(now, e.doneProxy[:0])
	for _, ji := range e.doneProxy {
		e.connFailed(ji, errClosed, back)
		e.freeJob(ji)
	}
	for w := range x.workers {
		wk := &x.workers[w]
		if wk.busy {
			wk.busy = false
			wk.busyNs += now - wk.since
		}
		for ji, ok := wk.queue.Pop(); ok; ji, ok = wk.queue.Pop() {
			e.connFailed(ji, errClosed, back)
			e.freeJob(ji)
		}
	}
}

// onLocalOut: the app's answer crossed loopback back to its sidecar.
func (e *Engine) onLocalOut(ev sim.Event) {
	j := &e.jobs[ev.Obj]
	if e.pods[j.pod].phase >= podExited {
		e.connFailed(ev.Obj, errClosed, e.hop+e.relay)
		e.freeJob(ev.Obj)
		return
	}
	x := &e.envoys[j.envoy]
	x.workers[j.worker].appIdle++
	j.stage = stageOut
	e.enqueue(j.envoy, j.worker, ev.Obj)
}

// Outbound.

// forgetHost closes the outbound envoys' idle connections to a pod whose IP is gone
// (their FIN or reset came long ago) and drops the pools left empty, so that neither
// the pools nor the Connections circuit breaker keep counting them.
func (e *Engine) forgetHost(pod int32) {
	for ei := range e.envoys {
		x := &e.envoys[ei]
		if x.inbound {
			continue
		}
		for w := range x.workers {
			pi, ok := x.workers[w].pools[pod]
			if !ok {
				continue
			}
			p := &e.pools[pi]
			for {
				id, ok, _ := p.TakeIdle(e.k.Now(), &e.conns, nil)
				if !ok {
					break
				}
				p.Drop()
				e.closeUp(id)
			}
			for _, id := range slices.Clone(p.Muxed()) {
				if p.Retire(&e.conns, id) {
					e.closeUp(id)
				}
			}
			if p.Open() == 0 && !p.HasWaiters() {
				delete(x.workers[w].pools, pod)
			}
		}
	}
}

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
	for _, pod := range e.programmedView(x.node, x.svc) {
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

// istioConnectTimeout is MeshConfig.connectTimeout's default (istio/api
// mesh/v1alpha1/config.proto: "Default connect timeout for dynamic clusters ... 10s").
const istioConnectTimeout = 10 * sim.Time(1e9)

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

func (e *Engine) sidecarResult(x *envoy) result.Sidecar {
	end := e.end
	if x.inbound && e.pods[x.owner].ended >= 0 {
		end = e.pods[x.owner].ended
	}
	life := (end - x.created).Seconds()
	busy := sim.Time(0)
	now := e.k.Now()
	for _, w := range x.workers {
		busy += w.busyNs
		if w.busy {
			busy += now - w.since
		}
	}
	r := result.Sidecar{
		Pod: x.name, Direction: "outbound", Workers: len(x.workers), CPULimit: x.limit,
		Requests: x.requests, Retries: x.retries, Overflows: x.overflows, HTTP503: x.unavailable,
	}
	if x.inbound {
		r.Direction = "inbound"
	}
	if life > 0 {
		r.WorkerUtilization = result.Round(busy.Seconds()/(life*float64(len(x.workers))), 4)
		used := x.grp.Used(now)
		r.CPUCores = result.Round(used/life, 4)
		if c := x.grp.Capacity(); c > 0 {
			r.CPUUtilization = result.Round(used/(c*life), 4)
		}
	}
	return r
}

// registerSidecars registers the event kinds of sidecar events with the kernel.
func (e *Engine) registerSidecars() {
	e.evProxyIn = e.k.Register(e.onProxyIn)
	e.evProxyCPU = e.k.Register(e.onProxyCPU)
	e.evLocalIn = e.k.Register(e.onLocalIn)
	e.evLocalOut = e.k.Register(e.onLocalOut)
	e.evUpFail = e.k.Register(e.onUpFail)
	e.evProxyRetry = e.k.Register(e.onProxyRetry)
	e.evUnavailable = e.k.Register(e.onUnavailable)
	e.evPerTry = e.k.Register(e.onPerTry)
	e.evConnectTimeout = e.k.Register(e.onConnectTimeout)
}
