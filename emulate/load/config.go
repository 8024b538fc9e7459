// Package load is trafficlab's load generator: real HTTP requests from Go's
// net/http Transport, shaped like one client pod of a scenario. A closed loop
// (threads) or an open loop (a rate), the client's connection strategy mapped onto
// Transport settings, per-pod counting from the X-Trafficlab-Pod response header,
// which pod each connection reached, an HDR histogram of latencies, a per-second
// timeline, and errors named as the simulator names them.
//
// An open loop measures latency from each request's intended start, so a generator
// that falls behind (or a request that waits for a pooled connection) shows the delay
// instead of hiding it (coordinated omission); an arrival that finds every slot busy
// is counted as not sent, as simulate does (simulate/caller.go onArrival).
//
// One Run is one client pod: an emulated scenario starts one per client replica.
package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/model/library"
	"trafficlab/scenario"
)

// PodHeader is the response header naming the pod that answered (`trafficlab serve`
// sets it).
const PodHeader = "X-Trafficlab-Pod"

// DefaultMaxRequests bounds a run whose Config leaves MaxRequests at 0: at 100,000
// requests per second, more than eight minutes.
const DefaultMaxRequests = 50_000_000

// maxSlots bounds the concurrent requests of an open loop without MaxInFlight, so a
// server that stops answering cannot make the generator start goroutines without
// end; arrivals beyond it are counted as not sent.
const maxSlots = 10_000

// Config is one client pod's load. Build it with FromClient, or by hand.
type Config struct {
	// Target is the URL every request asks for: http://HOST:PORT/PATH. Plain HTTP
	// only; HTTP/2 is h2c with prior knowledge, as the pods serve it.
	Target string
	// Duration bounds the run: nothing is sent after it, and what is still in flight
	// then is abandoned and counted as in flight. Required.
	Duration time.Duration
	// Seed and Name derive the random streams (arrivals, think times), as the
	// simulator derives one per entity.
	Seed int64
	Name string
	// Library is the client library profile the connection settings came from, for
	// the report; Conn holds the settings themselves.
	Library string
	// Phases run in order, Repeat times (0 means once). A plain client is one phase
	// without a duration or request count: it lasts the whole run.
	Phases []Phase
	Repeat int
	// Arrival of open-loop requests: scenario.ArrivalConstant (default) or
	// scenario.ArrivalPoisson.
	Arrival string
	// MaxInFlight bounds an open loop's concurrent requests; an arrival that finds
	// them all busy is counted as not sent. 0 = unbounded (up to 10,000).
	MaxInFlight int
	// ThinkTime after each answer of a closed-loop thread. Nil: none.
	ThinkTime *scenario.Distribution
	// Overhead is the client's own time before each request is sent.
	Overhead time.Duration
	// Timeout of one request, from sending to the last byte of the answer. Required.
	Timeout time.Duration
	// AbortsRun ends the current phase at the first error other than a closed
	// connection, abandoning what is in flight, as ab does (library.Profile.AbortsRun).
	AbortsRun bool
	Conn      Connections
	// Method of every request (default GET); BodyBytes of zeros are sent with it;
	// HeaderBytes, when larger than what Go writes, is reached with a padding header.
	Method      string
	HeaderBytes int64
	BodyBytes   int64
	// MaxRequests bounds the requests sent; 0 means DefaultMaxRequests.
	MaxRequests int64
	// HTTPClient is ClientTrafficlab (the default for HTTP/1.1) or ClientNetHTTP
	// (Go's net/http Transport; always for HTTP/2).
	HTTPClient string
	// Start, when set, is when the run begins (Run waits for it): the emulator
	// starts every client pod's load at one instant, so their timelines line up.
	Start time.Time
	// OnInterval, when set, is given each timeline interval's histogram of
	// successful latencies (ns) once the interval is final, in order, so that the
	// loads of several client pods can be merged into one timeline. It must not keep h.
	OnInterval func(sec int64, h *hdr.Histogram)
	// SlowThreshold, when above 0, counts the answers slower than it in the
	// report, per interval and per pod: the scenario's report.slowThreshold.
	SlowThreshold time.Duration
	// Dial, if set, opens every connection instead of a net.Dialer: the emulator
	// dials from inside the client pod's network namespace with it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// DNS is the DNS server (IP:PORT) that resolves a target named by a host
	// name, as a headless Service's; "" is the system's resolver. Resolution is
	// how the library resolves it; nil resolves as Go does.
	DNS        string
	Resolution *library.Resolution
}

// HTTP clients a run can use.
const (
	// ClientTrafficlab is load's own HTTP/1.1 client: the library profile's pool
	// rules, no goroutine hand-offs, no allocation per request (h1.go).
	ClientTrafficlab = "trafficlab"
	// ClientNetHTTP is Go's net/http Transport: Go's own pooling whatever the
	// profile, at about half the request rate on a small machine (transport.go).
	ClientNetHTTP = "net/http"
	// clientGRPC is grpc-go, for protocol grpc whatever HTTPClient says (grpc.go).
	clientGRPC = "grpc-go"
)

// Phase is one step of the load: a closed loop of Threads, or an open loop at Rate
// requests per second (moving linearly to RampTo over Duration when set). It ends
// after Duration, or once Requests are answered, whichever first; 0 = no bound
// (the run's Duration still holds). Pause follows it.
type Phase struct {
	Name     string
	Threads  int
	Rate     float64
	RampTo   float64
	Duration time.Duration
	Requests int64
	Pause    time.Duration
}

// Connections is how the client pools connections, as scenario.Connections and
// library.Profile define it, with 0 meaning unlimited or never.
type Connections struct {
	// Reuse: scenario.ReuseNone, ReusePerThread or ReuseShared.
	Reuse          string
	MaxPerHost     int
	MaxIdlePerHost int
	IdleTimeout    time.Duration
	MaxLifetime    time.Duration
	// Protocol: scenario.ProtocolHTTP1, ProtocolHTTP2 (h2c) or ProtocolGRPC.
	Protocol string
	// LoadBalancing is a gRPC channel's policy: scenario.PickFirst or RoundRobin.
	LoadBalancing string
	// HTTP/2 receive windows; 0 = Go's defaults.
	StreamWindowBytes, ConnectionWindowBytes int64
	// IdlePick: library.PickLIFO (default), PickFIFO or PickCreated, which idle
	// connection a request takes; UncheckedIdle: one idle less long is used without
	// looking for the server's close; RetriesStale: a request that fails on a reused
	// connection before any answer byte is resent on another (idempotent methods).
	// All are the library profile's; the net/http client does as Go does whatever
	// they say.
	IdlePick      string
	UncheckedIdle time.Duration
	RetriesStale  bool
}

// client is the HTTP client the run uses.
func (c *Config) client() string {
	switch {
	case c.Conn.Protocol == scenario.ProtocolGRPC:
		return clientGRPC
	case c.HTTPClient == ClientNetHTTP || c.Conn.Protocol == scenario.ProtocolHTTP2:
		return ClientNetHTTP
	}
	return ClientTrafficlab
}

// openLoop reports whether phase p is an open loop.
func (p Phase) openLoop() bool { return p.Rate > 0 }

// check reports what is wrong with the configuration, so Run never starts a run it
// cannot bound.
func (c *Config) check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	c.checkTarget(bad)
	c.checkLimits(bad)
	c.checkLoad(bad)
	c.checkConnections(bad)
	return errors.Join(errs...)
}

// checkTarget wants an http:// URL with a host.
func (c *Config) checkTarget(bad func(format string, a ...any)) {
	u, err := url.Parse(c.Target)
	switch {
	case c.Target == "":
		bad("no target: want http://HOST:PORT/")
	case err != nil:
		bad("target %q: %v", c.Target, err)
	case u.Scheme != "http":
		bad("target %q: want an http:// URL (pods serve plain HTTP/1.1 and h2c)", c.Target)
	case u.Host == "":
		bad("target %q: no host", c.Target)
	}
}

// checkLimits wants positive durations and no negative counts or sizes.
func (c *Config) checkLimits(bad func(format string, a ...any)) {
	if c.Duration <= 0 {
		bad("duration must be positive, got %v", c.Duration)
	}
	if c.Timeout <= 0 {
		bad("timeout must be positive, got %v", c.Timeout)
	}
	if c.Overhead < 0 {
		bad("overhead must not be negative, got %v", c.Overhead)
	}
	if c.MaxRequests < 0 {
		bad("max requests must not be negative, got %d", c.MaxRequests)
	}
	if c.MaxInFlight < 0 {
		bad("max in flight must not be negative, got %d", c.MaxInFlight)
	}
	if c.Repeat < 0 {
		bad("repeat must not be negative, got %d", c.Repeat)
	}
	if c.BodyBytes < 0 || c.HeaderBytes < 0 {
		bad("request sizes must not be negative")
	}
}

// checkLoad wants a known arrival process and phases that each give threads or a
// rate.
func (c *Config) checkLoad(bad func(format string, a ...any)) {
	switch c.Arrival {
	case "", scenario.ArrivalConstant, scenario.ArrivalPoisson:
	default:
		bad("arrival %q: want %s or %s", c.Arrival, scenario.ArrivalConstant, scenario.ArrivalPoisson)
	}
	if len(c.Phases) == 0 {
		bad("no load: give threads or a rate")
	}
	for i, p := range c.Phases {
		at := ""
		if len(c.Phases) > 1 {
			at = fmt.Sprintf("phase %d: ", i)
		}
		switch {
		case (p.Threads > 0) == (p.Rate > 0):
			bad("%sgive either threads or a rate, not both or neither", at)
		case p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0) || p.RampTo < 0 || math.IsInf(p.RampTo, 0):
			bad("%srate must be a positive number", at)
		case p.Threads > maxSlots:
			bad("%s%d threads: at most %d", at, p.Threads, maxSlots)
		case p.RampTo > 0 && p.Duration <= 0:
			bad("%sa ramp needs a duration", at)
		case p.RampTo > 0 && p.Threads > 0:
			bad("%sa ramp needs a rate", at)
		case p.Duration < 0 || p.Pause < 0 || p.Requests < 0:
			bad("%sduration, pause and requests must not be negative", at)
		}
	}
}

// checkConnections wants a known reuse, protocol, idle pick and HTTP client, and
// connection limits that are not negative.
func (c *Config) checkConnections(bad func(format string, a ...any)) {
	cn := c.Conn
	switch cn.Reuse {
	case scenario.ReuseNone, scenario.ReusePerThread, scenario.ReuseShared:
	default:
		bad("reuse %q: want %s, %s or %s", cn.Reuse, scenario.ReuseNone, scenario.ReusePerThread, scenario.ReuseShared)
	}
	switch cn.Protocol {
	case scenario.ProtocolHTTP1, scenario.ProtocolHTTP2:
	case scenario.ProtocolGRPC:
		if cn.MaxLifetime > 0 {
			bad("a connection lifetime (maxLifetime) is not emulated for gRPC channels")
		}
	default:
		bad("protocol %q: want %s, %s or %s", cn.Protocol, scenario.ProtocolHTTP1, scenario.ProtocolHTTP2, scenario.ProtocolGRPC)
	}
	switch cn.LoadBalancing {
	case "", scenario.PickFirst:
	case scenario.RoundRobin:
		if cn.Protocol != scenario.ProtocolGRPC {
			bad("load balancing %s: only a gRPC channel balances", cn.LoadBalancing)
		}
	default:
		bad("load balancing %q: want %s or %s", cn.LoadBalancing, scenario.PickFirst, scenario.RoundRobin)
	}
	if cn.MaxPerHost < 0 || cn.MaxIdlePerHost < 0 || cn.IdleTimeout < 0 || cn.MaxLifetime < 0 {
		bad("connection limits must not be negative")
	}
	switch cn.IdlePick {
	case "", library.PickLIFO, library.PickFIFO, library.PickCreated:
	default:
		bad("idle pick %q: want %s, %s or %s", cn.IdlePick, library.PickLIFO, library.PickFIFO, library.PickCreated)
	}
	switch c.HTTPClient {
	case "", ClientNetHTTP:
	case ClientTrafficlab:
		if cn.Protocol == scenario.ProtocolHTTP2 {
			bad("the %s client speaks HTTP/1.1; HTTP/2 runs on %s", ClientTrafficlab, ClientNetHTTP)
		}
	default:
		bad("HTTP client %q: want %s or %s", c.HTTPClient, ClientTrafficlab, ClientNetHTTP)
	}
}

// maxRequests is the bound on requests sent.
func (c *Config) maxRequests() int64 {
	if c.MaxRequests > 0 {
		return c.MaxRequests
	}
	return DefaultMaxRequests
}
