package netw

import "trafficlab/sim"

// Loss detection and recovery: RACK-TLP, fast recovery with PRR, and the RTO.

// fastretransAlert is net/ipv4/tcp_input.c tcp_fastretrans_alert with SACK and RACK
// (tcp_recovery=1, so tcp_time_to_recover only trusts lost_out and the dupthresh acts
// through tcp_rack_reo_wnd) and without undo.
func (s *Stack) fastretransAlert(ci int32, c *conn, d Dir, flag *int, rexmit *bool) {
	h := &c.h[d]
	if h.packetsOut() == 0 && h.sackedOut > 0 {
		h.sackedOut = 0
	}
	// D. State exit when high_seq is acked.
	if h.ca == caOpen {
		h.retransStamp = -1
	} else if h.una >= h.highSeq {
		switch h.ca {
		case caCWR:
			if h.una != h.highSeq {
				h.endCwndReduction()
				h.setState(caOpen)
			}
		case caRecovery:
			h.setState(caOpen) // tcp_try_undo_recovery, nothing to undo
			h.endCwndReduction()
		}
	}
	// E. Process state.
	switch h.ca {
	case caRecovery:
		s.identifyLoss(ci, c, d, flag)
	case caLoss:
		// tcp_process_loss without F-RTO: back to Open once high_seq is acked, else
		// retransmit what is marked lost.
		if h.una >= h.highSeq {
			h.setState(caOpen)
		} else {
			*rexmit = true
		}
		s.identifyLoss(ci, c, d, flag)
		if !(h.ca == caOpen || *flag&flLostRetrans != 0) {
			return
		}
		fallthrough
	default:
		s.identifyLoss(ci, c, d, flag)
		if h.lostOut == 0 { // tcp_time_to_recover
			h.tryToOpen()
			return
		}
		h.enterRecovery()
	}
	*rexmit = true
}

// identifyLoss is tcp_identify_packet_loss with RACK.
func (s *Stack) identifyLoss(ci int32, c *conn, d Dir, flag *int) {
	h := &c.h[d]
	if h.packetsOut() == 0 {
		return
	}
	prior := h.retransOut
	if s.rackMarkLost(ci, c, d) {
		*flag &^= flSetXmitTimer
	}
	if prior > h.retransOut {
		*flag |= flLostRetrans
	}
}

// tryToOpen is tcp_try_to_open.
func (h *half) tryToOpen() {
	if !h.anyRetransDone() {
		h.retransStamp = -1
	}
	if h.ca != caCWR {
		h.tryKeepOpen()
	}
}

// tryKeepOpen is tcp_try_keep_open: Disorder while anything is SACKed, lost or
// retransmitted, else Open.
func (h *half) tryKeepOpen() {
	st := caOpen
	if h.sackedOut+h.lostOut > 0 || h.anyRetransDone() {
		st = caDisorder
	}
	if h.ca != st {
		h.setState(st)
		h.highSeq = h.nxt
	}
}

func (h *half) setState(st uint8) {
	if st == caLoss {
		h.cc.reset() // cubictcp_state: bictcp_reset on TCP_CA_Loss
	}
	h.ca = st
}

// enterRecovery is tcp_enter_recovery.
func (h *half) enterRecovery() {
	if !h.inCwndReduction() {
		h.initCwndReduction()
	}
	h.setState(caRecovery)
}

// initCwndReduction is tcp_init_cwnd_reduction: one reduction per window of data, up
// to high_seq, starting from ssthresh = CUBIC β·cwnd or Reno cwnd/2.
func (h *half) initCwndReduction() {
	h.highSeq = h.nxt
	h.tlpHigh = -1
	h.cwndCnt = 0
	h.priorCwnd = h.cwnd
	h.prrDelivered, h.prrOut = 0, 0
	h.ssthresh = h.ccSsthresh()
}

// endCwndReduction is tcp_end_cwnd_reduction: cwnd = ssthresh.
func (h *half) endCwndReduction() {
	if h.ssthresh < infSsthresh {
		h.cwnd = h.ssthresh
	}
}

// cwndReduction is tcp_cwnd_reduction, Proportional Rate Reduction (RFC 6937): while
// more than ssthresh is in flight send ssthresh/prior_cwnd of what is delivered, else
// grow back towards ssthresh no faster than slow start; always allow the first fast
// retransmit.
func (h *half) cwndReduction(newlyAckedSacked, newlyLost int32, flag int) {
	if newlyAckedSacked <= 0 || h.priorCwnd == 0 {
		return
	}
	delta := h.ssthresh - h.inFlight()
	h.prrDelivered += newlyAckedSacked
	var sndcnt int32
	if delta < 0 {
		dividend := int64(h.ssthresh)*int64(h.prrDelivered) + int64(h.priorCwnd) - 1
		sndcnt = int32(dividend/int64(h.priorCwnd)) - h.prrOut
	} else {
		sndcnt = max(h.prrDelivered-h.prrOut, newlyAckedSacked)
		if flag&flUnaAdvanced != 0 && newlyLost == 0 {
			sndcnt++
		}
		sndcnt = min(delta, sndcnt)
	}
	if h.prrOut == 0 {
		sndcnt = max(sndcnt, 1)
	} else {
		sndcnt = max(sndcnt, 0)
	}
	h.cwnd = h.inFlight() + sndcnt
}

// congControl is tcp_cong_control without a cong_control hook: reduce during recovery,
// else grow if the ACK delivered data in order (tcp_may_raise_cwnd).
func (s *Stack) congControl(h *half, now sim.Time, ackedSacked, newlyLost int32, flag int) {
	if h.inCwndReduction() {
		h.cwndReduction(ackedSacked, newlyLost, flag)
		return
	}
	may := flag&flDataAcked != 0
	if h.reordering > tcpReordering {
		may = flag&flForwardProgress != 0
	}
	if may {
		h.congAvoid(now, ackedSacked)
	}
}

// markLost is tcp_mark_skb_lost: a retransmission already marked lost is lost again.
func (h *half) markLost(q int32) {
	sg := h.seg(q)
	f := sg.flags
	if f&sSacked != 0 {
		return
	}
	if f&sLost != 0 {
		if f&sRetrans != 0 {
			sg.flags &^= sRetrans
			h.retransOut--
			h.lost++
		}
		return
	}
	sg.flags |= sLost
	h.lostOut++
	h.lost++
}

// rackAdvance is net/ipv4/tcp_recovery.c tcp_rack_advance: remember the most recently
// sent segment that was delivered, and its RTT. A retransmission acked faster than
// min RTT may be the original's ACK, so it is not trusted.
func (h *half) rackAdvance(now sim.Time, f uint8, end int32, xmit sim.Time) {
	rtt := now - xmit
	if rtt < h.minRTT && f&sEver != 0 {
		return
	}
	h.rackAdvanced = true
	h.rackRTT = rtt
	if sentAfter(xmit, h.rackXmit, end, h.rackEnd) {
		h.rackXmit, h.rackEnd = xmit, end
	}
}

// rackReoWnd is tcp_rack_reo_wnd: no settling time in recovery, or once dupthresh
// (tcp_reordering) segments are SACKed, unless reordering was seen; else min_rtt/4,
// at most SRTT (reo_wnd_steps stays 1 without D-SACK).
func (h *half) rackReoWnd() sim.Time {
	if !h.reordSeen {
		if h.ca >= caRecovery || h.sackedOut >= h.reordering {
			return 0
		}
	}
	return min(h.minRTT>>2, h.srtt>>3)
}

// rackDetectLoss is tcp_rack_detect_loss: a segment sent before the most recently
// delivered one is lost once RACK.rtt + reo_wnd has passed since it was sent; it
// returns how long until the next one may be. Linux walks a list sorted by send time;
// this walks sequence order and stops at the first never-retransmitted segment sent
// after RACK.xmit_time, beyond which nothing was sent earlier.
func (h *half) rackDetectLoss(now sim.Time) (timeout sim.Time) {
	reo := h.rackReoWnd()
	for q := h.una; q < h.nxt; q++ {
		sg := h.seg(q)
		f := sg.flags
		if f&sSacked != 0 || (f&sLost != 0 && f&sRetrans == 0) {
			continue
		}
		if !sentAfter(h.rackXmit, sg.xmit, h.rackEnd, q+1) {
			if f&sEver == 0 {
				break
			}
			continue
		}
		if rem := h.rackRTT + reo - (now - sg.xmit); rem <= 0 {
			h.markLost(q)
		} else if rem > timeout {
			timeout = rem
		}
	}
	return timeout
}

// rackMarkLost is tcp_rack_mark_lost: after new deliveries, mark losses and arm the
// reordering timer for segments not yet overdue.
func (s *Stack) rackMarkLost(ci int32, c *conn, d Dir) bool {
	h := &c.h[d]
	if !h.rackAdvanced {
		return false
	}
	h.rackAdvanced = false
	now := s.k.Now()
	t := h.rackDetectLoss(now)
	if t > 0 {
		s.arm(ci, d, tREO, now+min(t+timeoutMin, h.rto))
	}
	return t > 0
}

// rackReoTimeout is tcp_rack_reo_timeout: the reordering window expired.
func (s *Stack) rackReoTimeout(ci int32, c *conn, d Dir) {
	h := &c.h[d]
	prior := h.inFlight()
	h.rackDetectLoss(s.k.Now())
	if prior != h.inFlight() {
		if h.ca != caRecovery {
			h.enterRecovery()
			h.cwndReduction(1, 0, 0)
		}
		s.xmitRetransmitQueue(ci, c, d)
	}
	if h.tKind != tRTO {
		s.rearmRTO(ci, c, d)
	}
}

// retransmitSeg is tcp_retransmit_skb.
func (s *Stack) retransmitSeg(ci int32, c *conn, d Dir, q int32) {
	h := &c.h[d]
	s.xmitData(ci, c, d, q)
	h.seg(q).flags |= sRetrans | sEver
	h.retransOut++
	if h.retransStamp < 0 {
		h.retransStamp = s.k.Now()
	}
	c.st.Retransmits++
	s.st.Retransmits++
}

// xmitRetransmitQueue is net/ipv4/tcp_output.c tcp_xmit_retransmit_queue: resend
// segments marked lost, oldest first, as cwnd allows.
func (s *Stack) xmitRetransmitQueue(ci int32, c *conn, d Dir) {
	h := &c.h[d]
	for q := h.una; q < h.nxt; q++ {
		if h.cwnd-h.inFlight() <= 0 || h.retransOut >= h.lostOut {
			return
		}
		if f := h.seg(q).flags; f&sLost == 0 || f&(sSacked|sRetrans) != 0 {
			continue
		}
		s.retransmitSeg(ci, c, d, q)
		if h.ca != caLoss {
			c.st.FastRetransmits++
			s.st.FastRetransmits++
		}
		if h.inCwndReduction() {
			h.prrOut++
		}
		if q == h.una && h.tKind != tREO {
			s.arm(ci, d, tRTO, s.k.Now()+h.rto)
		}
	}
}

// rearmRTO is tcp_rearm_rto: the RTO counts from the head's transmission when it
// replaces a probe or reordering timer.
func (s *Stack) rearmRTO(ci int32, c *conn, d Dir) {
	h := &c.h[d]
	if h.packetsOut() == 0 {
		h.tKind = tNone
		return
	}
	now := s.k.Now()
	rto := h.rto
	if h.tKind == tREO || h.tKind == tTLP {
		rto = max(h.rtoDelta(now), 1)
	}
	s.arm(ci, d, tRTO, now+min(rto, s.cfg.MaxRTO))
}

// setXmitTimer is tcp_set_xmit_timer.
func (s *Stack) setXmitTimer(ci int32, c *conn, d Dir) {
	if !s.scheduleLossProbe(ci, c, d, true) {
		s.rearmRTO(ci, c, d)
	}
}

// scheduleLossProbe is net/ipv4/tcp_output.c tcp_schedule_loss_probe: in Open or CWR,
// probe after PTO = 2·SRTT, plus TCP_RTO_MIN when one segment is out (for a delayed
// ACK) else TCP_TIMEOUT_MIN, never later than the RTO would fire.
func (s *Stack) scheduleLossProbe(ci int32, c *conn, d Dir, advancingRTO bool) bool {
	h := &c.h[d]
	if h.packetsOut() == 0 || (h.ca != caOpen && h.ca != caCWR) {
		return false
	}
	now := s.k.Now()
	timeout := s.cfg.InitRTO
	if h.srtt != 0 {
		timeout = h.srtt >> 2
		if h.packetsOut() == 1 {
			timeout += s.cfg.MinRTO
		} else {
			timeout += timeoutMin
		}
	}
	rtoDelta := h.rto
	if !advancingRTO {
		rtoDelta = h.rtoDelta(now)
	}
	if rtoDelta > 0 {
		timeout = min(timeout, rtoDelta)
	}
	s.arm(ci, d, tTLP, now+timeout)
	return true
}

// sendLossProbe is tcp_send_loss_probe: send new data if any (ignoring cwnd), else
// resend the last segment; one probe per tail-loss episode.
func (s *Stack) sendLossProbe(ci int32, c *conn, d Dir) {
	h := &c.h[d]
	if h.tlpHigh < 0 {
		h.tlpRetrans = false
		sent := false
		if h.nxt < h.end {
			s.newData(ci, c, d)
			sent = true
		} else if h.packetsOut() > 0 {
			q := h.nxt - 1
			s.xmitData(ci, c, d, q) // __tcp_retransmit_skb: not counted in retrans_out
			h.seg(q).flags |= sEver
			c.st.Retransmits++
			s.st.Retransmits++
			h.tlpRetrans, sent = true, true
		}
		if sent {
			h.tlpHigh = h.nxt
			c.st.TLPs++
			s.st.TLPs++
			h.tKind = tNone // so the RTO below restarts from now
		}
	}
	s.rearmRTO(ci, c, d)
}

// processTLPAck is tcp_process_tlp_ack: an ACK beyond the probe's snd_nxt after a
// retransmitted probe proves a loss that the probe repaired, so cwnd is reduced once
// (CWR); a pure duplicate means original and probe both arrived.
func (s *Stack) processTLPAck(ci int32, c *conn, d Dir, ack int32, flag int) {
	h := &c.h[d]
	switch {
	case ack < h.tlpHigh:
	case !h.tlpRetrans:
		h.tlpHigh = -1
	case ack > h.tlpHigh:
		h.initCwndReduction()
		h.setState(caCWR)
		h.endCwndReduction()
		h.tryKeepOpen()
	case flag&(flUnaAdvanced|flNotDup|flDataSacked) == 0:
		h.tlpHigh = -1
	}
}

// retransmitTimer is net/ipv4/tcp_timer.c tcp_retransmit_timer for established data:
// give up after tcp_retries2 (tcp_write_timeout), else enter Loss, resend the head and
// double the RTO up to TCP_RTO_MAX.
func (s *Stack) retransmitTimer(ci int32, c *conn, d Dir) {
	h := &c.h[d]
	if h.packetsOut() == 0 {
		return
	}
	h.tlpHigh = -1
	c.st.RTOs++
	s.st.RTOs++
	now := s.k.Now()
	if h.retransmits > 0 {
		start := h.retransStamp
		if start < 0 {
			start = h.seg(h.una).xmit
		}
		if now-start >= retriesTimeout(s.cfg.Retries2, s.cfg.MinRTO, s.cfg.MaxRTO) {
			s.fail(ci)
			return
		}
	}
	h.enterLoss(now)
	s.retransmitSeg(ci, c, d, h.una)
	h.backoff++
	h.retransmits++
	h.rto = min(h.rto*2, s.cfg.MaxRTO)
	s.arm(ci, d, tRTO, now+h.rto)
}

// retriesTimeout is the time retransmits_timed_out allows for boundary retransmissions
// of exponentially backed-off RTOs starting at TCP_RTO_MIN (linear once at TCP_RTO_MAX):
// 924.6 s for tcp_retries2 = 15.
func retriesTimeout(boundary int, rtoMin, rtoMax sim.Time) sim.Time {
	thresh := 0
	for (rtoMax/rtoMin)>>(thresh+1) > 0 {
		thresh++ // ilog2(TCP_RTO_MAX / TCP_RTO_MIN)
	}
	if boundary <= thresh {
		return sim.Time((2<<boundary)-1) * rtoMin
	}
	return sim.Time((2<<thresh)-1)*rtoMin + sim.Time(boundary-thresh)*rtoMax
}

// enterLoss is net/ipv4/tcp_input.c tcp_enter_loss: mark the head and every un-SACKed
// segment not sent within the last RACK RTT lost (tcp_timeout_mark_lost), reduce
// ssthresh once per window, cwnd = in flight + 1 (so 1 when all is lost).
func (h *half) enterLoss(now sim.Time) {
	for q := h.una; q < h.nxt; q++ {
		if q != h.una && h.rackRTT-(now-h.seg(q).xmit) > 0 {
			continue
		}
		h.markLost(q)
	}
	if h.ca <= caDisorder || h.highSeq <= h.una || (h.ca == caLoss && h.retransmits == 0) {
		h.priorCwnd = h.cwnd
		h.ssthresh = h.ccSsthresh()
	}
	h.cwnd = h.inFlight() + 1
	h.cwndCnt = 0
	if h.ca <= caDisorder && h.sackedOut >= tcpReordering {
		h.reordering = min(h.reordering, tcpReordering)
	}
	h.setState(caLoss)
	h.highSeq = h.nxt
}
