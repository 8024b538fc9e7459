package sidecar

import (
	"fmt"
	"math"
)

// Resource is one circuit-breaker threshold of an Envoy cluster.
type Resource uint8

// The thresholds of api/envoy/config/cluster/v3/circuit_breaker.proto, Thresholds. Where each
// is checked is in the package comment.
const (
	Connections     Resource = iota // max_connections: upstream connections open
	PendingRequests                 // max_pending_requests: attempts waiting for a connection
	Requests                        // max_requests: attempts attached to a connection
	Retries                         // max_retries: retries scheduled and not yet decided
	numResources
)

// Thresholds are the limits of one cluster, default priority.
type Thresholds struct {
	MaxConnections, MaxPendingRequests, MaxRequests, MaxRetries uint32
}

// EnvoyDefaultThresholds apply when a cluster sets none: 1024, 1024, 1024 and 3
// (circuit_breaker.proto, "If not specified, the default is 1024" and, for max_retries,
// "the default is 3").
var EnvoyDefaultThresholds = Thresholds{1024, 1024, 1024, 3}

// IstioDefaultThresholds are what istiod writes for every cluster: all four at
// math.MaxUint32, so that in practice nothing trips. istiod applies them even without a
// DestinationRule (pilot/pkg/networking/core/cluster_traffic_policy.go, applyTrafficPolicy
// uses an empty ConnectionPoolSettings, and applyConnectionPool starts from
// getDefaultCircuitBreakerThresholds). Its comment gives the reason for max_retries: Envoy's
// 3 caused 503s during rolling updates.
var IstioDefaultThresholds = Thresholds{math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32}

// IstioThresholds maps a DestinationRule's connectionPool to thresholds as applyConnectionPool
// does: tcp.maxConnections, http.http1MaxPendingRequests, http.http2MaxRequests and
// http.maxRetries each replace Istio's default only when positive.
func IstioThresholds(maxConnections, http1MaxPendingRequests, http2MaxRequests, maxRetries int) Thresholds {
	pick := func(v int) uint32 {
		if v > 0 {
			return uint32(min(v, math.MaxUint32))
		}
		return math.MaxUint32
	}
	return Thresholds{pick(maxConnections), pick(http1MaxPendingRequests), pick(http2MaxRequests), pick(maxRetries)}
}

// Overflow outcome: an attempt refused by a circuit breaker is never sent. Envoy resets it
// with reason Overflow, which is never retried (retry_state_impl.cc, wouldRetryFromReset),
// and answers the client 503 (router.cc, onUpstreamReset: every reset but a protocol error
// is 503) with response flag UO (streamResetReasonToResponseFlag) and header
// x-envoy-overloaded: true (onUpstreamAbort, dropped). The host's outlier detector is not
// told (onUpstreamReset skips it for Overflow).
const (
	OverflowStatus = 503
	OverflowFlag   = "UO"
	OverflowHeader = "x-envoy-overloaded"
)

// Breaker holds the open counts of one cluster in one Envoy. The counts are cluster-wide:
// all workers share them (the ResourceManagerImpl lives in the ClusterInfo shared by the
// workers and counts with atomics; its comment in
// source/common/upstream/resource_manager_impl.h says it makes no attempt to balance
// resources between workers). A resource can be taken while count < max
// (ManagedResourceImpl::canCreate).
type Breaker struct {
	max  [numResources]uint64
	open [numResources]uint64
}

// NewBreaker returns a breaker with nothing open.
func NewBreaker(t Thresholds) *Breaker {
	b := &Breaker{}
	b.max = [numResources]uint64{uint64(t.MaxConnections), uint64(t.MaxPendingRequests), uint64(t.MaxRequests), uint64(t.MaxRetries)}
	return b
}

// TryAcquire takes one unit of r if its count is below the limit.
func (b *Breaker) TryAcquire(r Resource) bool {
	if b.open[r] >= b.max[r] {
		return false
	}
	b.open[r]++
	return true
}

// Acquire takes one unit of r regardless of the limit. Envoy does this in one place: a pool
// with no connection at all opens one past max_connections, so that its pending attempts
// can be served (conn_pool_base.cc, tryCreateNewConnection).
func (b *Breaker) Acquire(r Resource) { b.open[r]++ }

// Release gives one unit of r back. Releasing more than was taken is an engine bug and panics.
func (b *Breaker) Release(r Resource) {
	if b.open[r] == 0 {
		panic(fmt.Sprintf("sidecar: Breaker.Release(%d) with nothing open", r))
	}
	b.open[r]--
}

// Open is the count of r in use.
func (b *Breaker) Open(r Resource) uint64 { return b.open[r] }
