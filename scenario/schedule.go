package scenario

import (
	"math"
	"time"
)

// A background workload's schedule over the run, as every engine plays it.

// Intensity is the schedule's factor at t from the run's start, from 0 to 1: the
// diurnal cosine, times 1 in a burst and 0 between bursts. No schedule is always 1.
func (s *Schedule) Intensity(t time.Duration) float64 {
	if s == nil {
		return 1
	}
	f := 1.0
	if d := s.Diurnal; d != nil {
		phase := 2 * math.Pi * (t - d.PeakAt.Duration).Seconds() / d.Period.Seconds()
		f = d.Min + (*d.Max-d.Min)*(1+math.Cos(phase))/2
	}
	if b := s.Bursts; b != nil && !b.on(t) {
		f = 0
	}
	return f
}

// on tells whether t is within a burst.
func (b *Bursts) on(t time.Duration) bool {
	if t < b.Start.Duration {
		return false
	}
	return (t-b.Start.Duration)%b.Every.Duration < b.Length.Duration
}

// NextChange is the next time after t at which the intensity moves: a burst's edge,
// or the next of a diurnal curve's DiurnalSteps chords a period (the same chords as
// a diurnal rate curve). math.MaxInt64 when it never moves again.
func (s *Schedule) NextChange(t time.Duration) time.Duration {
	next := time.Duration(math.MaxInt64)
	if s.Diurnal != nil {
		next = t + s.Diurnal.Period.Duration/DiurnalSteps
	}
	if b := s.Bursts; b != nil {
		start, every, length := b.Start.Duration, b.Every.Duration, b.Length.Duration
		edge := start
		if t >= start {
			edge = start + (t-start)/every*every
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
