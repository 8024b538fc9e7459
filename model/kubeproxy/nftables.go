package kubeproxy

import "math/rand/v2"

// nftablesMode: a Service with no endpoints is an element of the no-endpoint-services
// map, whose verdict goes to reject-chain, and each new connection takes one random
// element of its service chain's numgen vmap (kubernetes/kubernetes
// pkg/proxy/nftables/proxier.go, syncProxyRules and writeServiceToEndpointRules). As
// with iptables, the kernel rewrites the packets.
var nftablesMode = definition{
	name:        "nftables",
	noEndpoints: Refuse,
	balancer: func(_ string, rng *rand.Rand) (Balancer, error) {
		return &nftablesBalancer{rng: rng}, nil
	},
}

// NftablesPick is the element of "numgen random mod n vmap { 0 : goto ..., 1 : ... }" that a
// kernel random draw r selects. kube-proxy writes that single rule per service chain
// (kubernetes/kubernetes pkg/proxy/nftables/proxier.go, writeServiceToEndpointRules), and the
// kernel evaluates numgen random as reciprocal_scale(get_random_u32(), modulus)
// (linux net/netfilter/nft_numgen.c, nft_ng_random_eval), i.e. (r*n)>>32 in 64 bits
// (include/linux/math.h, reciprocal_scale): a scaling, not a modulo, so the top bits decide.
func NftablesPick(n int, r uint32) int {
	return int(uint64(r) * uint64(n) >> 32)
}

// nftablesBalancer is the service chain of one service on one node.
type nftablesBalancer struct {
	noConnCounts
	eps []Endpoint
	rng *rand.Rand
}

func (b *nftablesBalancer) SetEndpoints(eps []Endpoint) { b.eps = append(b.eps[:0], eps...) }

func (b *nftablesBalancer) Pick(uint64) (Endpoint, bool) {
	if len(b.eps) == 0 {
		return 0, false
	}
	return b.eps[NftablesPick(len(b.eps), b.rng.Uint32())], true
}
