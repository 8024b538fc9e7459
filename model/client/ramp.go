package client

import "math"

// Ramp is an open loop whose rate moves linearly from R0 to R1 (per second) over
// Span seconds: the expected arrivals by t are Λ(t) = R0·t + (R1−R0)·t²/(2·Span).
// Both engines place arrivals with it, so a ramp is the same load in each.
type Ramp struct {
	R0, R1, Span float64
}

// At inverts Λ: when the expected arrival count reaches x, in seconds from the start.
// Written as 2x / (R0 + √(R0² + 4ax)) so it stays exact when the slope a is tiny or
// negative; ok=false when a falling rate never gets there.
func (r Ramp) At(x float64) (float64, bool) {
	a := (r.R1 - r.R0) / (2 * r.Span)
	disc := r.R0*r.R0 + 4*a*x
	if disc < 0 {
		return 0, false
	}
	den := r.R0 + math.Sqrt(disc)
	if den <= 0 {
		return 0, false
	}
	return 2 * x / den, true
}
