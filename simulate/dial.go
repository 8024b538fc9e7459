package simulate

import (
	"trafficlab/model/kubeproxy"
	"trafficlab/sim"
	"trafficlab/simulate/lifecycle"
	"trafficlab/simulate/network"
)

// dial opens a connection for slot si through its node's kube-proxy, or straight
// to a pod of a headless Service.
func (e *Engine) dial(si int32) {
	e.gotConn(si)
	s := &e.slots[si]
	s.state = dialing
	cp := &e.cpods[s.cpod]
	if cp.resolver >= 0 {
		e.dialHeadless(si)
		return
	}
	if cp.envoy >= 0 {
		e.dialEnvoy(si)
		return
	}
	if e.relayConnCPU > 0 && !s.accepted {
		// The node's userspace proxy accepts the connection, then dials.
		if !e.deps[cp.dep].http2 {
			e.toProxy(si, acceptNow, e.relayConnCPU)
			return
		}
		e.toProxy(si, acceptDetached, e.relayConnCPU)
		s.accepted = true
	}
	b := e.balancer(s.cpod)
	ep, ok := b.Pick(uint64(s.cpod))
	if !ok {
		if e.mode.NoEndpoints() == kubeproxy.AcceptThenClose {
			// The userspace proxier has no REJECT rule: it accepts, finds no endpoint
			// and closes (pkg/proxy/userspace/proxier.go).
			e.k.After(2*e.local, e.evReset, si, s.gen)
			return
		}
		// No endpoints: kube-proxy's REJECT rule (iptables, nftables) or IPVS's ICMP
		// port unreachable answers on the client's own node.
		e.k.After(2*e.local, e.evRefused, si, s.gen)
		return
	}
	s.pod = ep
	switch e.life.Phase(ep) {
	case lifecycle.Running:
	case lifecycle.Draining, lifecycle.Exited:
		// Nothing listens: the pod's kernel answers the SYN with a reset, one round
		// trip after it left the client (or the node's userspace proxy).
		e.dialFailed(si, 2*e.hop+e.relay)
		return
	default:
		// The IP is gone: the SYN gets no answer. The userspace proxy gives up on
		// this endpoint after its dial timeout; a client waits for its own timeout.
		if timeouts := e.mode.DialTimeouts(); len(timeouts) > 0 {
			e.dialFailed(si, sim.Duration(timeouts[s.attempt]))
		}
		return
	}
	b.Connected(ep)
	e.connect(si, ep)
}

// connect opens slot si's connection to pod ep, which listens, and sends its
// request on it.
func (e *Engine) connect(si, ep int32) {
	s := &e.slots[si]
	d := &e.deps[e.cpods[s.cpod].dep]
	id := e.conns.New(ep, s.pool, e.k.Now())
	e.openWire(id, network.ClientEnd(s.cpod), ep)
	if d.http2 {
		e.pools[s.pool].AddStreamConn(&e.conns, id)
	}
	d.reach(ep, len(e.pods))
	if cp := &e.cpods[s.cpod]; cp.from < 0 {
		if int(ep) >= len(cp.connsTo) {
			cp.connsTo = append(cp.connsTo, make([]int32, len(e.pods)-len(cp.connsTo))...)
		}
		cp.connsTo[ep]++
	}
	d.open++
	d.opened++
	d.peak = max(d.peak, d.open)
	e.send(si, id, true)
}

// dialFailed: the picked pod refused the connection. iptables, nftables and IPVS
// picked once and the client sees the refusal; the userspace proxier retries the next
// endpoint (see kubeproxy.Mode.DialTimeouts).
// The failure is known after learn.
func (e *Engine) dialFailed(si int32, learn sim.Time) {
	s := &e.slots[si]
	if int(s.attempt)+1 < len(e.mode.DialTimeouts()) {
		s.attempt++
		e.k.After(learn, e.evRedial, si, s.gen)
		return
	}
	if e.mode.Relays() {
		// The proxy had accepted the client's connection; giving up, it closes it.
		e.k.After(learn+2*e.local, e.evReset, si, s.gen)
		return
	}
	e.k.After(learn, e.evRefused, si, s.gen)
}

func (e *Engine) onRedial(ev sim.Event) {
	s := &e.slots[ev.Obj]
	if s.gen != ev.Gen || s.state != dialing {
		return
	}
	e.dial(ev.Obj)
}

// balancer is the kube-proxy rules client pod ci's node holds for its target.
func (e *Engine) balancer(ci int32) kubeproxy.Balancer {
	cp := &e.cpods[ci]
	return e.routing.Balancer(cp.entry, e.deps[cp.dep].svc)
}
