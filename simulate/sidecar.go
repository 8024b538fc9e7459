package simulate

import (
	"math/rand/v2"
	"slices"

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

// istioConnectTimeout is MeshConfig.connectTimeout's default (istio/api
// mesh/v1alpha1/config.proto: "Default connect timeout for dynamic clusters ... 10s").
const istioConnectTimeout = 10 * sim.Time(1e9)

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
