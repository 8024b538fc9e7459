package netw

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"trafficlab/sim"
)

type delivery struct {
	at  sim.Time
	c   ConnID
	d   Dir
	msg int32
}

// rec records what the stack reports; onDeliver may answer (as the engine does).
type rec struct {
	k         *sim.Kernel
	got       []delivery
	failed    []delivery
	lost      []int32 // messages Failed reported undelivered
	onDeliver func(c ConnID, d Dir, msg int32)
}

func (r *rec) Delivered(c ConnID, d Dir, msg int32) {
	r.got = append(r.got, delivery{r.k.Now(), c, d, msg})
	if r.onDeliver != nil {
		r.onDeliver(c, d, msg)
	}
}

func (r *rec) Failed(c ConnID, lost []int32) {
	r.failed = append(r.failed, delivery{at: r.k.Now(), c: c})
	r.lost = append(r.lost, lost...)
}

// when returns the delivery time of msg in direction d, or -1.
func (r *rec) when(d Dir, msg int32) sim.Time {
	for _, g := range r.got {
		if g.d == d && g.msg == msg {
			return g.at
		}
	}
	return -1
}

type bed struct {
	k        *sim.Kernel
	s        *Stack
	r        *rec
	up, down *Path
}

func newBed(cfg Config, lat sim.Time) *bed {
	k := sim.New()
	r := &rec{k: k}
	b := &bed{k: k, s: NewStack(k, cfg, r), r: r,
		up: NewPath(sim.Stream(1, "up")), down: NewPath(sim.Stream(1, "down"))}
	b.up.Latency, b.down.Latency = lat, lat
	return b
}

func dur(d time.Duration) sim.Time { return sim.Duration(d) }

// dropNext makes p lose its next n packets, whatever its loss rate.
func dropNext(p *Path, n int) {
	p.drop = func() bool {
		if n > 0 {
			n--
			return true
		}
		return false
	}
}

func (b *bed) mustAt(t *testing.T, d Dir, msg int32, want sim.Time) {
	t.Helper()
	if got := b.r.when(d, msg); got != want {
		t.Fatalf("message %d (dir %d) delivered at %v, want %v", msg, d, got, want)
	}
}

// establish opens a connection, sends request 0 (1 segment) and its reply, and runs
// until both arrived: 3L and 4L on a lossless path. Both ends then have RTT samples of
// exactly 2L.
func (b *bed) establish(t *testing.T) ConnID {
	t.Helper()
	L := b.up.Latency
	c := b.s.Open(b.up, b.down)
	b.s.Send(c, Up, 100, 0)
	b.r.onDeliver = func(c ConnID, d Dir, msg int32) {
		if d == Up && msg == 0 {
			b.s.Send(c, Down, 100, 0)
		}
	}
	b.k.Run(4*L + 1)
	b.r.onDeliver = nil
	b.mustAt(t, Up, 0, 3*L)
	b.mustAt(t, Down, 0, 4*L)
	return c
}

// Lossless, constant latency L: a request sent right after Open arrives at 3L (SYN,
// SYN-ACK, then the request with the client's ACK); a reply sent at delivery arrives L
// later; a later request on the established connection takes exactly L.
func TestLosslessTiming(t *testing.T) {
	for _, L := range []sim.Time{dur(10 * time.Microsecond), dur(100 * time.Microsecond), dur(time.Millisecond), dur(20 * time.Millisecond)} {
		b := newBed(DefaultConfig(), L)
		c := b.s.Open(b.up, b.down)
		b.s.Send(c, Up, 800, 1)
		b.r.onDeliver = func(c ConnID, d Dir, msg int32) {
			if d == Up && msg == 1 {
				b.s.Send(c, Down, 1200, 1)
			}
		}
		b.k.Run(dur(time.Second))
		b.mustAt(t, Up, 1, 3*L)
		b.mustAt(t, Down, 1, 4*L)
		T := b.k.Now()
		b.s.Send(c, Up, 500, 2)
		b.k.Run(T + 10*L)
		b.mustAt(t, Up, 2, T+L)
		if st := b.s.Stats(); st.Retransmits+st.SynRetransmits != 0 {
			t.Fatalf("L=%v: retransmissions on a lossless path: %+v", L, st)
		}
		// Application-limited request/response never fills the window, so cwnd does
		// not grow (tcp_is_cwnd_limited).
		if cw := b.s.conns[c].h[Up].cwnd; cw != 10 {
			t.Fatalf("L=%v: cwnd grew to %d without being used", L, cw)
		}
	}
}

// A message of n segments on a fresh connection needs the slow-start rounds of the
// doubling rule: with IW 10 and one ACK per segment, round k sends 10·2^k segments, so
// the last segment leaves in the first round r with 10·(2^(r+1)-1) ≥ n and arrives
// 3L + r·2L after Open.
func TestSlowStartRounds(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	cfg := DefaultConfig()
	for _, n := range []int{1, 10, 11, 20, 30, 31, 70, 100, 1000} {
		r := 0
		for cfg.InitCwnd*(1<<(r+1)-1) < n {
			r++
		}
		b := newBed(cfg, L)
		c := b.s.Open(b.up, b.down)
		b.s.Send(c, Up, n*cfg.MSS, 7)
		b.k.Run(dur(time.Second))
		b.mustAt(t, Up, 7, 3*L+sim.Time(r)*2*L)
	}
}

// After idle, tcp_cwnd_restart halves cwnd once per RTO of idle time beyond the first,
// never below the initial window (RFC 2861).
func TestIdleRestart(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	for _, idleRTOs := range []int{0, 1, 2, 3, 10} {
		b := newBed(DefaultConfig(), L)
		c := b.s.Open(b.up, b.down)
		b.s.Send(c, Up, 300*1448, 0)
		b.k.Run(dur(50 * time.Millisecond)) // done by then, idle for less than an RTO
		h := &b.s.conns[c].h[Up]
		cwnd, rto := h.cwnd, h.rto
		if cwnd < 80 {
			t.Fatalf("cwnd only %d after a 300-segment transfer", cwnd)
		}
		T := h.lsndtime + rto*sim.Time(idleRTOs) + rto/2
		b.k.Run(T)
		b.s.Send(c, Up, 100, 1)
		want := cwnd
		if idleRTOs > 0 { // idle > RTO: halve per further RTO, floor at IW
			for i := 1; i < idleRTOs+1 && want > 10; i++ {
				want >>= 1
			}
			want = max(want, 10)
		}
		// The send itself is counted after the restart; cwnd is what it was set to.
		if h.cwnd != want {
			t.Fatalf("idle %d.5 RTOs: cwnd %d → %d, want %d", idleRTOs, cwnd, h.cwnd, want)
		}
	}
}

// RFC 6298 with Linux's variance floor, for identical samples R (2L here) after the
// handshake: SRTT = R, RTTVAR term = max(2R, 200 ms) and stays at the floor, so
// RTO = R + 200 ms when 2R ≤ 200 ms.
func rtoAfterSamples(R, minRTO sim.Time) sim.Time { return R + max(2*R, minRTO) }

// A single lost data segment on an idle connection is repaired by the tail loss probe,
// scheduled at 2·SRTT + TCP_RTO_MIN (one segment out) but never later than the RTO:
// with small RTTs the RTO (SRTT + 200 ms) is the earlier, so the probe goes then.
func TestTailLossProbeOneSegment(t *testing.T) {
	for _, L := range []sim.Time{dur(100 * time.Microsecond), dur(time.Millisecond), dur(10 * time.Millisecond)} {
		b := newBed(DefaultConfig(), L)
		c := b.establish(t)
		R := 2 * L
		pto := 2*R + dur(200*time.Millisecond)
		rto := rtoAfterSamples(R, dur(200*time.Millisecond))
		if h := &b.s.conns[c].h[Up]; h.srtt>>3 != R || h.rto != rto {
			t.Fatalf("L=%v: srtt %v rto %v, want %v and %v", L, h.srtt>>3, h.rto, R, rto)
		}
		T := b.k.Now() + dur(10*time.Millisecond)
		b.k.Run(T)
		dropNext(b.up, 1)
		b.s.Send(c, Up, 100, 1)
		b.k.Run(T + dur(2*time.Second))
		b.mustAt(t, Up, 1, T+min(pto, rto)+L)
		if st := b.s.ConnStats(c); st.TLPs != 1 || st.RTOs != 0 {
			t.Fatalf("L=%v: repaired by %+v, want one TLP and no RTO", L, st)
		}
	}
}

// With more than one segment out the probe timeout is 2·SRTT + TCP_TIMEOUT_MIN (2 ms).
// Both segments of a message are lost; the probe resends the last, whose SACK lets
// RACK mark the first lost (it was sent before a delivered segment and RACK.rtt has
// passed); fast recovery resends it one round trip after the probe.
func TestTailLossProbeTwoSegments(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	b := newBed(DefaultConfig(), L)
	c := b.establish(t)
	T := b.k.Now() + dur(10*time.Millisecond)
	b.k.Run(T)
	dropNext(b.up, 2)
	b.s.Send(c, Up, 2000, 1)
	b.k.Run(T + dur(time.Second))
	pto := 2*(2*L) + dur(2*time.Millisecond)
	b.mustAt(t, Up, 1, T+pto+3*L)
	h := &b.s.conns[c].h[Up]
	if st := b.s.ConnStats(c); st.TLPs != 1 || st.FastRetransmits != 1 || st.RTOs != 0 {
		t.Fatalf("stats %+v, want 1 TLP, 1 fast retransmit, no RTO", st)
	}
	if want := int32(10 * cubicBeta / 1024); h.cwnd != want {
		t.Fatalf("cwnd after recovery %d, want %d", h.cwnd, want)
	}
}

// A lost SYN costs exactly the initial RTO, 1 s; so does a lost SYN-ACK (the server's
// request timer and the client's SYN retransmission both answer at 1 s + L).
func TestHandshakeLoss(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	for _, lose := range []string{"SYN", "SYN-ACK", "both SYNs"} {
		b := newBed(DefaultConfig(), L)
		want := dur(time.Second) + 3*L
		switch lose {
		case "SYN":
			dropNext(b.up, 1)
		case "SYN-ACK":
			dropNext(b.down, 1)
		case "both SYNs":
			dropNext(b.up, 2)
			want = dur(3*time.Second) + 3*L // retransmissions at 1 s and 3 s
		}
		c := b.s.Open(b.up, b.down)
		b.s.Send(c, Up, 100, 1)
		var cw int32 // the client's cwnd before any ACK of data
		b.r.onDeliver = func(ConnID, Dir, int32) { cw = b.s.conns[c].h[Up].cwnd }
		b.k.Run(dur(10 * time.Second))
		b.mustAt(t, Up, 1, want)
		// tcp_init_transfer: more than one SYN retransmission leaves cwnd at 1.
		if want := map[bool]int32{true: 1, false: 10}[lose == "both SYNs"]; cw != want {
			t.Fatalf("%s lost: initial cwnd %d, want %d", lose, cw, want)
		}
	}
}

// If the client's ACK is lost and no data is queued, the first data segment (which
// carries the ACK) completes the handshake at the server.
func TestLostFinalAckDataCompletesHandshake(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	b := newBed(DefaultConfig(), L)
	var n int
	b.up.drop = func() bool { n++; return n == 2 } // SYN passes, the ACK is lost
	c := b.s.Open(b.up, b.down)
	b.k.Run(dur(50 * time.Millisecond))
	if b.s.conns[c].srv != srvSynRcvd {
		t.Fatalf("server state %d, want SYN_RECV", b.s.conns[c].srv)
	}
	b.s.Send(c, Up, 100, 1)
	b.k.Run(dur(100 * time.Millisecond))
	b.mustAt(t, Up, 1, dur(50*time.Millisecond)+L)
	b.s.Send(c, Down, 100, 1)
	b.k.Run(dur(200 * time.Millisecond))
	b.mustAt(t, Down, 1, dur(100*time.Millisecond)+L)
}

// A hole with three later segments SACKed is fast-retransmitted when the third SACK
// arrives (RACK's reordering window is 0 once tcp_reordering segments are SACKed), one
// round trip after the segments left; everything behind the hole is delivered at the
// same instant as the hole (head-of-line blocking).
func TestFastRetransmitHeadOfLine(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	for _, cfg := range []Config{DefaultConfig(), {Reno: true}} {
		b := newBed(cfg, L)
		c := b.establish(t)
		T := b.k.Now() + dur(10*time.Millisecond)
		b.k.Run(T)
		h := &b.s.conns[c].h[Up]
		before := h.cwnd
		dropNext(b.up, 1)
		b.s.Send(c, Up, 100, 1)    // lost
		b.s.Send(c, Up, 3*1448, 2) // 3 segments behind it
		b.s.Send(c, Up, 1448, 3)   // and one more message
		b.k.Run(T + dur(time.Second))
		b.mustAt(t, Up, 1, T+3*L)
		b.mustAt(t, Up, 2, T+3*L)
		b.mustAt(t, Up, 3, T+3*L)
		st := b.s.ConnStats(c)
		if st.FastRetransmits != 1 || st.TLPs != 0 || st.RTOs != 0 {
			t.Fatalf("stats %+v, want exactly one fast retransmit", st)
		}
		// One reduction: CUBIC β = 717/1024, Reno 1/2 (tcp_end_cwnd_reduction).
		want := before * cubicBeta / 1024
		if cfg.Reno {
			want = before / 2
		}
		if h.cwnd != want || h.ssthresh != want {
			t.Fatalf("reno=%v: cwnd %d ssthresh %d after recovery from %d, want %d", cfg.Reno, h.cwnd, h.ssthresh, before, want)
		}
	}
}

// With only two segments SACKed above a hole RACK waits min_rtt/4 past RACK.rtt
// (tcp_rack_reo_wnd) plus TCP_TIMEOUT_MIN before marking it lost.
func TestRackReorderingWindow(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	b := newBed(DefaultConfig(), L)
	c := b.establish(t)
	T := b.k.Now() + dur(10*time.Millisecond)
	b.k.Run(T)
	dropNext(b.up, 1)
	b.s.Send(c, Up, 100, 1)
	b.s.Send(c, Up, 2*1448, 2)
	b.k.Run(T + dur(time.Second))
	minRTT := 2 * L
	reoTimer := T + 2*L + minRTT/4 + dur(2*time.Millisecond)
	b.mustAt(t, Up, 1, reoTimer+L)
	b.mustAt(t, Up, 2, reoTimer+L)
}

// A segment overtaken by two later ones (reordering, not loss) is delivered without a
// retransmission: RACK waits min_rtt/4 while fewer than tcp_reordering segments are
// SACKed. The late, never-retransmitted segment tells the sender reordering happens
// (tcp_check_sack_reordering), and from then on RACK keeps its min_rtt/4 window even
// with three SACKed segments above a real hole.
func TestReorderingDetected(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	b := newBed(DefaultConfig(), L)
	c := b.establish(t)
	h := &b.s.conns[c].h[Up]
	T := b.k.Now() + dur(10*time.Millisecond)
	b.k.Run(T)
	b.up.Latency = L + L/2
	b.s.Send(c, Up, 100, 1) // arrives after the next two segments
	b.up.Latency = L
	b.s.Send(c, Up, 2*1448, 2)
	b.k.Run(T + dur(100*time.Millisecond))
	b.mustAt(t, Up, 1, T+L+L/2)
	b.mustAt(t, Up, 2, T+L+L/2)
	if st := b.s.ConnStats(c); !h.reordSeen || st.Retransmits != 0 {
		t.Fatalf("reordering seen %v, stats %+v: want seen and no retransmission", h.reordSeen, st)
	}
	T2 := b.k.Now()
	dropNext(b.up, 1)
	b.s.Send(c, Up, 100, 3)
	b.s.Send(c, Up, 3*1448, 4)
	b.k.Run(T2 + dur(time.Second))
	reo := (2 * L) / 4 // min_rtt/4
	want := T2 + 2*L + reo + dur(2*time.Millisecond) + L
	b.mustAt(t, Up, 3, want)
	b.mustAt(t, Up, 4, want)
}

// An RTO sets cwnd to 1 (tcp_enter_loss with nothing in flight), doubles the RTO on each
// consecutive timeout up to TCP_RTO_MAX, and the RTO never goes below TCP_RTO_MIN.
func TestRTOBackoff(t *testing.T) {
	for _, L := range []sim.Time{dur(10 * time.Microsecond), dur(2 * time.Millisecond)} {
		b := newBed(DefaultConfig(), L)
		c := b.establish(t)
		h := &b.s.conns[c].h[Up]
		rto0 := h.rto
		if rto0 < dur(200*time.Millisecond) {
			t.Fatalf("rto %v below TCP_RTO_MIN", rto0)
		}
		T := b.k.Now() + dur(10*time.Millisecond)
		b.k.Run(T)
		b.up.Loss, b.down.Loss = 1, 1
		b.s.Send(c, Up, 100, 1)
		// The probe goes at T+rto0 (capped by the RTO) and restarts the RTO: the k-th
		// timeout fires at T + rto0 + rto0·(2^k - 1) = T + 2^k·rto0, while below 120 s.
		for k := 1; k <= 8; k++ {
			at := T + rto0<<k
			b.k.Run(at)
			if got := b.s.ConnStats(c).RTOs; got != int64(k-1) {
				t.Fatalf("L=%v: %d RTOs before %v, want %d", L, got, at, k-1)
			}
			b.k.Run(at + 1)
			if got := b.s.ConnStats(c).RTOs; got != int64(k) {
				t.Fatalf("L=%v: %d RTOs at %v, want %d", L, got, at, k)
			}
			if h.cwnd != 1 || h.rto != min(rto0<<k, dur(120*time.Second)) {
				t.Fatalf("L=%v: after RTO %d cwnd %d rto %v", L, k, h.cwnd, h.rto)
			}
		}
		b.up.Loss, b.down.Loss = 0, 0
		b.k.Run(b.k.Now() + dur(200*time.Second))
		if b.r.when(Up, 1) < 0 {
			t.Fatalf("L=%v: message not delivered after the partition healed", L)
		}
	}
}

// SYN retries exhausted: retransmissions at 1, 3, 7, 15, 31 and 63 s, and the timer at
// 127 s gives up (tcp_syn_retries 6).
func TestSynRetriesExhausted(t *testing.T) {
	b := newBed(DefaultConfig(), dur(time.Millisecond))
	b.up.Loss = 1
	c := b.s.Open(b.up, b.down)
	b.s.Send(c, Up, 100, 41)
	b.s.Send(c, Up, 3000, 42)
	if got := b.s.Undelivered(c, nil); !slices.Equal(got, []int32{41, 42}) {
		t.Fatalf("undelivered %v before the handshake, want [41 42]", got)
	}
	b.k.Run(dur(200 * time.Second))
	if len(b.r.failed) != 1 || b.r.failed[0].c != c || b.r.failed[0].at != dur(127*time.Second) {
		t.Fatalf("failed %v, want connection %d at 127s", b.r.failed, c)
	}
	if !slices.Equal(b.r.lost, []int32{41, 42}) {
		t.Fatalf("Failed reported %v undelivered, want [41 42]", b.r.lost)
	}
	if st := b.s.Stats(); st.SynRetransmits != 6 {
		t.Fatalf("%d SYN retransmissions, want 6", st.SynRetransmits)
	}
}

// tcp_retries2 = 15: the connection gives up at the first RTO that fires 924.6 s or
// more after the first retransmission (retransmits_timed_out).
func TestRetries2Exhausted(t *testing.T) {
	b := newBed(DefaultConfig(), dur(time.Millisecond))
	c := b.establish(t)
	h := &b.s.conns[c].h[Up]
	rto0 := h.rto
	T := b.k.Now() + dur(10*time.Millisecond)
	b.k.Run(T)
	b.up.Loss, b.down.Loss = 1, 1
	b.s.Send(c, Up, 100, 1)
	// Probe at T+rto0; RTO k at T + rto0 + Σ_{i<k} min(rto0·2^i, 120 s); the first
	// retransmission is RTO 1, and RTO k gives up once it is ≥ 924.6 s after it.
	limit := retriesTimeout(15, dur(200*time.Millisecond), dur(120*time.Second))
	if limit != dur(924600*time.Millisecond) {
		t.Fatalf("retries2 timeout %v, want 924.6s", limit)
	}
	fire, r := T+rto0, rto0
	var first sim.Time
	for k := 1; ; k++ {
		fire += r
		r = min(2*r, dur(120*time.Second))
		if k == 1 {
			first = fire
		} else if fire-first >= limit {
			break
		}
	}
	b.k.Run(fire + dur(1000*time.Second))
	if len(b.r.failed) != 1 || b.r.failed[0].at != fire {
		t.Fatalf("failed %v, want once at %v", b.r.failed, fire)
	}
}

// Close forgets a connection at once: its packets in flight are ignored and its slot
// is reused by the next Open.
func TestCloseIgnoresInFlight(t *testing.T) {
	const L = sim.Time(time.Millisecond)
	b := newBed(DefaultConfig(), L)
	c := b.establish(t)
	b.s.Send(c, Up, 100, 1)
	b.s.Close(c)
	c2 := b.s.Open(b.up, b.down)
	if c2 != c {
		t.Fatalf("slot not reused: %d then %d", c, c2)
	}
	b.s.Send(c2, Up, 100, 2)
	T := b.k.Now()
	b.k.Run(T + dur(time.Second))
	if b.r.when(Up, 1) >= 0 {
		t.Fatal("a message of a closed connection was delivered")
	}
	b.mustAt(t, Up, 2, T+3*L)
}

// Many request/response exchanges over a lossy, jittery, rate-limited path: every
// message arrives exactly once and in order per direction.
func TestLossyExchangesComplete(t *testing.T) {
	for _, cfg := range []Config{DefaultConfig(), {Reno: true}} {
		k := sim.New()
		r := &rec{k: k}
		s := NewStack(k, cfg, r)
		rng := rand.New(rand.NewPCG(7, 8))
		const conns, perConn = 8, 200
		next := map[ConnID]int32{}
		want := map[ConnID][2]int32{}
		var sizes = []int{100, 1448, 3000, 20000, 200000}
		for i := 0; i < conns; i++ {
			up, down := NewPath(sim.Stream(int64(i), "up")), NewPath(sim.Stream(int64(i), "down"))
			for _, p := range []*Path{up, down} {
				p.Latency, p.Jitter, p.Loss, p.Correlation = dur(time.Millisecond), dur(300*time.Microsecond), 0.05, 0.3
				p.BitsPerSecond = 100e6
			}
			c := s.Open(up, down)
			s.Send(c, Up, sizes[rng.IntN(len(sizes))], 0)
			next[c] = 1
		}
		r.onDeliver = func(c ConnID, d Dir, msg int32) {
			w := want[c]
			if msg != w[d] {
				t.Fatalf("conn %d dir %d: message %d delivered, want %d", c, d, msg, w[d])
			}
			w[d]++
			want[c] = w
			if d == Up {
				s.Send(c, Down, sizes[rng.IntN(len(sizes))], msg)
			} else if n := next[c]; n < perConn {
				// pipeline two requests sometimes, as HTTP/2 does
				s.Send(c, Up, sizes[rng.IntN(len(sizes))], n)
				next[c]++
				if rng.IntN(3) == 0 && n+1 < perConn {
					s.Send(c, Up, sizes[rng.IntN(len(sizes))], n+1)
					next[c]++
				}
			}
		}
		// Step the run and check that the scoreboard counters match the segments' bits
		// (sacked_out, lost_out, retrans_out) and that cwnd never reaches 0.
		for now := sim.Time(0); now < dur(3000*time.Second) && k.Pending() > 0; now += dur(5 * time.Millisecond) {
			k.Run(now)
			for c := range want {
				for d := range s.conns[c].h {
					checkScoreboard(t, &s.conns[c].h[d])
				}
			}
		}
		for c, w := range want {
			if w[Up] != perConn || w[Down] != perConn {
				t.Fatalf("reno=%v conn %d delivered %v of %d each way (failed %v, stats %+v)", cfg.Reno, c, w, perConn, r.failed, s.ConnStats(c))
			}
			for d := range s.conns[c].h {
				h := &s.conns[c].h[d]
				if h.sackedOut != 0 || h.lostOut != 0 || h.retransOut != 0 || h.packetsOut() != 0 {
					t.Fatalf("conn %d dir %d: scoreboard not empty: %+v", c, d, h)
				}
			}
		}
		st := s.Stats()
		if st.FastRetransmits == 0 || st.TLPs == 0 || st.RTOs == 0 {
			t.Fatalf("reno=%v: expected every repair mechanism to act: %+v", cfg.Reno, st)
		}
	}
}

func checkScoreboard(t *testing.T, h *half) {
	t.Helper()
	if !h.est {
		return
	}
	var sacked, lost, retrans int32
	for q := h.una; q < h.nxt; q++ {
		f := h.seg(q).flags
		if f&sSacked != 0 {
			sacked++
		}
		if f&sLost != 0 {
			lost++
		}
		if f&sRetrans != 0 {
			retrans++
		}
	}
	if sacked != h.sackedOut || lost != h.lostOut || retrans != h.retransOut || h.cwnd < 1 || h.inFlight() < 0 {
		t.Fatalf("scoreboard: counters sacked %d lost %d retrans %d, bits %d %d %d, cwnd %d",
			h.sackedOut, h.lostOut, h.retransOut, sacked, lost, retrans, h.cwnd)
	}
}

// Same seeds, same delivery times; another seed, other times.
func TestDeterminism(t *testing.T) {
	run := func(seed int64) []delivery {
		k := sim.New()
		r := &rec{k: k}
		s := NewStack(k, DefaultConfig(), r)
		for i := 0; i < 4; i++ {
			up, down := NewPath(sim.Stream(seed, "up"+string(rune('a'+i)))), NewPath(sim.Stream(seed, "down"+string(rune('a'+i))))
			for _, p := range []*Path{up, down} {
				p.Latency, p.Jitter, p.Normal, p.Loss = dur(time.Millisecond), dur(200*time.Microsecond), true, 0.03
			}
			c := s.Open(up, down)
			s.Send(c, Up, 5000, 0)
		}
		r.onDeliver = func(c ConnID, d Dir, msg int32) {
			if msg < 100 {
				s.Send(c, d^1, 3000, msg+int32(d))
			}
		}
		k.Run(dur(600 * time.Second))
		return r.got
	}
	a, b, other := run(1), run(1), run(2)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("runs delivered %d and %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("delivery %d differs: %+v vs %+v", i, a[i], b[i])
		}
	}
	same := len(a) == len(other)
	for i := 0; same && i < len(a); i++ {
		same = a[i] == other[i]
	}
	if same {
		t.Fatal("another seed gave the same run")
	}
}

// After a loss at W = Wmax, CUBIC's window follows W(t) = C(t-K)³ + Wmax from
// ssthresh = βW, with K = ∛(Wmax(1-β)/C) and t counted from the epoch start plus the
// minimum delay (bictcp_update); the test samples cwnd along the curve, through the
// plateau at Wmax and beyond it. Reno grows one segment per RTT from W/2, so it is back at W after
// W/2 round trips. The RTT (100 ms) is long enough that CUBIC's TCP-friendly floor
// stays below the cubic curve.
func TestCongestionAvoidanceGrowth(t *testing.T) {
	const L = sim.Time(50 * time.Millisecond)
	rtt := 2 * L
	for _, reno := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Reno = reno
		b := newBed(cfg, L)
		// 100 Mbit/s spreads each window's ACKs over its RTT, as a real link does,
		// without queueing (the window stays below the 833-packet BDP).
		b.up.BitsPerSecond = 100e6
		c := b.s.Open(b.up, b.down)
		b.s.Send(c, Up, 200<<20, 1) // more than the test can send
		h := &b.s.conns[c].h[Up]
		step := func() { b.k.Run(b.k.Now() + dur(time.Millisecond)) }
		dropped := false
		for h.ca != caRecovery {
			step()
			if !dropped && h.cwnd >= 100 {
				dropNext(b.up, 1)
				dropped = true
			}
		}
		W := h.priorCwnd
		for h.ca == caRecovery {
			step()
		}
		if !reno {
			if want := W * cubicBeta / 1024; h.ssthresh != want {
				t.Fatalf("cubic: ssthresh %d after recovery from %d, want %d", h.ssthresh, W, want)
			}
			ca := &h.cc
			K := math.Cbrt(float64(W-h.ssthresh) / (410.0 / 1024))
			for i := 1; i <= 16; i++ {
				b.k.Run(ca.epochStart + sim.Time(i)*dur(500*time.Millisecond))
				// cwnd may lag the curve by an RTT of ACK clocking; integer rounding
				// adds one segment either way.
				x := (b.k.Now() - ca.epochStart + ca.delayMin).Seconds() - K
				curve := func(x float64) float64 { return float64(W) + 410.0/1024*x*x*x }
				lo, hi := curve(x-rtt.Seconds())-1, curve(x)+1
				if got := float64(h.cwnd); got < lo || got > hi {
					t.Fatalf("cubic: cwnd %v at t-K = %.2fs, want within [%.1f, %.1f]", got, x, lo, hi)
				}
			}
		} else {
			if h.ssthresh != W/2 {
				t.Fatalf("reno: ssthresh %d after recovery from %d", h.ssthresh, W)
			}
			start := b.k.Now()
			for h.cwnd < W {
				step()
			}
			took, want := b.k.Now()-start, sim.Time(W-W/2)*rtt
			if took < want-2*rtt || took > want+2*rtt {
				t.Fatalf("reno: back to W=%d after %v, want %v ± 2 RTT", W, took, want)
			}
		}
		if st := b.s.ConnStats(c); st.Retransmits != 1 || st.RTOs != 0 {
			t.Fatalf("reno=%v: %+v, want a single fast retransmit", reno, st)
		}
	}
}

// Undelivered lists only what has not reached the other application, in both
// directions: a delivered request is gone from it, a reply still on its way is not.
func TestUndeliveredSkipsDelivered(t *testing.T) {
	b := newBed(DefaultConfig(), dur(time.Millisecond))
	c := b.s.Open(b.up, b.down)
	b.s.Send(c, Up, 100, 1)
	b.k.Run(dur(3*time.Millisecond) + 1)
	if got := b.s.Undelivered(c, nil); len(got) != 0 || b.r.when(Up, 1) < 0 {
		t.Fatalf("undelivered %v after the request arrived, want none", got)
	}
	b.s.Send(c, Down, 100, 2)
	if got := b.s.Undelivered(c, nil); !slices.Equal(got, []int32{2}) {
		t.Fatalf("undelivered %v with the reply in flight, want [2]", got)
	}
	b.s.Close(c)
	if got := b.s.Undelivered(c, nil); len(got) != 0 {
		t.Fatalf("undelivered %v after Close, want none: the connection is forgotten", got)
	}
}
