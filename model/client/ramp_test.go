package client

import (
	"math"
	"testing"
)

func TestRampAt(t *testing.T) {
	cases := []struct {
		r      Ramp
		x      float64
		want   float64
		wantOK bool
	}{
		{Ramp{10, 10, 1}, 5, 0.5, true},           // constant: x/rate
		{Ramp{0, 10, 10}, 50, 10, true},           // Λ(t) = t²/2
		{Ramp{0, 10, 10}, 12.5, 5, true},          // half way in time, a quarter of the arrivals
		{Ramp{10, 0, 10}, 50, 10, true},           // falling to zero: all 50 by the end
		{Ramp{10, 0, 10}, 60, 0, false},           // never reaches 60
		{Ramp{100, 100.000001, 1}, 50, 0.5, true}, // a tiny slope stays exact
	}
	for _, c := range cases {
		got, ok := c.r.At(c.x)
		if ok != c.wantOK || (ok && math.Abs(got-c.want) > 1e-6) {
			t.Errorf("%+v.At(%v) = %v, %v; want %v, %v", c.r, c.x, got, ok, c.want, c.wantOK)
		}
	}
}
