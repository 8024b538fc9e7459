package scenario

import (
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/model/dist"
	"trafficlab/model/kubelet"
)

func ms(n float64) metav1.Duration {
	return metav1.Duration{Duration: time.Duration(n * float64(time.Millisecond))}
}

// Every kind the validator accepts must compile in model/dist with each parameter it
// reads carried over: the mean is checked against the kind's own formula, and a
// lognormal missing its p99 or sigma does not compile at all.
func TestDistributionSpec(t *testing.T) {
	cases := []struct {
		d    Distribution
		mean float64 // ms
	}{
		{Distribution{Distribution: DistConstant, Value: ms(3)}, 3},
		{Distribution{Distribution: DistExponential, Mean: ms(2)}, 2},
		{Distribution{Distribution: DistLognormal, Mean: ms(1), P99: ms(5)}, 1},
		{Distribution{Distribution: DistLognormal, Mean: ms(4), Sigma: 0.5}, 4},
		{Distribution{Distribution: DistUniform, Min: ms(1), Max: ms(5)}, 3},
		{Distribution{Distribution: DistEmpirical, Samples: []metav1.Duration{ms(1), ms(2), ms(6)}}, 3},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.d.Distribution] = true
		s, err := dist.New(c.d.Spec())
		if err != nil {
			t.Errorf("%+v: %v", c.d, err)
			continue
		}
		if got := s.Mean() / 1e6; !(math.Abs(got-c.mean) <= 1e-9*c.mean) { // NaN too
			t.Errorf("%+v: mean %v ms, want %v ms", c.d, got, c.mean)
		}
	}
	for _, kind := range distributions {
		if !covered[kind] {
			t.Errorf("distribution %s has no case", kind)
		}
	}
	var none *Distribution
	if none.Spec() != nil {
		t.Error("a nil Distribution must convert to nil, which samples zero")
	}
}

func TestPodTerminationSpec(t *testing.T) {
	hook := func(h LifecycleHandler) *Lifecycle { return &Lifecycle{PreStop: &h} }
	for _, tc := range []struct {
		name      string
		grace     int64
		lifecycle *Lifecycle
		want      kubelet.TerminationSpec
	}{
		{"no lifecycle", 30, nil, kubelet.TerminationSpec{GracePeriod: 30 * time.Second}},
		{"a lifecycle without preStop", 10, &Lifecycle{}, kubelet.TerminationSpec{GracePeriod: 10 * time.Second}},
		{"a sleep hook's seconds", 30, hook(LifecycleHandler{Sleep: &SleepAction{Seconds: 10}}),
			kubelet.TerminationSpec{GracePeriod: 30 * time.Second, PreStop: 10 * time.Second}},
		{"an exec hook's duration", 0, hook(LifecycleHandler{Exec: &ExecAction{Command: []string{"sleep", "5"}, Duration: &metav1.Duration{Duration: 5 * time.Second}}}),
			kubelet.TerminationSpec{PreStop: 5 * time.Second}},
	} {
		p := &Pod{TerminationGracePeriodSeconds: &tc.grace, Lifecycle: tc.lifecycle}
		if got := p.TerminationSpec(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
