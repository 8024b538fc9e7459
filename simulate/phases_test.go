package simulate

import (
	"math"
	"testing"
)

// Phases run in order, each by duration or by request count, repeated; per-second
// request counts show each phase's load.
func TestPhases(t *testing.T) {
	cases := []struct {
		name     string
		client   string
		total    int64
		perSec   []int64 // requests sent in each second of the timeline, where checked
		tol      int64   // allowed miss per second
		duration string
	}{
		{
			name: "ab runs by request count, repeated",
			client: "    library: ab\n    repeat: 3\n    phases:\n" +
				"    - {requests: 1000, threads: 10}\n    - {requests: 100, threads: 1}",
			total: 3300, duration: "60s",
		},
		{
			name:   "open-loop steps by duration",
			client: "    phases:\n    - {duration: 2s, rate: 100/s}\n    - {duration: 3s, rate: 300/s}",
			total:  1100, perSec: []int64{100, 100, 300, 300, 300, 0}, duration: "6s",
		},
		{
			// Λ(t) = 100t + 10t²: second i gets 110 + 20i arrivals.
			name:   "linear ramp 100/s to 300/s over 10s",
			client: "    phases:\n    - {duration: 10s, rate: 100/s, rampTo: 300/s}",
			total:  2000, perSec: []int64{110, 130, 150, 170, 190, 210, 230, 250, 270, 290}, duration: "10s",
		},
		{
			name:   "pause between phases",
			client: "    phases:\n    - {duration: 2s, rate: 10/s, pause: 3s}\n    - {duration: 2s, rate: 10/s}",
			total:  40, perSec: []int64{10, 10, 0, 0, 0, 10, 10, 0}, duration: "8s",
		},
		{
			name:   "threads change between phases",
			client: "    phases:\n    - {duration: 2s, threads: 4}\n    - {duration: 2s, threads: 1}\n    thinkTime: {distribution: constant, value: 100ms}",
			// 100 ms think + 0.7 ms answer: 10 requests in a second per thread, give
			// or take the one that straddles a boundary.
			perSec: []int64{40, 40, 10, 10, 0}, tol: 4, duration: "5s",
		},
	}
	for _, c := range cases {
		pod := "      serviceTime: {distribution: constant, value: 500us}"
		r := run(t, opts{replicas: 2, duration: c.duration, pod: pod, client: c.client})
		if c.total > 0 && r.Requests.Total != c.total {
			t.Errorf("%s: %d requests, want %d", c.name, r.Requests.Total, c.total)
		}
		for i, want := range c.perSec {
			if got := r.Timeline[i].Requests; math.Abs(float64(got-want)) > float64(c.tol) {
				t.Errorf("%s: second %d had %d requests, want %d", c.name, i, got, want)
			}
		}
	}
}
