// Package netw is a segment-level model of Linux TCP between two endpoints over lossy
// one-way paths, driven by the discrete-event kernel in trafficlab/sim. It carries
// messages of a given size and tells its Receiver when the last byte of each message
// reached the receiving application in order. It knows nothing of Kubernetes or HTTP.
//
// Each connection has two directions, Up (client to server) and Down. Each direction
// has a sender (segments, congestion window, RTT estimator, loss recovery, one
// retransmission timer) at one end and a receiver (in-order delivery, out-of-order
// set, SACK blocks) at the other. Segments are numbered per direction from 0; every
// message starts a new segment (TCP_NODELAY) and a message of B bytes is ceil(B/MSS)
// segments.
//
// What is modelled follows Linux 5.10 to 6.x, where the functions used agree (net/ipv4,
// include/net/tcp.h; each rule cites its function; the defaults are Linux's): the
// three-way handshake with SYN and SYN-ACK retransmission; RFC 6298 RTT estimation
// with Linux's variance floor, Karn's rule and timestamp (TSecr) samples; slow start,
// CUBIC or Reno congestion avoidance grown only when cwnd-limited, and the restart
// after idle; the SACK scoreboard; RACK-TLP loss detection (tcp_recovery=1, where the
// duplicate-ACK threshold acts through RACK's reordering window); PRR during fast
// recovery; the RTO with exponential backoff and tcp_enter_loss; tcp_retries2 and
// tcp_syn_retries failure.
//
// Simplified, on purpose: the receiver ACKs every data segment at once. Linux delays
// some ACKs (up to 40 ms in pingpong mode, where the next message usually carries the
// ACK instead), but it ACKs out-of-order segments and filled holes at once, so loss
// detection is the same and delivery times are unchanged; what differs is a few pure
// ACKs and RTT samples that a delayed ACK would inflate (the 200 ms that the tail loss
// probe adds for a lone segment exists to cover exactly that). Also: no receive
// window (autotuned windows are far above the windows reached here); no D-SACK, hence
// no undo of spurious reductions (tcp_try_undo_*, F-RTO); no HyStart; no pacing, TSO or
// MTU probing; no FIN or TIME_WAIT; segments are never split or collapsed on
// retransmission; the per-destination metrics cache is not used.
package netw

import (
	"math"
	"time"

	"trafficlab/sim"
)

// HeaderBytes is what each segment carries besides payload: IPv4 (20) + TCP (20) +
// timestamp option (12, TCPOLEN_TSTAMP_ALIGNED). SACK blocks add 4 + 8 per block.
const HeaderBytes = 52

// Config holds the TCP parameters. Zero fields take DefaultConfig's values.
type Config struct {
	MSS                     int  // 1500 MTU - 20 IP - 20 TCP - 12 timestamps
	InitCwnd                int  // include/net/tcp.h TCP_INIT_CWND
	Reno                    bool // false: CUBIC, the Linux default
	MinRTO, InitRTO, MaxRTO sim.Time
	SynRetries              int // net.ipv4.tcp_syn_retries
	Retries2                int // net.ipv4.tcp_retries2
}

// DefaultConfig is Linux's default: MSS 1448, TCP_INIT_CWND 10, CUBIC, TCP_RTO_MIN
// 200 ms, TCP_TIMEOUT_INIT 1 s, TCP_RTO_MAX 120 s (include/net/tcp.h), tcp_syn_retries
// 6 and tcp_retries2 15 (TCP_SYN_RETRIES, TCP_RETR2).
func DefaultConfig() Config {
	return Config{MSS: 1448, InitCwnd: 10, MinRTO: sim.Duration(200 * time.Millisecond),
		InitRTO: sim.Duration(time.Second), MaxRTO: sim.Duration(120 * time.Second),
		SynRetries: 6, Retries2: 15}
}

// ConnID names a connection; slots are reused after Close or Failed.
type ConnID int32

// Dir is a direction of a connection.
type Dir uint8

const (
	Up   Dir = iota // client to server
	Down            // server to client
)

// Receiver is told what happened; the engine implements it.
type Receiver interface {
	// Delivered: the last byte of message msg, sent in direction d, reached the
	// receiving application, every earlier byte of that direction included. It may
	// come for a connection the receiver closed earlier in the same instant.
	Delivered(c ConnID, d Dir, msg int32)
	// Failed: the connection gave up (SYN retries or tcp_retries2 exhausted, or a
	// reset because the server forgot a handshake). The stack has forgotten c;
	// undelivered lists the messages it will never deliver, as Undelivered would.
	Failed(c ConnID, undelivered []int32)
}

// Stats are counters of segments put on the wire.
type Stats struct {
	Segments        int64 // every packet sent: data, pure ACKs, SYN, SYN-ACK (TCP_MIB_OUTSEGS)
	Retransmits     int64 // data segments sent again, loss probes included
	FastRetransmits int64 // retransmissions during fast recovery (LINUX_MIB_TCPFASTRETRANS)
	RTOs            int64 // data retransmission timeouts (tcp_retransmit_timer)
	TLPs            int64 // tail loss probes sent (LINUX_MIB_TCPLOSSPROBES)
	SynRetransmits  int64 // SYN and SYN-ACK retransmissions
}

// Linux constants that Config does not expose.
const (
	tsTick         = sim.Time(time.Millisecond)      // TCP_TS_HZ 1000: timestamp clock
	jiffy          = sim.Time(time.Millisecond)      // HZ=1000
	timeoutMin     = 2 * jiffy                       // TCP_TIMEOUT_MIN
	synackRetries  = 5                               // net.ipv4.tcp_synack_retries (TCP_SYNACK_RETRIES)
	tcpReordering  = 3                               // net.ipv4.tcp_reordering (TCP_FASTRETRANS_THRESH)
	maxReordering  = 300                             // net.ipv4.tcp_max_reordering
	numSacks       = 4                               // TCP_NUM_SACKS: blocks the receiver remembers
	sentSacks      = 3                               // blocks that fit beside timestamps (tcp_established_options)
	minRTTWindow   = sim.Time(300 * time.Second)     // net.ipv4.tcp_min_rtt_wlen
	infSsthresh    = int32(0x7fffffff)               // TCP_INFINITE_SSTHRESH
	maxTime        = sim.Time(math.MaxInt64)         //
	synBytes       = HeaderBytes + 8                 // MSS, SACK_PERM, window scale beside timestamps
	cubicOneSecond = sim.Time(time.Second)           // HZ, in bictcp_acked
	cubicHZ32      = sim.Time(31 * time.Millisecond) // HZ/32 jiffies, in bictcp_update
)

// Handshake states of the two ends.
const (
	cliSynSent uint8 = iota
	cliEstablished
)
const (
	srvNone    uint8 = iota // no SYN seen
	srvSynRcvd              // a request sock exists
	srvEstablished
	srvGone // the request timed out (tcp_synack_retries): later segments get a reset
)

// Timer kinds of a direction's single retransmission timer (icsk_pending).
const (
	tNone   uint8 = iota
	tRTO          // ICSK_TIME_RETRANS
	tTLP          // ICSK_TIME_LOSS_PROBE
	tREO          // ICSK_TIME_REO_TIMEOUT
	tSyn          // the client's SYN retransmission (ICSK_TIME_RETRANS in SYN_SENT)
	tSynAck       // the server's request-sock timer (reqsk_timer_handler)
)

// Packet flags.
const (
	fSyn uint8 = 1 << iota
	fSynAck
	fData // carries segment seq of its own direction
)

type block struct{ start, end int32 }

// packet is a pooled record of a packet in flight; its event carries the index in Obj
// and the connection's generation in Gen.
type packet struct {
	conn         int32
	seq          int32 // data segment, or the sender's snd_nxt for other packets
	ack          int32 // next segment expected in the reverse direction
	tsval, tsecr int32
	next         int32 // free list
	dir          Dir
	flags        uint8
	nsack        uint8
	sack         [sentSacks]block
}

type conn struct {
	gen   uint32
	inUse bool
	cli   uint8
	srv   uint8
	paths [2]*Path
	// handshake
	synSent, synAckSent         sim.Time
	synRetries                  int // SYN retransmissions (icsk_retransmits in SYN_SENT)
	synAckRetrans, synAckTimers int // req->num_retrans, req->num_timeout
	h                           [2]half
	st                          Stats
}

type callback struct {
	c      ConnID
	d      Dir
	msg    int32
	failed bool
	lost   []int32 // failed: the messages never delivered
}

// Stack runs every connection of a simulation on one kernel.
type Stack struct {
	k         *sim.Kernel
	cfg       Config
	r         Receiver
	evPkt     uint8
	evTimer   uint8
	conns     []conn
	freeConns []int32
	pkts      []packet
	freePkt   int32
	st        Stats
	cb        []callback // callbacks made by the current event, run at its end
}

// NewStack returns a stack on k that reports to r. It registers its event kinds with k.
func NewStack(k *sim.Kernel, cfg Config, r Receiver) *Stack {
	def := DefaultConfig()
	orDefault(&cfg.MSS, def.MSS)
	orDefault(&cfg.InitCwnd, def.InitCwnd)
	orDefault(&cfg.MinRTO, def.MinRTO)
	orDefault(&cfg.InitRTO, def.InitRTO)
	orDefault(&cfg.MaxRTO, def.MaxRTO)
	orDefault(&cfg.SynRetries, def.SynRetries)
	orDefault(&cfg.Retries2, def.Retries2)
	s := &Stack{k: k, cfg: cfg, r: r, freePkt: -1}
	s.evPkt = k.Register(s.Handle)
	s.evTimer = k.Register(s.Handle)
	return s
}

func orDefault[T int | sim.Time](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Stats are the totals over the run.
func (s *Stack) Stats() Stats { return s.st }

// ConnStats are the counters of a live connection (zero once it is forgotten).
func (s *Stack) ConnStats(id ConnID) Stats {
	if c := s.live(id); c != nil {
		return c.st
	}
	return Stats{}
}

func (s *Stack) live(id ConnID) *conn {
	if id < 0 || int(id) >= len(s.conns) || !s.conns[id].inUse {
		return nil
	}
	return &s.conns[id]
}

// Open starts a connection: the client's SYN leaves now on up; the server answers on
// down.
func (s *Stack) Open(up, down *Path) ConnID {
	var ci int32
	if n := len(s.freeConns); n > 0 {
		ci = s.freeConns[n-1]
		s.freeConns = s.freeConns[:n-1]
	} else {
		s.conns = append(s.conns, conn{})
		ci = int32(len(s.conns) - 1)
	}
	c := &s.conns[ci]
	c.inUse, c.cli, c.srv, c.paths = true, cliSynSent, srvNone, [2]*Path{up, down}
	c.synRetries, c.synAckRetrans, c.synAckTimers, c.st = 0, 0, 0, Stats{}
	for d := range c.h {
		c.h[d].reset(&s.cfg)
	}
	s.sendSyn(ci, c)
	s.arm(ci, Up, tSyn, s.k.Now()+c.h[Up].rto)
	return ConnID(ci)
}

// Send queues a message of bytes in direction d; it leaves as soon as the handshake and
// the congestion window allow. Sends on a forgotten connection are ignored.
func (s *Stack) Send(id ConnID, d Dir, bytes int, msg int32) {
	c := s.live(id)
	if c == nil {
		return
	}
	if bytes < 1 {
		bytes = 1
	}
	h := &c.h[d]
	now := s.k.Now()
	// include/net/tcp.h tcp_slow_start_after_idle_check, called when the application
	// queues data (tcp_skb_entail): restart the window after an idle RTO.
	if h.est && h.packetsOut() == 0 && now-h.lsndtime > h.rto {
		h.cwndRestart(now-h.lsndtime, int32(s.cfg.InitCwnd))
	}
	mss := s.cfg.MSS
	n := (bytes + mss - 1) / mss
	for i := 0; i < n; i++ {
		h.grow()
		size := mss
		if i == n-1 {
			size = bytes - (n-1)*mss
		}
		*h.seg(h.end) = seg{size: int32(size)}
		h.end++
	}
	h.msgs.push(msgEnd{end: h.end, msg: msg})
	s.push(int32(id), c, d)
}

// Undelivered appends to out the messages of c, both directions, whose last byte has
// not reached the other application: what a Close now would lose.
func (s *Stack) Undelivered(id ConnID, out []int32) []int32 {
	c := s.live(id)
	if c == nil {
		return out
	}
	for d := range c.h {
		q := &c.h[d].msgs
		for _, m := range q.buf[q.head:] {
			out = append(out, m.msg)
		}
	}
	return out
}

// Close forgets c at once: its packets in flight and timers are ignored from now on.
func (s *Stack) Close(id ConnID) {
	c := s.live(id)
	if c == nil {
		return
	}
	c.inUse = false
	c.gen++
	for d := range c.h {
		h := &c.h[d]
		h.evGen++
		h.evPending, h.tKind = false, tNone
	}
	s.freeConns = append(s.freeConns, int32(id))
}

// fail forgets c and tells the receiver at the end of the current event.
func (s *Stack) fail(ci int32) {
	lost := s.Undelivered(ConnID(ci), nil) // a rare event: the allocation does not matter
	s.Close(ConnID(ci))
	s.cb = append(s.cb, callback{c: ConnID(ci), failed: true, lost: lost})
}

// Handle is the sim.Handler of both its event kinds.
func (s *Stack) Handle(ev sim.Event) {
	if ev.Kind() == s.evPkt {
		s.arrive(ev)
	} else {
		s.timer(ev)
	}
	// Callbacks run last, when the stack's state is consistent: the receiver may Send,
	// Open or Close from them.
	for i := 0; i < len(s.cb); i++ {
		cb := s.cb[i]
		if cb.failed {
			s.r.Failed(cb.c, cb.lost)
			continue
		}
		// Delivered even if an earlier callback of this event closed the connection:
		// the bytes had arrived, and Undelivered no longer lists them.
		s.r.Delivered(cb.c, cb.d, cb.msg)
	}
	s.cb = s.cb[:0]
}

// emit puts p on its path; a packet that survives is pooled until it arrives.
func (s *Stack) emit(c *conn, p packet, bytes int) {
	c.st.Segments++
	s.st.Segments++
	at, lost := c.paths[p.dir].Transit(s.k.Now(), bytes)
	if lost {
		return
	}
	i := s.freePkt
	if i >= 0 {
		s.freePkt = s.pkts[i].next
	} else {
		s.pkts = append(s.pkts, packet{})
		i = int32(len(s.pkts) - 1)
	}
	s.pkts[i] = p
	s.k.At(at, s.evPkt, i, c.gen)
}

func tsval(now sim.Time) int32 { return int32(now/tsTick) + 1 } // never 0: 0 means "no timestamp"

func sackBytes(n uint8) int {
	if n == 0 {
		return 0
	}
	return 4 + 8*int(n) // TCPOLEN_SACK_BASE_ALIGNED + TCPOLEN_SACK_PERBLOCK each
}

// ackInfo fills what every packet after the SYN exchange says about the reverse
// direction rd: the cumulative ACK, the receiver's first SACK blocks and the timestamp
// echo (tcp_options_write).
func ackInfo(c *conn, p *packet, rd Dir) {
	r := &c.h[rd]
	p.ack = r.rcvNxt
	p.tsecr = r.tsRecent
	n := min(r.nSacks, sentSacks)
	p.nsack = uint8(n)
	copy(p.sack[:n], r.sacks[:n])
}

// sendAck sends a pure ACK for the data of direction rd.
func (s *Stack) sendAck(ci int32, c *conn, rd Dir) {
	d := rd ^ 1
	p := packet{conn: ci, dir: d, seq: c.h[d].nxt, tsval: tsval(s.k.Now())}
	ackInfo(c, &p, rd)
	s.emit(c, p, HeaderBytes+sackBytes(p.nsack))
}

// arrive handles a packet reaching the end of its path.
func (s *Stack) arrive(ev sim.Event) {
	p := s.pkts[ev.Obj]
	s.pkts[ev.Obj].next = s.freePkt
	s.freePkt = ev.Obj
	c := &s.conns[p.conn]
	if !c.inUse || c.gen != ev.Gen {
		return // the connection was closed since
	}
	switch {
	case p.flags&fSyn != 0:
		s.onSyn(p.conn, c, &p)
	case p.flags&fSynAck != 0:
		s.onSynAck(p.conn, c, &p)
	default:
		s.onSegment(p.conn, c, &p)
	}
}

// onSegment handles a data segment or pure ACK after the SYN exchange.
func (s *Stack) onSegment(ci int32, c *conn, p *packet) {
	d := p.dir
	if d == Up && c.srv != srvEstablished {
		if c.srv != srvSynRcvd {
			// net/ipv4/tcp_ipv4.c tcp_v4_rcv: no socket and no request for this
			// segment, so it is answered with a reset.
			s.fail(ci)
			return
		}
		s.serverEstablished(ci, c, p)
	}
	if d == Down && c.cli != cliEstablished {
		return
	}
	r := &c.h[d]
	// net/ipv4/tcp_input.c tcp_replace_ts_recent: remember the peer's TSval from a
	// segment that is not beyond what we have received (seq <= rcv_wup, and every
	// segment is ACKed at once, so rcv_wup is rcv_nxt), if it does not go backwards.
	if p.seq <= r.rcvNxt && p.tsval >= r.tsRecent {
		r.tsRecent = p.tsval
	}
	s.onAck(ci, c, d^1, p)
	if p.flags&fData != 0 {
		s.onData(ci, c, d, p)
	}
	// tcp_rcv_established: tcp_data_snd_check after the ACK opened the window.
	s.push(ci, c, d^1)
}

// sendSyn sends (or resends) the client's SYN.
func (s *Stack) sendSyn(ci int32, c *conn) {
	c.synSent = s.k.Now()
	s.emit(c, packet{conn: ci, dir: Up, flags: fSyn, tsval: tsval(c.synSent)}, synBytes)
}

// sendSynAck sends (or resends) the server's SYN-ACK; it echoes the TSval of the SYN
// that created the request (tcp_make_synack uses req->ts_recent).
func (s *Stack) sendSynAck(ci int32, c *conn) {
	c.synAckSent = s.k.Now()
	p := packet{conn: ci, dir: Down, flags: fSynAck, tsval: tsval(c.synAckSent), tsecr: c.h[Up].tsRecent}
	s.emit(c, p, synBytes)
}

// onSyn: the server side of the handshake.
func (s *Stack) onSyn(ci int32, c *conn, p *packet) {
	now := s.k.Now()
	switch c.srv {
	case srvNone, srvGone:
		// net/ipv4/tcp_input.c tcp_conn_request: a request sock answers with a SYN-ACK
		// and arms its timer at TCP_TIMEOUT_INIT.
		c.srv, c.synAckRetrans, c.synAckTimers = srvSynRcvd, 0, 0
		c.h[Up].tsRecent = p.tsval
		s.sendSynAck(ci, c)
		s.arm(ci, Down, tSynAck, now+s.cfg.InitRTO)
	case srvSynRcvd:
		// net/ipv4/tcp_minisocks.c tcp_check_req: a retransmitted SYN makes the server
		// retransmit its SYN-ACK at once and restart the request timer
		// (inet_rtx_syn_ack, reqsk_timeout).
		c.synAckRetrans++
		c.st.SynRetransmits++
		s.st.SynRetransmits++
		s.sendSynAck(ci, c)
		s.arm(ci, Down, tSynAck, now+min(s.cfg.InitRTO<<c.synAckTimers, s.cfg.MaxRTO))
	}
}

// onSynAck: the client completes the handshake (tcp_rcv_synsent_state_process).
func (s *Stack) onSynAck(ci int32, c *conn, p *packet) {
	if c.cli == cliEstablished {
		// Our ACK was lost and the server resent its SYN-ACK: ACK again.
		s.sendAck(ci, c, Down)
		return
	}
	now := s.k.Now()
	h := &c.h[Up]
	c.h[Down].tsRecent = p.tsval
	// tcp_ack → tcp_clean_rtx_queue acks the SYN: a clean RTT sample unless the SYN
	// was retransmitted (Karn), then the timestamp echo (tcp_ack_update_rtt).
	rtt := sim.Time(-1)
	if c.synRetries == 0 {
		rtt = now - c.synSent
	}
	h.ackUpdateRTT(now, flSynAcked, rtt, -1, rtt, p.tsecr, &s.cfg)
	h.tKind = tNone
	c.cli = cliEstablished
	h.establish(now, &s.cfg, c.synRetries > 1)
	if h.end > h.nxt {
		// Data is waiting: the first segment carries the ACK (the "save one ACK"
		// branch of tcp_rcv_synsent_state_process when a write is pending).
		s.push(ci, c, Up)
	} else {
		s.sendAck(ci, c, Down)
	}
}

// serverEstablished: an ACK completes the handshake at the server (tcp_check_req →
// tcp_rcv_state_process SYN_RECV); p's own ACK and data are processed after.
func (s *Stack) serverEstablished(ci int32, c *conn, p *packet) {
	now := s.k.Now()
	h := &c.h[Down]
	// tcp_synack_rtt_meas: from the SYN-ACK's send time unless it was retransmitted.
	rtt := sim.Time(-1)
	if c.synAckRetrans == 0 {
		rtt = now - c.synAckSent
	}
	h.ackUpdateRTT(now, flSynAcked, rtt, -1, rtt, p.tsecr, &s.cfg)
	h.tKind = tNone
	c.srv = srvEstablished
	h.establish(now, &s.cfg, c.synAckRetrans > 1)
}

// establish starts a direction's sender (tcp_init_transfer): the initial window, or 1
// segment if more than one SYN or SYN-ACK retransmission was needed (RFC 5681 as Linux
// relaxes it), and lsndtime = now so the first data is not an idle restart.
func (h *half) establish(now sim.Time, cfg *Config, retried bool) {
	h.est = true
	h.cwnd = int32(cfg.InitCwnd)
	if retried {
		h.cwnd = 1
	}
	h.ssthresh = infSsthresh
	h.lsndtime = now
}

// synTimer: the client's SYN timer (tcp_retransmit_timer in SYN_SENT): give up after
// tcp_syn_retries retransmissions (tcp_write_timeout), else resend and double the RTO.
func (s *Stack) synTimer(ci int32, c *conn) {
	if c.synRetries >= s.cfg.SynRetries {
		s.fail(ci)
		return
	}
	h := &c.h[Up]
	c.synRetries++
	c.st.SynRetransmits++
	s.st.SynRetransmits++
	s.sendSyn(ci, c)
	h.rto = min(h.rto*2, s.cfg.MaxRTO)
	s.arm(ci, Up, tSyn, s.k.Now()+h.rto)
}

// synAckTimer: net/ipv4/inet_connection_sock.c reqsk_timer_handler: resend the
// SYN-ACK with TCP_TIMEOUT_INIT << num_timeout, and drop the request after
// tcp_synack_retries.
func (s *Stack) synAckTimer(ci int32, c *conn) {
	if c.srv != srvSynRcvd {
		return
	}
	if c.synAckTimers >= synackRetries {
		c.srv = srvGone
		return
	}
	c.synAckRetrans++
	c.synAckTimers++
	c.st.SynRetransmits++
	s.st.SynRetransmits++
	s.sendSynAck(ci, c)
	s.arm(ci, Down, tSynAck, s.k.Now()+min(s.cfg.InitRTO<<c.synAckTimers, s.cfg.MaxRTO))
}

// arm sets direction d's timer (inet_csk_reset_xmit_timer). Timers are lazy: an event
// is scheduled only if none is pending at or before the deadline; an early event
// re-schedules itself. Re-arming on every ACK thus costs no heap operation.
func (s *Stack) arm(ci int32, d Dir, kind uint8, at sim.Time) {
	h := &s.conns[ci].h[d]
	h.tKind, h.tAt = kind, at
	if h.evPending && h.evAt <= at {
		return
	}
	h.evGen++
	h.evPending, h.evAt = true, at
	s.k.At(at, s.evTimer, ci*2+int32(d), h.evGen)
}

// timer dispatches a direction's timer (tcp_write_timer_handler).
func (s *Stack) timer(ev sim.Event) {
	ci, d := ev.Obj>>1, Dir(ev.Obj&1)
	c := &s.conns[ci]
	h := &c.h[d]
	if !c.inUse || !h.evPending || ev.Gen != h.evGen {
		return
	}
	h.evPending = false
	if h.tKind == tNone {
		return
	}
	if now := s.k.Now(); h.tAt > now {
		s.arm(ci, d, h.tKind, h.tAt)
		return
	}
	switch h.tKind {
	case tRTO:
		h.tKind = tNone
		s.retransmitTimer(ci, c, d)
	case tTLP:
		s.sendLossProbe(ci, c, d)
	case tREO:
		s.rackReoTimeout(ci, c, d)
	case tSyn:
		h.tKind = tNone
		s.synTimer(ci, c)
	case tSynAck:
		h.tKind = tNone
		s.synAckTimer(ci, c)
	}
}
