package simulate

import (
	"cmp"
	"math"
	"slices"

	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate/faults"
	"trafficlab/simulate/lifecycle"
)

// Transport: how a request and its answer cross the network.
//
// The fast path, used when every hop is a constant delay (no jitter, loss, bandwidth
// limit, link override or network fault) and the connections carry HTTP/1.1 messages
// that fit in TCP's initial window (HTTP/2 may have many messages in flight on one
// connection, where the window can bind), schedules each message one hop after it is sent,
// and a new connection's first request 1.5 round trips after the SYN: exactly what
// the segment model computes on such a path (netw tests prove the equivalence), at a
// fraction of the events.
//
// Otherwise every pod-to-pod connection runs through netw's segment-level TCP over
// per-direction paths, and a message reaches the other side when its last byte is
// delivered in order. Control packets (SYN answers, resets, FINs) still take the
// cluster's latency and are never lost.

// endpoint names one end of a path: a pod (≥ 0) or a client pod (clientEnd).
type endpoint = int32

func clientEnd(ci int32) endpoint { return -ci - 1 }

type pathKey struct{ from, to endpoint }

// needsSegments tells whether the scenario needs the segment model anywhere.
func needsSegments(sc *scenario.Scenario) bool {
	n := &sc.Spec.Cluster.Network
	if n.Jitter != nil && n.Jitter.Duration > 0 || n.Bandwidth != nil || n.GilbertElliott != nil ||
		n.Loss != nil && n.Loss.Fraction > 0 || len(n.Links) > 0 {
		return true
	}
	for _, pool := range sc.Spec.Cluster.Nodes {
		if pool.Bandwidth != nil {
			return true
		}
	}
	for _, f := range sc.Spec.Faults {
		if f.Kind != scenario.FaultPodKill {
			return true
		}
	}
	mss := int64(netw.DefaultConfig().MSS * netw.DefaultConfig().InitCwnd)
	for i := range sc.Spec.Clients {
		c := &sc.Spec.Clients[i]
		if c.Connections.Protocol == scenario.ProtocolHTTP2 || requestBytes(c) > mss {
			return true
		}
	}
	for i := range sc.Spec.Services {
		if *sc.Spec.Services[i].Pod.ResponseBytes > mss {
			return true
		}
	}
	for i := range sc.Spec.Clients {
		if s := sc.Spec.Clients[i].Sidecar; s != nil && s.UpstreamProtocol == scenario.ProtocolHTTP2 {
			return true
		}
	}
	return false
}

func requestBytes(c *scenario.Client) int64 { return *c.Request.HeaderBytes + c.Request.BodyBytes }

// path is the direction from → to, made on first use with its own random stream.
func (e *Engine) path(from, to endpoint) *netw.Path {
	k := pathKey{from, to}
	if p, ok := e.paths[k]; ok {
		return p
	}
	p := netw.NewPath(sim.Stream(e.sc.Spec.Seed, "link/"+e.endName(from)+">"+e.endName(to)))
	e.configure(p, from, to)
	e.paths[k] = p
	e.pathKeys = append(e.pathKeys, k)
	return p
}

func (e *Engine) endName(x endpoint) string {
	if x >= 0 {
		return e.pods[x].name
	}
	return e.cpods[-x-1].name
}

// nodeOf is the node endpoint x runs on.
func (e *Engine) nodeOf(x endpoint) int32 {
	if x >= 0 {
		return e.pods[x].node
	}
	return e.cpods[-x-1].node
}

// matches tells whether endpoint x is selected by s.
func (e *Engine) matches(s *scenario.Selector, x endpoint) bool {
	if x >= 0 {
		p := &e.pods[x]
		return s.Service != "" && s.Service == e.services[p.svc].name || s.Pod != "" && s.Pod == p.name ||
			s.Node != "" && s.Node == e.nodes[p.node].name
	}
	cp := &e.cpods[-x-1]
	return s.Client != "" && s.Client == e.deps[cp.dep].spec.Name || s.Pod != "" && s.Pod == cp.name ||
		s.Node != "" && s.Node == e.nodes[cp.node].name
}

// applies tells whether a rule with target, peer and direction covers packets from → to,
// with Chaos Mesh's meaning of direction: "to" is what the target sends.
func (e *Engine) applies(target *scenario.Selector, peer *scenario.Selector, dir string, from, to endpoint) bool {
	sends := e.matches(target, from) && (peer == nil || e.matches(peer, to))
	receives := e.matches(target, to) && (peer == nil || e.matches(peer, from))
	switch dir {
	case scenario.DirectionTo:
		return sends
	case scenario.DirectionFrom:
		return receives
	}
	return sends || receives
}

// configure sets path from → to as the cluster's network, the link overrides (later
// ones win, field by field) and the faults active now make it.
func (e *Engine) configure(p *netw.Path, from, to endpoint) {
	n := &e.sc.Spec.Cluster.Network
	p.Reset().Latency = sim.Duration(n.Latency.Duration) + e.relay
	// Traffic between nodes crosses the sender's and the receiver's interfaces.
	if fn, tn := e.nodeOf(from), e.nodeOf(to); fn != tn {
		p.Egress, p.Ingress = e.nodes[fn].nicOut, e.nodes[tn].nicIn
	}
	setLink(p, &scenario.Link{Jitter: n.Jitter, JitterDistribution: n.JitterDistribution,
		Bandwidth: n.Bandwidth, Loss: n.Loss, Correlation: n.Correlation, GilbertElliott: n.GilbertElliott})
	for i := range n.Links {
		o := &n.Links[i]
		if e.applies(&o.Target, o.Peer, o.Direction, from, to) {
			setLink(p, &o.Link)
		}
	}
	now := e.k.Now()
	for i := range e.sc.Spec.Faults {
		f := &e.sc.Spec.Faults[i]
		if !faults.ActiveOnNetwork(f, now) || !e.applies(&f.Target, f.Peer, f.Direction, from, to) {
			continue
		}
		addFault(p, f)
	}
}

func setLink(p *netw.Path, l *scenario.Link) {
	if l.Latency != nil {
		p.Latency = sim.Duration(l.Latency.Duration)
	}
	if l.Jitter != nil {
		p.Jitter = sim.Duration(l.Jitter.Duration)
		p.Normal = l.JitterDistribution == scenario.JitterNormal
	}
	if l.Bandwidth != nil {
		p.BitsPerSecond = l.Bandwidth.BitsPerSecond
	}
	if l.Loss != nil {
		p.Loss = l.Loss.Fraction
		p.Correlation = 0
		if l.Correlation != nil {
			p.Correlation = l.Correlation.Fraction
		}
		p.GilbertElliott = nil
	}
	if g := l.GilbertElliott; g != nil {
		p.Loss, p.Correlation = 0, 0
		p.GilbertElliott = &netw.GilbertElliott{P: g.P.Fraction, R: g.R.Fraction, BadLoss: g.BadLoss.Fraction, GoodLoss: g.GoodLoss.Fraction}
	}
}

// addFault puts a fault in series with what the path already does: losses compound,
// delays add, the narrower bandwidth wins, a partition drops everything. That is what
// a netem or tbf qdisc on the pod's interface does on top of the network's own
// behaviour.
func addFault(p *netw.Path, f *scenario.Fault) {
	switch f.Kind {
	case scenario.FaultLoss:
		p.Loss = 1 - (1-p.Loss)*(1-f.Loss.Fraction)
		if f.Correlation != nil {
			p.Correlation = f.Correlation.Fraction
		}
	case scenario.FaultDelay:
		p.Latency += sim.Duration(f.Latency.Duration)
		if f.Jitter != nil {
			p.Jitter = sim.Time(math.Hypot(float64(p.Jitter), float64(f.Jitter.Duration)))
		}
	case scenario.FaultBandwidth:
		if p.BitsPerSecond == 0 || f.Rate.BitsPerSecond < p.BitsPerSecond {
			p.BitsPerSecond = f.Rate.BitsPerSecond
		}
	case scenario.FaultPartition:
		p.Loss, p.Correlation, p.GilbertElliott = 1, 0, nil
	}
}

// faultTargets is what the faults subsystem acts on: the Engine's pods and paths,
// through faults.Cluster.
type faultTargets struct{ e *Engine }

// KillPods: a pod-kill fault fires.
func (c faultTargets) KillPods(target *scenario.Selector) {
	e := c.e
	for i := range e.pods {
		if e.matches(target, int32(i)) && e.life.Phase(int32(i)) < lifecycle.Exited {
			e.killPod(int32(i))
		}
	}
}

// Reconfigure: a network fault starts or ends.
func (c faultTargets) Reconfigure() {
	e := c.e
	for _, k := range e.pathKeys {
		e.configure(e.paths[k], k.from, k.to)
	}
}

// killPod deletes a pod as Chaos Mesh's pod-kill does, with gracePeriodSeconds 0: the
// pod object goes at once, so its endpoint leaves and the ReplicaSet creates a
// replacement, and the kubelet kills the containers without SIGTERM or preStop.
func (e *Engine) killPod(id int32) {
	p := &e.pods[id]
	if e.life.MarkDeleted(id) {
		e.routing.Changed(p.svc)
		// The pod object is gone at once: pods waiting for room, then its
		// replacement, may take its place.
		e.sched.Remove("service/" + p.name)
		e.life.RoomFreed()
		e.createPod(p.svc, e.deployments.Revision(p.svc))
	}
	e.life.Exit(id)
}

// openWire starts the TCP connection under connection id, from endpoint from (a client
// pod, or the client pod of an outbound envoy) to pod, when the segment model is on.
func (e *Engine) openWire(id client.ConnID, from endpoint, pod int32) {
	e.trackConn(id)
	if e.stack == nil {
		return
	}
	w := e.stack.Open(e.path(from, pod), e.path(pod, from))
	if pi := e.conns.Get(id).Pool; e.pools[pi].Streams > 0 {
		e.startFlow(id, e.receiveWindows(pod), e.senderWindows(pi))
	}
	e.wires++
	e.wire[id] = int32(w)
	for int(w) >= len(e.wireConn) {
		e.wireConn = append(e.wireConn, -1)
	}
	e.wireConn[w] = id
}

// trackConn sizes the per-connection tables for id.
func (e *Engine) trackConn(id client.ConnID) {
	for int(id) >= len(e.wire) {
		e.wire = append(e.wire, -1)
		e.connSeq = append(e.connSeq, 0)
	}
}

// closeWire ends connection id's TCP connection and makes it stale for whoever still
// refers to it.
func (e *Engine) closeWire(id client.ConnID) {
	seq := e.connSeq[id]
	e.connSeq[id]++
	if w := e.wire[id]; w >= 0 {
		e.noteWire(id, e.k.Now())
		lost := e.stack.Undelivered(netw.ConnID(w), e.lost[:0])
		e.stack.Close(netw.ConnID(w))
		e.wire[id] = -1
		for _, ji := range lost {
			e.lostMessage(ji)
		}
		e.lost = lost
	}
	e.stopFlow(id, seq)
}

// lostMessage: message msg (a job, or a chunk of one) went down with its connection.
func (e *Engine) lostMessage(msg int32) {
	if msg < 0 {
		e.lostChunk(-msg - 1)
		return
	}
	e.lostJob(msg)
}

// lostJob: job ji's message went down with its connection; whoever waits for it
// hears of a reset at once (a request whose client gave up ignores it).
func (e *Engine) lostJob(ji int32) {
	if e.jobs[ji].state == jobFree {
		return
	}
	e.connFailed(ji, errReset, 0)
	e.freeJob(ji)
}

// Delivered implements netw.Receiver: a request reached its pod, or an answer its client.
func (e *Engine) Delivered(_ netw.ConnID, d netw.Dir, ji int32) {
	if ji < 0 {
		e.chunkDelivered(-ji - 1)
		return
	}
	if d == netw.Up {
		e.arrive(ji)
		return
	}
	e.respond(ji)
}

// Failed implements netw.Receiver: TCP gave up on a connection (SYN or data
// retransmissions exhausted). The requests and answers it carried fail.
func (e *Engine) Failed(w netw.ConnID, lost []int32) {
	id := e.wireConn[w]
	e.wire[id] = -1
	for _, ji := range lost {
		e.lostMessage(ji)
	}
	e.stopFlow(id, e.connSeq[id])
	c := e.conns.Get(id)
	p := &e.pools[c.Pool]
	if p.Streams > 0 {
		p.DropStreamConn(&e.conns, id)
	} else {
		p.Drop()
	}
	e.closeAny(id)
	e.wakeAny(c.Pool)
}

// worstKept bounds the connections listed by their retransmissions.
const worstKept = 10

// noteWire keeps connection id's TCP record among the worst seen, before its state
// goes. closed is -1 for a connection still open at the end.
func (e *Engine) noteWire(id client.ConnID, closed sim.Time) {
	st := e.stack.ConnStats(netw.ConnID(e.wire[id]))
	if st.Retransmits == 0 {
		return
	}
	c := e.conns.Get(id)
	rec := result.TCPConn{
		Client: e.cpods[e.poolOwner[c.Pool]].name, Pod: e.pods[c.Pod].name, OpenedS: result.Round(c.Opened.Seconds(), 6),
		Retransmits: st.Retransmits, RTOEvents: st.RTOs, TLPEvents: st.TLPs,
	}
	if closed >= 0 {
		rec.ClosedS = seconds(closed)
	}
	i, _ := slices.BinarySearchFunc(e.worst, rec.Retransmits, func(x result.TCPConn, r int64) int {
		return cmp.Compare(r, x.Retransmits) // worst first; equal ones keep their order
	})
	for i < len(e.worst) && e.worst[i].Retransmits == rec.Retransmits {
		i++
	}
	if i < worstKept {
		e.worst = slices.Insert(e.worst, i, rec)
		e.worst = e.worst[:min(len(e.worst), worstKept)]
	}
}

func (e *Engine) tcpResult() *result.TCP {
	for id := range e.wire {
		if e.wire[id] >= 0 {
			e.noteWire(client.ConnID(id), -1)
		}
	}
	st := e.stack.Stats()
	return &result.TCP{
		Segments: st.Segments, Retransmits: st.Retransmits, FastRetransmits: st.FastRetransmits,
		RTOEvents: st.RTOs, TLPEvents: st.TLPs, SynRetransmits: st.SynRetransmits,
		Connections: e.wires, WorstConnections: e.worst,
	}
}
