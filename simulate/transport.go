package simulate

import (
	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/scenario"
	"trafficlab/simulate/network"
)

// Transport: how a request and its answer cross the network. On the fast path (see
// package network) the engine schedules each message one hop after it is sent;
// otherwise the network subsystem carries it over segment-level TCP (e.net, nil on
// the fast path).

// wired tells whether connection id runs on the segment model.
func (e *Engine) wired(id client.ConnID) bool { return e.net != nil && e.net.Wired(id) }

// networkEnds is what the network knows of the Engine's pods and client pods
// (network.Ends).
type networkEnds struct{ e *Engine }

func (n networkEnds) Name(x network.End) string {
	if x >= 0 {
		return n.e.pods[x].name
	}
	return n.e.cpods[-x-1].name
}

func (n networkEnds) Node(x network.End) int32 {
	if x >= 0 {
		return n.e.pods[x].node
	}
	return n.e.cpods[-x-1].node
}

func (n networkEnds) Matches(s *scenario.Selector, x network.End) bool { return n.e.matches(s, x) }

func (n networkEnds) NICs(node int32) (out, in *netw.NIC) {
	return n.e.nodes[node].nicOut, n.e.nodes[node].nicIn
}

// matches tells whether end x is selected by s.
func (e *Engine) matches(s *scenario.Selector, x network.End) bool {
	if x >= 0 {
		p := &e.pods[x]
		return s.Service != "" && s.Service == e.services[p.svc].name || s.Pod != "" && s.Pod == p.name ||
			s.Node != "" && s.Node == e.nodes[p.node].name
	}
	cp := &e.cpods[-x-1]
	if cp.from >= 0 {
		return e.matches(s, network.End(cp.from)) // a service pod's calls
	}
	return s.Client != "" && s.Client == e.deps[cp.dep].spec.Name || s.Pod != "" && s.Pod == cp.name ||
		s.Node != "" && s.Node == e.nodes[cp.node].name
}

// networkMessages is the request path the network delivers to (network.Messages).
type networkMessages struct{ e *Engine }

func (m networkMessages) Arrived(ji int32)  { m.e.arrive(ji) }
func (m networkMessages) Answered(ji int32) { m.e.respond(ji) }
func (m networkMessages) Lost(ji int32)     { m.e.lostJob(ji) }

func (m networkMessages) Current(ji int32, serial uint32) bool {
	j := &m.e.jobs[ji]
	return j.serial == serial && j.state != jobFree
}

// Failed: TCP gave up on connection id; its pool lets it go.
func (m networkMessages) Failed(id client.ConnID) {
	e := m.e
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

// lostJob: job ji's message went down with its connection; whoever waits for it
// hears of a reset at once (a request whose client gave up ignores it).
func (e *Engine) lostJob(ji int32) {
	if e.jobs[ji].state == jobFree {
		return
	}
	e.failJob(ji, errReset, 0)
}

// openWire starts the TCP connection under connection id, from end from (a client
// pod, or the client pod of an outbound envoy) to pod, when the segment model is on.
func (e *Engine) openWire(id client.ConnID, from network.End, pod int32) {
	e.trackConn(id)
	if e.net == nil {
		return
	}
	e.net.Open(id, from, pod)
	if pi := e.conns.Get(id).Pool; e.pools[pi].Streams > 0 {
		e.net.StartFlow(id, e.receiveWindows(pod), e.senderWindows(pi))
	}
}

// trackConn sizes the per-connection tables for id.
func (e *Engine) trackConn(id client.ConnID) {
	for int(id) >= len(e.connSeq) {
		e.connSeq = append(e.connSeq, 0)
	}
	e.trackIdle(id)
	if e.net != nil {
		e.net.Track(id)
	}
}

// closeWire ends connection id's TCP connection and makes it stale for whoever still
// refers to it.
func (e *Engine) closeWire(id client.ConnID) {
	seq := e.connSeq[id]
	e.connSeq[id]++
	e.voidIdleTimer(id)
	if e.net != nil {
		e.net.Close(id, seq)
	}
}

// sendMessage puts job ji's message on connection id in direction d.
func (e *Engine) sendMessage(id client.ConnID, d netw.Dir, header, data int64, ji int32) {
	e.net.Send(id, d, header, data, ji, e.jobs[ji].serial)
}

// resetStream: job ji's HTTP/2 stream was reset (RST_STREAM: the client or its
// sidecar gave up on it); a message waiting for credit with nothing on its way ends
// here.
func (e *Engine) resetStream(ji int32, serial uint32) {
	if j := &e.jobs[ji]; j.serial != serial || j.state == jobFree {
		return
	}
	if e.net.ResetStream(ji, serial) {
		e.freeJob(ji)
	}
}

// envoyWindows are Envoy's HTTP/2 receive windows: initial_stream_window_size and
// initial_connection_window_size default to 256 MiB (api/envoy/config/core/v3/
// protocol.proto, Http2ProtocolOptions).
var envoyWindows = [2]int64{256 << 20, 256 << 20}

// receiveWindows are what a pod advertises to the connections it accepts: its
// sidecar's, or its app's.
func (e *Engine) receiveWindows(pod int32) [2]int64 {
	if e.pods[pod].envoy >= 0 {
		return envoyWindows
	}
	return e.services[e.pods[pod].svc].windows
}

// senderWindows are what the opening side of a connection of pool p advertises for
// the answers: an outbound envoy's, or the client app's.
func (e *Engine) senderWindows(pi int32) [2]int64 {
	if e.mesh.Owns(pi) {
		return envoyWindows
	}
	return e.deps[e.cpods[e.poolOwner[pi]].dep].windows
}
