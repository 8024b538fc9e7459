// Package network is the simulator's network beyond constant delays: how a request
// and its answer cross it when a hop is more than a fixed latency.
//
// The engine's fast path, used when every hop is a constant delay (no jitter, loss,
// bandwidth limit, link override or network fault) and the connections carry
// HTTP/1.1 messages that fit in TCP's initial window (HTTP/2 may have many messages in
// flight on one connection, where the window can bind), schedules each message one
// hop after it is sent, and a new connection's first request 1.5 round trips after
// the SYN: exactly what the segment model computes on such a path (netw tests prove
// the equivalence), at a fraction of the events.
//
// Otherwise every pod-to-pod connection runs here, through netw's segment-level TCP
// over per-direction paths, and a message reaches the other side when its last byte
// is delivered in order. Control packets (SYN answers, resets, FINs) still take the
// cluster's latency and are never lost. HTTP/2 connections add flow control
// (flow.go).
//
// The network owns the paths, the TCP connections under the engine's connections,
// flow-control state and the messages' chunks. Messages are the engine's job IDs; it
// hears of them through Messages, and learns of the ends of a path through Ends.
package network

import (
	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// End names one end of a path: a pod (≥ 0) or a client pod (ClientEnd).
type End = int32

// ClientEnd is the end of client pod ci.
func ClientEnd(ci int32) End { return -ci - 1 }

// Ends is what the network knows of the ends of its paths.
type Ends interface {
	Name(x End) string
	Node(x End) int32
	// Matches tells whether end x is selected by s.
	Matches(s *scenario.Selector, x End) bool
	// NICs are node n's network interfaces, each way; nil when unlimited.
	NICs(n int32) (out, in *netw.NIC)
}

// Messages is the request path the network carries messages for. A message is a
// request or its answer: the job ID of the request.
type Messages interface {
	// Arrived: the request reached its pod.
	Arrived(ji int32)
	// Answered: the answer reached its client.
	Answered(ji int32)
	// Current tells whether job ji is still the one of this serial, in use.
	Current(ji int32, serial uint32) bool
	// Lost: job ji's message went down with its connection; whoever waits for it
	// hears of a reset at once.
	Lost(ji int32)
	// Failed: TCP gave up on connection id, whose messages are lost; the pool lets
	// it go.
	Failed(id client.ConnID)
}

// Config is the network's set-up.
type Config struct {
	Seed int64
	// Relay is the extra one-way leg through a node's userspace proxy, 0 in other
	// modes.
	Relay sim.Time
	// Reno: TCP Reno instead of CUBIC.
	Reno   bool
	Spec   *scenario.Network
	Faults []scenario.Fault
	// Seq is the engine's per-connection sequence numbers, bumped when a connection
	// closes: a chunk is stale once its connection's has moved on.
	Seq *[]uint32
}

type pathKey struct{ from, to End }

// Network is the segment-level network of a run.
type Network struct {
	k     *sim.Kernel
	cfg   Config
	ends  Ends
	msgs  Messages
	stack *netw.Stack

	paths    map[pathKey]*netw.Path
	pathKeys []pathKey // in creation order, for deterministic reconfiguration
	wire     []int32   // per connection: its netw connection, or -1
	link     []pathKey // per connection: its client end and its pod
	opened   []sim.Time
	wireConn []client.ConnID // per netw connection: the connection over it
	wires    int64           // TCP connections opened
	lost     []int32         // scratch: messages a closed connection did not deliver
	worst    []result.TCPConn

	// HTTP/2 flow control (flow.go).
	flow       []flowConn // per connection
	streams    []stream   // per job
	chunks     []chunk
	freeChunks []int32

	evWindowUpdate uint8
}

// New makes the network: the segment model's stack now, so that its event kinds
// come first.
func New(k *sim.Kernel, cfg Config, ends Ends) *Network {
	n := &Network{k: k, cfg: cfg, ends: ends, paths: map[pathKey]*netw.Path{}}
	c := netw.DefaultConfig()
	c.Reno = cfg.Reno
	n.stack = netw.NewStack(k, c, n)
	return n
}

// Start registers the flow-control events and the request path the network
// delivers to.
func (n *Network) Start(msgs Messages) {
	n.msgs = msgs
	n.evWindowUpdate = n.k.Register(n.onWindowUpdate)
}

// Needed tells whether sc needs the segment model anywhere.
func Needed(sc *scenario.Scenario) bool {
	nw := &sc.Spec.Cluster.Network
	if nw.Jitter != nil && nw.Jitter.Duration > 0 || nw.Bandwidth != nil || nw.GilbertElliott != nil ||
		nw.Loss != nil && nw.Loss.Fraction > 0 || len(nw.Links) > 0 {
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
		if scenario.Multiplexed(c.Connections.Protocol) || *c.Request.HeaderBytes+c.Request.BodyBytes > mss ||
			c.Sidecar != nil && c.Sidecar.UpstreamProtocol == scenario.ProtocolHTTP2 {
			return true
		}
	}
	for i := range sc.Spec.Services {
		pod := &sc.Spec.Services[i].Pod
		if *pod.ResponseBytes > mss {
			return true
		}
		// A pod's calls over HTTP/2 multiplex streams on a connection, as a client's.
		if c := pod.Client; c != nil && len(pod.Calls) > 0 && (scenario.Multiplexed(c.Connections.Protocol) ||
			*c.Request.HeaderBytes+c.Request.BodyBytes > mss) {
			return true
		}
	}
	return false
}

// Track sizes the per-connection tables for id.
func (n *Network) Track(id client.ConnID) {
	for int(id) >= len(n.wire) {
		n.wire = append(n.wire, -1)
		n.link = append(n.link, pathKey{})
		n.opened = append(n.opened, 0)
	}
}

// Wired tells whether connection id runs on the segment model.
func (n *Network) Wired(id client.ConnID) bool { return n.wire[id] >= 0 }

// Open starts the TCP connection under connection id, from end from (a client pod,
// or the client pod of an outbound envoy) to pod; an HTTP/2 one then calls
// StartFlow.
func (n *Network) Open(id client.ConnID, from End, pod int32) {
	w := n.stack.Open(n.path(from, pod), n.path(pod, from))
	n.wires++
	n.wire[id] = int32(w)
	n.link[id], n.opened[id] = pathKey{from, pod}, n.k.Now()
	for int(w) >= len(n.wireConn) {
		n.wireConn = append(n.wireConn, -1)
	}
	n.wireConn[w] = id
}

// Close ends connection id's TCP connection; seq is the connection's sequence
// number before the close. Its messages not yet delivered are lost.
func (n *Network) Close(id client.ConnID, seq uint32) {
	if w := n.wire[id]; w >= 0 {
		n.noteWire(id, n.k.Now())
		lost := n.stack.Undelivered(netw.ConnID(w), n.lost[:0])
		n.stack.Close(netw.ConnID(w))
		n.wire[id] = -1
		for _, msg := range lost {
			n.lostMessage(msg)
		}
		n.lost = lost
	}
	n.stopFlow(id, seq)
}

// lostMessage: message msg (a job, or a chunk of one) went down with its connection.
func (n *Network) lostMessage(msg int32) {
	if msg < 0 {
		n.lostChunk(-msg - 1)
		return
	}
	n.msgs.Lost(msg)
}

// Delivered implements netw.Receiver: a request reached its pod, or an answer its client.
func (n *Network) Delivered(_ netw.ConnID, d netw.Dir, msg int32) {
	if msg < 0 {
		n.chunkDelivered(-msg - 1)
		return
	}
	if d == netw.Up {
		n.msgs.Arrived(msg)
		return
	}
	n.msgs.Answered(msg)
}

// Failed implements netw.Receiver: TCP gave up on a connection (SYN or data
// retransmissions exhausted). The requests and answers it carried fail.
func (n *Network) Failed(w netw.ConnID, lost []int32) {
	id := n.wireConn[w]
	n.wire[id] = -1
	for _, msg := range lost {
		n.lostMessage(msg)
	}
	n.stopFlow(id, (*n.cfg.Seq)[id])
	n.msgs.Failed(id)
}
