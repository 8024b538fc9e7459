package netw

import (
	"math"

	"trafficlab/sim"
)

// Congestion control: slow start and Reno from net/ipv4/tcp_cong.c, CUBIC from
// net/ipv4/tcp_cubic.c (without HyStart). CUBIC's cubic term is computed in floating
// point rather than Linux's fixed point; its structure and constants are Linux's.
const (
	cubicBeta      = 717 // beta = 717/1024 ≈ 0.7 (BICTCP_BETA_SCALE 1024)
	cubicBetaScale = 8 * (1024 + cubicBeta) / 3 / (1024 - cubicBeta)
	cubicC         = 41 * 10 / 1024.0 // bic_scale 41: cube_rtt_scale/2^10 ≈ 0.4
)

// cubic is struct bictcp.
type cubic struct {
	reno        bool
	epoch       bool // epoch_start != 0
	cnt         uint32
	lastMaxCwnd uint32
	lastCwnd    uint32
	originPoint uint32
	tcpCwnd     uint32
	ackCnt      uint32
	lastTime    sim.Time
	epochStart  sim.Time
	delayMin    sim.Time
	k           float64 // seconds
}

// reset is bictcp_reset (on entering Loss).
func (ca *cubic) reset() { *ca = cubic{reno: ca.reno} }

// txStart is cubictcp_cwnd_event(CA_EVENT_TX_START): after an idle period, shift the
// epoch so that cwnd keeps following the cubic curve.
func (ca *cubic) txStart(now, lsndtime sim.Time) {
	if ca.reno || !ca.epoch {
		return
	}
	if delta := now - lsndtime; delta > 0 {
		ca.epochStart = min(ca.epochStart+delta, now)
	}
}

// pktsAcked is cubictcp_acked: track the minimum delay, ignoring samples right after
// a window reduction.
func (ca *cubic) pktsAcked(now, rtt sim.Time) {
	if ca.reno || rtt < 0 || (ca.epoch && now-ca.epochStart < cubicOneSecond) {
		return
	}
	delay := max(rtt, sim.Time(1000))
	if ca.delayMin == 0 || ca.delayMin > delay {
		ca.delayMin = delay
	}
}

// ccSsthresh is cubictcp_recalc_ssthresh (with fast convergence) or tcp_reno_ssthresh.
func (h *half) ccSsthresh() int32 {
	cwnd := uint32(h.cwnd)
	if h.cc.reno {
		return max(int32(cwnd>>1), 2)
	}
	ca := &h.cc
	ca.epoch = false
	if cwnd < ca.lastMaxCwnd {
		ca.lastMaxCwnd = cwnd * (1024 + cubicBeta) / (2 * 1024)
	} else {
		ca.lastMaxCwnd = cwnd
	}
	return max(int32(cwnd*cubicBeta/1024), 2)
}

// congAvoid is cubictcp_cong_avoid or tcp_reno_cong_avoid: nothing unless the flow is
// cwnd-limited; slow start below ssthresh, then additive increase at the rate the
// algorithm sets.
func (h *half) congAvoid(now sim.Time, acked int32) {
	if acked <= 0 || !h.cwndLimited() {
		return
	}
	if h.cwnd < h.ssthresh {
		acked = h.slowStart(acked)
		if acked == 0 {
			return
		}
	}
	w := h.cwnd
	if !h.cc.reno {
		h.cc.update(now, uint32(h.cwnd), uint32(acked))
		w = int32(h.cc.cnt)
	}
	h.congAvoidAI(w, acked)
}

// slowStart is tcp_slow_start: cwnd grows by the segments acked, up to ssthresh; the
// rest is returned for congestion avoidance.
func (h *half) slowStart(acked int32) int32 {
	cwnd := min(h.cwnd+acked, h.ssthresh)
	acked -= cwnd - h.cwnd
	h.cwnd = cwnd
	return acked
}

// congAvoidAI is tcp_cong_avoid_ai: cwnd += 1 per w segments acked.
func (h *half) congAvoidAI(w, acked int32) {
	if h.cwndCnt >= w {
		h.cwndCnt = 0
		h.cwnd++
	}
	h.cwndCnt += acked
	if h.cwndCnt >= w {
		delta := h.cwndCnt / w
		h.cwndCnt -= delta * w
		h.cwnd += delta
	}
}

// update is bictcp_update: cnt, the number of ACKed segments per cwnd increment, so
// that cwnd follows W(t) = C(t-K)³ + Wmax with K = ∛(Wmax(1-β)/C), t counted from the
// epoch start plus the minimum delay, and no slower than Reno would grow (TCP
// friendliness), and at most 1 per 2 segments acked.
//
// As in Linux, cnt is not recomputed while cwnd is unchanged for HZ/32 (31 ms), the
// Reno estimate counts only ACKs already received, and tcp_cong_avoid_ai drops the
// credits gathered at the large cnt. With small windows this makes CUBIC grow slower
// than its Reno-friendly target: once cwnd catches the estimate, cnt = 100·cwnd holds
// it for 31 ms (three round trips at 10 ms), and then only one segment of the credit
// counts. Together with floor(0.7·cwnd), which costs a β = 0.7 sender more than Reno's
// floor(cwnd/2), Linux CUBIC keeps a smaller window than Reno on small-BDP lossy paths
// (0.80 to 0.85 of it at 3 % loss and 10 to 50 ms RTT). That is Linux's behaviour, reported
// upstream in August 2024 ("tcp_cubic: fix to achieve at least the same throughput as
// Reno", netdev); the model keeps it.
func (ca *cubic) update(now sim.Time, cwnd, acked uint32) {
	ca.ackCnt += acked
	if cwnd == 0 || (ca.lastCwnd == cwnd && now-ca.lastTime <= cubicHZ32) {
		return
	}
	// The cubic function is recomputed at most once per jiffy.
	if !ca.epoch || now/jiffy != ca.lastTime/jiffy {
		ca.lastCwnd, ca.lastTime = cwnd, now
		if !ca.epoch {
			ca.epoch, ca.epochStart = true, now
			ca.ackCnt, ca.tcpCwnd = acked, cwnd
			if ca.lastMaxCwnd <= cwnd {
				ca.k, ca.originPoint = 0, cwnd
			} else {
				ca.k = math.Cbrt(float64(ca.lastMaxCwnd-cwnd) / cubicC)
				ca.originPoint = ca.lastMaxCwnd
			}
		}
		t := (now - ca.epochStart + ca.delayMin).Seconds()
		offs := math.Abs(t - ca.k)
		delta := uint32(cubicC * offs * offs * offs)
		target := ca.originPoint + delta
		if t < ca.k {
			target = ca.originPoint - delta
		}
		if target > cwnd {
			ca.cnt = cwnd / (target - cwnd)
		} else {
			ca.cnt = 100 * cwnd // very small increment
		}
		if ca.lastMaxCwnd == 0 && ca.cnt > 20 {
			ca.cnt = 20 // 5% per RTT while the bandwidth is unknown
		}
	}
	// TCP friendliness: the window Reno with the same β would have.
	delta := (cwnd * cubicBetaScale) >> 3
	for delta > 0 && ca.ackCnt > delta {
		ca.ackCnt -= delta
		ca.tcpCwnd++
	}
	if ca.tcpCwnd > cwnd {
		if maxCnt := cwnd / (ca.tcpCwnd - cwnd); ca.cnt > maxCnt {
			ca.cnt = maxCnt
		}
	}
	ca.cnt = max(ca.cnt, 2)
}
