package hpa

import (
	"testing"
	"time"
)

func rec(replicas int32, ago time.Duration) recommendation {
	return recommendation{replicas: replicas, at: testNow.Add(-ago)}
}

// Cases from horizontal_test.go, TestNormalizeDesiredReplicas: stabilizeRecommendation
// with a 5-minute downscale window.
func TestNormalizeDesiredReplicas(t *testing.T) {
	cases := []struct {
		name    string
		recs    []recommendation
		desired int32
		want    int32
		wantLen int
	}{
		{"empty log", []recommendation{}, 5, 5, 1},
		{"stabilize", []recommendation{rec(4, 2*time.Minute), rec(5, time.Minute)}, 3, 5, 3},
		{"no stabilize", []recommendation{rec(1, 2*time.Minute), rec(2, time.Minute)}, 3, 3, 3},
		{"no stabilize - old recommendations", []recommendation{rec(10, 10*time.Minute), rec(9, 9*time.Minute)}, 3, 3, 2},
		{"stabilize - old recommendations", []recommendation{rec(10, 10*time.Minute), rec(4, time.Minute), rec(5, 2*time.Minute), rec(9, 9*time.Minute)}, 3, 5, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, recs := stabilize(c.recs, c.desired, 5*time.Minute, testNow)
			if got != c.want || len(recs) != c.wantLen {
				t.Errorf("got %d with %d recommendations, want %d with %d", got, len(recs), c.want, c.wantLen)
			}
		})
	}
}

// Cases from horizontal_test.go, TestNormalizeDesiredReplicasWithBehavior:
// stabilizeRecommendationWithBehaviors and the recommendations it leaves behind.
func TestNormalizeDesiredReplicasWithBehavior(t *testing.T) {
	cases := []struct {
		name             string
		recs             []recommendation
		current, desired int32
		upWindow         time.Duration
		downWindow       time.Duration
		want             int32
		wantRecs         []int32 // nil: not checked
	}{
		{name: "empty recommendations for scaling down", recs: []recommendation{}, current: 100, desired: 5, want: 5, wantRecs: []int32{5}},
		{name: "simple scale down stabilization", recs: []recommendation{rec(4, 2*time.Minute), rec(5, time.Minute)},
			current: 100, desired: 3, downWindow: 3 * time.Minute, want: 5, wantRecs: []int32{4, 5, 3}},
		{name: "simple scale up stabilization", recs: []recommendation{rec(4, 2*time.Minute), rec(5, time.Minute)},
			current: 1, desired: 7, upWindow: 5 * time.Minute, want: 4, wantRecs: []int32{4, 5, 7}},
		{name: "no scale down stabilization", recs: []recommendation{rec(1, 2*time.Minute), rec(2, time.Minute)},
			current: 100, desired: 3, upWindow: 5 * time.Minute, want: 3, wantRecs: []int32{1, 2, 3}},
		{name: "no scale up stabilization", recs: []recommendation{rec(4, 2*time.Minute), rec(5, time.Minute)},
			current: 1, desired: 3, downWindow: 5 * time.Minute, want: 3, wantRecs: []int32{4, 5, 3}},
		{name: "no scale down stabilization, reuse recommendation element", recs: []recommendation{rec(10, 10*time.Minute), rec(9, 9*time.Minute)},
			current: 100, desired: 3, want: 3, wantRecs: []int32{10, 3}},
		{name: "no scale up stabilization, reuse recommendation element", recs: []recommendation{rec(10, 10*time.Minute), rec(9, 9*time.Minute)},
			current: 1, desired: 100, want: 100, wantRecs: []int32{10, 100}},
		{name: "scale down stabilization, reuse one of obsolete recommendation element",
			recs:    []recommendation{rec(10, 10*time.Minute), rec(4, time.Minute), rec(5, 2*time.Minute), rec(9, 9*time.Minute)},
			current: 100, desired: 3, downWindow: 3 * time.Minute, want: 5, wantRecs: []int32{10, 4, 5, 3}},
		{name: "scale up stabilization, reuse one of obsolete recommendation element",
			recs:    []recommendation{rec(10, 100*time.Minute), rec(6, time.Minute), rec(5, 2*time.Minute), rec(9, 3*time.Minute)},
			current: 1, desired: 100, upWindow: 300 * time.Second, want: 5, wantRecs: []int32{100, 6, 5, 9}},
		{name: "scale up and down stabilization, do not scale up when prenormalized rec goes down",
			recs:    []recommendation{rec(2, 100*time.Minute), rec(3, 3*time.Minute)},
			current: 2, desired: 1, upWindow: 300 * time.Second, downWindow: 300 * time.Second, want: 2},
		{name: "scale up and down stabilization, do not scale down when prenormalized rec goes up",
			recs:    []recommendation{rec(2, 100*time.Minute), rec(1, 3*time.Minute)},
			current: 2, desired: 3, upWindow: 300 * time.Second, downWindow: 300 * time.Second, want: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, recs := stabilizeWithBehavior(c.recs, c.current, c.desired, c.upWindow, c.downWindow, testNow)
			if got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
			if c.wantRecs == nil {
				return
			}
			values := make([]int32, len(recs))
			for i, r := range recs {
				values[i] = r.replicas
			}
			if len(values) != len(c.wantRecs) {
				t.Fatalf("recommendations %v, want %v", values, c.wantRecs)
			}
			for i := range values {
				if values[i] != c.wantRecs[i] {
					t.Fatalf("recommendations %v, want %v", values, c.wantRecs)
				}
			}
		})
	}
}

// Cases from horizontal_test.go, TestConvertDesiredReplicasWithRules.
// calculateScaleUpLimit(3) is max(2×3, 4) = 6 with the real scaleUpLimitFactor.
func TestConvertDesiredReplicasWithRules(t *testing.T) {
	cases := []struct {
		name                       string
		current, desired, min, max int32
		want                       int32
		wantReason                 string
	}{
		{"prenormalized desired replicas within range", 5, 7, 3, 8, 7, "DesiredWithinRange"},
		{"prenormalized desired replicas < minReplicas", 3, 1, 2, 8, 2, "TooFewReplicas"},
		{"prenormalized desired zeroed replicas within range", 1, 0, 0, 10, 0, "DesiredWithinRange"},
		{"maxReplicas is the limit because maxReplicas < scaleUpLimit", 20, 1000, 1, 10, 10, "TooManyReplicas"},
		{"scaleUpLimit is the limit because scaleUpLimit < maxReplicas", 3, 1000, 1, 2000, noBehaviorScaleUpLimit(3), "ScaleUpLimit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reason := clampWithoutBehavior(c.current, c.desired, c.min, c.max)
			if got != c.want || reason != c.wantReason {
				t.Errorf("got %d (%s), want %d (%s)", got, reason, c.want, c.wantReason)
			}
		})
	}
	for current, want := range map[int32]int32{0: 4, 1: 4, 2: 4, 3: 6, 10: 20} {
		if got := noBehaviorScaleUpLimit(current); got != want {
			t.Errorf("calculateScaleUpLimit(%d) = %d, want %d (scaleUpLimitFactor 2, scaleUpLimitMinimum 4)", current, got, want)
		}
	}
}
