package simulate

import (
	"math"

	"trafficlab/model/node"
	"trafficlab/sim"
)

// The CPU kube-proxy's own process spends relaying, in userspace mode
// (spec.cluster.proxyWork): accepting a connection and dialling its endpoint, then
// copying every request and answer, on the node the connection enters by. The
// process is a container on that node like any other: kubeadm's kube-proxy
// DaemonSet asks for no CPU, so it weighs as a container without a request.

// proxyGroupBase: the kube-proxy processes' CPU group IDs count up from here, by
// node, clear of the client pods' (callerGroupBase up) and the sidecars' (-1 down).
const proxyGroupBase = math.MinInt32 / 4

// relayTask is a slot's request (or its connection: acceptNow, acceptDetached)
// waiting for the proxy's CPU, valid while the slot's generation is gen; serial is
// the request's job's.
type relayTask struct {
	slot   int32
	gen    uint32
	job    int32
	serial uint32
}

// The relay tasks of a connection's accept: one the dial waits for, and one it does
// not, for an HTTP/2 connection, which other requests must find in the pool at once
// to share it (Go's and .NET's clients share a dial in progress).
const (
	acceptNow      = -1
	acceptDetached = -2
)

// relayCosts reads the proxy's costs; a mode that does not relay spends none.
func (e *Engine) relayCosts() {
	if !e.mode.Relays() {
		return
	}
	w := &e.sc.Spec.Cluster.ProxyWork
	e.relayConnCPU = sim.Duration(w.PerConnection.Duration)
	e.relayReqCPU = sim.Duration(w.PerRequest.Duration)
	e.relayKiBCPU = float64(w.PerKiB.Duration)
}

// proxyGroup is node n's kube-proxy process, made when it first relays.
func (e *Engine) proxyGroup(n int32) *node.Group {
	ns := &e.nodes[n]
	if ns.proxy == nil {
		ns.proxy = ns.cpu.AddGroup(proxyGroupBase+n, float64(node.CPUWeight(0)), node.Quota{})
	}
	return ns.proxy
}

// proxyCPUChanged schedules kube-proxy group g's next completion, if g is one.
func (e *Engine) proxyCPUChanged(g *node.Group, at sim.Time) bool {
	n := g.ID - proxyGroupBase
	if n < 0 || n >= int32(len(e.nodes)) {
		return false
	}
	e.k.At(at, e.evProxyCPU, n, g.Gen)
	return true
}

// toProxy puts work ns of slot si's connection (acceptNow, acceptDetached) or
// request job on the proxy of its client's entry node.
func (e *Engine) toProxy(si, job int32, work sim.Time) {
	s := &e.slots[si]
	t := relayTask{slot: si, gen: s.gen, job: job}
	if job >= 0 {
		t.serial = e.jobs[job].serial
	}
	id := e.relayTasks.add(t)
	e.proxyGroup(e.cpods[s.cpod].entry).Start(e.k.Now(), id, int64(max(work, 1)))
}

// onProxyCPU: the proxy accepted a connection (it dials the endpoint now) or
// copied a request (which goes on to its pod).
func (e *Engine) onProxyCPU(ev sim.Event) {
	g := e.nodes[ev.Obj].proxy
	if ev.Gen != g.Gen {
		return
	}
	e.done = g.Finish(e.k.Now(), e.done[:0])
	done := append(e.doneTasks[:0], e.done...)
	for _, id := range done {
		t := e.relayTasks.take(id)
		s := &e.slots[t.slot]
		switch {
		case t.job >= 0 && s.gen == t.gen && s.state == inFlight && s.job == t.job:
			e.transmit(t.slot)
		case t.job >= 0:
			// The client gave up meanwhile and closed its connection: the proxy
			// drops the request it was copying.
			if j := &e.jobs[t.job]; j.serial == t.serial && j.state == jobWire {
				e.freeJob(t.job)
			}
		case t.job == acceptNow && s.gen == t.gen && s.state == dialing:
			s.accepted = true
			e.dial(t.slot)
		}
	}
	e.doneTasks = done
}

// copyCPU is the proxy's CPU to relay a request of d with this body, and its answer.
func (e *Engine) copyCPU(d *clientDeployment, body int64) sim.Time {
	bytes := d.headerBytes + body + int64(e.services[d.svc].respBytes)
	return e.relayReqCPU + sim.Time(math.Ceil(e.relayKiBCPU*float64(bytes)/1024))
}

// addProxyCPUUsed adds the core-seconds each node's kube-proxy used up to now.
func (e *Engine) addProxyCPUUsed(now sim.Time, used []float64) {
	for i := range e.nodes {
		if g := e.nodes[i].proxy; g != nil {
			used[i] += g.Used(now)
		}
	}
}
