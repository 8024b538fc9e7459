package loadgen

import (
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/scenario"
)

func rate(r float64) *scenario.Rate { return &scenario.Rate{PerSecond: r} }

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// The time the expected count reaches x, against Λ worked out by hand.
func TestCurveInvertsExpectedArrivals(t *testing.T) {
	points := &scenario.RateCurve{Points: []scenario.RatePoint{
		{At: dur(5 * time.Second), Rate: rate(100)},
		{At: dur(15 * time.Second), Rate: rate(300)},
		{At: dur(20 * time.Second), Rate: rate(0)},
	}}
	cases := []struct {
		name string
		rc   *scenario.RateCurve
		x    float64
		want float64 // seconds; NaN: never
	}{
		// Before the first point its rate holds: 100/s, so 250 arrivals by 2.5 s.
		{"before the first point", points, 250, 2.5},
		// 500 by 5 s; from 5 s the rate climbs 20/s²: Λ = 500 + 100τ + 10τ².
		// 500 + 100·5 + 10·25 = 1250 at τ = 5.
		{"on the ramp", points, 1250, 10},
		// 500 + 2000 (the ramp's mean 200/s over 10 s) = 2500 at 15 s, then a ramp
		// down to 0 over 5 s adds 300τ − 30τ²: 750 by 20 s, and nothing after. 3250 − x
		// = 30(5−τ)², so x = 3249.7 at τ = 4.9.
		{"end of the ramp up", points, 2500, 15},
		{"near the end of the ramp down", points, 3249.7, 19.9},
		{"never", points, 3251, math.NaN()},
		// A diurnal curve from 100/s to 300/s with a 1000 s period peaking at 0: half a
		// period averages 200/s by symmetry, so 100,000 arrivals by 500 s.
		{"diurnal half period", &scenario.RateCurve{Diurnal: &scenario.Diurnal{Min: rate(100), Max: rate(300),
			Period: &metav1.Duration{Duration: 1000 * time.Second}}}, 100000, 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCurve(tc.rc, 2000*time.Second)
			cursor := 0
			got, ok := c.At(tc.x, &cursor)
			if math.IsNaN(tc.want) {
				if ok {
					t.Fatalf("arrival at %v s, want none", got)
				}
				return
			}
			// The diurnal curve is traced by chords: 2.4e-6 of the swing, ≪ 1 ms here.
			if !ok || math.Abs(got-tc.want) > 1e-3 {
				t.Errorf("at(%v) = %v, %v; want %v", tc.x, got, ok, tc.want)
			}
		})
	}
}
