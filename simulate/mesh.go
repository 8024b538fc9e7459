package simulate

import (
	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/model/node"
	"trafficlab/simulate/lifecycle"
	"trafficlab/simulate/mesh"
	"trafficlab/simulate/network"
)

// The sidecars are the mesh subsystem's; these adapters are its two views of the
// engine: the apps on either side of an envoy, and the connections and pods behind
// an outbound one.

// meshApps implements mesh.Apps over the engine's requests.
type meshApps struct{ e *Engine }

func (a meshApps) ToApp(ji int32, newConn bool) {
	a.e.jobs[ji].newConn = newConn
	a.e.appArrive(ji)
}

// Closed: the pod exited under job ji's answer, on its way to the sidecar.
func (a meshApps) Closed(ji int32) {
	a.e.failJob(ji, errClosed, a.e.hop+a.e.relay)
}

func (a meshApps) Reply(ji int32)  { a.e.reply(ji) }
func (a meshApps) Answer(ji int32) { a.e.k.After(a.e.local, a.e.evResponse, ji, 0) }
func (a meshApps) Free(ji int32)   { a.e.freeJob(ji) }

// Unavailable: the app reads the 503; its loopback connection stays usable.
func (a meshApps) Unavailable(di, cause int32) {
	e := a.e
	d := e.jobs[di]
	e.freeJob(di)
	s := &e.slots[d.slot]
	if s.gen != d.gen || s.state != inFlight {
		return
	}
	s.state = idle
	e.release(&e.deps[e.cpods[s.cpod].dep], s.pool, s.conn, false)
	e.fail(d.slot, errUnavailable, cause)
}

// meshUpstream implements mesh.Upstream over the engine's connections and pods.
type meshUpstream struct{ e *Engine }

func (u meshUpstream) Endpoints(node, svc int32) []int32 { return u.e.routing.Programmed(node, svc) }

func (u meshUpstream) Reach(pod int32) mesh.Reach {
	switch u.e.life.Phase(pod) {
	case lifecycle.Running:
		return mesh.Accepts
	case lifecycle.Draining, lifecycle.Exited:
		return mesh.Refuses
	}
	return mesh.Silent
}

func (u meshUpstream) NewPool(owner, svc int32, http2 bool) int32 {
	e := u.e
	pi := e.newPool(&e.deps[e.cpods[owner].dep], owner)
	e.pools[pi].Limits = client.Limits{}
	if http2 {
		e.pools[pi].Streams = e.services[svc].streams
	}
	return pi
}

func (u meshUpstream) Wired(id client.ConnID) bool         { return u.e.wired(id) }
func (u meshUpstream) GoAways(pi int32)                    { u.e.goAways(pi) }
func (u meshUpstream) ServerClosed(id client.ConnID) bool  { return u.e.serverClosed(id) }
func (u meshUpstream) ResetStream(attempt int32, s uint32) { u.e.resetStream(attempt, s) }

func (u meshUpstream) Dial(owner, pod, pi int32) client.ConnID {
	id := u.e.conns.New(pod, pi, u.e.k.Now())
	u.e.openWire(id, network.ClientEnd(owner), pod)
	return id
}

// Send sends outbound job di's attempt on connection id as a job at the pod.
func (u meshUpstream) Send(di int32, gen uint32, id client.ConnID, newConn bool) (int32, uint32) {
	e := u.e
	c := e.conns.Get(id)
	dep := &e.deps[e.cpods[e.poolOwner[c.Pool]].dep]
	dep.reach(c.Pod, len(e.pods))
	ui := e.newJob(job{slot: -1, gen: gen, attempt: true, parent: di, pod: c.Pod, state: jobWire, newConn: newConn, conn: id, seq: e.connSeq[id]})
	serial := e.jobs[ui].serial
	if e.wired(id) {
		body := dep.bodyBytes
		if s := &e.slots[e.jobs[di].slot]; s.call >= 0 {
			body = e.callSlots[s.call].spec.bodyBytes // a service pod's call
		}
		e.sendMessage(id, netw.Up, dep.headerBytes, body, ui)
		return ui, serial
	}
	delay := e.hop
	if newConn {
		delay = 3 * e.hop
	}
	e.k.After(delay, e.evArrive, ui, 0)
	return ui, serial
}

func (u meshUpstream) OnItsWay(attempt int32, serial uint32) bool {
	j := &u.e.jobs[attempt]
	return j.serial == serial && !j.delivered
}

func (u meshUpstream) Close(id client.ConnID) {
	u.e.closeWire(id)
	u.e.conns.Free(id)
}

func (u meshUpstream) CPU(n, id int32, weight, limit float64, name string) *node.Group {
	return u.e.nodes[n].cpu.AddGroup(id, weight, u.e.limitQuota(limit, name))
}

// attemptAnswered: the answer to outbound envoy's attempt ui reached the envoy,
// whose worker relays it to the app with where its time went at the pod.
func (e *Engine) attemptAnswered(ui int32) {
	u := e.jobs[ui]
	e.freeJob(ui)
	if e.mesh.AttemptAnswered(attemptOf(&u), u.closeAfter) {
		d := &e.jobs[u.parent]
		d.spent, d.served, d.unavailable = u.spent, u.served, u.unavailable
		if u.served >= 0 && e.pods[u.served].calls {
			e.copyPath(ui, u.parent)
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
	e.mesh.Accept(cp.envoy, id)
	if d.http2 {
		e.pools[s.pool].AddStreamConn(&e.conns, id)
	}
	d.open++
	d.opened++
	d.peak = max(d.peak, d.open)
	e.send(si, id, true)
}

// attemptOf names attempt job j as its outbound envoy knows it.
func attemptOf(j *job) mesh.Attempt {
	return mesh.Attempt{Req: j.parent, Gen: j.gen, Conn: j.conn, Seq: j.seq}
}
