package simulate

import (
	"trafficlab/model/client"
	"trafficlab/sim"
	"trafficlab/simulate/lifecycle"
)

// goAways retires the HTTP/2 connections of pool pi (a client's or an envoy's) whose
// server has sent GOAWAY (it is draining or gone) and the client has heard: they take
// no new streams and close when their last one ends (RFC 9113 section 6.8).
func (e *Engine) goAways(pi int32) {
	p := &e.pools[pi]
	for i := 0; i < len(p.Muxed()); i++ {
		id := p.Muxed()[i]
		if !e.serverClosed(id) {
			continue
		}
		if p.Retire(&e.conns, id) {
			e.closeAny(id)
		}
		e.channelLost(e.poolOwner[pi])
		i--
	}
}

// closeAny closes a connection its pool has let go of, whoever owns the pool: a
// client app (closeConn) or an envoy (the mesh).
func (e *Engine) closeAny(id client.ConnID) {
	pi := e.conns.Get(id).Pool
	if e.mesh.Owns(pi) {
		e.mesh.CloseUp(id)
		return
	}
	e.closeConn(&e.deps[e.cpods[e.poolOwner[pi]].dep], id)
}

// wakeAny gives pool pi's room to its oldest waiter, whoever owns the pool.
func (e *Engine) wakeAny(pi int32) {
	if e.mesh.Owns(pi) {
		e.mesh.Wake(pi)
		return
	}
	e.wakeWaiter(pi)
}

// serverClosed reports whether the pod at the other end of idle connection id has
// closed it, draining or as idle, and the client has heard: the FIN takes one trip.
func (e *Engine) serverClosed(id client.ConnID) bool {
	c := e.conns.Get(id)
	if c.Pod < 0 {
		return false // the pod's own sidecar
	}
	return e.life.Phase(c.Pod) >= lifecycle.Draining && e.k.Now() >= e.life.Pod(c.Pod).ClosedAt+e.hop+e.relay ||
		e.heardAppClose(id)
}

// endStream ends a stream on HTTP/2 connection id: a waiter takes it, or the
// connection closes if it was retired and this was its last stream.
func (e *Engine) endStream(d *clientDeployment, pi int32, id client.ConnID) {
	out, w := e.pools[pi].EndStream(e.k.Now(), &e.conns, id, e.live)
	switch out {
	case client.Handed:
		e.send(w.Slot, id, false)
	case client.Closed:
		e.closeConn(d, id)
		e.wakeWaiter(pi)
	}
}

// release returns a connection to its pool after a request, or closes it when the
// client does not reuse connections or the answer said Connection: close.
func (e *Engine) release(d *clientDeployment, pi int32, id client.ConnID, closeAfter bool) {
	p := &e.pools[pi]
	if d.http2 {
		// An answer from a draining server comes after its GOAWAY: acquire retires
		// the connection once the client has heard.
		e.endStream(d, pi, id)
		return
	}
	if d.noReuse || closeAfter {
		p.Drop()
		e.closeConn(d, id)
		e.wakeWaiter(pi)
		return
	}
	out, w := p.Release(e.k.Now(), &e.conns, id, e.live)
	switch out {
	case client.Idle:
		e.armSweep(pi)
	case client.Handed:
		e.send(w.Slot, id, false)
	case client.Closed:
		e.closeConn(d, id)
		e.wakeWaiter(pi)
	}
}

// closeConn tears down a connection the pool has already let go of.
func (e *Engine) closeConn(d *clientDeployment, id client.ConnID) {
	c := e.conns.Get(id)
	ci := e.poolOwner[c.Pool]
	switch {
	case e.cpods[ci].resolver >= 0:
		if !c.Retired {
			e.channelLost(ci) // a GOAWAY told the channel already
		}
	case c.Pod >= 0:
		e.balancer(ci).Disconnected(c.Pod)
	}
	d.open--
	e.closeWire(id)
	e.conns.Free(id)
}

// gotConn ends slot si's wait for a pooled connection, if it waited.
func (e *Engine) gotConn(si int32) {
	s := &e.slots[si]
	if s.state != waitingConn {
		return
	}
	d := &e.deps[e.cpods[s.cpod].dep]
	s.waited = e.k.Now() - s.waitFrom
	d.poolWaited++
	d.poolWaitNS += int64(s.waited)
}

// wakeWaiter lets the oldest waiter open a connection now that the pool has room.
func (e *Engine) wakeWaiter(pi int32) {
	p := &e.pools[pi]
	if !p.HasWaiters() || !p.CanOpen() {
		return
	}
	w, ok := p.NextWaiter(e.live)
	if !ok {
		return
	}
	if p.RoundRobin && e.acquireRoundRobin(w.Slot) {
		return
	}
	p.Opening()
	e.open(w.Slot)
}

// armSweep makes sure an event will close the pool's oldest idle connection when its
// idle timeout passes: one pending event per pool, moved forward when it fires early.
func (e *Engine) armSweep(pi int32) {
	if e.sweepAt[pi] != 0 {
		return
	}
	if at, ok := e.pools[pi].NextExpiry(&e.conns); ok {
		e.sweepAt[pi] = at
		e.k.At(at, e.evSweep, pi, 0)
	}
}

func (e *Engine) onSweep(ev sim.Event) {
	pi := ev.Obj
	e.sweepAt[pi] = 0
	expired := e.pools[pi].Expire(e.k.Now(), &e.conns, e.expired[:0])
	d := &e.deps[e.cpods[e.poolOwner[pi]].dep]
	for _, id := range expired {
		e.closeConn(d, id)
	}
	e.expired = expired
	e.armSweep(pi)
	e.wakeWaiter(pi)
}

func (e *Engine) waiterLive(w client.Waiter) bool {
	s := &e.slots[w.Slot]
	return s.gen == w.Gen && s.state == waitingConn
}
