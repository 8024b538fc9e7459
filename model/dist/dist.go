// Package dist samples duration distributions.
package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// z99 is the standard normal quantile at 0.99, used to turn a lognormal's p99 into sigma.
const z99 = 2.3263478740408408

// Kind is a distribution's family, named as a scenario names it.
type Kind string

// The kinds New compiles.
const (
	KindConstant    Kind = "constant"
	KindExponential Kind = "exponential"
	KindLognormal   Kind = "lognormal"
	KindUniform     Kind = "uniform"
	KindEmpirical   Kind = "empirical"
)

// Spec is a distribution of durations: its kind and the parameters that kind reads.
type Spec struct {
	Kind Kind
	// Value of a constant.
	Value time.Duration
	// Mean of an exponential or a lognormal.
	Mean time.Duration
	// P99 of a lognormal whose Sigma is 0: sigma is then solved from Mean and P99.
	P99 time.Duration
	// Sigma of a lognormal's underlying normal.
	Sigma float64
	// Min and Max bound a uniform: [Min, Max).
	Min, Max time.Duration
	// Samples of an empirical distribution, each drawn with equal probability.
	Samples []time.Duration
}

// Sampler draws durations in nanoseconds. The zero value always returns 0.
type Sampler struct {
	kind    Kind
	a, b    float64 // constant: a; exponential: mean a; lognormal: mu a, sigma b; uniform: [a, b)
	samples []int64
}

// New compiles a distribution; nil means "always zero".
func New(d *Spec) (Sampler, error) {
	if d == nil {
		return Sampler{}, nil
	}
	ns := func(x time.Duration) float64 { return float64(x) }
	s := Sampler{kind: d.Kind}
	switch d.Kind {
	case KindConstant:
		s.a = ns(d.Value)
	case KindExponential:
		s.a = ns(d.Mean)
	case KindLognormal:
		mu, sigma, err := Lognormal(ns(d.Mean), ns(d.P99), d.Sigma)
		if err != nil {
			return Sampler{}, err
		}
		s.a, s.b = mu, sigma
	case KindUniform:
		s.a, s.b = ns(d.Min), ns(d.Max)
	case KindEmpirical:
		for _, x := range d.Samples {
			s.samples = append(s.samples, int64(x))
		}
	default:
		return Sampler{}, fmt.Errorf("unknown distribution %q", d.Kind)
	}
	return s, nil
}

// Lognormal returns mu and sigma of the underlying normal for a lognormal with the given
// mean and either p99 (> mean) or sigma. From mean = exp(mu + sigma²/2) and
// p99 = exp(mu + z99·sigma): sigma²/2 − z99·sigma + ln(p99/mean) = 0, whose smaller root
// is the one with a p99 above the mean; it exists only while ln(p99/mean) ≤ z99²/2,
// that is p99 ≤ 14.97 × mean.
func Lognormal(mean, p99, sigma float64) (mu, sig float64, err error) {
	if sigma <= 0 {
		r := math.Log(p99 / mean)
		disc := z99*z99 - 2*r
		if r <= 0 || disc < 0 {
			return 0, 0, fmt.Errorf("a lognormal with mean %v cannot have p99 %v: p99 must lie between the mean and %.2f × the mean",
				time.Duration(mean), time.Duration(p99), math.Exp(z99*z99/2))
		}
		sigma = z99 - math.Sqrt(disc)
	}
	return math.Log(mean) - sigma*sigma/2, sigma, nil
}

// Mean is the distribution's expected value in nanoseconds.
func (s Sampler) Mean() float64 {
	switch s.kind {
	case KindConstant, KindExponential:
		return s.a
	case KindLognormal:
		return math.Exp(s.a + s.b*s.b/2)
	case KindUniform:
		return (s.a + s.b) / 2
	case KindEmpirical:
		sum := 0.0
		for _, x := range s.samples {
			sum += float64(x)
		}
		return sum / float64(len(s.samples))
	}
	return 0
}

// Sample draws one duration in nanoseconds from r.
func (s Sampler) Sample(r *rand.Rand) int64 {
	switch s.kind {
	case KindConstant:
		return int64(s.a)
	case KindExponential:
		return int64(r.ExpFloat64() * s.a)
	case KindLognormal:
		return int64(math.Exp(s.a + s.b*r.NormFloat64()))
	case KindUniform:
		return int64(s.a + (s.b-s.a)*r.Float64())
	case KindEmpirical:
		return s.samples[r.IntN(len(s.samples))]
	}
	return 0
}
