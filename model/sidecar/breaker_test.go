package sidecar

import (
	"math"
	"testing"
)

// circuit_breaker.proto: 1024, 1024, 1024, 3 when unset; istiod writes MaxUint32 for all four
// (cluster_traffic_policy.go, getDefaultCircuitBreakerThresholds).
func TestDefaultThresholds(t *testing.T) {
	if got := (Thresholds{1024, 1024, 1024, 3}); EnvoyDefaultThresholds != got {
		t.Errorf("Envoy defaults %+v", EnvoyDefaultThresholds)
	}
	m := uint32(math.MaxUint32)
	if got := (Thresholds{m, m, m, m}); IstioDefaultThresholds != got {
		t.Errorf("Istio defaults %+v", IstioDefaultThresholds)
	}
}

// applyConnectionPool replaces a default only with a positive DestinationRule value.
func TestIstioThresholds(t *testing.T) {
	m := uint32(math.MaxUint32)
	cases := []struct {
		conns, pending, reqs, retries int
		want                          Thresholds
	}{
		{0, 0, 0, 0, IstioDefaultThresholds},
		{100, 0, 0, 0, Thresholds{100, m, m, m}},
		{1, 1, 10, 3, Thresholds{1, 1, 10, 3}},
		{-5, 0, 0, 2, Thresholds{m, m, m, 2}},
	}
	for _, c := range cases {
		if got := IstioThresholds(c.conns, c.pending, c.reqs, c.retries); got != c.want {
			t.Errorf("IstioThresholds(%d, %d, %d, %d) = %+v, want %+v", c.conns, c.pending, c.reqs, c.retries, got, c.want)
		}
	}
}

// ManagedResourceImpl::canCreate is count < max: with Envoy's max_retries 3, three retries
// may be in flight and the fourth is refused until one is released.
func TestBreakerLimits(t *testing.T) {
	b := NewBreaker(EnvoyDefaultThresholds)
	for i := range 3 {
		if !b.TryAcquire(Retries) {
			t.Fatalf("retry %d refused", i+1)
		}
	}
	if b.TryAcquire(Retries) {
		t.Fatal("fourth concurrent retry admitted")
	}
	b.Release(Retries)
	if !b.TryAcquire(Retries) || b.Open(Retries) != 3 {
		t.Fatalf("after a release: open %d", b.Open(Retries))
	}
	// Resources are independent.
	for range 1024 {
		if !b.TryAcquire(PendingRequests) {
			t.Fatal("pending refused below 1024")
		}
	}
	if b.TryAcquire(PendingRequests) || !b.TryAcquire(Requests) || !b.TryAcquire(Connections) {
		t.Error("pending limit leaked into other resources")
	}
}

// A pool with no connection opens one past max_connections (tryCreateNewConnection).
func TestBreakerAcquirePastLimit(t *testing.T) {
	b := NewBreaker(Thresholds{MaxConnections: 1})
	if !b.TryAcquire(Connections) || b.TryAcquire(Connections) {
		t.Fatal("limit of 1 not enforced")
	}
	b.Acquire(Connections)
	if b.Open(Connections) != 2 {
		t.Errorf("open %d after forced acquire, want 2", b.Open(Connections))
	}
	b.Release(Connections)
	if b.TryAcquire(Connections) {
		t.Error("admitted while still at the limit")
	}
}

func TestBreakerZeroLimitAndUnderflow(t *testing.T) {
	b := NewBreaker(Thresholds{})
	if b.TryAcquire(Requests) {
		t.Error("max 0 admitted a request")
	}
	defer func() {
		if recover() == nil {
			t.Error("Release with nothing open did not panic")
		}
	}()
	b.Release(Requests)
}

func TestIstioBreakerNeverTripsInPractice(t *testing.T) {
	b := NewBreaker(IstioDefaultThresholds)
	for range 100000 {
		if !b.TryAcquire(Retries) {
			t.Fatal("Istio default refused a retry")
		}
	}
}
