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
	"time"

	"trafficlab/model/library"
	"trafficlab/result"
	"trafficlab/scenario"
)

// Caller is a service pod's client for one Service it calls (the emulated side of
// simulate's calls): the pod's client library's pools on one net/http Transport,
// mapped as the load generator's net/http client maps a client's (transport.go).
type Caller struct {
	t      *http.Transport
	tr     *tracker
	url    string
	method string
	zeros  []byte // request bodies are read from it: never written after NewCaller
}

// NewCaller builds the caller of url (the called Service's ClusterIP) with the pods'
// client c, for request bodies of at most maxBody bytes, dialling with dial (nil: a
// plain net.Dialer's). A connection lifetime is not emulated for calls yet.
func NewCaller(c *scenario.CallClient, url string, maxBody int64, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*Caller, error) {
	profile, hasProfile := library.Lookup(c.Library)
	if c.Library != "" && !hasProfile {
		return nil, fmt.Errorf("unknown library %q; known: %s", c.Library, strings.Join(library.Names(), ", "))
	}
	conn := connectionsOf(c.Connections, profile, hasProfile)
	if conn.MaxLifetime > 0 {
		return nil, errors.New("a connection lifetime (maxLifetime) is not emulated for calls yet")
	}
	tr := newTracker(dial)
	return &Caller{t: newTransport(conn, tr.dial), tr: tr, url: url, method: c.Request.Method, zeros: make([]byte, maxBody)}, nil
}

// Call makes one attempt with a body of bodyBytes, given timeout to its answer's last
// byte. It returns the pod that answered ("" when none did) and, for a failure,
// its kind: an error status counts as a 503, as simulate's app answers a failed
// call with one; an error of no kind as a reset.
func (c *Caller) Call(ctx context.Context, timeout time.Duration, bodyBytes int64) (pod string, failed bool, k result.ErrorKind) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bodyBytes = min(bodyBytes, int64(len(c.zeros)))
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, bytes.NewReader(c.zeros[:bodyBytes]))
	if err != nil {
		return "", true, result.ErrorConnectionReset
	}
	resp, err := c.t.RoundTrip(req)
	if err == nil {
		if v := resp.Header[PodHeader]; len(v) > 0 {
			pod = v[0]
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode >= 400 {
			return pod, true, result.ErrorHTTP503
		}
	}
	if err == nil {
		return pod, false, 0
	}
	if e, ok := classify(err).errorKind(); ok {
		return pod, true, e
	}
	return pod, true, result.ErrorConnectionReset
}

// Opened is how many connections the caller opened, and the most open at once.
func (c *Caller) Opened() (opened, peak int64) { return c.tr.opened.Load(), c.tr.peak.Load() }

// Close closes the caller's idle connections.
func (c *Caller) Close() { c.t.CloseIdleConnections() }
