package scenario

import (
	"time"

	"trafficlab/model/dist"
	"trafficlab/model/kubelet"
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

// TerminationSpec is what of p the kubelet's termination timing reads: the grace
// period, and how long the preStop hook runs (a sleep action's seconds, or an exec
// hook's duration). p is defaulted (the grace period is set).
func (p *Pod) TerminationSpec() kubelet.TerminationSpec {
	s := kubelet.TerminationSpec{GracePeriod: time.Duration(*p.TerminationGracePeriodSeconds) * time.Second}
	if p.Lifecycle == nil || p.Lifecycle.PreStop == nil {
		return s
	}
	h := p.Lifecycle.PreStop
	if h.Sleep != nil {
		s.PreStop = time.Duration(h.Sleep.Seconds) * time.Second
	} else if h.Exec != nil && h.Exec.Duration != nil {
		s.PreStop = h.Exec.Duration.Duration
	}
	return s
}
