package network

import (
	"cmp"
	"slices"

	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/result"
	"trafficlab/sim"
)

// worstKept bounds the connections listed by their retransmissions.
const worstKept = 10

// noteWire keeps connection id's TCP record among the worst seen, before its state
// goes. closed is -1 for a connection still open at the end.
func (n *Network) noteWire(id client.ConnID, closed sim.Time) {
	st := n.stack.ConnStats(netw.ConnID(n.wire[id]))
	if st.Retransmits == 0 {
		return
	}
	l := n.link[id]
	rec := result.TCPConn{
		Client: n.ends.Name(l.from), Pod: n.ends.Name(l.to), OpenedS: result.Round(n.opened[id].Seconds(), 6),
		Retransmits: st.Retransmits, RTOEvents: st.RTOs, TLPEvents: st.TLPs,
	}
	if closed >= 0 {
		s := closed.Seconds()
		rec.ClosedS = &s
	}
	i, _ := slices.BinarySearchFunc(n.worst, rec.Retransmits, func(x result.TCPConn, r int64) int {
		return cmp.Compare(r, x.Retransmits) // worst first; equal ones keep their order
	})
	for i < len(n.worst) && n.worst[i].Retransmits == rec.Retransmits {
		i++
	}
	if i < worstKept {
		n.worst = slices.Insert(n.worst, i, rec)
		n.worst = n.worst[:min(len(n.worst), worstKept)]
	}
}

// Result is the run's TCP figures: every segment, and the connections with the
// most retransmissions, those still open counted as they stand.
func (n *Network) Result() *result.TCP {
	for id := range n.wire {
		if n.wire[id] >= 0 {
			n.noteWire(client.ConnID(id), -1)
		}
	}
	st := n.stack.Stats()
	return &result.TCP{
		Segments: st.Segments, Retransmits: st.Retransmits, FastRetransmits: st.FastRetransmits,
		RTOEvents: st.RTOs, TLPEvents: st.TLPs, SynRetransmits: st.SynRetransmits,
		Connections: n.wires, WorstConnections: n.worst,
	}
}
