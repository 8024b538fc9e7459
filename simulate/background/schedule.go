package background

import (
	"math"

	"trafficlab/scenario"
	"trafficlab/sim"
)

// scheduleStep is how often a diurnal intensity is updated: the same chords as a
// diurnal rate curve.
func scheduleStep(s *scenario.Schedule) sim.Time {
	return sim.Duration(s.Diurnal.Period.Duration) / scenario.DiurnalSteps
}

// intensity is a schedule's factor at t, from 0 to 1: the diurnal cosine times 1 in
// a burst and 0 between bursts.
func intensity(s *scenario.Schedule, t sim.Time) float64 {
	if s == nil {
		return 1
	}
	f := 1.0
	if d := s.Diurnal; d != nil {
		phase := 2 * math.Pi * (t - sim.Duration(d.PeakAt.Duration)).Seconds() / d.Period.Seconds()
		f = d.Min + (*d.Max-d.Min)*(1+math.Cos(phase))/2
	}
	if b := s.Bursts; b != nil && !inBurst(b, t) {
		f = 0
	}
	return f
}

func inBurst(b *scenario.Bursts, t sim.Time) bool {
	start := sim.Duration(b.Start.Duration)
	if t < start {
		return false
	}
	return (t-start)%sim.Duration(b.Every.Duration) < sim.Duration(b.Length.Duration)
}

// nextChange is the next time after t at which a schedule's intensity moves: a burst
// edge or the next diurnal step.
func nextChange(s *scenario.Schedule, t sim.Time) sim.Time {
	next := sim.Time(math.MaxInt64)
	if s.Diurnal != nil {
		next = t + scheduleStep(s)
	}
	if b := s.Bursts; b != nil {
		start, every, length := sim.Duration(b.Start.Duration), sim.Duration(b.Every.Duration), sim.Duration(b.Length.Duration)
		edge := start
		if t >= start {
			k := (t - start) / every
			edge = start + k*every
			if t >= edge+length {
				edge += every
			} else {
				edge += length
			}
		}
		next = min(next, edge)
	}
	return next
}
