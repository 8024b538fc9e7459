package delay

import (
	"time"

	"trafficlab/internal/heap"
)

// packet is one queued packet: its nfqueue id and when the timer thread wakes for it,
// as time since the Delayer's epoch on the monotonic clock, which is early by lead
// (in ns) against the time its delay draw asked for.
type packet struct {
	wake time.Duration
	id   uint32
	lead int32 // a lead is under a millisecond; int32 keeps a packet 16 bytes
}

// due is the time the packet's delay draw asked for.
func (p packet) due() time.Duration { return p.wake + time.Duration(p.lead) }

// held are the packets waiting, by wake time. Among equal wake times they leave by
// nfqueue id, which is the order they came in (__nfqnl_enqueue_packet numbers them
// from the queue's id_sequence), as netem keeps packets of equal time_to_send in the
// order they came (tfifo_enqueue in net/sched/sch_netem.c).
type held struct {
	h heap.Heap[time.Duration, uint32, int32] // wake, id, lead
}

func (h *held) len() int { return len(h.h) }

func (h *held) push(p packet) { h.h.Push(p.wake, p.id, p.lead) }

// first is the packet to wake for first; h must not be empty.
func (h *held) first() packet { return packetOf(h.h[0]) }

// pop removes and returns the packet to wake for first; h must not be empty.
func (h *held) pop() packet { return packetOf(h.h.Pop()) }

func packetOf(it heap.Item[time.Duration, uint32, int32]) packet {
	return packet{wake: it.Key, id: it.Tie, lead: it.Val}
}
