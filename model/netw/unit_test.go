package netw

import (
	"testing"
	"time"

	"trafficlab/sim"
)

// RFC 6298 as Linux computes it (tcp_rtt_estimator, __tcp_set_rto): the first sample R
// gives SRTT = R, RTTVAR = R/2; later ones SRTT += (R-SRTT)/8 and, when R is above
// SRTT, RTTVAR += (|R-SRTT| - RTTVAR)/4; RTO = SRTT + max(4·RTTVAR, TCP_RTO_MIN).
func TestRTTEstimator(t *testing.T) {
	ms := func(x float64) sim.Time { return sim.Time(x * 1e6) }
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name    string
		samples []float64 // ms, non-decreasing so that Linux and the RFC agree
		srtt    float64
		rto     float64
	}{
		{"one sample below the floor", []float64{2}, 2, 202},
		{"one large sample", []float64{100}, 100, 300},
		{"rising", []float64{100, 300}, 125, 125 + 4*(0.75*50+0.25*200)},
		{"constant keeps the floor", []float64{10, 10, 10, 10, 10}, 10, 210},
	} {
		var h half
		h.reset(&cfg)
		for i, r := range tc.samples {
			h.una, h.nxt = int32(i), int32(i+1) // one window of data per sample
			h.ackUpdateRTT(0, flDataAcked, ms(r), -1, ms(r), 0, &cfg)
		}
		if got := float64(h.srtt>>3) / 1e6; got != tc.srtt {
			t.Fatalf("%s: srtt %v ms, want %v", tc.name, got, tc.srtt)
		}
		if got := float64(h.rto) / 1e6; got != tc.rto {
			t.Fatalf("%s: rto %v ms, want %v", tc.name, got, tc.rto)
		}
	}
}

// Karn's rule with timestamps: an ACK of retransmitted data gives no timing sample,
// but its TSecr does, in timestamp ticks (1 ms), at least one tick.
func TestRTTFromTimestampEcho(t *testing.T) {
	cfg := DefaultConfig()
	var h half
	h.reset(&cfg)
	now := sim.Duration(1234567 * time.Microsecond)
	ok, rtt := h.ackUpdateRTT(now, flDataAcked|flRetransDataAcked, -1, -1, -1, tsval(now)-7, &cfg)
	if !ok || rtt != 7*tsTick || h.srtt>>3 != 7*tsTick {
		t.Fatalf("sample %v (ok %v), srtt %v; want 7 ms", rtt, ok, h.srtt>>3)
	}
	if ok, _ := h.ackUpdateRTT(now, flDataSacked, -1, -1, -1, tsval(now)-7, &cfg); ok {
		t.Fatal("an ACK that acks nothing new must not take a timestamp sample")
	}
	h.reset(&cfg)
	if _, rtt := h.ackUpdateRTT(now, flDataAcked, -1, -1, -1, tsval(now), &cfg); rtt != tsTick {
		t.Fatalf("same-tick echo gave %v, want 1 ms", rtt)
	}
}

// The receiver's SACK blocks (tcp_sack_new_ofo_skb, tcp_sack_maybe_coalesce,
// tcp_sack_remove): the block with the newest segment first, then most recent first,
// at most TCP_NUM_SACKS remembered; the ACK carries the first three.
func TestSackBlocks(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name     string
		arrivals []int32
		want     []block
	}{
		{"one hole", []int32{1, 2, 3}, []block{{1, 4}}},
		{"two holes, newest first", []int32{2, 4, 5}, []block{{4, 6}, {2, 3}}},
		{"extending an older block moves it first", []int32{2, 4, 3}, []block{{2, 5}}},
		{"older block moves to the front", []int32{2, 5, 8, 3}, []block{{2, 4}, {8, 9}, {5, 6}}},
		{"five holes keep four", []int32{2, 4, 6, 8, 10}, []block{{10, 11}, {8, 9}, {6, 7}, {4, 5}}},
		{"hole filled removes blocks", []int32{2, 4, 0, 1}, []block{{4, 5}}},
		{"all filled", []int32{1, 2, 0}, nil},
	} {
		b := newBed(cfg, 1)
		c := b.s.Open(b.up, b.down)
		b.k.Run(10)
		conn := &b.s.conns[c]
		r := &conn.h[Up]
		for _, q := range tc.arrivals {
			b.s.onData(int32(c), conn, Up, &packet{seq: q, dir: Up})
		}
		got := r.sacks[:r.nSacks]
		if len(got) != len(tc.want) {
			t.Fatalf("%s: blocks %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: blocks %v, want %v", tc.name, got, tc.want)
			}
		}
		var p packet
		ackInfo(conn, &p, Up)
		if int(p.nsack) != min(len(tc.want), 3) {
			t.Fatalf("%s: ACK carries %d blocks", tc.name, p.nsack)
		}
	}
}

// CA_EVENT_TX_START shifts CUBIC's epoch by the idle time (cubictcp_cwnd_event), never
// past now.
func TestCubicIdleShift(t *testing.T) {
	ca := cubic{epoch: true, epochStart: 100}
	ca.txStart(1000, 400)
	if ca.epochStart != 700 {
		t.Fatalf("epoch start %v, want 700", ca.epochStart)
	}
	ca = cubic{epoch: true, epochStart: 900}
	ca.txStart(1000, 200)
	if ca.epochStart != 1000 {
		t.Fatalf("epoch start %v, want capped at now", ca.epochStart)
	}
}

// A probe with unsent data queued sends new data, not a retransmission
// (tcp_send_loss_probe).
func TestTailLossProbeSendsNewData(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	b := newBed(DefaultConfig(), L)
	c := b.establish(t)
	T := b.k.Now() + dur(10*time.Millisecond)
	b.k.Run(T)
	dropNext(b.up, 10)
	b.s.Send(c, Up, 15*1448, 1) // the window (10) is filled and lost; 5 wait
	pto := 2*(2*L) + dur(2*time.Millisecond)
	b.k.Run(T + pto + 1)
	h := &b.s.conns[c].h[Up]
	if st := b.s.ConnStats(c); st.TLPs != 1 || st.Retransmits != 0 || h.nxt != 1+11 {
		t.Fatalf("after the probe: %+v, snd_nxt %d; want one new segment", st, h.nxt)
	}
	b.k.Run(T + dur(5*time.Second))
	if b.r.when(Up, 1) < 0 {
		t.Fatal("message never delivered")
	}
}

// The server's request timer resends the SYN-ACK at 1 s by itself when the client's
// retransmitted SYN is lost too.
func TestSynAckTimer(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	b := newBed(DefaultConfig(), L)
	dropNext(b.down, 1) // the SYN-ACK
	var n int
	b.up.drop = func() bool { n++; return n == 2 } // the client's SYN retransmission
	c := b.s.Open(b.up, b.down)
	b.s.Send(c, Up, 100, 1)
	b.k.Run(dur(5 * time.Second))
	b.mustAt(t, Up, 1, L+dur(time.Second)+2*L)
}

// bictcp_update as Linux has it: while cwnd is unchanged, cnt is recomputed only after
// HZ/32, even when the Reno estimate (one segment per 8(1+β)/3(1-β) = 15/8·cwnd ACKs)
// has already overtaken cwnd; the ACKs still count towards that estimate, and when cnt
// is recomputed it follows the estimate (cnt = cwnd/(tcp_cwnd-cwnd)). Then
// tcp_cong_avoid_ai turns the credit gathered at the large cnt into one segment only.
func TestCubicUpdateHoldsForHZ32(t *testing.T) {
	const ms = sim.Time(time.Millisecond)
	T0 := 1000 * ms
	// Epoch starts at cwnd = Wmax = 8: K = 0 and C·t³ < 1 segment for t < 1.3 s, so the
	// cubic target is cwnd itself and cnt = 100·cwnd.
	ca := cubic{lastMaxCwnd: 8, delayMin: 10 * ms}
	ca.update(T0, 8, 1)
	if !ca.epoch || ca.cnt != 800 || ca.tcpCwnd != 8 || ca.ackCnt != 1 {
		t.Fatalf("epoch start: %+v", ca)
	}
	for i := sim.Time(1); i <= 31; i++ { // one ACK a millisecond
		ca.update(T0+i*ms, 8, 1)
		if ca.cnt != 800 {
			t.Fatalf("cnt %d after %v, want 800 until HZ/32 has passed", ca.cnt, i*ms)
		}
	}
	if ca.tcpCwnd != 8 || ca.ackCnt != 32 {
		t.Fatalf("Reno estimate updated inside HZ/32: %+v", ca)
	}
	// 33 ACKs at 15 per segment: the estimate is 10, so cnt = 8/(10-8) = 4.
	ca.update(T0+32*ms, 8, 1)
	if ca.tcpCwnd != 10 || ca.ackCnt != 3 || ca.cnt != 4 {
		t.Fatalf("after HZ/32: tcp_cwnd %d ack_cnt %d cnt %d, want 10 3 4", ca.tcpCwnd, ca.ackCnt, ca.cnt)
	}
	// The 32 ACKs credited at w = 800 yield one segment, not 32/4 = 8.
	h := half{cwnd: 8, cwndCnt: 32}
	h.congAvoidAI(4, 1)
	if h.cwnd != 9 || h.cwndCnt != 1 {
		t.Fatalf("tcp_cong_avoid_ai: cwnd %d cnt %d, want 9 1", h.cwnd, h.cwndCnt)
	}
}
