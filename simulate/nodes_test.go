package simulate

import (
	"math"
	"testing"
)

// R3 over the first 5 minutes: the load is about 2,700 requests/s and the writer's
// first 2-minute burst runs. A runtime write of the api pods' logs on pool-2 can wait
// behind a whole 40 MiB chunk, 40 MiB ÷ 11 MiB/s = 3.64 s; a pod's 270 lines/s × 250
// bytes fill the 172,032 bytes of its log path in 2.55 s, so its requests block on
// the log write. Pods elsewhere share nothing with the writer.
func TestR3TailIsOnTheWritersNode(t *testing.T) {
	r := runExample(t, "r3-noisy-neighbour.yaml", "spec.duration=5m").Result()
	if r.Slow == 0 {
		t.Fatal("no slow requests")
	}
	for _, p := range r.Pods {
		if onBad := p.Node == "pool-2"; onBad != (p.Slow > 0) {
			t.Errorf("%s on %s: %d slow requests", p.Name, p.Node, p.Slow)
		}
		if p.Node != "pool-2" && p.WaitMS.Disk != 0 {
			t.Errorf("%s on %s waited %.3f ms for the disk", p.Name, p.Node, p.WaitMS.Disk)
		}
	}
	if len(r.Suspects) == 0 {
		t.Fatal("no suspects")
	}
	top := r.Suspects[0]
	if top.Node != "pool-2" || top.Resource != "disk" || top.Neighbour != "batch-writer" || top.ShareOfTail < 0.9 {
		t.Errorf("top suspect %+v, want the disk of pool-2 and batch-writer, over 90%% of the tail", top)
	}
}

// R3: "only the 1–2 pods on one particular node were slow, whichever pods landed
// there after a rolling update". A rolling restart at 1 min, during the writer's
// first burst, re-places all 10 pods: the slow ones are exactly those on pool-2,
// before the rollout and after it.
func TestR3TailFollowsPodsThroughARollout(t *testing.T) {
	r := runExample(t, "r3-noisy-neighbour.yaml", "spec.duration=2m", "spec.services[0].rollouts[0].at=1m").Result()
	if len(r.Rollouts) != 1 || r.Rollouts[0].DoneS == nil {
		t.Fatalf("rollouts %+v, want one, finished", r.Rollouts)
	}
	slowBefore, slowAfter := 0, 0
	for _, p := range r.Pods {
		if onBad := p.Node == "pool-2"; onBad != (p.Slow > 0) {
			t.Errorf("%s on %s: %d slow requests", p.Name, p.Node, p.Slow)
		}
		if p.Slow > 0 && p.StartS == 0 {
			slowBefore++
		} else if p.Slow > 0 {
			slowAfter++
		}
	}
	if slowBefore == 0 || slowAfter == 0 {
		t.Errorf("%d slow pods before the rollout, %d after; want some of each", slowBefore, slowAfter)
	}
}

// The tail needs the log path to fill during one chunk: per-pod rate × 250 bytes ×
// 3.64 s > 172,032 bytes, above 1,891 requests/s in all. At 1,500/s nothing blocks;
// at 3,000/s it does.
func TestR3TailFollowsLoad(t *testing.T) {
	slow := func(rate string) int64 {
		return runExample(t, "r3-noisy-neighbour.yaml", "spec.duration=3m",
			"spec.clients[0].rateCurve.diurnal.min="+rate, "spec.clients[0].rateCurve.diurnal.max="+rate).Result().Slow
	}
	if low, high := slow("1500/s"), slow("3000/s"); low != 0 || high == 0 {
		t.Errorf("slow requests: %d at 1500/s, %d at 3000/s; want none, then some", low, high)
	}
}

// The fixes R3 tried: anti-affinity keeps the api pods off the writer's node and the
// tail goes; cheaper logging (8 µs instead of 30 µs a line) cuts the pods' CPU by
// (30−8)/330 = 6.7 % and leaves the tail as it was, since the wait is the disk.
func TestR3Fixes(t *testing.T) {
	base := runExample(t, "r3-noisy-neighbour.yaml", "spec.duration=5m").Result()
	anti := runExample(t, "r3-noisy-neighbour-anti-affinity.yaml", "spec.duration=5m").Result()
	for _, p := range anti.Pods {
		if p.Node == "pool-2" {
			t.Errorf("%s placed on pool-2 despite the anti-affinity", p.Name)
		}
	}
	if anti.Slow != 0 {
		t.Errorf("%d slow requests with anti-affinity, want 0", anti.Slow)
	}
	cheap := runExample(t, "r3-noisy-neighbour.yaml", "spec.duration=5m", "spec.services[0].pod.accessLog.cpu=8us").Result()
	sum := func(pods []float64) float64 {
		s := 0.0
		for _, c := range pods {
			s += c
		}
		return s
	}
	var baseCPU, cheapCPU []float64
	for i := range base.Pods {
		baseCPU = append(baseCPU, base.Pods[i].CPUCores)
		cheapCPU = append(cheapCPU, cheap.Pods[i].CPUCores)
	}
	// The same arrivals and service-time draws: only the log CPU differs, so the CPU
	// ratio is 308/330 within rounding of the per-pod figures.
	if ratio := sum(cheapCPU) / sum(baseCPU); math.Abs(ratio-308.0/330) > 0.005 {
		t.Errorf("CPU with cheaper logging is %.3f of before, want %.3f", ratio, 308.0/330)
	}
	// The disk waits are the same; a request's 22 µs less CPU moves it a little.
	if d := math.Abs(float64(cheap.Slow - base.Slow)); d > 0.01*float64(base.Slow) {
		t.Errorf("slow requests %d with cheaper logging, %d before: want the same within 1%%", cheap.Slow, base.Slow)
	}
}

// On a busy node CFS divides the cores by cpu.weight, which kubelet derives from the
// CPU request: 1500m → shares 1536 → weight 1 + 1534·9999/262142 = 59; 500m → 512 →
// 20. Two saturated pods on 2 cores get 2·59/79 = 1.494 and 2·20/79 = 0.506 cores.
func TestNodeSharesFollowRequests(t *testing.T) {
	src := `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: shares}
spec:
  duration: 20s
  cluster:
    nodes: [{name: node, count: 1, cpu: "2"}]
  services:
  - name: big
    replicas: 1
    pod: {resources: {requests: {cpu: 1500m}}, serviceTime: {distribution: constant, value: 1ms}}
  - name: small
    replicas: 1
    pod: {resources: {requests: {cpu: 500m}}, serviceTime: {distribution: constant, value: 1ms}}
  clients:
  - {name: a, target: big, threads: 16, connections: {reuse: per-thread}}
  - {name: b, target: small, threads: 16, connections: {reuse: per-thread}}
  report: {samples: 0}
`
	r := runYAML(t, src)
	want := map[string]float64{"big": 2 * 59.0 / 79, "small": 2 * 20.0 / 79}
	for _, p := range r.Pods {
		if got := p.CPUCores; math.Abs(got-want[p.Service]) > 0.01 {
			t.Errorf("%s used %.3f cores, want %.3f", p.Name, got, want[p.Service])
		}
	}
}

// The throttling example: a 1-CPU limit on requests that overlap at random uses two
// thirds of its CPU on average, yet stalls whenever a burst spends the quota early;
// with a 4-CPU limit the same load never stalls and every request takes its 12 ms.
func TestCPULimitThrottlingExample(t *testing.T) {
	limited := runExample(t, "cpu-limit-throttling.yaml").Result()
	roomy := runExample(t, "cpu-limit-throttling.yaml", "spec.services[0].pod.resources.limits.cpu=4").Result()
	p := limited.Pods[0]
	if p.CPUCores < 0.6 || p.CPUCores > 0.75 || p.Throttling == nil || p.Throttling.ThrottledPeriods == 0 {
		t.Errorf("limited pod: %.2f cores, throttling %+v; want about 0.67 and throttled periods", p.CPUCores, p.Throttling)
	}
	if limited.LatencyMS.P99 < roomy.LatencyMS.P99+20 {
		t.Errorf("p99 %.1f ms limited, %.1f ms with room: want tens of ms more", limited.LatencyMS.P99, roomy.LatencyMS.P99)
	}
	if roomy.Pods[0].Throttling.ThrottledPeriods != 0 || math.Abs(roomy.LatencyMS.P99-12) > 0.1 {
		t.Errorf("with a 4-CPU limit: %+v, p99 %.2f ms; want no throttling and 12 ms", roomy.Pods[0].Throttling, roomy.LatencyMS.P99)
	}
	// CPU request = limit, but Guaranteed needs a memory limit too (qos.go).
	if p.QoSClass != "Burstable" {
		t.Errorf("QoS %q, want Burstable", p.QoSClass)
	}
}
