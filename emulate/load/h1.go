package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"trafficlab/model/library"
	"trafficlab/scenario"
)

// The trafficlab HTTP/1.1 client. Go's net/http Transport hands every request to
// two goroutines of its connection (persistConn.writeLoop and readLoop) and back;
// on this 2-core machine that halves the request rate wrk reaches (see
// wrk_test.go). This client writes the request and reads the answer on the caller's
// goroutine, allocates nothing per request, and pools connections as
// model/client.Pool does in the simulator, from the library profile's fields:
//
//	take      an idle connection, the most recently used (LIFO), with IdlePick
//	          fifo the longest idle, with created the first opened; one past its
//	          idle timeout or max lifetime is closed on the way; one the server has
//	          closed while idle (a FIN or data waiting) is dropped, unless it was
//	          idle less than the library's UncheckedIdle (library.go)
//	open      a new one while the pool has fewer than MaxPerHost; else wait, first
//	          come first served, for one returned or closed
//	return    past its max lifetime: closed (.NET PooledConnectionLifetime); else to
//	          the oldest waiter; else closed if MaxIdlePerHost are idle already (Go's
//	          errTooManyIdleHost); else idle
//	fail      a timed-out or failed connection is closed; a request that failed on
//	          a reused connection before any answer byte is resent on another when
//	          the library does so (RetriesStaleIdempotent) and the method is
//	          idempotent, as the simulator's retries are counted

// h1pool is one HTTP/1.1 connection pool.
type h1pool struct {
	r          *runner
	maxPerHost int
	maxIdle    int
	idleTO     time.Duration
	lifetime   time.Duration
	pick       string // library.PickLIFO, PickFIFO or PickCreated
	unchecked  time.Duration
	noReuse    bool
	retryStale bool

	mu      sync.Mutex
	open    int       // busy, idle and being dialed
	idle    []*h1conn // idle[head:], oldest release first
	head    int       //
	waiters []*worker // waiters[whead:], first come first
	whead   int       //
	doomed  []*h1conn // taken out under mu, closed outside it
}

// grant is what a waiting request receives: a connection, or the right to dial one
// (the pool's count already includes it).
type grant struct{ c *h1conn }

// h1conn is one pooled connection.
type h1conn struct {
	tc       *conn
	br       *bufio.Reader
	raw      syscall.RawConn
	peek     func(fd uintptr) bool
	peekOK   bool
	peekBuf  [1]byte
	lastUsed time.Time
	uses     int
}

// h1request is the request every worker of a run writes, whole, in one write.
type h1request struct {
	bytes      []byte
	head       bool // HEAD: the answer has no body
	idempotent bool
	addr       string // host:port to dial
}

func newH1Request(cfg *Config) (*h1request, error) {
	u, err := url.Parse(cfg.Target)
	if err != nil {
		return nil, err
	}
	method := cfg.Method
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: trafficlab-load\r\n", method, u.RequestURI(), u.Host)
	switch {
	case cfg.BodyBytes > 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", cfg.BodyBytes)
	case method == "POST" || method == "PUT" || method == "PATCH":
		b.WriteString("Content-Length: 0\r\n") // as Go writes it (transfer.go shouldSendContentLength)
	}
	if cfg.Conn.Reuse == scenario.ReuseNone {
		b.WriteString("Connection: close\r\n")
	}
	const pad = "X-Trafficlab-Pad: \r\n"
	if n := cfg.HeaderBytes - int64(b.Len()+2+len(pad)); n > 0 {
		b.WriteString("X-Trafficlab-Pad: " + strings.Repeat("x", int(min(n, 64<<10))) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(make([]byte, cfg.BodyBytes))
	addr := u.Host
	if u.Port() == "" {
		addr += ":80"
	}
	idem := false
	switch method {
	// The methods scenario.Request names idempotent.
	case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE":
		idem = true
	}
	return &h1request{bytes: b.Bytes(), head: method == "HEAD", idempotent: idem, addr: addr}, nil
}

func newH1Pool(r *runner) *h1pool {
	c := r.cfg.Conn
	return &h1pool{
		r: r, maxPerHost: c.MaxPerHost, maxIdle: c.MaxIdlePerHost, idleTO: c.IdleTimeout, lifetime: c.MaxLifetime,
		noReuse: c.Reuse == scenario.ReuseNone, retryStale: c.RetriesStale, pick: c.IdlePick, unchecked: c.UncheckedIdle,
	}
}

// maxStaleRetries bounds the resends of one request; Go's has no count (it goes on
// while it draws reused connections), .NET stops at 3, Java at 5.
const maxStaleRetries = 5

// errAbandoned marks a request cut off by the end of the run or an aborted run.
var errAbandoned = fmt.Errorf("load: abandoned: %w", context.Canceled)

// exchange sends one request and reads its answer, resending it on another
// connection when a reused one turns out stale and the library would.
func (p *h1pool) exchange(w *worker, pr *phaseRun, now time.Time) (status int, pod string, end time.Time, err error) {
	return p.send(w, pr.ctx, p.r.h1, now.Add(p.r.cfg.Timeout))
}

// send is exchange of request req, within ctx (the run's phase, or a pod's
// calls), to answer by deadline.
func (p *h1pool) send(w *worker, ctx context.Context, req *h1request, deadline time.Time) (status int, pod string, end time.Time, err error) {
	for attempt := 0; ; attempt++ {
		c, err := p.get(w, ctx, req, deadline)
		if err != nil {
			return 0, "", time.Now(), err
		}
		w.conn.Store(c.tc)
		w.active.Store(c)
		if ctx.Err() != nil {
			// The run ended or aborted between the deadline being set and the
			// connection being published to interrupt (see worker.interrupt).
			w.active.Store(nil)
			p.drop(c)
			return 0, "", time.Now(), errAbandoned
		}
		status, pod, keep, started, err := c.roundTrip(w, req)
		end = time.Now()
		if err == nil && !keep {
			// Wait for the server's FIN before closing, so that the server, not the
			// client, holds the TIME_WAIT: a new connection per request stays
			// sustainable. Not part of the request's latency.
			_, _ = c.br.Discard(1)
		}
		w.active.Store(nil)
		if err == nil {
			p.put(c, keep && !p.noReuse)
			return status, pod, end, nil
		}
		p.drop(c)
		if ctx.Err() != nil {
			return 0, "", end, errAbandoned
		}
		if !started && c.uses > 0 && p.retryStale && req.idempotent && attempt < maxStaleRetries && classify(err) != kindTimeout {
			w.retried.Store(true)
			continue
		}
		return status, pod, end, err
	}
}

// get takes an idle connection, opens one, or waits for one; the connection comes
// with its deadline set.
func (p *h1pool) get(w *worker, ctx context.Context, req *h1request, deadline time.Time) (*h1conn, error) {
	for {
		p.mu.Lock()
		c, dial := p.takeLocked(time.Now())
		if c == nil && !dial {
			p.waiters = append(p.waiters, w)
		}
		doomed := p.takeDoomed()
		p.mu.Unlock()
		p.closeAll(doomed)
		switch {
		case c != nil:
			// A library that does not check a connection idle this briefly sends on
			// it whatever the server did (library.Profile.UncheckedIdle).
			unchecked := p.unchecked > 0 && time.Since(c.lastUsed) < p.unchecked
			if err := c.tc.SetDeadline(deadline); err == nil && (unchecked || c.alive()) {
				return c, nil
			}
			p.drop(c)
			continue
		case !dial:
			g, err := p.wait(w, ctx, deadline)
			if err != nil {
				return nil, err
			}
			if g.c != nil {
				if err := g.c.tc.SetDeadline(deadline); err != nil {
					p.drop(g.c)
					continue
				}
				return g.c, nil
			}
		}
		c, err := p.dial(ctx, req.addr, deadline)
		if err != nil {
			p.release()
			if ctx.Err() != nil {
				return nil, errAbandoned
			}
			return nil, err
		}
		return c, nil
	}
}

// takeLocked returns a usable idle connection, or reserves a new one (dial), or
// neither (wait). Stale idle connections go to doomed.
func (p *h1pool) takeLocked(now time.Time) (c *h1conn, dial bool) {
	if !p.noReuse {
		for p.head < len(p.idle) {
			switch p.pick {
			case library.PickFIFO:
				c = p.idle[p.head]
				p.idle[p.head] = nil
				p.head++
			case library.PickCreated:
				c = p.takeFirstOpened()
			default:
				c = p.idle[len(p.idle)-1]
				p.idle[len(p.idle)-1] = nil
				p.idle = p.idle[:len(p.idle)-1]
			}
			p.compact()
			if p.stale(now, c) {
				p.open--
				p.doomed = append(p.doomed, c)
				c = nil
				continue
			}
			return c, false
		}
	}
	if p.maxPerHost == 0 || p.open < p.maxPerHost {
		p.open++
		return nil, true
	}
	return nil, false
}

// takeFirstOpened removes the idle connection opened first, keeping the others
// in release order, as model/client's pool does for library.PickCreated.
func (p *h1pool) takeFirstOpened() *h1conn {
	first := p.head
	for i := p.head + 1; i < len(p.idle); i++ {
		if p.idle[i].tc.born.Before(p.idle[first].tc.born) {
			first = i
		}
	}
	c := p.idle[first]
	copy(p.idle[first:], p.idle[first+1:])
	p.idle[len(p.idle)-1] = nil
	p.idle = p.idle[:len(p.idle)-1]
	return c
}

func (p *h1pool) stale(now time.Time, c *h1conn) bool {
	if p.lifetime > 0 && now.Sub(c.tc.born) >= p.lifetime {
		p.r.tracker.retired.Add(1)
		return true
	}
	return p.idleTO > 0 && now.Sub(c.lastUsed) >= p.idleTO
}

// compact keeps the idle slice from creeping forward through memory, as
// model/client.Pool does.
func (p *h1pool) compact() {
	if p.head == len(p.idle) {
		p.idle, p.head = p.idle[:0], 0
	} else if p.head > 32 && 2*p.head > len(p.idle) {
		n := copy(p.idle, p.idle[p.head:])
		clear(p.idle[n:])
		p.idle, p.head = p.idle[:n], 0
	}
}

// takeDoomed hands the connections to close to the caller, who closes them after
// unlocking (rare: only expired connections).
func (p *h1pool) takeDoomed() []*h1conn {
	d := p.doomed
	p.doomed = nil
	return d
}

func (p *h1pool) closeAll(cs []*h1conn) {
	for _, c := range cs {
		c.tc.Close()
	}
}

// wait queues w until a connection is handed to it or it may dial, the request's
// deadline passes or the run abandons it.
func (p *h1pool) wait(w *worker, ctx context.Context, deadline time.Time) (grant, error) {
	t := w.timerFor(time.Until(deadline))
	select {
	case g := <-w.grant:
		t.Stop()
		return g, nil
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	p.mu.Lock()
	queued := false
	for i := p.whead; i < len(p.waiters); i++ {
		if p.waiters[i] == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			queued = true
			break
		}
	}
	p.mu.Unlock()
	if !queued {
		// Handed something as it gave up: pass it on.
		g := <-w.grant
		if g.c != nil {
			p.put(g.c, true)
		} else {
			p.release()
		}
	}
	if ctx.Err() != nil {
		return grant{}, errAbandoned
	}
	return grant{}, fmt.Errorf("waiting for a pooled connection: %w", context.DeadlineExceeded)
}

// popWaiterLocked is the oldest waiting worker, or nil.
func (p *h1pool) popWaiterLocked() *worker {
	if p.whead == len(p.waiters) {
		return nil
	}
	w := p.waiters[p.whead]
	p.waiters[p.whead] = nil
	p.whead++
	if p.whead == len(p.waiters) {
		p.waiters, p.whead = p.waiters[:0], 0
	}
	return w
}

// put returns a connection whose exchange succeeded.
func (p *h1pool) put(c *h1conn, keep bool) {
	now := time.Now()
	c.lastUsed = now
	c.uses++
	p.mu.Lock()
	if !keep || (p.lifetime > 0 && now.Sub(c.tc.born) >= p.lifetime) {
		if keep {
			p.r.tracker.retired.Add(1)
		}
		p.mu.Unlock()
		p.drop(c)
		return
	}
	if w := p.popWaiterLocked(); w != nil {
		w.grant <- grant{c: c}
		p.mu.Unlock()
		return
	}
	if p.maxIdle > 0 && len(p.idle)-p.head >= p.maxIdle {
		p.open--
		p.mu.Unlock()
		c.tc.Close()
		return
	}
	// Idle timeouts are enforced when the pool is next used, oldest first.
	for p.idleTO > 0 && p.head < len(p.idle) && now.Sub(p.idle[p.head].lastUsed) >= p.idleTO {
		p.doomed = append(p.doomed, p.idle[p.head])
		p.idle[p.head] = nil
		p.head++
		p.open--
	}
	p.compact()
	p.idle = append(p.idle, c)
	doomed := p.takeDoomed()
	p.mu.Unlock()
	p.closeAll(doomed)
}

// drop closes a connection that cannot be reused and frees its place.
func (p *h1pool) drop(c *h1conn) {
	c.tc.Close()
	p.release()
}

// release frees one place in the pool: the oldest waiter may dial.
func (p *h1pool) release() {
	p.mu.Lock()
	if w := p.popWaiterLocked(); w != nil {
		w.grant <- grant{}
	} else {
		p.open--
	}
	p.mu.Unlock()
}

// dial opens a connection; its place in the pool is already counted.
func (p *h1pool) dial(ctx context.Context, addr string, deadline time.Time) (*h1conn, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	nc, err := p.r.tracker.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := nc.(*conn)
	c := &h1conn{tc: tc, br: bufio.NewReaderSize(tc, 4096)}
	if sc, ok := tc.Conn.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
		c.peek = c.peekFD
	}
	if err := tc.SetDeadline(deadline); err != nil {
		tc.Close()
		return nil, err
	}
	return c, nil
}

// close closes the idle connections, at the end of a run.
func (p *h1pool) close() {
	p.mu.Lock()
	idle := append([]*h1conn(nil), p.idle[p.head:]...)
	p.idle, p.head = nil, 0
	p.open -= len(idle)
	p.mu.Unlock()
	for _, c := range idle {
		c.tc.Close()
	}
}

// alive reports whether an idle connection is still fit for a request: nothing
// unread (an answer nobody asked for) and no FIN or reset from the server. One
// non-blocking peek, as .NET's PrepareForReuse and urllib3's is_connection_dropped
// poll the socket before reuse.
func (c *h1conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if c.raw == nil {
		return true
	}
	c.peekOK = false
	if err := c.raw.Read(c.peek); err != nil {
		return false
	}
	return c.peekOK
}

func (c *h1conn) peekFD(fd uintptr) bool {
	n, _, err := syscall.Recvfrom(int(fd), c.peekBuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	// EAGAIN: nothing to read, the connection is open. 0 bytes: the server's FIN.
	// Bytes: data nobody asked for. Anything else: a reset or worse.
	c.peekOK = n <= 0 && errors.Is(err, syscall.EAGAIN)
	return true
}

// errBadResponse is an answer that is not HTTP/1.x.
var errBadResponse = errors.New("malformed HTTP response")

// roundTrip writes the request and reads the whole answer. keep tells whether the
// connection may carry another request; started whether any answer byte came.
func (c *h1conn) roundTrip(w *worker, req *h1request) (status int, pod string, keep, started bool, err error) {
	if _, err = c.tc.Write(req.bytes); err != nil {
		return 0, "", false, false, err
	}
	br := c.br
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			started = true
		}
		if err != nil {
			return 0, "", false, started, eofIsUnexpected(err, started)
		}
		// HTTP/1.x SSS reason
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, "", false, true, errBadResponse
		}
		status = digits(line[9:12])
		if status < 100 {
			return 0, "", false, true, errBadResponse
		}
		http10 := line[7] == '0'
		keep = !http10
		length, chunked := int64(-1), false
		pod = ""
		for {
			line, err = br.ReadSlice('\n')
			if err != nil {
				return status, pod, false, true, eofIsUnexpected(err, true)
			}
			if len(line) <= 2 {
				break // the blank line
			}
			i := bytes.IndexByte(line, ':')
			if i <= 0 {
				return status, pod, false, true, errBadResponse
			}
			name, value := line[:i], bytes.TrimSpace(line[i+1:])
			switch {
			case foldEqual(name, "content-length"):
				if length = int64(digits(value)); length < 0 {
					return status, pod, false, true, errBadResponse
				}
			case foldEqual(name, "transfer-encoding"):
				chunked = hasTokenFold(value, "chunked")
			case foldEqual(name, "connection"):
				if hasTokenFold(value, "close") {
					keep = false
				} else if http10 && hasTokenFold(value, "keep-alive") {
					keep = true
				}
			case foldEqual(name, PodHeader):
				pod = w.podName(value)
			}
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // an interim answer (100 Continue): the real one follows
		}
		var n int64
		switch {
		case req.head || status == 204 || status == 304:
		case chunked:
			n, err = discardChunked(br)
		case length >= 0:
			var d int
			d, err = br.Discard(int(length))
			n = int64(d)
		default:
			// Delimited by the server's close (RFC 9112 section 6.3).
			n, err = io.Copy(io.Discard, br)
			keep = false
		}
		w.bodyIn = n
		if err != nil {
			return status, pod, false, true, eofIsUnexpected(err, true)
		}
		return status, pod, keep, true, nil
	}
}

// discardChunked reads a chunked body and its trailers (RFC 9112 section 7.1),
// and tells the body's bytes (the chunks' data, as Go's chunked reader gives them).
func discardChunked(br *bufio.Reader) (int64, error) {
	var body int64
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return body, err
		}
		line = bytes.TrimSpace(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = bytes.TrimSpace(line[:i])
		}
		n, err := strconv.ParseInt(string(line), 16, 64)
		if err != nil || n < 0 {
			return body, errBadResponse
		}
		if n == 0 {
			for {
				t, err := br.ReadSlice('\n')
				if err != nil {
					return body, err
				}
				if len(t) <= 2 {
					return body, nil
				}
			}
		}
		d, err := br.Discard(int(n))
		body += int64(d)
		if err != nil {
			return body, err
		}
		if crlf, err := br.ReadSlice('\n'); err != nil {
			return body, err
		} else if len(bytes.TrimSpace(crlf)) != 0 {
			return body, errBadResponse
		}
	}
}

// eofIsUnexpected: the server's close in the middle of an answer is an unexpected
// EOF, as Go reports it; before any byte, a plain EOF. Both are connection_closed.
func eofIsUnexpected(err error, started bool) error {
	if errors.Is(err, io.EOF) && started {
		return io.ErrUnexpectedEOF
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("%w: header line over 4 KiB", errBadResponse)
	}
	return err
}

// digits parses a decimal number; -1 if b is not one.
func digits(b []byte) int {
	if len(b) == 0 || len(b) > 18 {
		return -1
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// foldEqual compares a header name with lower-case ASCII s, ignoring case.
func foldEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// hasTokenFold reports whether a comma-separated header value holds token.
func hasTokenFold(v []byte, token string) bool {
	for len(v) > 0 {
		i := bytes.IndexByte(v, ',')
		t := v
		if i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if foldEqual(bytes.TrimSpace(t), token) {
			return true
		}
	}
	return false
}
