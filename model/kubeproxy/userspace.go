package kubeproxy

import (
	"math/rand/v2"
	"slices"
	"time"
)

// userspaceMode: kube-proxy's own process accepts every connection to a Service's
// portal and copies its bytes to a connection it dials to an endpoint (ProxyLoop and
// ProxyTCP); with no endpoint, or when every dial failed, it closes the accepted
// connection, and this mode writes no REJECT rule. Endpoints are taken round robin
// (kubernetes/kubernetes pkg/proxy/userspace/proxysocket.go and roundrobin.go, until
// 1.25; the mode was removed in 1.26).
var userspaceMode = definition{
	name:         "userspace",
	noEndpoints:  AcceptThenClose,
	dialTimeouts: userspaceDialTimeouts,
	relays:       true,
	relayCPU:     userspaceRelayCPU,
	inTurn:       true,
	balancer: func(_ string, rng *rand.Rand) (Balancer, error) {
		return &userspaceBalancer{rng: rng}, nil
	},
}

// userspaceRelayCPU is the userspace proxier's CPU per relayed connection (accept,
// dial, two copying goroutines, both closes), per request and answer relayed (a
// read and a write each way, whatever the size) and per KiB copied (io.Copy
// between TCP connections splices since Go 1.11). No published figure exists;
// these are cmd/cpucost's, on a relay built as proxysocket.go's ProxyLoop,
// tryConnect and proxyTCP are, on one core of an AMD EPYC (Linux 6.18, Go 1.26):
// 90.8 µs a connection with its request left out, 51.8 µs a request on a kept
// connection, 0.20 µs a KiB through one connection.
var userspaceRelayCPU = [3]time.Duration{90800 * time.Nanosecond, 51800 * time.Nanosecond, 200 * time.Nanosecond}

// userspaceDialTimeouts are the userspace proxier's per-attempt dial timeouts; a failed dial
// tries the next endpoint (call Pick again) with the next timeout, and after the last one the
// proxy closes the client's connection. pkg/proxy/userspace/proxysocket.go,
// EndpointDialTimeouts and TryConnectEndpoints.
var userspaceDialTimeouts = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, 1 * time.Second, 2 * time.Second}

// userspaceBalancer is the userspace proxier's LoadBalancerRR state for one service on one
// node (kubernetes/kubernetes pkg/proxy/userspace/roundrobin.go, until 1.25). The proxy
// accepts every connection itself: with no endpoints (ok=false) it closes the accepted
// connection at once, and there is no REJECT rule in this mode (ProxyLoop, proxier.go).
type userspaceBalancer struct {
	noConnCounts
	eps   []Endpoint
	index int
	rng   *rand.Rand
}

// SetEndpoints mirrors OnEndpointsUpdate: an unchanged set (compared sorted, slicesEquiv)
// keeps the order and the round-robin index; a changed set is stored shuffled
// (pkg/proxy/util/utils.go, ShuffleStrings: shuffled[perm[i]] = s[i] with a uniform rand.Perm)
// and the index is reset to 0.
func (b *userspaceBalancer) SetEndpoints(eps []Endpoint) {
	if len(eps) == len(b.eps) && slices.Equal(slices.Sorted(slices.Values(eps)), slices.Sorted(slices.Values(b.eps))) {
		return
	}
	b.eps = slices.Grow(b.eps[:0], len(eps))[:len(eps)]
	for i, j := range b.rng.Perm(len(eps)) {
		b.eps[j] = eps[i]
	}
	b.index = 0
}

// Pick mirrors NextEndpoint: take endpoints[index], then index = (index+1) % len.
// A dial retry (userspaceDialTimeouts) is another NextEndpoint call, so it takes the next
// endpoint in the shared rotation.
func (b *userspaceBalancer) Pick(uint64) (Endpoint, bool) {
	if len(b.eps) == 0 {
		return 0, false
	}
	ep := b.eps[b.index]
	b.index = (b.index + 1) % len(b.eps)
	return ep, true
}
