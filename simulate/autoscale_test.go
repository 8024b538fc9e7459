package simulate

import "testing"

// Utilization is relative to the CPU request (replica_calculator.go
// GetResourceReplicas: usage over the sum of requests), not the limit. 500 rps of
// 1 ms is 0.5 cores over two pods requesting 500m: 50 % of the request, twice the
// 25 % target, so the HPA doubles them to 4 (5 if a window caught an extra request).
// Against a 2-core limit it would be 12.5 % and the HPA would not scale up.
func TestHPAUtilizationIsOfTheRequest(t *testing.T) {
	for _, res := range []string{`{requests: {cpu: 500m}}`, `{requests: {cpu: 500m}, limits: {cpu: "2"}}`} {
		t.Run(res, func(t *testing.T) {
			r := run(t, opts{duration: "40s", replicas: 2,
				pod: "      resources: " + res + "\n      serviceTime: {distribution: constant, value: 1ms}",
				service: "    autoscaler:\n      minReplicas: 1\n      maxReplicas: 10\n" +
					"      metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 25}}}]",
				client: "    rate: 500/s\n    connections: {reuse: none}"})
			if len(r.ScaleEvents) == 0 {
				t.Fatal("no scale event; want a scale-up to 4")
			}
			if ev := r.ScaleEvents[0]; ev.From != 2 || ev.To < 4 || ev.To > 5 {
				t.Errorf("first scale event %d → %d (%s), want 2 → 4 or 5", ev.From, ev.To, ev.Reason)
			}
		})
	}
}
