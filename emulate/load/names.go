package load

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"trafficlab/model/dns"
	"trafficlab/model/library"
	"trafficlab/sim"
)

// names resolves a target named by a host name (a headless Service's) as the
// client's library does (library.Resolution, model/dns): a lookup per new
// connection or a cached answer, its first, next or a random address, the others
// tried in turn when that one refuses. A gRPC channel resolves by grpc-go's own
// resolver instead (grpc.go).
type names struct {
	resolver   *net.Resolver
	policy     dns.Cache
	oneAddress bool
	origin     time.Time

	mu      sync.Mutex // one lookup at a time: the cache is the process's
	answers dns.Resolver[netip.Addr]
	rng     *rand.Rand
}

// newNames resolves with res's way through the DNS server at server ("": the
// system's resolver).
func newNames(res *library.Resolution, server string, seed int64, name string) *names {
	n := &names{resolver: net.DefaultResolver, origin: time.Now(), rng: sim.Stream(seed, "dns/"+name)}
	if server != "" {
		n.resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, server)
		}}
	}
	if res == nil {
		res = library.ResolutionOf("")
	}
	n.policy.TTL = sim.Duration(res.Cache)
	if res.Cache == library.CacheForever {
		n.policy.TTL = dns.Forever
	}
	switch res.Pick {
	case library.AddressRotate:
		n.policy.Pick = dns.Rotate
	case library.AddressRandom:
		n.policy.Pick = dns.Random
	}
	n.oneAddress = res.OneAddress
	return n
}

// dial opens a connection to addr (HOST:PORT) with dial, trying HOST's addresses
// in the library's order: the next after a refusal, unless the library tries only
// one. An IP address is dialled as it is.
func (n *names) dial(ctx context.Context, network, addr string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return dial(ctx, network, addr)
	}
	order, err := n.addresses(ctx, host)
	if err != nil {
		return nil, err
	}
	var last error
	for _, a := range order {
		c, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if last = err; !errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
	}
	return nil, last
}

// addresses is the order a new connection to host tries its addresses in.
func (n *names) addresses(ctx context.Context, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var lookupErr error
	lookup := func() []netip.Addr {
		addrs, err := n.resolver.LookupNetIP(ctx, "ip4", host)
		if err != nil {
			lookupErr = err
			return nil
		}
		return addrs
	}
	order := n.answers.Order(sim.Time(time.Since(n.origin)), n.policy, lookup, n.rng, nil)
	switch {
	case lookupErr != nil:
		return nil, lookupErr
	case len(order) == 0:
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	case n.oneAddress:
		return order[:1], nil
	}
	return order, nil
}

// namedDial is cfg's dial for its HTTP clients: cfg.Dial, or a plain dialer's,
// behind the library's resolution of a target named by a host name. A gRPC
// channel resolves by itself.
func namedDial(cfg *Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	u, err := url.Parse(cfg.Target)
	if err != nil || cfg.client() == clientGRPC {
		return dial
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		return dial
	}
	n := newNames(cfg.Resolution, cfg.DNS, cfg.Seed, cfg.Name)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return n.dial(ctx, network, addr, dial)
	}
}
