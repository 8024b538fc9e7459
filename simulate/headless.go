package simulate

import (
	"slices"

	"trafficlab/model/client"
	"trafficlab/model/dns"
	"trafficlab/model/library"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate/lifecycle"
	"trafficlab/simulate/resolver"
)

// Headless Services: no kube-proxy rule stands between a client and the pods. The
// client's resolver (simulate/resolver) gives the addresses a new connection tries;
// a gRPC channel keeps its addresses, and with round_robin a connection to each.

// headlessTarget notes how client c's pods resolve their target, when it is
// headless.
func (e *Engine) headlessTarget(d *clientDeployment, c *scenario.Client) {
	if !e.services[d.svc].spec.Headless() {
		return
	}
	d.headless = true
	d.resolve = resolutionSpec(library.ResolutionOf(c.Library)) // validation refused a library without one
	d.resolve.Channel = c.Connections.Protocol == scenario.ProtocolGRPC
	d.roundRobin = d.resolve.Channel && c.Connections.LoadBalancing == scenario.RoundRobin
	if d.roundRobin {
		// A connection per address, not per host (acquireRoundRobin).
		d.limits.MaxPerHost = 0
		d.limits.RoundRobin = true
	}
}

// resolutionSpec is a library's resolution in simulated time.
func resolutionSpec(r *library.Resolution) resolver.Spec {
	cache := dns.Cache{TTL: sim.Duration(r.Cache)}
	if r.Cache == library.CacheForever {
		cache.TTL = dns.Forever
	}
	switch r.Pick {
	case library.AddressRotate:
		cache.Pick = dns.Rotate
	case library.AddressRandom:
		cache.Pick = dns.Random
	}
	return resolver.Spec{Cache: cache, Refresh: dns.Refresh{Every: sim.Duration(r.Reresolve), SkipsEarly: r.SkipsEarly},
		OneAddress: r.OneAddress}
}

// resolverFor is the resolver of client pod name for deployment d's target, or -1
// when the target has a ClusterIP.
func (e *Engine) resolverFor(d *clientDeployment, name string) resolver.ID {
	if !d.headless {
		return -1
	}
	return e.resolvers.Add(name, d.svc, d.resolve)
}

// dialHeadless opens slot si's connection straight to a pod: the one picked
// already (a round_robin channel's, or the next after refusals), else the first of
// its resolver's addresses that does not refuse. Each refusal costs a round trip
// before the next address is tried, as Go's dialSerial and the others do.
func (e *Engine) dialHeadless(si int32) {
	s := &e.slots[si]
	cp := &e.cpods[s.cpod]
	if s.pod < 0 {
		addrs := e.resolvers.Dial(cp.resolver)
		if len(addrs) == 0 {
			// NXDOMAIN, a round trip to cluster DNS later.
			e.resolvers.Lost(cp.resolver)
			e.k.After(2*e.hop, e.evNoSuchHost, si, s.gen)
			return
		}
		refused := sim.Time(0)
		for _, ep := range addrs {
			if p := e.life.Phase(ep); p == lifecycle.Draining || p == lifecycle.Exited {
				refused++
				continue
			}
			s.pod = ep
			break
		}
		switch {
		case s.pod < 0:
			e.resolvers.Lost(cp.resolver)
			e.k.After(refused*2*e.hop, e.evRefused, si, s.gen)
			return
		case refused > 0:
			e.k.After(refused*2*e.hop, e.evRedial, si, s.gen)
			return
		}
	}
	switch e.life.Phase(s.pod) {
	case lifecycle.Running:
		e.connect(si, s.pod)
	case lifecycle.Draining, lifecycle.Exited:
		e.resolvers.Lost(cp.resolver)
		e.k.After(2*e.hop, e.evRefused, si, s.gen)
	default:
		// The pod's IP is gone: the SYN gets no answer, and the client waits for
		// its own timeout. A channel asks to resolve again, as after any failed
		// connection (grpc-go clientconn.go resetTransport: resolveNow).
		e.resolvers.Lost(cp.resolver)
	}
}

func (e *Engine) onNoSuchHost(ev sim.Event) { e.connError(ev, errNoSuchHost) }

// acquireRoundRobin gets slot si's call a stream on a round_robin channel: on a
// new connection to an address that has none, or on the next connection in turn
// with room, or a place in the queue. It reports false when the name does not
// resolve, for the caller to dial, and fail, as any client does.
func (e *Engine) acquireRoundRobin(si int32) bool {
	s := &e.slots[si]
	cp := &e.cpods[s.cpod]
	p := &e.pools[s.pool]
	addrs := e.resolvers.Addresses(cp.resolver)
	if len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !e.reaches(si, a) {
			// grpc-go's round_robin connects every address at once; here the
			// next call does, and waits for the handshake.
			s.pod = a
			p.Opening()
			e.open(si)
			return true
		}
	}
	if id, ok := p.TakeStreamInTurn(e.k.Now(), &e.conns); ok {
		e.send(si, id, false)
		return true
	}
	if s.state != waitingConn { // a waiter woken to no stream waits on, from when it began
		s.state = waitingConn
		s.waitFrom = e.k.Now()
	}
	p.Wait(client.Waiter{Slot: si, Gen: s.gen})
	return true
}

// reaches tells whether slot si's pool has a connection to pod a taking calls, or
// one of its slots is opening one.
func (e *Engine) reaches(si, a int32) bool {
	s := &e.slots[si]
	if slices.ContainsFunc(e.pools[s.pool].Muxed(), func(id client.ConnID) bool { return e.conns.Get(id).Pod == a }) {
		return true
	}
	return slices.ContainsFunc(e.cpods[s.cpod].slots, func(o int32) bool {
		x := &e.slots[o]
		return x.pool == s.pool && x.pod == a && (x.state == dialing || x.state == opening)
	})
}

// channelResolved: channel id has new addresses. Its connections to pods no
// longer listed take no new calls and close when their calls end, as grpc-go's
// balancers shut such SubConns down; a round_robin channel connects to the new
// pods as calls come.
func (e *Engine) channelResolved(id resolver.ID) {
	addrs := e.resolvers.Addresses(id)
	for pi := range e.pools {
		if e.mesh.Owns(int32(pi)) || e.cpods[e.poolOwner[pi]].resolver != id {
			continue
		}
		p := &e.pools[pi]
		for i := 0; i < len(p.Muxed()); i++ {
			c := p.Muxed()[i]
			if slices.Contains(addrs, e.conns.Get(c).Pod) {
				continue
			}
			if p.Retire(&e.conns, c) {
				e.closeAny(c)
			}
			i--
		}
	}
}

// channelLost: a connection of client pod ci's channel closed or heard GOAWAY, and
// the channel asks to resolve its target again.
func (e *Engine) channelLost(ci int32) {
	if r := e.cpods[ci].resolver; r >= 0 {
		e.resolvers.Lost(r)
	}
}
