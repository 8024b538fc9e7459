package scenario

import (
	"trafficlab/model/dist"
)

// A model knows nothing of scenarios (model/imports_test.go): it takes its own small
// spec, and this file is the one place that converts the scenario's types into them.

// Spec is d as model/dist compiles it; a nil d gives nil, which always samples zero.
// The kinds keep their names: a Distribution's kind is a dist.Kind.
func (d *Distribution) Spec() *dist.Spec {
	if d == nil {
		return nil
	}
	s := &dist.Spec{
		Kind:  dist.Kind(d.Distribution),
		Value: d.Value.Duration, Mean: d.Mean.Duration, P99: d.P99.Duration, Sigma: d.Sigma,
		Min: d.Min.Duration, Max: d.Max.Duration,
	}
	for _, x := range d.Samples {
		s.Samples = append(s.Samples, x.Duration)
	}
	return s
}
