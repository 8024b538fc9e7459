package delay

import "time"

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

// held is a binary min-heap of packets by wake time. It is written out rather than
// built on container/heap, whose Push boxes every value in an interface: one
// allocation per packet on the hot path.
type held []packet

func (h *held) push(p packet) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if s[parent].wake <= s[i].wake {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
}

// pop removes and returns the packet to wake for first; h must not be empty.
func (h *held) pop() packet {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].wake < s[small].wake {
			small = l
		}
		if r < len(s) && s[r].wake < s[small].wake {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}
