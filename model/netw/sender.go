package netw

import "trafficlab/sim"

// seg is the scoreboard entry of one segment (sk_buff in the retransmit queue).
type seg struct {
	xmit  sim.Time // last (re)transmission
	size  int32    // payload bytes
	flags uint8
}

// Scoreboard bits (include/net/tcp.h struct tcp_skb_cb sacked).
const (
	sSacked  uint8 = 1 << iota // TCPCB_SACKED_ACKED
	sRetrans                   // TCPCB_SACKED_RETRANS: a retransmission is in flight
	sLost                      // TCPCB_LOST
	sEver                      // TCPCB_EVER_RETRANS
)

// Congestion states (include/uapi/linux/tcp.h enum tcp_ca_state), in Linux's order.
const (
	caOpen uint8 = iota
	caDisorder
	caCWR
	caRecovery
	caLoss
)

// ACK flags (net/ipv4/tcp_input.c FLAG_*).
const (
	flData             = 1 << iota // FLAG_DATA: the segment carried data
	flWinUpdate                    // FLAG_WIN_UPDATE
	flDataAcked                    // FLAG_DATA_ACKED
	flRetransDataAcked             // FLAG_RETRANS_DATA_ACKED
	flSynAcked                     // FLAG_SYN_ACKED
	flDataSacked                   // FLAG_DATA_SACKED
	flLostRetrans                  // FLAG_LOST_RETRANS
	flUnaAdvanced                  // FLAG_SND_UNA_ADVANCED
	flSetXmitTimer                 // FLAG_SET_XMIT_TIMER

	flAcked           = flDataAcked | flSynAcked
	flNotDup          = flData | flWinUpdate | flAcked
	flForwardProgress = flAcked | flDataSacked
)

type msgEnd struct{ end, msg int32 }

// msgQueue is a FIFO of message ends that reuses its array.
type msgQueue struct {
	buf  []msgEnd
	head int
}

func (q *msgQueue) push(m msgEnd) {
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head > 64 && 2*q.head > len(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, m)
}
func (q *msgQueue) empty() bool                    { return q.head == len(q.buf) }
func (q *msgQueue) peek() msgEnd                   { return q.buf[q.head] }
func (q *msgQueue) pop() msgEnd                    { m := q.buf[q.head]; q.head++; return m }
func (q *msgQueue) clear()                         { q.buf, q.head = q.buf[:0], 0 }
func sentAfter(t1, t2 sim.Time, s1, s2 int32) bool { return t1 > t2 || (t1 == t2 && s1 > s2) }

// sackState collects what one ACK's SACK blocks revealed (struct tcp_sacktag_state).
type sackState struct {
	reord                 int32
	firstSackt, lastSackt sim.Time
}

// half is one direction of a connection: the sender at one end and the receiver at
// the other. Field names follow struct tcp_sock. Segment numbers replace sequence
// numbers; the slices are reused across the connections that occupy the slot.
type half struct {
	est           bool
	una, nxt, end int32 // snd_una, snd_nxt, write_seq
	segs          []seg // ring holding [una, end)
	msgs          msgQueue

	sackedOut, lostOut, retransOut  int32
	fack                            int32 // tcp_highest_sack_seq when sackedOut > 0
	cwnd, ssthresh, cwndCnt         int32
	priorCwnd, prrDelivered, prrOut int32
	highSeq                         int32
	ca                              uint8
	reordering                      int32
	reordSeen                       bool
	delivered, lost                 int64 // tp->delivered, tp->lost
	wl1                             int32 // snd_wl1

	srtt, mdev, mdevMax, rttvar sim.Time // srtt_us is 8×, mdev_us and rttvar_us 4× as in Linux
	rttSeq                      int32
	rto                         sim.Time // icsk_rto, backoff included
	backoff, retransmits        int      // icsk_backoff, icsk_retransmits
	retransStamp                sim.Time // -1: none
	minRTT, minRTTAt            sim.Time
	lsndtime                    sim.Time

	maxPacketsOut, cwndUsageSeq int32
	isCwndLimited               bool

	rackXmit     sim.Time // rack.mstamp, -1: none
	rackEnd      int32
	rackRTT      sim.Time
	rackAdvanced bool
	tlpHigh      int32 // tlp_high_seq, -1: none
	tlpRetrans   bool

	sackCache [sentSacks]block // recv_sack_cache
	nCache    int
	cc        cubic

	tKind     uint8 // icsk_pending
	tAt       sim.Time
	evAt      sim.Time
	evGen     uint32
	evPending bool

	// receiver
	rcvNxt   int32
	got      []bool // ring of out-of-order segments received, indexed from rcvNxt
	ooo      int32  // how many are set
	sacks    [numSacks]block
	nSacks   int
	tsRecent int32
}

func (h *half) reset(cfg *Config) {
	segs, msgs, got, evGen := h.segs, h.msgs, h.got, h.evGen
	clear(got)
	msgs.clear()
	*h = half{segs: segs, msgs: msgs, got: got, evGen: evGen + 1}
	h.rto = cfg.InitRTO
	h.cwnd = int32(cfg.InitCwnd)
	h.ssthresh = infSsthresh
	h.reordering = tcpReordering
	h.retransStamp, h.rackXmit, h.tlpHigh = -1, -1, -1
	h.minRTT = maxTime
	h.cc.reno = cfg.Reno
}

func (h *half) seg(q int32) *seg { return &h.segs[int(q)&(len(h.segs)-1)] }

// grow makes room for segment h.end in the ring.
func (h *half) grow() {
	n := len(h.segs)
	if int(h.end-h.una) < n {
		return
	}
	nn := max(16, 2*n)
	ns := make([]seg, nn)
	for q := h.una; q < h.end; q++ {
		ns[int(q)&(nn-1)] = h.segs[int(q)&(n-1)]
	}
	h.segs = ns
}

func (h *half) packetsOut() int32 { return h.nxt - h.una }

// inFlight is tcp_packets_in_flight: packets_out - (sacked_out + lost_out) + retrans_out.
func (h *half) inFlight() int32 { return h.packetsOut() - h.sackedOut - h.lostOut + h.retransOut }

func (h *half) inCwndReduction() bool { return h.ca == caCWR || h.ca == caRecovery }

func (h *half) fackSeq() int32 {
	if h.sackedOut == 0 {
		return h.una
	}
	return h.fack
}

// anyRetransDone is tcp_any_retrans_done.
func (h *half) anyRetransDone() bool {
	return h.retransOut > 0 || (h.packetsOut() > 0 && h.seg(h.una).flags&sEver != 0)
}

// rtoDelta is tcp_rto_delta_us: how far in the future the RTO of the head segment is.
func (h *half) rtoDelta(now sim.Time) sim.Time { return h.seg(h.una).xmit + h.rto - now }

// xmitData puts segment q on the wire (tcp_transmit_skb); tcp_event_data_sent starts
// a CUBIC epoch shift when nothing was in flight.
func (s *Stack) xmitData(ci int32, c *conn, d Dir, q int32) {
	h := &c.h[d]
	now := s.k.Now()
	if h.inFlight() == 0 {
		h.cc.txStart(now, h.lsndtime) // CA_EVENT_TX_START
	}
	h.lsndtime = now
	sg := h.seg(q)
	sg.xmit = now
	p := packet{conn: ci, seq: q, dir: d, flags: fData, tsval: tsval(now)}
	ackInfo(c, &p, d^1)
	s.emit(c, p, int(sg.size)+HeaderBytes+sackBytes(p.nsack))
}

// newData sends the next new segment (tcp_event_new_data_sent): the RTO is armed when
// it is the first in flight or replaces a pending loss probe.
func (s *Stack) newData(ci int32, c *conn, d Dir) {
	h := &c.h[d]
	prior := h.packetsOut()
	s.xmitData(ci, c, d, h.nxt)
	h.nxt++
	if prior == 0 || h.tKind == tTLP {
		s.rearmRTO(ci, c, d)
	}
}

// push sends queued data as the congestion window allows (net/ipv4/tcp_output.c
// tcp_write_xmit with TCP_NODELAY, no receive-window limit), then tracks whether the
// flow is cwnd-limited and schedules a tail loss probe.
func (s *Stack) push(ci int32, c *conn, d Dir) {
	h := &c.h[d]
	if !h.est {
		return
	}
	sent := int32(0)
	for h.nxt < h.end && h.inFlight() < h.cwnd { // tcp_cwnd_test
		s.newData(ci, c, d)
		sent++
	}
	limited := h.inFlight() >= h.cwnd
	if sent > 0 || limited {
		h.cwndValidate(limited)
	}
	if sent > 0 {
		if h.inCwndReduction() {
			h.prrOut += sent
		}
		s.scheduleLossProbe(ci, c, d, false)
	}
}

// cwndValidate is net/ipv4/tcp_output.c tcp_cwnd_validate: remember, per window,
// whether the flow filled cwnd and how many packets it had out.
func (h *half) cwndValidate(limited bool) {
	if h.una >= h.cwndUsageSeq || limited || (!h.isCwndLimited && h.packetsOut() > h.maxPacketsOut) {
		h.isCwndLimited = limited
		h.maxPacketsOut = h.packetsOut()
		h.cwndUsageSeq = h.nxt
	}
}

// cwndLimited is include/net/tcp.h tcp_is_cwnd_limited: grow cwnd only if the flow
// used it, or in slow start while cwnd is below twice what was in flight.
func (h *half) cwndLimited() bool {
	if h.isCwndLimited {
		return true
	}
	if h.cwnd < h.ssthresh {
		return h.cwnd < 2*h.maxPacketsOut
	}
	return false
}

// cwndRestart is net/ipv4/tcp_output.c tcp_cwnd_restart (RFC 2861): halve cwnd per RTO
// of idle time, not below the initial window.
func (h *half) cwndRestart(delta sim.Time, iw int32) {
	h.ssthresh = h.currentSsthresh()
	restart := min(iw, h.cwnd)
	cwnd := h.cwnd
	for delta -= h.rto; delta > 0 && cwnd > restart; delta -= h.rto {
		cwnd >>= 1
	}
	h.cwnd = max(cwnd, restart)
	h.cwndCnt = 0
}

// currentSsthresh is include/net/tcp.h tcp_current_ssthresh.
func (h *half) currentSsthresh() int32 {
	if h.inCwndReduction() {
		return h.ssthresh
	}
	return max(h.ssthresh, (h.cwnd>>1)+(h.cwnd>>2))
}

// onAck processes the acknowledgement in p for the data of direction d (net/ipv4/
// tcp_input.c tcp_ack).
func (s *Stack) onAck(ci int32, c *conn, d Dir, p *packet) {
	h := &c.h[d]
	if !h.est || p.ack > h.nxt {
		return
	}
	now := s.k.Now()
	st := sackState{reord: h.nxt, firstSackt: -1, lastSackt: -1}
	flag := 0
	if p.flags&fData != 0 {
		flag |= flData
	}
	priorUna := h.una
	if p.ack < priorUna {
		// An old ACK (reordered): only its SACK blocks are used.
		if p.nsack > 0 {
			flag |= h.sacktag(now, p, &st)
			rexmit := false
			s.fastretransAlert(ci, c, d, &flag, &rexmit)
			if rexmit {
				s.xmitRetransmitQueue(ci, c, d)
			}
		}
		return
	}
	if p.ack > priorUna {
		flag |= flUnaAdvanced
		h.retransmits = 0
	}
	// tcp_ack_update_window: the peer moved its sequence (snd_wl1).
	if p.ack > priorUna || p.seq > h.wl1 {
		flag |= flWinUpdate
		h.wl1 = p.seq
	}
	priorFack := h.fackSeq()
	priorPackets := h.packetsOut()
	priorDelivered, priorLost := h.delivered, h.lost
	if p.nsack > 0 {
		flag |= h.sacktag(now, p, &st)
	}
	if priorPackets == 0 { // no_queue
		if h.tlpHigh >= 0 {
			s.processTLPAck(ci, c, d, p.ack, flag)
		}
		return
	}
	flag |= h.cleanRtxQueue(now, p.ack, priorFack, &st, p.tsecr, &s.cfg)
	if h.tlpHigh >= 0 {
		s.processTLPAck(ci, c, d, p.ack, flag)
	}
	rexmit := false
	// tcp_ack_is_dubious
	if flag&flNotDup == 0 || flag&flDataSacked != 0 || h.ca != caOpen {
		s.fastretransAlert(ci, c, d, &flag, &rexmit)
	}
	if flag&flSetXmitTimer != 0 {
		s.setXmitTimer(ci, c, d)
	}
	s.congControl(h, now, int32(h.delivered-priorDelivered), int32(h.lost-priorLost), flag)
	if rexmit { // tcp_xmit_recovery
		s.xmitRetransmitQueue(ci, c, d)
	}
}

// sacktag marks newly SACKed segments (tcp_sacktag_write_queue). Ranges covered by the
// previous ACK's blocks are skipped, as Linux does with recv_sack_cache, so each
// segment is walked about once.
func (h *half) sacktag(now sim.Time, p *packet, st *sackState) int {
	if h.sackedOut == 0 {
		h.fack = h.una
	}
	var bl [sentSacks]block
	n := 0
	for i := 0; i < int(p.nsack); i++ {
		b := p.sack[i]
		// tcp_is_sackblock_valid: within (snd_una, snd_nxt], not reversed.
		if b.end > h.nxt || b.start >= b.end || b.start <= h.una {
			continue
		}
		j := n
		for ; j > 0 && bl[j-1].start > b.start; j-- {
			bl[j] = bl[j-1]
		}
		bl[j] = b
		n++
	}
	flag := 0
	for i := 0; i < n; i++ {
		b, cur := bl[i], bl[i].start
		for j := 0; j < h.nCache; j++ {
			cb := h.sackCache[j]
			if cb.end <= cur || cb.start >= b.end {
				continue
			}
			if cb.start > cur {
				flag |= h.tagRange(now, cur, cb.start, st)
			}
			cur = max(cur, cb.end)
		}
		if cur < b.end {
			flag |= h.tagRange(now, cur, b.end, st)
		}
	}
	h.sackCache, h.nCache = bl, n
	h.checkSackReordering(st.reord)
	return flag
}

func (h *half) tagRange(now sim.Time, from, to int32, st *sackState) int {
	flag := 0
	for q := max(from, h.una); q < to; q++ {
		flag |= h.tagOne(now, q, st)
	}
	return flag
}

// tagOne is tcp_sacktag_one for a newly SACKed segment.
func (h *half) tagOne(now sim.Time, q int32, st *sackState) int {
	sg := h.seg(q)
	f := sg.flags
	if f&sSacked != 0 {
		return 0
	}
	flag := flDataSacked
	h.rackAdvance(now, f, q+1, sg.xmit)
	if f&sRetrans != 0 {
		// A retransmission in flight stays counted unless the segment was lost.
		if f&sLost != 0 {
			f &^= sLost | sRetrans
			h.lostOut--
			h.retransOut--
		}
	} else {
		if f&sEver == 0 {
			// A never-retransmitted segment in a hole: reordering.
			if q < h.fack && q < st.reord {
				st.reord = q
			}
			if st.firstSackt < 0 {
				st.firstSackt = sg.xmit
			}
			st.lastSackt = sg.xmit
		}
		if f&sLost != 0 {
			f &^= sLost
			h.lostOut--
		}
	}
	sg.flags = f | sSacked
	h.sackedOut++
	h.delivered++
	h.fack = max(h.fack, q+1)
	return flag
}

// checkSackReordering is tcp_check_sack_reordering: a never-retransmitted segment
// below the highest SACKed one arrived late; raise tp->reordering to the distance.
func (h *half) checkSackReordering(low int32) {
	fack := h.fackSeq()
	if low >= fack {
		return
	}
	if metric := fack - low; metric > h.reordering {
		h.reordering = min(metric, maxReordering)
	}
	h.reordSeen = true
}

// cleanRtxQueue removes cumulatively acknowledged segments and takes the RTT sample
// (tcp_clean_rtx_queue, tcp_ack_update_rtt).
func (h *half) cleanRtxQueue(now sim.Time, ack, priorFack int32, st *sackState, tsecr int32, cfg *Config) int {
	flag := 0
	firstAckt, lastAckt := sim.Time(-1), sim.Time(-1)
	reord := h.nxt
	for q := h.una; q < ack; q++ {
		sg := h.seg(q)
		f := sg.flags
		if f&sEver != 0 {
			if f&sRetrans != 0 {
				h.retransOut--
			}
			flag |= flRetransDataAcked
		} else if f&sSacked == 0 {
			lastAckt = sg.xmit
			if firstAckt < 0 {
				firstAckt = sg.xmit
			}
			reord = min(reord, q)
		}
		if f&sSacked != 0 {
			h.sackedOut--
		} else {
			h.delivered++
			// tcp_skb_spurious_retrans: the echo predates this retransmission.
			if f&sEver == 0 || tsecr == 0 || tsecr >= tsval(sg.xmit) {
				h.rackAdvance(now, f, q+1, sg.xmit)
			}
		}
		if f&sLost != 0 {
			h.lostOut--
		}
		sg.flags = 0
		flag |= flDataAcked
	}
	h.una = ack
	// Karn: no sample from the timing of retransmitted data (RFC 6298), but Linux has
	// timestamps on, so the TSecr of an ACK that acks new data is used instead.
	seqRtt, caRtt, sackRtt := sim.Time(-1), sim.Time(-1), sim.Time(-1)
	if firstAckt >= 0 && flag&flRetransDataAcked == 0 {
		seqRtt, caRtt = now-firstAckt, now-lastAckt
	}
	if st.firstSackt >= 0 {
		sackRtt, caRtt = now-st.firstSackt, now-st.lastSackt
	}
	updated, caRtt := h.ackUpdateRTT(now, flag, seqRtt, sackRtt, caRtt, tsecr, cfg)
	if flag&flAcked != 0 {
		flag |= flSetXmitTimer
		if reord < priorFack {
			h.checkSackReordering(reord)
		}
	} else if updated && sackRtt >= 0 && h.packetsOut() > 0 && sackRtt > now-h.seg(h.una).xmit {
		flag |= flSetXmitTimer
	}
	h.cc.pktsAcked(now, caRtt)
	return flag
}

// ackUpdateRTT is tcp_ack_update_rtt: prefer the ACK's timing, then the SACK's, then
// the timestamp echo (only if the ACK acks new data: RTTM rule).
func (h *half) ackUpdateRTT(now sim.Time, flag int, seqRtt, sackRtt, caRtt sim.Time, tsecr int32, cfg *Config) (bool, sim.Time) {
	if seqRtt < 0 {
		seqRtt = sackRtt
	}
	if seqRtt < 0 && tsecr != 0 && flag&flAcked != 0 {
		delta := tsval(now) - tsecr // tcp_rtt_tsopt_us: in TS ticks, at least 1
		if delta < 1 {
			delta = 1
		}
		seqRtt = sim.Time(delta) * tsTick
		caRtt = seqRtt
	}
	if seqRtt < 0 {
		return false, caRtt
	}
	h.updateMinRTT(now, caRtt)
	h.rttEstimator(seqRtt, cfg.MinRTO)
	h.rto = min((h.srtt>>3)+h.rttvar, cfg.MaxRTO) // tcp_set_rto, __tcp_set_rto, tcp_bound_rto
	h.backoff = 0                                 // RFC 6298: reset backoff on a valid sample
	return true, caRtt
}

// updateMinRTT approximates tcp_update_rtt_min's windowed minimum (minmax_running_min
// over tcp_min_rtt_wlen): a sample replaces the minimum if smaller or if the minimum
// is older than the window.
func (h *half) updateMinRTT(now, rtt sim.Time) {
	if rtt < 0 {
		return
	}
	if rtt == 0 {
		rtt = jiffy
	}
	if rtt <= h.minRTT || now-h.minRTTAt > minRTTWindow {
		h.minRTT, h.minRTTAt = rtt, now
	}
}

// rttEstimator is net/ipv4/tcp_input.c tcp_rtt_estimator, in ns with Linux's scaling:
// srtt is 8·SRTT, mdev and rttvar are 4·deviation, and rttvar never drops below
// tcp_rto_min within a window of data, so RTO = SRTT + max(4·RTTVAR, 200 ms).
func (h *half) rttEstimator(m, rtoMin sim.Time) {
	srtt := h.srtt
	if srtt != 0 {
		m -= srtt >> 3
		srtt += m
		if m < 0 {
			m = -m
			m -= h.mdev >> 2
			if m > 0 {
				m >>= 3
			}
		} else {
			m -= h.mdev >> 2
		}
		h.mdev += m
		if h.mdev > h.mdevMax {
			h.mdevMax = h.mdev
			if h.mdevMax > h.rttvar {
				h.rttvar = h.mdevMax
			}
		}
		if h.una > h.rttSeq {
			if h.mdevMax < h.rttvar {
				h.rttvar -= (h.rttvar - h.mdevMax) >> 2
			}
			h.rttSeq = h.nxt
			h.mdevMax = rtoMin
		}
	} else {
		srtt = m << 3
		h.mdev = m << 1
		h.rttvar = max(h.mdev, rtoMin)
		h.mdevMax = h.rttvar
		h.rttSeq = h.nxt
	}
	h.srtt = max(1, srtt)
}
