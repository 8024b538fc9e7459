package scenario

import (
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIntensityAndNextChange(t *testing.T) {
	dur := func(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
	one := 1.0
	bursts := &Schedule{Bursts: &Bursts{Every: dur(10 * time.Second), Length: dur(2 * time.Second), Start: dur(5 * time.Second)}}
	diurnal := &Schedule{Diurnal: &DiurnalFactor{Min: 0.2, Max: &one, Period: dur(24 * time.Hour)}}
	step := 24 * time.Hour / DiurnalSteps
	cases := []struct {
		name      string
		s         *Schedule
		at        time.Duration
		want      float64
		wantNext  time.Duration
		checkNext bool
	}{
		{"no schedule is full intensity", nil, 3 * time.Second, 1, 0, false},
		{"before the first burst", bursts, 4 * time.Second, 0, 5 * time.Second, true},
		{"in a burst", bursts, 6 * time.Second, 1, 7 * time.Second, true},
		{"between bursts", bursts, 8 * time.Second, 0, 15 * time.Second, true},
		{"at a burst's end", bursts, 17 * time.Second, 0, 25 * time.Second, true},
		{"diurnal peak", diurnal, 0, 1, step, true},
		{"diurnal trough", diurnal, 12 * time.Hour, 0.2, 12*time.Hour + step, true},
		// Halfway between: the cosine is at 0, so the middle of min and max.
		{"diurnal quarter", diurnal, 6 * time.Hour, 0.6, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Intensity(c.at); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("intensity = %v, want %v", got, c.want)
			}
			if c.checkNext {
				if got := c.s.NextChange(c.at); got != c.wantNext {
					t.Errorf("NextChange = %v, want %v", got, c.wantNext)
				}
			}
		})
	}
}
