package netw

// The receiving end of a direction: in-order delivery to the application and the SACK
// blocks it reports (net/ipv4/tcp_input.c tcp_data_queue, tcp_data_queue_ofo).

// onData handles data segment p of direction d at its receiver, then ACKs at once.
func (s *Stack) onData(ci int32, c *conn, d Dir, p *packet) {
	r := &c.h[d]
	q := p.seq
	switch {
	case q < r.rcvNxt:
		// Already delivered: a spurious retransmission, ACKed at once (Linux adds a
		// D-SACK block, not modelled).
	case q == r.rcvNxt:
		// In order: deliver it and whatever the out-of-order queue now continues
		// (tcp_ofo_queue); a hole blocks every later byte until it is filled.
		r.rcvNxt++
		for r.ooo > 0 && r.has(r.rcvNxt) {
			r.got[int(r.rcvNxt)&(len(r.got)-1)] = false
			r.ooo--
			r.rcvNxt++
		}
		if r.nSacks > 0 {
			r.sackRemove()
		}
		for !r.msgs.empty() && r.msgs.peek().end <= r.rcvNxt {
			m := r.msgs.pop()
			s.cb = append(s.cb, callback{c: ConnID(ci), d: d, msg: m.msg})
		}
	default:
		if !r.has(q) {
			if r.ooo == 0 {
				r.nSacks = 0 // the first out-of-order segment builds the first block
			}
			r.set(q)
			r.ooo++
		}
		r.sackNewOfo(q, q+1)
	}
	s.sendAck(ci, c, d)
}

// has reports whether out-of-order segment q was received.
func (r *half) has(q int32) bool {
	n := len(r.got)
	return q >= r.rcvNxt && int(q-r.rcvNxt) < n && r.got[int(q)&(n-1)]
}

// set records out-of-order segment q, growing the ring so that it spans q.
func (r *half) set(q int32) {
	n := len(r.got)
	if int(q-r.rcvNxt) >= n {
		nn := max(16, n)
		for int(q-r.rcvNxt) >= nn {
			nn *= 2
		}
		ng := make([]bool, nn)
		for x := r.rcvNxt; x < r.rcvNxt+int32(n); x++ {
			if r.got[int(x)&(n-1)] {
				ng[int(x)&(nn-1)] = true
			}
		}
		r.got, n = ng, nn
	}
	r.got[int(q)&(n-1)] = true
}

// sackExtend is tcp_sack_extend: merge [seq, end) into a block it touches.
func sackExtend(b *block, seq, end int32) bool {
	if seq <= b.end && b.start <= end {
		b.start = min(b.start, seq)
		b.end = max(b.end, end)
		return true
	}
	return false
}

// sackNewOfo is tcp_sack_new_ofo_skb: the block holding the newest segment goes first
// (RFC 2018), the others follow most recent first, and the oldest of more than
// TCP_NUM_SACKS is forgotten.
func (r *half) sackNewOfo(seq, end int32) {
	for i := 0; i < r.nSacks; i++ {
		if sackExtend(&r.sacks[i], seq, end) {
			for ; i > 0; i-- {
				r.sacks[i], r.sacks[i-1] = r.sacks[i-1], r.sacks[i]
			}
			r.sackCoalesce()
			return
		}
	}
	n := r.nSacks
	if n >= numSacks {
		n--
	}
	for i := n; i > 0; i-- {
		r.sacks[i] = r.sacks[i-1]
	}
	r.sacks[0] = block{seq, end}
	r.nSacks = n + 1
}

// sackCoalesce is tcp_sack_maybe_coalesce: the first block may now touch others.
func (r *half) sackCoalesce() {
	for i := 1; i < r.nSacks; {
		if sackExtend(&r.sacks[0], r.sacks[i].start, r.sacks[i].end) {
			r.nSacks--
			copy(r.sacks[i:r.nSacks], r.sacks[i+1:r.nSacks+1])
			continue
		}
		i++
	}
}

// sackRemove is tcp_sack_remove: drop the blocks rcv_nxt has reached.
func (r *half) sackRemove() {
	if r.ooo == 0 {
		r.nSacks = 0
		return
	}
	for i := 0; i < r.nSacks; {
		if r.rcvNxt >= r.sacks[i].start {
			r.nSacks--
			copy(r.sacks[i:r.nSacks], r.sacks[i+1:r.nSacks+1])
			continue
		}
		i++
	}
}
