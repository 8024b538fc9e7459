package sidecar

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Host is one endpoint of an upstream cluster as one Envoy sees it: the engine's endpoint
// ID and the requests active on it from this Envoy, all workers together. Envoy keeps
// that count in the host's rq_active gauge, raised when a stream attaches to a connection
// and lowered when it ends (conn_pool_base.cc, attachStreamToClient and onStreamClosed);
// the host object, and so the gauge, is shared by the workers.
type Host struct {
	ID     int32
	Active int32
}

// Balancer picks the host of one request attempt: an index into hosts, or -1 when hosts
// is empty (Envoy then answers 503 with flag UH, no healthy upstream). The engine passes
// the cluster's hosts in a stable order and keeps one Balancer per worker, as Envoy does.
// Pick allocates nothing.
type Balancer interface {
	Pick(hosts []Host, rng *rand.Rand) int
}

// Load balancer names as Istio's DestinationRule spells them (LoadBalancerSettings.simple).
const (
	LBRoundRobin   = "ROUND_ROBIN"
	LBLeastRequest = "LEAST_REQUEST"
	LBRandom       = "RANDOM"
)

// EnvoyDefaultLB is a cluster's lb_policy when none is set (api/envoy/config/cluster/v3/
// cluster.proto, LbPolicy ROUND_ROBIN = 0). IstioDefaultLB is what istiod writes when the
// DestinationRule sets none (pilot/pkg/networking/core/cluster_traffic_policy.go,
// defaultLBAlgorithm), the default since Istio 1.14 (commit e048ab8b, "Switch default LB
// algorithm to LEAST_REQUEST", release note new_lb_algorithm_default.yaml).
const (
	EnvoyDefaultLB = LBRoundRobin
	IstioDefaultLB = LBLeastRequest
)

// DefaultChoiceCount is LEAST_REQUEST's choice_count when unset, and Istio never sets it
// (least_request_lb.h, PROTOBUF_GET_WRAPPED_OR_DEFAULT(least_request_config, choice_count, 2)).
const DefaultChoiceCount = 2

// NewBalancer returns one worker's balancer for an Istio LoadBalancerSettings.simple name,
// case-insensitive. "" is Istio's default, LEAST_REQUEST; LEAST_CONN is Istio's deprecated
// alias of LEAST_REQUEST (cluster_traffic_policy.go, applyLoadBalancer). rng seeds the
// round-robin start; give each worker its own stream.
func NewBalancer(name string, rng *rand.Rand) (Balancer, error) {
	switch strings.ToUpper(name) {
	case "", LBLeastRequest, "LEAST_CONN":
		return LeastRequest{}, nil
	case LBRoundRobin:
		return NewRoundRobin(rng), nil
	case LBRandom:
		return Random{}, nil
	}
	return nil, fmt.Errorf("sidecar: unknown load balancer %q (want ROUND_ROBIN, LEAST_REQUEST or RANDOM)", name)
}

// RoundRobin is one worker's ROUND_ROBIN balancer for equal weights. Envoy seeds each LB
// instance with a random 64-bit number (EdfLoadBalancerBase constructor, seed_) and starts
// the index there, so workers, and Envoys, start at unrelated hosts; each pick takes
// hosts[index % len] and advances the index (round_robin_lb.h, unweightedHostPick). When
// the host set changes the index is kept, not reset (refreshHostSource inserts the seed
// only for a new host source), so the rotation continues modulo the new length.
type RoundRobin struct {
	next uint64
}

// NewRoundRobin returns a round-robin balancer whose index starts at rng.Uint64().
func NewRoundRobin(rng *rand.Rand) *RoundRobin { return &RoundRobin{next: rng.Uint64()} }

// Pick takes the next host in rotation; it draws no randomness.
func (r *RoundRobin) Pick(hosts []Host, _ *rand.Rand) int {
	if len(hosts) == 0 {
		return -1
	}
	i := int(r.next % uint64(len(hosts)))
	r.next++
	return i
}

// LeastRequest is Envoy's LEAST_REQUEST for equal weights, the N_CHOICES selection
// (least_request_lb.cc, unweightedHostPickNChoices): Choices uniform draws with
// replacement (the same host may come up twice); a draw replaces the candidate only with
// strictly fewer active requests, so a tie keeps the earlier draw. Choices ≤ 0 means
// DefaultChoiceCount. With two hosts the busier one still wins a quarter of the picks
// (both draws land on it).
type LeastRequest struct {
	Choices int
}

// Pick draws Choices hosts and keeps the least active.
func (l LeastRequest) Pick(hosts []Host, rng *rand.Rand) int {
	if len(hosts) == 0 {
		return -1
	}
	c := l.Choices
	if c <= 0 {
		c = DefaultChoiceCount
	}
	best := rng.IntN(len(hosts))
	for range c - 1 {
		if j := rng.IntN(len(hosts)); hosts[j].Active < hosts[best].Active {
			best = j
		}
	}
	return best
}

// Random is Envoy's RANDOM: one uniform draw (random_lb.cc, peekOrChoose:
// hosts_to_use[random % size]).
type Random struct{}

// Pick draws one host uniformly.
func (Random) Pick(hosts []Host, rng *rand.Rand) int {
	if len(hosts) == 0 {
		return -1
	}
	return rng.IntN(len(hosts))
}

// IstioHostSelectionRetryMaxAttempts is the host_selection_retry_max_attempts Istio puts in
// every outbound retry policy, with the envoy.retry_host_predicates.previous_hosts
// predicate (pilot/pkg/networking/core/route/retry/retry.go, DefaultPolicy and
// newRetryPolicy; the predicate is left out when the route hashes consistently).
const IstioHostSelectionRetryMaxAttempts = 5

// PickAvoiding picks the host of a retry as Envoy does with the previous_hosts predicate
// (ZoneAwareLoadBalancerBase::chooseHost): pick; while the pick is a host already tried
// (PreviousHostsRetryPredicate::shouldSelectAnotherHost), pick again, at most maxReselects
// more times; then accept the last pick even if it was tried. That is up to
// maxReselects+1 picks, each one a full Pick (a round-robin index advances every time).
// The router asks this only on retries (router.h, hostSelectionRetryCount and
// shouldSelectAnotherHost return 1 and false on the first attempt): use Pick there.
// tried holds the IDs of the hosts the request's earlier attempts went to.
func PickAvoiding(b Balancer, hosts []Host, rng *rand.Rand, tried []int32, maxReselects int) int {
	i := b.Pick(hosts, rng)
	for range maxReselects {
		if i < 0 || !slices.Contains(tried, hosts[i].ID) {
			break
		}
		i = b.Pick(hosts, rng)
	}
	return i
}
