package autoscaler

import (
	"slices"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/hpa"
	"trafficlab/sim"
)

// fakePod burns cores from its start for as long as it runs.
type fakePod struct {
	cores    float64
	starting bool
}

// fakeWorkloads is one service of pods that each request 1 core.
type fakeWorkloads struct {
	replicas int
	pods     []fakePod
	pending  int
	scaled   []int // the replicas Scale was asked for, in order
}

func (w *fakeWorkloads) Replicas(int32) int { return w.replicas }

func (w *fakeWorkloads) CPUUsed(id int32, now sim.Time) float64 {
	return w.pods[id].cores * now.Seconds()
}

func (w *fakeWorkloads) Scale(_ int32, n int, _ string) {
	w.scaled = append(w.scaled, n)
	w.replicas = n
}

func (w *fakeWorkloads) Pods(_ int32, _ sim.Time, into []Pod) []Pod {
	for i, p := range w.pods {
		into = append(into, Pod{ID: int32(i), Name: string(rune('a' + i)), Starting: p.starting,
			Running: !p.starting, Ready: !p.starting, CPURequestMilli: 1000})
	}
	for i := 0; i < w.pending; i++ {
		into = append(into, Pod{ID: -1, Name: string(rune('z' - i)), Pending: true})
	}
	return into
}

// TestControllersScaleFromScrapedUsage runs metrics-server and the controller on
// pods of known CPU use for two sync periods, and checks the replicas the HPA
// algorithm asks for: ceil(ready pods × usage / target), with the usage
// metrics-server derived from two readings.
func TestControllersScaleFromScrapedUsage(t *testing.T) {
	cases := []struct {
		name    string
		pods    []fakePod
		pending int
		want    []int
	}{
		// 2 pods at 90 % of a 1-core request against a 60 % target: ceil(2×90/60) = 3.
		{"above target", []fakePod{{cores: 0.9}, {cores: 0.9}}, 0, []int{3}},
		// Within the 10 % tolerance of the target: no change.
		{"at target", []fakePod{{cores: 0.62}, {cores: 0.58}}, 0, nil},
		// The same 2 pods at 120 % would ask for 4, but a starting pod and a Pending
		// one count as using nothing when scaling up (replica_calculator.go
		// GetResourceReplicas): 240/(4×60) = 1, no change.
		{"starting and pending pods", []fakePod{{cores: 1.2}, {cores: 1.2}, {starting: true}}, 1, nil},
		// A third pod, running idle, does count: 240/(3×60) asks for ceil(3×4/3) = 4.
		{"above target, a third pod", []fakePod{{cores: 1.2}, {cores: 1.2}, {cores: 0}}, 0, []int{4}},
		// Far below target: down to minReplicas 1 at the second pass; at the first,
		// the controller's seed recommendation (the current replicas, stamped at its
		// first sight of the HPA) is still within the stabilization window.
		{"below target", []fakePod{{cores: 0.05}, {cores: 0.05}}, 0, []int{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := sim.New()
			w := &fakeWorkloads{replicas: len(c.pods) + c.pending, pods: c.pods, pending: c.pending}
			target := int32(60)
			spec := autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr(int32(1)), MaxReplicas: 10,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
					Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &target}}}}}
			h, err := hpa.New(spec, hpa.Settings{SyncPeriod: 15 * time.Second, DownscaleStabilization: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			c2 := New(k, w)
			c2.Add(0, Spec{HPA: h, Sync: sim.Duration(15 * time.Second), Resolution: sim.Duration(10 * time.Second)})
			// Scrapes every 10 s give each running pod a reading from 10 s on; the
			// controller passes at 15 and 30 s.
			k.Run(sim.Duration(31 * time.Second))
			if !slices.Equal(w.scaled, c.want) {
				t.Errorf("scaled to %v, want %v", w.scaled, c.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
