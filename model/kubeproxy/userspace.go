package kubeproxy

import (
	"math/rand/v2"
	"slices"
)

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
// A dial retry (UserspaceDialTimeouts) is another NextEndpoint call, so it takes the next
// endpoint in the shared rotation.
func (b *userspaceBalancer) Pick(uint64) (Endpoint, bool) {
	if len(b.eps) == 0 {
		return 0, false
	}
	ep := b.eps[b.index]
	b.index = (b.index + 1) % len(b.eps)
	return ep, true
}
