package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
	"trafficlab/emulate/userspace"
	"trafficlab/model/kubeproxy"
)

// relay is the relay of trafficlab's emulate/userspace (kube-proxy's userspace mode)
// for one service with one endpoint, on loopback. emulate/userspace's Proxy cannot run
// here without a network namespace and nftables: its exported constructor, New, needs
// both, and start, which tests use on loopback, is unexported. So this has the shape
// of its proxyLoop and tryConnect (accept; dial the backend in the accept loop itself,
// one attempt per dial timeout) and copies with its own userspace.Relay. Left out: the
// round-robin pick (a mutex and an index) and the stats counters, nanoseconds per
// connection; and emulate's namespace Dialer, which hands each dial to a goroutine
// locked in the node's namespace (a channel send and reply, so a few goroutine
// switches per connection, which the real kube-proxy did not have).
//
// io.Copy between two *net.TCPConn splices on Linux: TCPConn.WriteTo falls back to
// genericWriteTo, which hides WriteTo, so io.Copy calls the destination's ReadFrom,
// and TCPConn.readFrom uses spliceFrom for a TCP source (Go net/tcpsock_posix.go,
// net/net.go, net/splice_linux.go). Bytes go socket to pipe to socket in the kernel.
type relay struct {
	ln      net.Listener
	backend string

	mu    sync.Mutex
	conns map[net.Conn]struct{} // open sockets, both sides (userspace.go track)
}

func (r *relay) proxyLoop() {
	for {
		in, err := r.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE: do not spin
			continue
		}
		r.track(in)
		out, err := r.tryConnect()
		if err != nil {
			r.untrack(in)
			in.Close()
			continue
		}
		r.track(out)
		go r.proxyTCP(in, out)
	}
}

func (r *relay) tryConnect() (net.Conn, error) {
	var nd net.Dialer
	var err error
	for _, timeout := range kubeproxy.Userspace.DialTimeouts() { // one attempt each
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		var out net.Conn
		out, err = nd.DialContext(ctx, "tcp", r.backend)
		cancel()
		if err == nil {
			return out, nil
		}
	}
	return nil, err
}

func (r *relay) proxyTCP(in, out net.Conn) {
	userspace.Relay(in, out)
	r.untrack(in)
	r.untrack(out)
}

func (r *relay) track(c net.Conn) {
	r.mu.Lock()
	r.conns[c] = struct{}{}
	r.mu.Unlock()
}

func (r *relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

func (r *relay) open() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

// relayStats is the relay's CPU so far.
type relayStats struct{ CPUNs, SysNs int64 }

// relayDaemon runs a relay to backend: it prints its address, then answers each stats
// line, which says how many connections the client keeps open, once no more than those
// are open (or after 2 s), so that the closing of the connections just relayed counts.
func relayDaemon(backend string) error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r := &relay{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	go r.proxyLoop()
	defer ln.Close()
	fmt.Println(ln.Addr())
	return answerStats(func(line string) any {
		keep, _ := strconv.Atoi(line)
		for t := time.Now(); r.open() > 2*keep && time.Since(t) < 2*time.Second; {
			time.Sleep(time.Millisecond)
		}
		u := selfUsage()
		return relayStats{u.cpu().Nanoseconds(), u.sys.Nanoseconds()}
	})
}

// relayCase: the relay's CPU per relayed connection (one 13-byte exchange each, the
// client without keep-alive), per request on one kept connection, and per KiB of one
// large response. The relay runs where the measured clients do (CPU 1 with -pin), the
// server on its own CPU, and the client is this process, unpinned.
func relayCase(e *env) ([]sample, error) {
	rl, err := e.startDaemon(clientCPU, "relay", "-backend", e.srv.addr)
	if err != nil {
		return nil, err
	}
	defer rl.close()
	client := func(keepAlive bool, timeout time.Duration) *http.Client {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableKeepAlives = !keepAlive
		tr.Proxy = nil
		return &http.Client{Transport: tr, Timeout: timeout}
	}
	get := func(c *http.Client, url string) (int64, error) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = errors.New(resp.Status)
		}
		return n, err
	}
	// requests sends e.n GETs through the relay after warm-up ones, on one kept
	// connection (open 1) or a connection each (open 0).
	requests := func(figure, unit string, open int) (sample, error) {
		c := client(open > 0, 5*time.Second)
		defer c.CloseIdleConnections()
		for range warmup {
			get(c, rl.url()+warmPath[1:])
		}
		var failed int
		return e.relayed(rl, figure, unit, open, func() (int, int, error) {
			n, t0 := 0, time.Now()
			for ; n < e.n && time.Since(t0) < loopLimit; n++ {
				if _, err := get(c, rl.url()); err != nil {
					failed++
				}
			}
			return n, failed, nil
		})
	}
	return e.repeat(func() ([]sample, error) {
		perConn, err := requests("per connection (one request each)", "µs/conn", 0)
		if err != nil {
			return nil, err
		}
		perReq, err := requests("per request on a kept connection", "µs/req", 1)
		if err != nil {
			return nil, err
		}
		c := client(true, loopLimit)
		defer c.CloseIdleConnections()
		perKiB, err := e.relayed(rl, fmt.Sprintf("per KiB, %d MiB through one connection", e.bulk>>20), "µs/KiB", 0, func() (int, int, error) {
			n, err := get(c, rl.url()+"bulk?bytes="+strconv.FormatInt(e.bulk, 10))
			c.CloseIdleConnections()
			if err != nil || n != e.bulk {
				return 0, 0, fmt.Errorf("bulk: %d of %d bytes: %v", n, e.bulk, err)
			}
			return int(n >> 10), 0, nil
		})
		if err != nil {
			return nil, err
		}
		return []sample{perConn, perReq, {"per connection, its request left out", "µs/conn", perConn.Value - perReq.Value, nil}, perKiB}, nil
	})
}

// relayed runs drive, which returns how many operations it did (and how many failed),
// and divides the relay's CPU meanwhile by them. The client keeps open connections
// through the relay before and after.
func (e *env) relayed(rl *daemon, figure, unit string, open int, drive func() (ops, failed int, err error)) (sample, error) {
	var before, after relayStats
	var ops, failed int
	var wall time.Duration
	st, err := counted(e.srv, func() error {
		if err := rl.stats(&before, open); err != nil {
			return err
		}
		t0 := time.Now()
		var err error
		if ops, failed, err = drive(); err != nil {
			return err
		}
		wall = time.Since(t0)
		return rl.stats(&after, open)
	})
	if err != nil {
		return sample{}, err
	}
	if ops == 0 {
		return sample{}, fmt.Errorf("relay: nothing relayed in %v", loopLimit)
	}
	cpu := after.CPUNs - before.CPUNs
	return sample{figure, unit, float64(cpu) / 1e3 / float64(ops), &runInfo{
		N:     ops,
		Rate:  float64(ops) / wall.Seconds(),
		Conns: st.connsPerReq(),
		Errs:  float64(failed) / float64(ops),
		Sys:   float64(after.SysNs-before.SysNs) / float64(cpu),
		Cmd:   rl.shown,
	}}, nil
}
