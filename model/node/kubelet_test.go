package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"trafficlab/sim"
)

func TestMilliCPUToQuota(t *testing.T) {
	cases := []struct {
		milli  int64
		period sim.Time
		want   Quota
	}{
		{0, 0, Quota{}},  // no limit
		{-1, 0, Quota{}}, // nonsense: no limit
		{1000, 0, Quota{Runtime: 100 * ms, Period: 100 * ms}},         // 1000 × 100000 µs / 1000 = 100000 µs
		{500, 0, Quota{Runtime: 50 * ms, Period: 100 * ms}},           // 500 × 100000 / 1000 = 50000 µs
		{1500, 0, Quota{Runtime: 150 * ms, Period: 100 * ms}},         // 150000 µs: more than a period
		{12, 0, Quota{Runtime: 1200 * 1000, Period: 100 * ms}},        // 1200 µs, above the minimum
		{10, 0, Quota{Runtime: 1 * ms, Period: 100 * ms}},             // 1000 µs, the minimum exactly
		{5, 0, Quota{Runtime: 1 * ms, Period: 100 * ms}},              // 500 µs, raised to MinQuotaPeriod
		{1000, -5, Quota{Runtime: 100 * ms, Period: 100 * ms}},        // nonsense period: the default
		{333, 50 * ms, Quota{Runtime: 16650 * 1000, Period: 50 * ms}}, // 333 × 50000 / 1000 = 16650 µs
		{99, 10 * ms, Quota{Runtime: 1 * ms, Period: 10 * ms}},        // 99 × 10000 / 1000 = 990 µs → 1 ms
		// Whole microseconds, as cpu.max: a 10000.999 µs period is 10000 µs, and
		// 1001 × 10000 / 1000 = 10010 µs.
		{1001, 10*ms + 999, Quota{Runtime: 10010 * 1000, Period: 10 * ms}},
		// 1 × 1000000 / 1000 = 1000 µs: integer division, no rounding up.
		{1, 1000 * ms, Quota{Runtime: 1 * ms, Period: 1000 * ms}},
		{1999, 1000 * ms, Quota{Runtime: 1999 * ms, Period: 1000 * ms}},
	}
	for _, c := range cases {
		if got := MilliCPUToQuota(c.milli, c.period); got != c.want {
			t.Errorf("MilliCPUToQuota(%d, %d) = %+v, want %+v", c.milli, c.period, got, c.want)
		}
	}
}

func TestCPUWeight(t *testing.T) {
	cases := []struct {
		milli, shares, weight, container int64
	}{
		// No request: shares 2, the minimum; weight 1 + 0 = 1 either way.
		{0, 2, 1, 1},
		// 1m: 1024/1000 = 1 share, raised to 2.
		{1, 2, 1, 1},
		// 100m: 102400/1000 = 102 shares; 1 + 100·9999/262142 = 1 + 999900/262142
		// (3.81) = 4. Container: l = log2 102 = 6.672, (44.52 + 834.0)/612 − 7/34 =
		// 1.2297, 10^1.2297 = 16.97 → 17.
		{100, 102, 4, 17},
		// 250m: 256 shares; 1 + 254·9999/262142 = 1 + 2539746/262142 (9.69) = 10.
		// Container: l = 8, (64 + 1000)/612 − 126/612 = 938/612 = 1.5327, 10^… = 34.09
		// → 35.
		{250, 256, 10, 35},
		// 500m: 512; 1 + 510·9999/262142 = 1 + 5099490/262142 (19.45) = 20. Container:
		// l = 9, (81 + 1125 − 126)/612 = 1080/612 = 1.7647, 10^… = 58.17 → 59.
		{500, 512, 20, 59},
		// 1 core: 1024; 1 + 1022·9999/262142 = 1 + 10218978/262142 (38.98) = 39.
		// Container: l = 10, (100 + 1250 − 126)/612 = 2: 100, cgroup v2's default.
		{1000, 1024, 39, 100},
		// 2 cores: 2048; 1 + 2046·9999/262142 = 1 + 20457954/262142 (78.04) = 79.
		// Container: l = 11, (121 + 1375 − 126)/612 = 2.2386, 10^… = 173.2 → 174.
		{2000, 2048, 79, 174},
		// 256 cores: 262144 shares, the maximum: 1 + 262142·9999/262142 = 10000.
		{256000, 262144, 10000, 10000},
		// 300 cores: shares capped at 262144.
		{300000, 262144, 10000, 10000},
	}
	for _, c := range cases {
		if got := MilliCPUToShares(c.milli); got != c.shares {
			t.Errorf("MilliCPUToShares(%d) = %d, want %d", c.milli, got, c.shares)
		}
		if got := CPUWeight(c.milli); got != c.weight {
			t.Errorf("CPUWeight(%d) = %d, want %d", c.milli, got, c.weight)
		}
		if got := ContainerCPUWeight(c.milli); got != c.container {
			t.Errorf("ContainerCPUWeight(%d) = %d, want %d", c.milli, got, c.container)
		}
	}
}

func TestQOSClass(t *testing.T) {
	q := resource.MustParse
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = q(kv[i+1])
		}
		return l
	}
	cases := []struct {
		name             string
		requests, limits corev1.ResourceList
		want             corev1.PodQOSClass
	}{
		{"nothing set", nil, nil, corev1.PodQOSBestEffort},
		{"empty lists", list(), list(), corev1.PodQOSBestEffort},
		{"only other resources", list("ephemeral-storage", "1Gi"), nil, corev1.PodQOSBestEffort},
		{"zero quantities count as unset", list("cpu", "0"), list("memory", "0"), corev1.PodQOSBestEffort},
		{"requests equal limits", list("cpu", "500m", "memory", "256Mi"), list("cpu", "500m", "memory", "256Mi"), corev1.PodQOSGuaranteed},
		{"equal in other units", list("cpu", "0.5", "memory", "256Mi"), list("cpu", "500m", "memory", "268435456"), corev1.PodQOSGuaranteed},
		// The API server sets a missing request to its limit.
		{"limits only", nil, list("cpu", "1", "memory", "1Gi"), corev1.PodQOSGuaranteed},
		{"one request left to default", list("cpu", "1"), list("cpu", "1", "memory", "1Gi"), corev1.PodQOSGuaranteed},
		{"request below limit", list("cpu", "250m", "memory", "1Gi"), list("cpu", "1", "memory", "1Gi"), corev1.PodQOSBurstable},
		{"explicit zero request is not defaulted", list("cpu", "0"), list("cpu", "1", "memory", "1Gi"), corev1.PodQOSBurstable},
		{"CPU limit only", nil, list("cpu", "1"), corev1.PodQOSBurstable},
		{"requests only", list("cpu", "100m", "memory", "64Mi"), nil, corev1.PodQOSBurstable},
		{"memory request only", list("memory", "64Mi"), nil, corev1.PodQOSBurstable},
		{"guaranteed plus other resources", list("cpu", "1", "memory", "1Gi", "ephemeral-storage", "1Gi"), list("cpu", "1", "memory", "1Gi"), corev1.PodQOSGuaranteed},
	}
	for _, c := range cases {
		if got := QOSClass(c.requests, c.limits); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
