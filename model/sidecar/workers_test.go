package sidecar

import "testing"

// Istio ≥ 1.18: ProxyConfig.concurrency if set (0: Envoy's hardware_concurrency), else
// ceil(limits.cpu) through ISTIO_CPU_LIMIT, the node's allocatable CPU when no limit is set.
func TestConcurrency(t *testing.T) {
	cases := []struct {
		name                  string
		configured            int
		limit, allocatable    int64
		hostCPUs, wantWorkers int
	}{
		{"Istio default limit 2000m", ConcurrencyUnset, IstioProxyCPULimitMilli, 16000, 64, 2},
		{"release note: 2500m → 3", ConcurrencyUnset, 2500, 16000, 64, 3},
		{"500m rounds up to 1", ConcurrencyUnset, 500, 16000, 64, 1},
		{"1001m rounds up to 2", ConcurrencyUnset, 1001, 16000, 64, 2},
		{"1000m exactly", ConcurrencyUnset, 1000, 16000, 64, 1},
		{"no limit: node allocatable 7800m → 8", ConcurrencyUnset, 0, 7800, 64, 8},
		{"nothing known: Envoy's default", ConcurrencyUnset, 0, 0, 12, 12},
		{"configured wins over the limit", 4, 500, 16000, 64, 4},
		{"configured 0: one per host CPU", 0, 2000, 16000, 64, 64},
	}
	for _, c := range cases {
		if got := Concurrency(c.configured, c.limit, c.allocatable, c.hostCPUs); got != c.wantWorkers {
			t.Errorf("%s: %d workers, want %d", c.name, got, c.wantWorkers)
		}
	}
}

// SO_REUSEPORT spreads accepts over the workers' sockets: modelled as a uniform draw.
// 100,000 connections per worker count; chi-square with workers−1 degrees of freedom.
func TestAssignWorkerIsUniform(t *testing.T) {
	const conns = 100000
	for _, w := range []int{2, 3, 4, 8} {
		rng := newRNG(uint64(w))
		counts := make([]int, w)
		for range conns {
			counts[AssignWorker(rng, w)]++
		}
		if x := chiSquare(counts, nil); x > chiSquareCritical001[w-1] {
			t.Errorf("%d workers: counts %v, chi-square %.2f > %.3f", w, counts, x, chiSquareCritical001[w-1])
		}
	}
	if AssignWorker(newRNG(1), 1) != 0 || AssignWorker(newRNG(1), 0) != 0 {
		t.Error("one worker: want 0")
	}
}

// 0.20 vCPU per 1000 requests/s is 200 µs of CPU per request.
func TestSidecarCPUPerRequest(t *testing.T) {
	if got := SidecarCPUPerRequest.Seconds() * 1000; got < 0.2-1e-12 || got > 0.2+1e-12 {
		t.Errorf("%v s per 1000 requests, want 0.20", got)
	}
}
