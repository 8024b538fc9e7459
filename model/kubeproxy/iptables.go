package kubeproxy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
)

// iptablesMode: a Service with no endpoints gets a REJECT rule ("... has no endpoints")
// in the filter table, and each new connection walks its service chain's statistic
// rules, each a random draw (kubernetes/kubernetes pkg/proxy/iptables/proxier.go,
// syncProxyRules and writeServiceToEndpointRules). The kernel rewrites the packets:
// nothing relays, nothing retries.
var iptablesMode = definition{
	name:        "iptables",
	noEndpoints: Refuse,
	balancer: func(_ string, rng *rand.Rand) (Balancer, error) {
		return &iptablesBalancer{draw: rng.Uint32}, nil
	},
}

// IptablesProbabilities returns the --probability of each rule in an n-endpoint service
// chain, exactly as kube-proxy writes them: rule i is "-m statistic --mode random
// --probability 1/(n-i)" printed with %0.10f, and the last rule has no statistic match,
// so it always matches (reported as 1). kubernetes/kubernetes pkg/proxy/iptables/proxier.go,
// writeServiceToEndpointRules and computeProbability.
func IptablesProbabilities(n int) []float64 {
	if n <= 0 {
		return nil
	}
	p := make([]float64, n)
	for i := range n - 1 {
		p[i] = ruleProbability(n - i)
	}
	p[n-1] = 1
	return p
}

// IptablesPick walks an n-endpoint (n ≥ 1) service chain for one new connection and returns
// the index of the rule that matches. Each statistic match draws its own random number and
// matches when (draw & 0x7FFFFFFF) < threshold (linux net/netfilter/xt_statistic.c,
// statistic_mt, XT_STATISTIC_MODE_RANDOM); a rule that does not match falls through to the
// next, and the last rule always matches.
func IptablesPick(n int, draw func() uint32) int {
	t := thresholdTable(n)
	for i := range n - 1 {
		if draw()&0x7FFFFFFF < t[n-i] {
			return i
		}
	}
	return n - 1
}

// ruleProbability is the probability kube-proxy writes for a rule with k endpoints left:
// fmt.Sprintf("%0.10f", 1.0/float64(k)) (pkg/proxy/iptables/proxier.go, computeProbability),
// read back as a double the way iptables reads it (correctly rounded strtod, as ParseFloat).
func ruleProbability(k int) float64 {
	p, _ := strconv.ParseFloat(fmt.Sprintf("%0.10f", 1.0/float64(k)), 64) // a formatted float always parses
	return p
}

// statisticThreshold is the 31-bit fixed-point value the kernel compares against:
// iptables stores lround(0x80000000 * p) (iptables extensions/libxt_statistic.c,
// statistic_parse). math.Round rounds halves away from zero, as lround does.
func statisticThreshold(k int) uint32 {
	return uint32(math.Round(0x80000000 * ruleProbability(k)))
}

// thresholds holds statisticThreshold(k) at index k, grown on demand like kube-proxy's own
// cache (pkg/proxy/iptables/proxier.go, precomputeProbabilities), so that a warm
// IptablesPick formats no strings and allocates nothing.
var (
	thresholdsMu sync.Mutex
	thresholds   atomic.Pointer[[]uint32]
)

// thresholdTable returns a table covering indices 0..n.
func thresholdTable(n int) []uint32 {
	if t := thresholds.Load(); t != nil && len(*t) > n {
		return *t
	}
	thresholdsMu.Lock()
	defer thresholdsMu.Unlock()
	var t []uint32
	if old := thresholds.Load(); old != nil {
		t = *old
	}
	if len(t) > n {
		return t
	}
	grown := make([]uint32, n+1)
	copy(grown, t)
	for k := max(len(t), 1); k <= n; k++ { // index 0 is never used, as kube-proxy's "<bad value>"
		grown[k] = statisticThreshold(k)
	}
	thresholds.Store(&grown)
	return grown
}

// iptablesBalancer is the KUBE-SVC-* chain of one service on one node.
type iptablesBalancer struct {
	noConnCounts
	eps  []Endpoint
	draw func() uint32
}

func (b *iptablesBalancer) SetEndpoints(eps []Endpoint) {
	b.eps = append(b.eps[:0], eps...)
	thresholdTable(len(eps)) // warm the shared table outside the hot path
}

func (b *iptablesBalancer) Pick(uint64) (Endpoint, bool) {
	if len(b.eps) == 0 {
		return 0, false
	}
	return b.eps[IptablesPick(len(b.eps), b.draw)], true
}
