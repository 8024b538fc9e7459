package hpa

import (
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Limits of pkg/apis/autoscaling/validation/validation.go.
const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

// DefaultCPUUtilization is the target of an HPA spec without metrics
// (pkg/apis/autoscaling/annotations.go, DefaultCPUUtilization).
const DefaultCPUUtilization = 80

// DefaultMetrics are the metrics the API server gives an HPA spec that has none
// (pkg/apis/autoscaling/v2/defaults.go, SetDefaults_HorizontalPodAutoscaler): average
// CPU utilization at DefaultCPUUtilization.
func DefaultMetrics() []autoscalingv2.MetricSpec {
	util := int32(DefaultCPUUtilization)
	return []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &util},
		},
	}}
}

// defaultSpec mirrors pkg/apis/autoscaling/v2/defaults.go,
// SetDefaults_HorizontalPodAutoscaler: minReplicas 1, a cpu 80% target when no metric
// is given, and a complete behavior when spec.behavior is set at all. It works on a
// deep copy, so the caller's spec is not touched.
func defaultSpec(in autoscalingv2.HorizontalPodAutoscalerSpec) autoscalingv2.HorizontalPodAutoscalerSpec {
	spec := *in.DeepCopy()
	if spec.MinReplicas == nil {
		one := int32(1)
		spec.MinReplicas = &one
	}
	if len(spec.Metrics) == 0 {
		spec.Metrics = DefaultMetrics()
	}
	if spec.Behavior != nil {
		spec.Behavior.ScaleUp = scaleUpRulesWithDefaults(spec.Behavior.ScaleUp)
		spec.Behavior.ScaleDown = scaleDownRulesWithDefaults(spec.Behavior.ScaleDown)
	}
	return spec
}

// validateSpec checks a defaulted spec with the rules of
// pkg/apis/autoscaling/validation/validation.go that matter here, and rejects what this
// package does not model: any metric other than a cpu Resource metric with a
// Utilization or AverageValue target. minReplicas 0 is rejected, as it is without the
// alpha HPAScaleToZero gate (and with it, it needs an Object or External metric).
func validateSpec(spec autoscalingv2.HorizontalPodAutoscalerSpec) error {
	var errs []error
	if *spec.MinReplicas < 1 {
		errs = append(errs, fmt.Errorf("spec.minReplicas: Invalid value: %d: must be greater than or equal to 1", *spec.MinReplicas))
	}
	if spec.MaxReplicas < 1 {
		errs = append(errs, fmt.Errorf("spec.maxReplicas: Invalid value: %d: must be greater than or equal to 1", spec.MaxReplicas))
	} else if spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, fmt.Errorf("spec.maxReplicas: Invalid value: %d: must be greater than or equal to `minReplicas`", spec.MaxReplicas))
	}
	for i, m := range spec.Metrics {
		if err := validateMetric(m); err != nil {
			errs = append(errs, fmt.Errorf("spec.metrics[%d]: %w", i, err))
		}
	}
	if b := spec.Behavior; b != nil {
		errs = append(errs, validateRules("spec.behavior.scaleUp", b.ScaleUp)...)
		errs = append(errs, validateRules("spec.behavior.scaleDown", b.ScaleDown)...)
	}
	return errors.Join(errs...)
}

func validateMetric(m autoscalingv2.MetricSpec) error {
	if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil {
		return fmt.Errorf("type %q is not supported: only Resource metrics for cpu are modelled", m.Type)
	}
	if m.Resource.Name != corev1.ResourceCPU {
		return fmt.Errorf("resource.name %q is not supported: only cpu is modelled", m.Resource.Name)
	}
	t := m.Resource.Target
	switch {
	case t.AverageUtilization != nil && t.AverageValue != nil:
		return errors.New("resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization")
	case t.Type == autoscalingv2.UtilizationMetricType && t.AverageUtilization == nil:
		return errors.New("resource.target.averageUtilization: Required value: a Utilization target needs averageUtilization")
	case t.Type == autoscalingv2.AverageValueMetricType && t.AverageValue == nil:
		return errors.New("resource.target.averageValue: Required value: an AverageValue target needs averageValue")
	case t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.AverageValueMetricType:
		return fmt.Errorf("resource.target.type %q is not supported: must be Utilization or AverageValue", t.Type)
	case t.AverageUtilization != nil && *t.AverageUtilization < 1:
		return fmt.Errorf("resource.target.averageUtilization: Invalid value: %d: must be greater than 0", *t.AverageUtilization)
	case t.AverageValue != nil && t.AverageValue.Sign() != 1:
		return fmt.Errorf("resource.target.averageValue: Invalid value: %s: must be positive", t.AverageValue)
	}
	return nil
}

// validateRules mirrors validation.go, validateScalingRules and validateScalingPolicy.
func validateRules(path string, r *autoscalingv2.HPAScalingRules) []error {
	var errs []error
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > maxStabilizationWindowSeconds) {
		errs = append(errs, fmt.Errorf("%s.stabilizationWindowSeconds: Invalid value: %d: must be between 0 and %d", path, *w, maxStabilizationWindowSeconds))
	}
	switch *r.SelectPolicy {
	case autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect:
	default:
		errs = append(errs, fmt.Errorf("%s.selectPolicy: Unsupported value: %q", path, *r.SelectPolicy))
	}
	if len(r.Policies) == 0 {
		errs = append(errs, fmt.Errorf("%s.policies: Required value: must specify at least one Policy", path))
	}
	for i, p := range r.Policies {
		if p.Type != autoscalingv2.PodsScalingPolicy && p.Type != autoscalingv2.PercentScalingPolicy {
			errs = append(errs, fmt.Errorf("%s.policies[%d].type: Unsupported value: %q", path, i, p.Type))
		}
		if p.Value <= 0 {
			errs = append(errs, fmt.Errorf("%s.policies[%d].value: Invalid value: %d: must be greater than zero", path, i, p.Value))
		}
		if p.PeriodSeconds <= 0 || p.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, fmt.Errorf("%s.policies[%d].periodSeconds: Invalid value: %d: must be between 1 and %d", path, i, p.PeriodSeconds, maxPeriodSeconds))
		}
	}
	if r.Tolerance != nil && r.Tolerance.Sign() < 0 {
		errs = append(errs, fmt.Errorf("%s.tolerance: Invalid value: %s: must be greater than or equal to 0", path, r.Tolerance))
	}
	return errs
}

// tolerancesFor mirrors horizontal.go, tolerancesForHpa with the HPAConfigurableTolerance
// gate on (beta, on by default since 1.35): a behavior's tolerance overrides the flag
// for its direction.
func tolerancesFor(spec autoscalingv2.HorizontalPodAutoscalerSpec, flag float64) Tolerances {
	t := Tolerances{ScaleDown: flag, ScaleUp: flag}
	if b := spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.ScaleDown = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.ScaleUp = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}

// Undefaulted is spec with each value the API server's defaulting would have
// given it left out: minReplicas 1, the default CPU metric, and each behavior
// field equal to its default rules'. An HPA read from a cluster, defaulted,
// and the manifest it was applied from then read alike; the scaling they
// describe is the same.
func Undefaulted(spec autoscalingv2.HorizontalPodAutoscalerSpec) autoscalingv2.HorizontalPodAutoscalerSpec {
	out := *spec.DeepCopy()
	if out.MinReplicas != nil && *out.MinReplicas == 1 {
		out.MinReplicas = nil
	}
	if equality.Semantic.DeepEqual(out.Metrics, DefaultMetrics()) {
		out.Metrics = nil
	}
	if b := out.Behavior; b != nil {
		b.ScaleUp = undefaultedRules(b.ScaleUp, scaleUpRulesWithDefaults(nil))
		b.ScaleDown = undefaultedRules(b.ScaleDown, scaleDownRulesWithDefaults(nil))
		if b.ScaleUp == nil && b.ScaleDown == nil {
			out.Behavior = nil
		}
	}
	return out
}

// undefaultedRules is r without the fields equal to defaults', nil when none is left.
func undefaultedRules(r, defaults *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if r == nil {
		return nil
	}
	if equality.Semantic.DeepEqual(r.StabilizationWindowSeconds, defaults.StabilizationWindowSeconds) {
		r.StabilizationWindowSeconds = nil
	}
	if equality.Semantic.DeepEqual(r.SelectPolicy, defaults.SelectPolicy) {
		r.SelectPolicy = nil
	}
	if equality.Semantic.DeepEqual(r.Policies, defaults.Policies) {
		r.Policies = nil
	}
	if r.StabilizationWindowSeconds == nil && r.SelectPolicy == nil && r.Policies == nil && r.Tolerance == nil {
		return nil
	}
	return r
}
