package library

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Resolution is how a library finds the pods of a headless Service (clusterIP: None),
// whose name cluster DNS answers with the ready pods' addresses in a new random
// order each time: how long the library keeps an answer, which address a new
// connection takes, and, for a gRPC channel, when it looks the name up again.
type Resolution struct {
	// Cache keeps an answer, in its order, this long: 0 looks the name up for
	// every new connection; CacheForever keeps the first answer for the run.
	Cache time.Duration
	// Pick is the address a new connection tries first: AddressFirst,
	// AddressRotate or AddressRandom. It tries the others in turn when that one
	// refuses.
	Pick string
	// OneAddress: a connection tries only the address it picked; a refusal fails
	// it, where the others try the next.
	OneAddress bool
	// Reresolve is a gRPC channel's: it keeps the addresses it resolved and looks
	// again only when a connection closes or fails, at most once per Reresolve.
	// SkipsEarly drops a request that comes sooner, rather than put it off.
	Reresolve  time.Duration
	SkipsEarly bool
	// Sources cite each value, as Profile.Sources do.
	Sources []string
}

// ResolutionOf is how library lib resolves, nil where not modelled; a client that
// names no library resolves as Go does, with a lookup per new connection and its
// first address.
func ResolutionOf(lib string) *Resolution {
	if lib == "" {
		return goNames.clone()
	}
	p, _ := Lookup(lib)
	return p.Resolution
}

// CacheForever is a Resolution.Cache that never expires.
const CacheForever = time.Duration(math.MaxInt64)

// Address picks.
const (
	AddressFirst  = "first"  // the answer's first address
	AddressRotate = "rotate" // the next address of the cached answer each time
	AddressRandom = "random" // a random address of the answer
)

func (n *Resolution) clone() *Resolution {
	if n == nil {
		return nil
	}
	c := *n
	c.Sources = slices.Clone(n.Sources)
	return &c
}

// Name resolution shared by libraries of one runtime.
var (
	// goNames: Go's resolver keeps no answers and its dialer tries them in order.
	goNames = Resolution{Pick: AddressFirst, Sources: []string{
		"golang/go@go1.26.8 src/net/dnsclient_unix.go tryUpdate: only resolv.conf is re-read (every 5 s), no answer is cached",
		"golang/go@go1.26.8 src/net/dial.go Dial: will try each IP address in order until one succeeds",
		"golang/go@go1.26.8 src/net/addrselect.go Rule 9 limited to IPv6: an IPv4 answer keeps its order",
	}}
	// jvmNames: InetAddress keeps a lookup's addresses, in their order, 30 s.
	jvmNames = Resolution{Cache: 30 * time.Second, Pick: AddressFirst, Sources: []string{
		"openjdk/jdk@1794ca1adc71 src/java.base/share/classes/sun/net/InetAddressCachePolicy.java DEFAULT_POSITIVE = 30",
		"openjdk/jdk@01dfee6b6674 src/java.base/share/conf/security/java.security: the default behavior in this implementation is to cache for 30 seconds",
		"openjdk/jdk@jdk-25.0.3 src/java.base/share/classes/java/net/InetAddress.java getAllByName: return addrs.get().clone(), the cached order",
	}}
	// nodeNames: Node's net module looks every name up (getaddrinfo, no cache)
	// and tries the answer's addresses in its order.
	nodeNames = Resolution{Pick: AddressFirst, Sources: append([]string{
		"nodejs/node@v20.20.2 lib/net.js lookupAndConnect: autoSelectFamily, dnsopts.all = true; internalConnectMultiple tries the next address",
		"nodejs/node@v20.20.2 lib/dns.js lookup: cares.getaddrinfo for each call, no cache; dns.getDefaultResultOrder() verbatim",
	}, getaddrinfoNames...)}
	// getaddrinfoNames: glibc's getaddrinfo, called for each new connection,
	// keeps no answer and an IPv4 answer's order off-subnet (sysdeps/posix/
	// getaddrinfo.c rfc3484_sort rule 10); the connection tries the addresses in
	// turn.
	getaddrinfoNames = []string{
		"bminor/glibc@002be9b8d178 sysdeps/posix/getaddrinfo.c rfc3484_sort: Rule 10: Otherwise, leave the order unchanged",
	}
)

// String says in a phrase how the library resolves: "a lookup per connection,
// first address", "answer kept 30s, first address".
func (n *Resolution) String() string {
	if n == nil {
		return "not modelled"
	}
	var s string
	switch {
	case n.Reresolve > 0:
		s = "answer kept until a connection is lost, then again at most every " + shortDuration(n.Reresolve)
		if n.SkipsEarly {
			s += " (sooner: not at all)"
		}
	case n.Cache == 0:
		s = "a lookup per connection"
	case n.Cache == CacheForever:
		s = "first answer kept"
	default:
		s = "answer kept " + shortDuration(n.Cache)
	}
	switch {
	case n.Reresolve > 0:
		s += ", its first address with pick_first, every address with round_robin"
	case n.Pick == AddressRotate:
		s += ", addresses in turn"
	case n.Pick == AddressRandom:
		s += ", a random address"
	default:
		s += ", first address"
	}
	if n.OneAddress {
		s += " only"
	}
	return s
}

// shortDuration prints whole hours and minutes without zero units: "1m", not "1m0s".
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
