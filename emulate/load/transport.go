package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"trafficlab/scenario"
)

// The net/http client (ClientNetHTTP): HTTP/2 always, HTTP/1.1 on request. How a
// scenario's connection strategy maps onto Go's net/http Transport:
//
//	reuse none        DisableKeepAlives: a new connection per request, closed after it
//	                  (HTTP/2: a single-use connection per request).
//	reuse per-thread  one Transport per thread (per slot in an open loop).
//	reuse shared      one Transport for the whole client pod.
//	maxPerHost        Transport.MaxConnsPerHost (0 = unlimited in both).
//	maxIdlePerHost    Transport.MaxIdleConnsPerHost; 0 means unlimited here but 2 in
//	                  Go (transport.go DefaultMaxIdleConnsPerHost), so 0 is sent as MaxInt.
//	idleTimeout       Transport.IdleConnTimeout (0 = never in both).
//	maxLifetime       no Transport knob: see conn.Write and goPool.acquire.
//	protocol http2    Transport.Protocols with only UnencryptedHTTP2: h2c with prior
//	                  knowledge (transport.go dialConn, unencryptedHTTP2).
//
// Go's own behaviour comes with it and matches the go-net-http profile: LIFO reuse
// of idle connections, a connection closed when its request is cancelled or times
// out, and a stale idempotent request resent on another connection (counted as
// retried). Profiles that differ (Java's FIFO pick, python-requests not resending)
// are approximated by Go's behaviour; the trafficlab client (h1.go) follows them.
//
// The tracked conn below serves both clients: it counts connections and notes the
// pod each reached.

// errRetired is what a connection past its max lifetime answers to the next request
// written on it; the Transport never shows it (see conn.Write).
var errRetired = errors.New("load: connection past its max lifetime")

// conn is a dialed connection that knows its age, the pod it reached and whether it
// is retired, and keeps the tracker's open count right.
type conn struct {
	net.Conn
	t       *tracker
	born    time.Time
	retired atomic.Bool
	closed  atomic.Bool
	moved   atomic.Bool
	pod     atomic.Pointer[string]
}

// Write refuses every write once the connection is retired. Retirement is decided
// when the Transport hands a reused HTTP/1.1 connection to a request (worker
// gotConn), before anything of that request is written, so the Transport sees a
// write error with nothing written on a reused connection: it closes the
// connection and resends the request on another one, idle or new, without the
// caller seeing an error (net/http transport.go persistConn.writeLoop
// nothingWrittenError, persistConn.shouldRetryRequest). That is .NET's
// PooledConnectionLifetime: an old connection is dropped when next taken from the
// pool, and no request in progress is cut. Closing old connections from a timer
// instead would race with requests taking them from the idle pool.
func (c *conn) Write(p []byte) (int, error) {
	if c.retired.Load() {
		return 0, errRetired
	}
	return c.Conn.Write(p)
}

func (c *conn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.t.open.Add(-1)
		c.t.local.Delete(c.LocalAddr().String())
	}
	return c.Conn.Close()
}

// notePod records the pod that answered on c: the first one pins the connection,
// a different one later means something between balanced per request.
func (c *conn) notePod(pod string) {
	for {
		if p := c.pod.Load(); p != nil {
			if *p != pod && c.moved.CompareAndSwap(false, true) {
				c.t.unpinned.Add(1)
			}
			return
		}
		s := pod
		if c.pod.CompareAndSwap(nil, &s) {
			c.t.reached(pod)
			return
		}
	}
}

// tracker dials and counts connections for every pool of a run.
type tracker struct {
	dialContext                      func(ctx context.Context, network, addr string) (net.Conn, error)
	opened, open, peak, dialFailures atomic.Int64
	retired, unpinned                atomic.Int64

	mu       sync.Mutex
	podConns map[string]int64 // connections by the pod they reached first
	// local maps each open connection's local address to it, for a gRPC call to
	// find the connection it went on (grpc.Peer).
	local sync.Map
}

// newTracker counts the connections dial opens; nil dial is a plain net.Dialer's.
func newTracker(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *tracker {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return &tracker{dialContext: dial, podConns: map[string]int64{}}
}

func (t *tracker) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := t.dialContext(ctx, network, addr)
	if err != nil {
		if !errors.Is(ctx.Err(), context.Canceled) { // not a dial the run's end cut off
			t.dialFailures.Add(1)
		}
		return nil, err
	}
	t.opened.Add(1)
	n := t.open.Add(1)
	for p := t.peak.Load(); n > p && !t.peak.CompareAndSwap(p, n); p = t.peak.Load() {
	}
	tc := &conn{Conn: c, t: t, born: time.Now()}
	t.local.Store(c.LocalAddr().String(), tc)
	return tc, nil
}

// byLocal is the open connection whose local address is addr; nil for none.
func (t *tracker) byLocal(addr net.Addr) *conn {
	if addr == nil {
		return nil
	}
	c, _ := t.local.Load(addr.String())
	tc, _ := c.(*conn)
	return tc
}

func (t *tracker) reached(pod string) {
	t.mu.Lock()
	t.podConns[pod]++
	t.mu.Unlock()
}

// goPool is one connection pool of the client on Go's net/http Transport: a
// Transport, or for HTTP/2 with a max lifetime a succession of them.
type goPool struct {
	r        *runner
	conn     Connections
	h2       bool
	lifetime time.Duration
	tr       *tracker

	cur  atomic.Pointer[generation]
	mu   sync.Mutex
	gens []*generation // every Transport not yet closed
}

// generation is one Transport of a pool with its requests in progress.
//
// An HTTP/2 pool keeps one connection per host and multiplexes every request on
// it, so a write refused on it would fail all of them. Its max lifetime retires the
// whole Transport instead: requests after the lifetime get a fresh Transport (and
// connection), those in progress finish on the old one, which is closed once idle.
// That is how .NET retires an HTTP/2 connection past PooledConnectionLifetime: no
// new streams, closed when the last ends.
type generation struct {
	t        *http.Transport
	born     time.Time
	inflight atomic.Int64
	retired  atomic.Bool
}

func newGoPool(r *runner) *goPool {
	c := r.cfg.Conn
	p := &goPool{r: r, conn: c, h2: c.Protocol == scenario.ProtocolHTTP2, lifetime: c.MaxLifetime, tr: r.tracker}
	g := &generation{t: p.transport(), born: time.Now()}
	p.cur.Store(g)
	p.gens = append(p.gens, g)
	return p
}

// transport builds a Transport with the pool's settings.
func (p *goPool) transport() *http.Transport { return newTransport(p.conn, p.tr.dial) }

// newTransport is a Transport with connection settings c that dials with dial.
func newTransport(c Connections, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	h2 := c.Protocol == scenario.ProtocolHTTP2
	idle := c.MaxIdlePerHost
	if idle == 0 {
		idle = math.MaxInt
	}
	t := &http.Transport{
		Proxy:               nil, // the target is in the lab; never an HTTP_PROXY from the environment
		DialContext:         dial,
		DisableKeepAlives:   c.Reuse == scenario.ReuseNone,
		DisableCompression:  true, // ask for what the pod serves, as wrk does
		MaxConnsPerHost:     c.MaxPerHost,
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     c.IdleTimeout,
	}
	protocols := new(http.Protocols)
	if h2 {
		// For HTTP/2 MaxConnsPerHost only bounds the dials in progress (its doc
		// comment). Without it, requests that start together before the first
		// connection is up each dial one, where the simulator (and Go, once a
		// connection exists) puts them all on one. One dial at a time keeps one
		// connection per host until the server's stream limit is reached.
		if t.MaxConnsPerHost == 0 {
			t.MaxConnsPerHost = 1
		}
		protocols.SetUnencryptedHTTP2(true)
		// Windows Go finds invalid (outside its documented ranges) fall back to its
		// defaults, which are the scenario's defaults too.
		t.HTTP2 = &http.HTTP2Config{
			MaxReceiveBufferPerStream:     int(min(c.StreamWindowBytes, math.MaxInt32)),
			MaxReceiveBufferPerConnection: int(min(c.ConnectionWindowBytes, math.MaxInt32)),
		}
	} else {
		protocols.SetHTTP1(true)
	}
	t.Protocols = protocols
	return t
}

// acquire is the Transport a request starting at now goes through.
func (p *goPool) acquire(now time.Time) *generation {
	g := p.cur.Load()
	if p.h2 && p.lifetime > 0 && now.Sub(g.born) >= p.lifetime {
		g = p.rotate(g, now)
	}
	g.inflight.Add(1)
	return g
}

// release ends a request on g; a retired Transport closes when its last one ends.
func (p *goPool) release(g *generation) {
	if g.inflight.Add(-1) == 0 && g.retired.Load() {
		p.closeGen(g)
	}
}

// rotate retires HTTP/2 Transport old and starts a new one.
func (p *goPool) rotate(old *generation, now time.Time) *generation {
	p.mu.Lock()
	if cur := p.cur.Load(); cur != old {
		p.mu.Unlock()
		return cur
	}
	g := &generation{t: p.transport(), born: now}
	p.cur.Store(g)
	p.gens = append(p.gens, g)
	old.retired.Store(true)
	p.mu.Unlock()
	p.tr.retired.Add(1)
	if old.inflight.Load() == 0 {
		p.closeGen(old)
	}
	return g
}

// closeGen closes g's idle connections and forgets it once it has none in use. A
// request that took g just before it was retired may still open a connection on
// it: its release closes g again.
func (p *goPool) closeGen(g *generation) {
	g.t.CloseIdleConnections()
	p.mu.Lock()
	defer p.mu.Unlock()
	if g.inflight.Load() != 0 {
		return
	}
	for i, x := range p.gens {
		if x == g {
			p.gens = append(p.gens[:i], p.gens[i+1:]...)
			break
		}
	}
}

// exchange sends one request through the Transport and reads the answer to its
// last byte.
func (p *goPool) exchange(w *worker, pr *phaseRun, now time.Time) (status int, pod string, end time.Time, err error) {
	r := p.r
	ctx, cancel := context.WithDeadline(w.ctx, now.Add(r.cfg.Timeout))
	defer cancel()
	req := r.tmpl.WithContext(ctx)
	if r.body != nil {
		req.Body = io.NopCloser(bytes.NewReader(r.body))
	}
	g := p.acquire(now)
	defer p.release(g)
	resp, err := g.t.RoundTrip(req)
	if err != nil {
		return 0, "", time.Now(), err
	}
	if v := resp.Header[PodHeader]; len(v) > 0 {
		pod = v[0]
	}
	// io.Discard reads with a pooled buffer: no allocation per request.
	w.bodyIn, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, pod, time.Now(), err
}

// close closes every idle connection of the pool, at the end of a run.
func (p *goPool) close() {
	p.mu.Lock()
	gens := append([]*generation(nil), p.gens...)
	p.mu.Unlock()
	for _, g := range gens {
		g.t.CloseIdleConnections()
	}
}
