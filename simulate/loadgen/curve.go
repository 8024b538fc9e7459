package loadgen

import (
	"math"
	"time"

	"trafficlab/model/client"
	"trafficlab/scenario"
)

// Curve is an open loop's rate over the whole run as straight segments, the last one
// holding its rate for ever. Arrivals come where the expected count Λ(t), summed
// segment by segment, reaches the next whole number (constant) or the next sum of
// unit exponentials (poisson), as in a ramp.
type Curve []segment

type segment struct {
	start   float64 // seconds from the start of the run
	ramp    client.Ramp
	before  float64 // Λ at start
	arrives float64 // expected arrivals in the segment; +Inf for the last
}

// NewCurve builds the segments of a rate Curve over a run of the given length.
func NewCurve(rc *scenario.RateCurve, run time.Duration) Curve {
	type point struct{ t, rate float64 }
	var pts []point
	if d := rc.Diurnal; d != nil {
		period, peak := d.Period.Seconds(), d.PeakAt.Seconds()
		lo, hi := d.Min.PerSecond, d.Max.PerSecond
		h := period / scenario.DiurnalSteps
		for t := 0.0; ; t += h {
			rate := lo + (hi-lo)*(1+math.Cos(2*math.Pi*(t-peak)/period))/2
			pts = append(pts, point{t, rate})
			if t >= run.Seconds() {
				break
			}
		}
	} else {
		if rc.Points[0].At.Duration > 0 {
			pts = append(pts, point{0, rc.Points[0].Rate.PerSecond})
		}
		for _, p := range rc.Points {
			pts = append(pts, point{p.At.Seconds(), p.Rate.PerSecond})
		}
	}
	c := make(Curve, 0, len(pts))
	before := 0.0
	for i, p := range pts {
		s := segment{start: p.t, before: before, arrives: math.Inf(1)}
		if i+1 < len(pts) {
			next := pts[i+1]
			s.ramp = client.Ramp{R0: p.rate, R1: next.rate, Span: next.t - p.t}
			s.arrives = (p.rate + next.rate) / 2 * s.ramp.Span
		} else {
			s.ramp = client.Ramp{R0: p.rate, R1: p.rate, Span: 1}
		}
		before += s.arrives
		c = append(c, s)
	}
	return c
}

// At is when, in seconds from the start, the expected arrival count reaches x;
// cursor is the caller's segment, moved forward (x only grows). ok=false when the
// rate is zero from there on.
func (c Curve) At(x float64, cursor *int) (float64, bool) {
	for *cursor+1 < len(c) && x >= c[*cursor].before+c[*cursor].arrives {
		*cursor++
	}
	s := &c[*cursor]
	t, ok := s.ramp.At(x - s.before)
	return s.start + t, ok
}

// Count is the curve's expected arrivals in the first run seconds.
func (c Curve) Count(run float64) float64 {
	n := 0.0
	for _, s := range c {
		if s.start >= run {
			break
		}
		span := run - s.start
		if !math.IsInf(s.arrives, 1) {
			span = min(span, s.ramp.Span)
		}
		slope := (s.ramp.R1 - s.ramp.R0) / s.ramp.Span
		n += s.ramp.R0*span + slope*span*span/2
	}
	return n
}
