// Package client models how client libraries hold connections: pools with limits on
// open and idle connections, idle timeouts and lifetimes. Which pod a connection
// reaches is kube-proxy's business; the pool only decides when connections open,
// get reused and close, which is what decides how kube-proxy sees the traffic.
package client

import "trafficlab/sim"

// ConnID indexes a connection in a Conns table.
type ConnID = int32

// Conn is one TCP connection.
type Conn struct {
	Pod      int32 // server pod at the other end
	Pool     int32 // pool that owns it
	Opened   sim.Time
	LastUsed sim.Time
	Open     bool
	// HTTP/2: streams in progress, and whether the connection takes no new ones.
	Streams int32
	Retired bool
}

// Conns is a table of connections whose slots are reused once closed, so memory follows
// the number of connections open at once, not the number ever opened.
type Conns struct {
	all  []Conn
	free []ConnID
}

// New records a new open connection.
func (t *Conns) New(pod, pool int32, now sim.Time) ConnID {
	return sim.Alloc(&t.all, &t.free, Conn{Pod: pod, Pool: pool, Opened: now, LastUsed: now, Open: true})
}

// Get returns the connection for reading or updating.
func (t *Conns) Get(id ConnID) *Conn { return &t.all[id] }

// Free marks a closed connection's slot reusable. Call it only once nothing refers to
// the connection any more.
func (t *Conns) Free(id ConnID) {
	t.all[id].Open = false
	t.free = append(t.free, id)
}

// Waiter is a request waiting for a connection: its caller slot and request generation.
type Waiter struct {
	Slot int32
	Gen  uint32
}

// Limits of one pool.
type Limits struct {
	MaxPerHost  int      // 0 = unlimited
	MaxIdle     int      // 0 = unlimited
	IdleTimeout sim.Time // 0 = never
	MaxLifetime sim.Time // 0 = never
	// Pick is which idle connection a request takes.
	Pick Pick
	// Streams > 0 makes the pool HTTP/2: up to Streams requests share a connection
	// (see mux.go).
	Streams int
	// RoundRobin: a gRPC round_robin channel, whose connections (one per address)
	// take calls in turn (TakeStreamInTurn).
	RoundRobin bool
}

// Pick is an order in which a pool reuses its idle connections.
type Pick uint8

const (
	// MostRecent reuses the connection returned last (Go, .NET, urllib3).
	MostRecent Pick = iota
	// LongestIdle reuses the connection idle longest (java.net.http, aiohttp).
	LongestIdle
	// FirstOpened reuses the idle connection opened first (undici, OkHttp and
	// httpcore scan a list kept in creation order).
	FirstOpened
)

// Pool is one client's connections to one Service (one host).
type Pool struct {
	Limits
	open int
	// idle[head:] are idle, ordered by when they were released: the oldest first.
	idle    []ConnID
	head    int
	waiters sim.FIFO[Waiter]
	mux     []ConnID // HTTP/2 connections taking new streams, oldest first
	turn    int      // the next of mux to take a call, with RoundRobin
}

// Open is the number of open connections, busy or idle.
func (p *Pool) Open() int { return p.open }

// TakeIdle returns an idle connection that is still fit for use, in the pool's
// Pick order. Connections past their idle timeout or lifetime are closed on the
// way and appended to expired, for the caller to tear down.
func (p *Pool) TakeIdle(now sim.Time, conns *Conns, expired []ConnID) (id ConnID, ok bool, _ []ConnID) {
	for p.head < len(p.idle) {
		switch p.Pick {
		case LongestIdle:
			id = p.idle[p.head]
			p.head++
		case FirstOpened:
			id = p.takeFirstOpened(conns)
		default:
			id = p.idle[len(p.idle)-1]
			p.idle = p.idle[:len(p.idle)-1]
		}
		p.compact()
		if p.stale(now, conns.Get(id)) {
			p.open--
			expired = append(expired, id)
			continue
		}
		return id, true, expired
	}
	return 0, false, expired
}

// takeFirstOpened removes the idle connection opened first, keeping the others in
// the order they were released (Expire reads them oldest first). A scan: a pool
// whose idle list grows long pays for it per request.
func (p *Pool) takeFirstOpened(conns *Conns) ConnID {
	first := p.head
	for i := p.head + 1; i < len(p.idle); i++ {
		if conns.Get(p.idle[i]).Opened < conns.Get(p.idle[first]).Opened {
			first = i
		}
	}
	id := p.idle[first]
	copy(p.idle[first:], p.idle[first+1:])
	p.idle = p.idle[:len(p.idle)-1]
	return id
}

// Expire closes the idle connections whose idle timeout has passed, as the libraries'
// own idle timers do (Go's per-connection idleTimer, .NET's pool scavenger), appending
// them to expired.
func (p *Pool) Expire(now sim.Time, conns *Conns, expired []ConnID) []ConnID {
	for p.head < len(p.idle) && p.IdleTimeout > 0 && now-conns.Get(p.idle[p.head]).LastUsed >= p.IdleTimeout {
		expired = append(expired, p.idle[p.head])
		p.head++
		p.open--
		p.compact()
	}
	return expired
}

// NextExpiry is when the oldest idle connection reaches its idle timeout.
func (p *Pool) NextExpiry(conns *Conns) (sim.Time, bool) {
	if p.IdleTimeout == 0 || p.head == len(p.idle) {
		return 0, false
	}
	return conns.Get(p.idle[p.head]).LastUsed + p.IdleTimeout, true
}

// compact keeps the idle slice from creeping forward through memory.
func (p *Pool) compact() {
	if p.head == len(p.idle) {
		p.idle, p.head = p.idle[:0], 0
	} else if p.head > 32 && 2*p.head > len(p.idle) {
		n := copy(p.idle, p.idle[p.head:])
		p.idle, p.head = p.idle[:n], 0
	}
}

func (p *Pool) stale(now sim.Time, c *Conn) bool {
	return (p.IdleTimeout > 0 && now-c.LastUsed >= p.IdleTimeout) ||
		(p.MaxLifetime > 0 && now-c.Opened >= p.MaxLifetime)
}

// CanOpen tells whether the pool's limit allows another connection.
func (p *Pool) CanOpen() bool { return p.MaxPerHost == 0 || p.open < p.MaxPerHost }

// Opening counts a connection the caller is opening.
func (p *Pool) Opening() { p.open++ }

// Wait queues a request until a connection is free or may be opened.
func (p *Pool) Wait(w Waiter) { p.waiters.Push(w) }

// NextWaiter dequeues the oldest waiter for which live reports true; waiters that
// gave up (timed out) are dropped.
func (p *Pool) NextWaiter(live func(Waiter) bool) (Waiter, bool) {
	for {
		w, ok := p.waiters.Pop()
		if !ok || live(w) {
			return w, ok
		}
	}
}

// Outcome of returning a connection after a request.
type Outcome uint8

const (
	// Idle: the connection went back to the idle pool.
	Idle Outcome = iota
	// Handed: the connection goes straight to the waiter returned with it.
	Handed
	// Closed: the connection must be closed (past its lifetime, or no idle room).
	Closed
)

// Release returns a connection whose request finished; live tells which waiters still
// want one. A connection past its lifetime, or one that finds the idle pool full, is
// closed: that is how Go's transport treats connections above MaxIdleConnsPerHost and
// how .NET applies PooledConnectionLifetime.
func (p *Pool) Release(now sim.Time, conns *Conns, id ConnID, live func(Waiter) bool) (Outcome, Waiter) {
	c := conns.Get(id)
	c.LastUsed = now
	if p.MaxLifetime > 0 && now-c.Opened >= p.MaxLifetime {
		p.open--
		return Closed, Waiter{}
	}
	if w, ok := p.NextWaiter(live); ok {
		return Handed, w
	}
	if p.MaxIdle > 0 && len(p.idle)-p.head >= p.MaxIdle {
		p.open--
		return Closed, Waiter{}
	}
	p.idle = append(p.idle, id)
	return Idle, Waiter{}
}

// Drop forgets a busy connection that closed (a timed-out request, a reset).
func (p *Pool) Drop() { p.open-- }

// HasWaiters tells whether requests may be queued for a connection.
func (p *Pool) HasWaiters() bool { return p.waiters.Len() > 0 }
