package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"trafficlab/emulate/grpcwire"
	"trafficlab/model/library"
	"trafficlab/result"
	"trafficlab/scenario"
)

// Caller is a service pod's client for one Service it calls (the emulated side of
// simulate's calls): the pod client's library pools, on the trafficlab HTTP/1.1
// client, which pools as model/client.Pool does (h1.go: a connection returns to
// the pool before the call returns, so the next call takes it), or for HTTP/2 on a
// net/http Transport mapped as the load generator maps a client's (transport.go).
type Caller struct {
	url  string
	conn Connections
	tr   *tracker
	// HTTP/1.1: the pool, and a request per body size, each written whole.
	h1      *h1pool
	mu      sync.Mutex
	reqs    map[int64]*h1request
	method  string
	header  int64
	workers sync.Pool
	// HTTP/2.
	t     *http.Transport
	zeros []byte // request bodies are read from it: never written after NewCaller
	// gRPC: the pod's channel to the Service.
	grpc *grpc.ClientConn
}

// NewCaller builds the caller of url (the called Service's ClusterIP, or a headless
// Service's name, which it resolves at the DNS server dns as the library does) with
// the pods' client c, for request bodies of at most maxBody bytes, dialling with
// dial (nil: a plain net.Dialer's). A connection lifetime is not emulated for calls
// yet.
func NewCaller(c *scenario.CallClient, url, dns string, maxBody int64, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*Caller, error) {
	profile, hasProfile := library.Lookup(c.Library)
	if c.Library != "" && !hasProfile {
		return nil, fmt.Errorf("unknown library %q; known: %s", c.Library, strings.Join(library.Names(), ", "))
	}
	conn := connectionsOf(c.Connections, profile, hasProfile)
	if conn.MaxLifetime > 0 {
		return nil, errors.New("a connection lifetime (maxLifetime) is not emulated for calls yet")
	}
	named := Config{Target: url, DNS: dns, Resolution: library.ResolutionOf(c.Library), Dial: dial, Conn: conn, Name: "caller"}
	cl := &Caller{url: url, conn: conn, tr: newTracker(namedDial(&named)), reqs: map[int64]*h1request{}, method: c.Request.Method}
	if c.Request.HeaderBytes != nil {
		cl.header = *c.Request.HeaderBytes
	}
	switch conn.Protocol {
	case scenario.ProtocolHTTP2:
		cl.t, cl.zeros = newTransport(conn, cl.tr.dial), make([]byte, maxBody)
		return cl, nil
	case scenario.ProtocolGRPC:
		target, err := grpcTarget(&named)
		if err != nil {
			return nil, err
		}
		if cl.grpc, err = grpc.NewClient(target, channelOptions(conn, cl.tr)...); err != nil {
			return nil, fmt.Errorf("grpc channel to %s: %w", target, err)
		}
		cl.zeros = make([]byte, maxBody)
		return cl, nil
	}
	cl.h1 = newH1Pool(&runner{cfg: Config{Conn: conn}, tracker: cl.tr})
	cl.workers.New = func() any { return &worker{grant: make(chan grant, 1)} }
	return cl, nil
}

// request is the HTTP/1.1 request with a body of n bytes, made once.
func (c *Caller) request(n int64) (*h1request, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.reqs[n]; ok {
		return r, nil
	}
	r, err := newH1Request(&Config{Target: c.url, Method: c.method, HeaderBytes: c.header, BodyBytes: n, Conn: c.conn})
	if err == nil {
		c.reqs[n] = r
	}
	return r, err
}

// Call makes one attempt with a body of bodyBytes, given timeout to its answer's last
// byte. It returns the pod that answered ("" when none did) and, for a failure,
// its kind: an error status counts as a 503, as simulate's app answers a failed
// call with one; an error of no kind as a reset.
func (c *Caller) Call(ctx context.Context, timeout time.Duration, bodyBytes int64) (pod string, failed bool, k result.ErrorKind) {
	var status int
	var err error
	switch {
	case c.grpc != nil:
		ctx, cancel := context.WithTimeout(ctx, timeout)
		pod, err = grpcwire.Call(ctx, c.grpc, c.zeros[:min(bodyBytes, int64(len(c.zeros)))])
		cancel()
		if k, ok := grpcwire.Kind(err); ok {
			return pod, true, k
		}
		if err != nil {
			// A status of the app's own: one of its calls failed, as a 503 says.
			return pod, true, result.ErrorHTTP503
		}
		return pod, false, 0
	case c.h1 != nil:
		var req *h1request
		if req, err = c.request(bodyBytes); err != nil {
			return "", true, result.ErrorConnectionReset
		}
		w := c.workers.Get().(*worker)
		status, pod, _, err = c.h1.send(w, ctx, req, time.Now().Add(timeout))
		c.workers.Put(w)
	default:
		status, pod, err = c.h2(ctx, timeout, bodyBytes)
	}
	switch {
	case err == nil && status >= 400:
		return pod, true, result.ErrorHTTP503
	case err == nil:
		return pod, false, 0
	}
	if e, ok := classify(err).errorKind(); ok {
		return pod, true, e
	}
	return pod, true, result.ErrorConnectionReset
}

// h2 makes an attempt on the HTTP/2 Transport.
func (c *Caller) h2(ctx context.Context, timeout time.Duration, bodyBytes int64) (status int, pod string, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, bytes.NewReader(c.zeros[:min(bodyBytes, int64(len(c.zeros)))]))
	if err != nil {
		return 0, "", err
	}
	resp, err := c.t.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	if v := resp.Header[PodHeader]; len(v) > 0 {
		pod = v[0]
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, pod, err
}

// Opened is how many connections the caller opened, and the most open at once.
func (c *Caller) Opened() (opened, peak int64) { return c.tr.opened.Load(), c.tr.peak.Load() }

// Close closes the caller's idle connections.
func (c *Caller) Close() {
	switch {
	case c.grpc != nil:
		c.grpc.Close()
	case c.h1 != nil:
		c.h1.close()
	default:
		c.t.CloseIdleConnections()
	}
}
