// Package dns models how clients find the pods of a headless Service (clusterIP:
// None): cluster DNS answers the Service's name with an A record per ready pod, and
// each client library decides how long it keeps an answer and which address a new
// connection takes. kube-proxy plays no part: a client's connection goes straight to
// the pod it chose.
package dns

import (
	"math/rand/v2"
	"slices"

	"trafficlab/sim"
)

// Answer is CoreDNS's answer for a headless Service: the ready endpoints (the
// kubernetes plugin drops the others, plugin/kubernetes/object/endpoint.go
// endpointsliceReady), in an order the loadbalance plugin, which kubeadm's
// Corefile enables, shuffles anew for every response (plugin/loadbalance
// loadbalance.go shuffle). No ready endpoint is NXDOMAIN: an empty answer.
func Answer[A any](ready []A, rng *rand.Rand) []A {
	out := slices.Clone(ready)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Pick is which address of an answer a library's new connection tries first; it
// tries the others in turn when that one refuses.
type Pick uint8

const (
	// First: the answer's first address (Go's dialSerial, Java, .NET, Node, Python
	// and Rust connect in the resolver's order).
	First Pick = iota
	// Rotate: the next address of a cached answer each time, round robin
	// (aiohttp's _DNSCacheTable.next_addrs).
	Rotate
	// Random: a random address of the answer (vegeta's DNSCaching dialer).
	Random
)

// Forever is a Cache.TTL that never expires.
const Forever = sim.Time(1<<63 - 1)

// Cache is a library's own keeping of answers: 0 TTL looks the name up for every
// new connection.
type Cache struct {
	TTL  sim.Time
	Pick Pick
}

// Resolver is one client process's cached answer for one Service, of addresses A
// (the simulator's pod numbers, the emulator's IPs).
type Resolver[A any] struct {
	addrs  []A
	at     sim.Time
	cached bool
	next   int
}

// Order is the addresses a new connection at now tries, in turn: from the cached
// answer while it lasts, else from lookup's fresh one (kept when the cache keeps
// answers). It returns nil for NXDOMAIN. The slice is the caller's to keep until the
// next call.
func (r *Resolver[A]) Order(now sim.Time, c Cache, lookup func() []A, rng *rand.Rand, out []A) []A {
	if !r.cached || c.TTL == 0 || now-r.at >= c.TTL {
		r.addrs, r.at, r.next = lookup(), now, 0
		// An empty answer is not kept: Java caches a failed lookup for only
		// networkaddress.cache.negative.ttl, shorter than most scenarios' steps.
		r.cached = c.TTL > 0 && len(r.addrs) > 0
	}
	if len(r.addrs) == 0 {
		return nil
	}
	k := 0
	switch c.Pick {
	case Rotate:
		k = r.next % len(r.addrs)
		r.next++
	case Random:
		k = rng.IntN(len(r.addrs))
	}
	// From the picked address on; a Random pick's fallbacks follow in answer order
	// too, where vegeta would fail at once: only refusals reach a fallback.
	out = append(out[:0], r.addrs[k:]...)
	out = append(out, r.addrs[:k]...)
	return out
}

// Refresh is a gRPC channel's rule for looking its target up again: a closed or
// refused connection asks for a new resolution, which comes at most once per Every.
type Refresh struct {
	Every sim.Time
	// SkipsEarly drops a request that comes sooner than Every after the last
	// resolution (grpc-java's DnsNameResolver cacheRefreshRequired); otherwise it
	// is put off until then (grpc-go's dnsResolver watcher, grpc-dotnet's
	// DnsResolver MinimumDnsResolutionRate).
	SkipsEarly bool
}

// When is when a resolution asked for at now happens, given the last one at last:
// ok false when the request is dropped.
func (f Refresh) When(now, last sim.Time) (at sim.Time, ok bool) {
	due := last + f.Every
	if now >= due {
		return now, true
	}
	if f.SkipsEarly {
		return 0, false
	}
	return due, true
}
