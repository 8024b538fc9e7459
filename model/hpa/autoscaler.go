package hpa

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Autoscaler is one HorizontalPodAutoscaler with the state horizontal.go's
// HorizontalController keeps for it: the recommendation history, the scale events and
// the status conditions. Call Reconcile once per sync period.
type Autoscaler struct {
	spec       autoscalingv2.HorizontalPodAutoscalerSpec // defaulted and validated
	settings   Settings
	tolerances Tolerances

	recommendations []recommendation // nil until the first reconcile
	scaleUps        []scaleEvent
	scaleDowns      []scaleEvent
	conditions      []autoscalingv2.HorizontalPodAutoscalerCondition
}

// New returns the autoscaler for spec. It defaults the spec as the API server does
// (minReplicas 1, cpu 80% when there is no metric, complete behavior rules when
// spec.behavior is set), validates it, and fills a missing scale-down stabilization
// window from s.DownscaleStabilization as the controller does
// (horizontal.go, maybeInitScaleDownStabilizationWindow). Zero fields of s take their
// defaults, as kube-controller-manager's flags do.
func New(spec autoscalingv2.HorizontalPodAutoscalerSpec, s Settings) (*Autoscaler, error) {
	s = s.withDefaults()
	spec = defaultSpec(spec)
	if err := validateSpec(spec); err != nil {
		return nil, err
	}
	if b := spec.Behavior; b != nil && b.ScaleDown.StabilizationWindowSeconds == nil {
		w := int32(s.DownscaleStabilization.Seconds())
		b.ScaleDown.StabilizationWindowSeconds = &w
	}
	return &Autoscaler{spec: spec, settings: s, tolerances: tolerancesFor(spec, s.Tolerance)}, nil
}

// Spec returns the spec as the autoscaler uses it, with every default filled in.
func (a *Autoscaler) Spec() autoscalingv2.HorizontalPodAutoscalerSpec {
	return *a.spec.DeepCopy()
}

// Decision is the outcome of one reconcile.
type Decision struct {
	Current int32 // the scale target's spec.replicas when the reconcile started
	Desired int32 // spec.replicas after the reconcile (Current when nothing changes)

	Proposed   int32 // what the metrics asked for, before stabilization and limits
	Stabilized int32 // Proposed after the stabilization window, before rate limits and bounds

	// Metric describes the metric that set Proposed, e.g. "cpu utilization 82% (target
	// 50%)" or "cpu 310m per pod (target 250m)"; Usage holds its numbers.
	Metric string
	Usage  Usage

	// Reason is the condition reason that best explains Desired, taken from the
	// conditions this reconcile set, in this order: a ScalingActive=False reason
	// ("FailedGetResourceMetric", "ScalingDisabled"); "SucceededRescale" when
	// Current was outside [minReplicas, maxReplicas]; a ScalingLimited=True reason
	// ("ScaleUpLimit", "ScaleDownLimit", "TooManyReplicas", "TooFewReplicas"); an
	// AbleToScale stabilization reason ("ScaleDownStabilized", "ScaleUpStabilized");
	// "SucceededRescale"; otherwise "DesiredWithinRange".
	Reason string
	// RescaleReason is the reason horizontal.go writes into the SuccessfulRescale event,
	// e.g. "cpu resource utilization (percentage of request) above target".
	RescaleReason string
	// Conditions are the HPA's status conditions after the reconcile.
	Conditions []autoscalingv2.HorizontalPodAutoscalerCondition
	// Err is the error the reconcile returned, if any; a reconcile can scale and still
	// return an error when some of several metrics failed.
	Err error
}

// Explain is the decision in one line, as a scale event records it: the rescale
// reason and the metric, and the condition reason unless it is SucceededRescale.
func (d Decision) Explain() string {
	out := d.Metric
	if d.RescaleReason != "" {
		out = d.RescaleReason + ": " + d.Metric
	}
	if d.Reason != "SucceededRescale" {
		out += " (" + d.Reason + ")"
	}
	return out
}

// FreshContainerWindow: metrics-server reports a container younger than its
// resolution but at least this old from a single scrape, as if it had a zero
// sample at its start (kubernetes-sigs/metrics-server pkg/storage/pod.go,
// freshContainerMinMetricsResolution).
const FreshContainerWindow = 10 * time.Second

// Reconcile mirrors horizontal.go, reconcileAutoscaler for a scale target whose
// spec.replicas is currentReplicas, given its pods and their metrics; now stands for
// the controller's time.Now(). Scaling always succeeds: Desired is taken as written.
func (a *Autoscaler) Reconcile(now time.Time, currentReplicas int32, pods []Pod, metrics map[string]Metric) Decision {
	d := Decision{Current: currentReplicas}
	a.setCondition(now, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	if a.recommendations == nil {
		// horizontal.go, recordInitialRecommendation: the first count the controller sees
		// is a recommendation too, so it does not scale down for a whole window after it
		// (re)starts.
		a.recommendations = []recommendation{{currentReplicas, now}}
	}
	minReplicas, maxReplicas := *a.spec.MinReplicas, a.spec.MaxReplicas

	switch {
	case currentReplicas == 0:
		a.setCondition(now, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
		d.Desired, d.Reason = currentReplicas, "ScalingDisabled"
		return a.finish(d)
	case currentReplicas > maxReplicas:
		d.Desired, d.RescaleReason = maxReplicas, "Current number of replicas above Spec.MaxReplicas"
	case currentReplicas < minReplicas:
		d.Desired, d.RescaleReason = minReplicas, "Current number of replicas below Spec.MinReplicas"
	default:
		if !a.decideFromMetrics(now, &d, pods, metrics) {
			return a.finish(d)
		}
	}

	if d.Desired == currentReplicas {
		return a.finish(d)
	}
	a.setCondition(now, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", fmt.Sprintf("the HPA controller was able to update the target scale to %d", d.Desired))
	a.storeScaleEvent(currentReplicas, d.Desired, now)
	if d.Reason == "" {
		d.Reason = "SucceededRescale"
	}
	return a.finish(d)
}

// decideFromMetrics is the metric branch of reconcileAutoscaler: compute the proposal,
// then normalize it with or without behavior. It returns false when the metrics failed
// and the reconcile stops without scaling.
func (a *Autoscaler) decideFromMetrics(now time.Time, d *Decision, pods []Pod, metrics map[string]Metric) bool {
	p, err := a.computeReplicasForMetrics(now, d.Current, pods, metrics)
	if p.replicas < 0 {
		d.Desired, d.Reason, d.Err = d.Current, p.failure, err
		return false
	}
	d.Err, d.Proposed, d.Metric, d.Usage = err, p.replicas, p.description, p.usage
	switch {
	case p.replicas > d.Current:
		d.RescaleReason = p.name + " above target"
	case p.replicas < d.Current:
		d.RescaleReason = "All metrics below target"
	}

	var stabilizeReason, limitReason string
	if a.spec.Behavior == nil {
		d.Stabilized, stabilizeReason, d.Desired, limitReason = a.normalize(now, d.Current, p.replicas)
	} else {
		d.Stabilized, stabilizeReason, d.Desired, limitReason = a.normalizeWithBehavior(now, d.Current, p.replicas)
	}
	a.setCondition(now, autoscalingv2.AbleToScale, corev1.ConditionTrue, stabilizeReason, conditionMessages[stabilizeReason])
	limited := corev1.ConditionFalse
	if d.Desired != d.Stabilized {
		limited = corev1.ConditionTrue
	}
	a.setCondition(now, autoscalingv2.ScalingLimited, limited, limitReason, conditionMessages[limitReason])

	switch {
	case limited == corev1.ConditionTrue:
		d.Reason = limitReason
	case stabilizeReason != "ReadyForNewScale":
		d.Reason = stabilizeReason
	case d.Desired == d.Current:
		d.Reason = limitReason
	}
	return true
}

// normalize mirrors horizontal.go, normalizeDesiredReplicas (no spec.behavior).
func (a *Autoscaler) normalize(now time.Time, current, proposed int32) (stabilized int32, stabilizeReason string, desired int32, limitReason string) {
	stabilized, a.recommendations = stabilize(a.recommendations, proposed, a.settings.DownscaleStabilization, now)
	stabilizeReason = "ReadyForNewScale"
	if stabilized != proposed {
		stabilizeReason = "ScaleDownStabilized"
	}
	desired, limitReason = clampWithoutBehavior(current, stabilized, *a.spec.MinReplicas, a.spec.MaxReplicas)
	return stabilized, stabilizeReason, desired, limitReason
}

// normalizeWithBehavior mirrors horizontal.go, normalizeDesiredReplicasWithBehaviors.
func (a *Autoscaler) normalizeWithBehavior(now time.Time, current, proposed int32) (stabilized int32, stabilizeReason string, desired int32, limitReason string) {
	b := a.spec.Behavior
	upWindow := time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second
	downWindow := time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second
	stabilized, stabilizeReason, a.recommendations = stabilizeWithBehavior(a.recommendations, current, proposed, upWindow, downWindow, now)
	if stabilized == proposed {
		stabilizeReason = "ReadyForNewScale"
	}
	n := normalization{current: current, desired: stabilized, min: *a.spec.MinReplicas, max: a.spec.MaxReplicas, up: b.ScaleUp, down: b.ScaleDown}
	desired, limitReason = rateLimited(n, a.scaleUps, a.scaleDowns, now)
	return stabilized, stabilizeReason, desired, limitReason
}

// storeScaleEvent mirrors horizontal.go, storeScaleEvent: events are kept only when
// spec.behavior is set, because only its policies read them.
func (a *Autoscaler) storeScaleEvent(prev, next int32, now time.Time) {
	b := a.spec.Behavior
	if b == nil {
		return
	}
	if next > prev {
		a.scaleUps = recordScaleEvent(a.scaleUps, next-prev, longestPeriod(b.ScaleUp), now)
	} else {
		a.scaleDowns = recordScaleEvent(a.scaleDowns, prev-next, longestPeriod(b.ScaleDown), now)
	}
}

// proposal is the outcome of computeReplicasForMetrics.
type proposal struct {
	replicas    int32 // -1 when the reconcile must stop
	name        string
	description string
	usage       Usage
	failure     string // the condition reason when replicas is -1
}

// computeReplicasForMetrics mirrors horizontal.go, computeReplicasForMetrics with
// computeStatusForResourceMetricGeneric: the highest proposal of all metrics wins; the
// reconcile stops if every metric failed, or if some failed and the others would scale
// down.
func (a *Autoscaler) computeReplicasForMetrics(now time.Time, current int32, pods []Pod, metrics map[string]Metric) (proposal, error) {
	var best proposal
	var firstErr error
	var firstCondition string
	invalid := 0
	for _, m := range a.spec.Metrics {
		target := m.Resource.Target
		replicas, usage, err := ResourceReplicas(current, target, a.tolerances, pods, metrics, a.settings, now)
		if err != nil {
			if invalid == 0 {
				firstErr = fmt.Errorf("failed to get cpu %s: %w", targetNoun(target), err)
				firstCondition = "the HPA was unable to compute the replica count: " + firstErr.Error()
			}
			invalid++
			continue
		}
		if best.replicas == 0 || replicas > best.replicas {
			best = proposal{replicas: replicas, name: metricName(target), description: describe(usage), usage: usage}
		}
	}
	var err error
	if firstErr != nil {
		err = fmt.Errorf("invalid metrics (%d invalid out of %d), first error is: failed to get cpu resource metric value: %w", invalid, len(a.spec.Metrics), firstErr)
	}
	if invalid >= len(a.spec.Metrics) || (invalid > 0 && best.replicas < current) {
		a.setCondition(now, autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric", firstCondition)
		return proposal{replicas: -1, failure: "FailedGetResourceMetric"}, err
	}
	a.setCondition(now, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from "+best.name)
	return best, err
}

// targetNoun and metricName are the words computeStatusForResourceMetricGeneric uses
// for the two target kinds.
func targetNoun(t autoscalingv2.MetricTarget) string {
	if t.AverageValue != nil {
		return "usage"
	}
	return "utilization"
}

func metricName(t autoscalingv2.MetricTarget) string {
	if t.AverageValue != nil {
		return "cpu resource"
	}
	return "cpu resource utilization (percentage of request)"
}

func describe(u Usage) string {
	if u.TargetAverageMilli > 0 {
		return fmt.Sprintf("cpu %dm per pod (target %dm)", u.AverageMilli, u.TargetAverageMilli)
	}
	return fmt.Sprintf("cpu utilization %d%% (target %d%%)", u.Utilization, u.TargetUtilization)
}

// conditionMessages are the messages horizontal.go sets with each normalization reason.
var conditionMessages = map[string]string{
	"ReadyForNewScale":    "recommended size matches current size",
	"ScaleDownStabilized": "recent recommendations were higher than current one, applying the highest recent recommendation",
	"ScaleUpStabilized":   "recent recommendations were lower than current one, applying the lowest recent recommendation",
	"DesiredWithinRange":  "the desired count is within the acceptable range",
	"ScaleUpLimit":        "the desired replica count is increasing faster than the maximum scale rate",
	"ScaleDownLimit":      "the desired replica count is decreasing faster than the maximum scale rate",
	"TooManyReplicas":     "the desired replica count is more than the maximum replica count",
	"TooFewReplicas":      "the desired replica count is less than the minimum replica count",
}

// setCondition mirrors horizontal.go, setConditionInList: the transition time moves
// only when the status changes.
func (a *Autoscaler) setCondition(now time.Time, typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, message string) {
	i := 0
	for i < len(a.conditions) && a.conditions[i].Type != typ {
		i++
	}
	if i == len(a.conditions) {
		a.conditions = append(a.conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ})
	}
	c := &a.conditions[i]
	if c.Status != status {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	c.Status, c.Reason, c.Message = status, reason, message
}

func (a *Autoscaler) finish(d Decision) Decision {
	if d.Reason == "" {
		d.Reason = "DesiredWithinRange"
	}
	d.Conditions = append([]autoscalingv2.HorizontalPodAutoscalerCondition(nil), a.conditions...)
	return d
}
