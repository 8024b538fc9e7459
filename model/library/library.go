// Package library holds the connection behaviour of real HTTP clients and load
// generators, as their own source code defines it. A scenario names a library
// (`library: go-net-http`) and gets that library's pooling defaults; the engine
// reads the rest of a Profile (which idle connection is reused, what a timeout or
// a stale keep-alive connection does) to behave as the library would.
//
// Every value cites the public source it was read from, as "owner/repo[@ref] path
// identifier". Where a default changed between versions, the profile follows the
// current release and its comment gives the older value.
//
// Most pooling libraries, before reusing an idle connection, notice a close the
// server sent while the connection sat idle (Go's readLoop marks it broken, .NET
// polls it in PrepareForReuse, urllib3 checks is_connection_dropped, Java's
// CleanupTrigger evicts it) and open a new one instead. Not all do: UncheckedIdle
// says which connections a library reuses without looking. RetriesStaleIdempotent
// is about what follows a request sent on a connection the server has closed:
// the race of its close with the request on the wire, or no check at all.
package library

import (
	"math"
	"slices"
	"time"
)

// Idle connection pick orders.
const (
	PickLIFO = "lifo" // the most recently returned idle connection is reused first
	PickFIFO = "fifo" // the longest-idle connection is reused first
	// PickCreated reuses the first idle connection in the order they were opened,
	// the oldest first (undici's, OkHttp's and httpcore's pools scan a list kept
	// in creation order).
	PickCreated = "created"
)

// NeverChecked is an UncheckedIdle for a library that never looks at an idle
// connection before reusing it.
const NeverChecked = time.Duration(math.MaxInt64)

// Profile is how one client library opens, pools, reuses and closes connections
// with its default settings.
type Profile struct {
	Name, Summary string
	// Reuse: none (a new connection per request), per-thread (one pool per caller
	// thread), shared (one pool for all threads of a client process).
	Reuse string
	// MaxPerHost caps the connections of one pool (busy, idle and dialing);
	// MaxIdlePerHost caps the idle ones kept, extra ones close when returned.
	// 0 = unlimited. Unused when Reuse is none.
	MaxPerHost, MaxIdlePerHost int
	// IdleTimeout closes a connection idle this long; MaxLifetime retires one
	// this old. 0 = never.
	IdleTimeout, MaxLifetime time.Duration
	// Protocol on a plain http:// target: http1 | http2 | grpc.
	Protocol string
	// Timeout is the library's own default request timeout. 0 = none.
	Timeout time.Duration
	// IdlePick is which idle connection a request takes: PickLIFO, PickFIFO or
	// PickCreated; "" when there is no choice (no pooling, or one connection per
	// pool).
	IdlePick string
	// UncheckedIdle: a connection idle for less than this is reused without
	// checking whether the server has closed it (Apache HttpClient's
	// validateAfterInactivity); NeverChecked for a library that never checks;
	// 0 for one that always does.
	UncheckedIdle time.Duration
	// ClosesOnTimeout: a connection whose request timed out is closed, not
	// returned to the pool, so the next request dials (and kube-proxy picks) anew.
	// Every profile does, and the simulator relies on it (simulate's
	// TestEveryLibraryClosesOnTimeout).
	ClosesOnTimeout bool
	// RetriesStaleIdempotent: a GET that fails on a reused connection because the
	// server closed it, before any response byte arrived, is sent again on
	// another connection without the caller seeing an error. Conditions and
	// limits differ per library; see each profile.
	RetriesStaleIdempotent bool
	// AbortsRun: the tool ends the whole run at the first receive error (such as
	// a connection reset), as ab does without -r.
	AbortsRun bool
	// Sources cite where each value was read: "owner/repo[@ref] path identifier".
	Sources []string
	// RequestCPU is the CPU the client process (library and kernel) spends per
	// request on a connection it already has; ConnectionCPU is what opening and
	// closing one more connection adds. 0 where no figure exists: not modelled.
	RequestCPU, ConnectionCPU time.Duration
	// SteadyMilliCPU is the CPU, in millicores, the process burns while it runs,
	// whatever it sends (a load generator's pacer and timers); 0 for none.
	SteadyMilliCPU int64
	// CPUSources say where each CPU figure was measured or published.
	CPUSources []string
	// Resolution is how it resolves a headless Service; nil where that is not
	// researched, and a headless target is refused.
	Resolution *Resolution
}

// profiles is every known library.
var profiles = []Profile{
	dotnetHTTPClient, goNetHTTP, pythonRequests, curlLoop, ab, abKeepalive,
	vegeta, fortio, javaHTTPClient, nodeUndici, nodeHTTPAgent, okHTTP,
	apacheHTTPClient5, pythonHTTPX, pythonAiohttp, rustReqwest, nginxProxy,
	nginxUpstreamKeepalive, grpcGo, grpcJava, grpcDotnet,
}

// Lookup returns the profile called name.
func Lookup(name string) (Profile, bool) {
	i := slices.IndexFunc(profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	p := profiles[i]
	p.Sources = slices.Clone(p.Sources) // the table stays as cited, whatever callers do
	p.CPUSources = slices.Clone(p.CPUSources)
	p.Resolution = p.Resolution.clone()
	return p, true
}

// Names returns every profile name, sorted.
func Names() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}
