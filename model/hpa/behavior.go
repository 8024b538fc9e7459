package hpa

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// Behavior defaults of pkg/apis/autoscaling/v2/defaults.go: they repeat what the HPA did
// before spec.behavior existed.
const (
	defaultScaleUpPods    = 4
	defaultScaleUpPercent = 100
	defaultScaleUpPeriod  = 15
	defaultScaleDownPct   = 100
	defaultScaleDownPer   = 15
)

// scaleUpRulesWithDefaults mirrors defaults.go, GenerateHPAScaleUpRules: every unset
// field of r is taken from the default rules (4 pods or 100% per 15 s, whichever is
// more, no stabilization).
func scaleUpRulesWithDefaults(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	window := int32(0)
	selectMax := autoscalingv2.MaxChangePolicySelect
	return mergeRules(r, &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: &window,
		SelectPolicy:               &selectMax,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: defaultScaleUpPods, PeriodSeconds: defaultScaleUpPeriod},
			{Type: autoscalingv2.PercentScalingPolicy, Value: defaultScaleUpPercent, PeriodSeconds: defaultScaleUpPeriod},
		},
	})
}

// scaleDownRulesWithDefaults mirrors defaults.go, GenerateHPAScaleDownRules (100% per
// 15 s). The stabilization window stays nil: the API server cannot know the
// controller's --horizontal-pod-autoscaler-downscale-stabilization, so the controller
// fills it in (see New).
func scaleDownRulesWithDefaults(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	selectMax := autoscalingv2.MaxChangePolicySelect
	return mergeRules(r, &autoscalingv2.HPAScalingRules{
		SelectPolicy: &selectMax,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: defaultScaleDownPct, PeriodSeconds: defaultScaleDownPer},
		},
	})
}

// mergeRules mirrors defaults.go, copyHPAScalingRules: fields set in from win. A
// non-nil empty policy list counts as set (and then fails validation).
func mergeRules(from, defaults *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return defaults
	}
	if from.SelectPolicy != nil {
		defaults.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		defaults.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		defaults.Policies = from.Policies
	}
	if from.Tolerance != nil {
		defaults.Tolerance = from.Tolerance
	}
	return defaults
}

// scaleEvent is horizontal.go's timestampedScaleEvent: one rescale, remembered so that
// policies with a periodSeconds can see how far the count already moved.
type scaleEvent struct {
	change   int32 // absolute value
	at       time.Time
	outdated bool
}

// changeInPeriod mirrors horizontal.go, getReplicasChangePerPeriod: the replicas added
// (or removed) by events strictly newer than now - period.
func changeInPeriod(periodSeconds int32, events []scaleEvent, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var sum int32
	for _, e := range events {
		if e.at.After(cutoff) {
			sum += e.change
		}
	}
	return sum
}

// periodStart is the replica count at the start of a policy's period: the current count
// with the period's scale-ups undone and its scale-downs restored (horizontal.go,
// calculateScaleUpLimitWithScalingRules and calculateScaleDownLimitWithBehaviors).
func periodStart(current, periodSeconds int32, up, down []scaleEvent, now time.Time) int32 {
	return current - changeInPeriod(periodSeconds, up, now) + changeInPeriod(periodSeconds, down, now)
}

// scaleUpLimit mirrors horizontal.go, calculateScaleUpLimitWithScalingRules: each
// policy allows its value on top of the count at the start of its period (a percentage
// rounded up, so that a small target can always grow); selectPolicy Max takes the most
// permissive policy, Min the strictest, Disabled allows no change.
func scaleUpLimit(current int32, up, down []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	pick, limit := selectPolicy(*rules.SelectPolicy, true)
	if pick == nil {
		return current
	}
	for _, p := range rules.Policies {
		start := periodStart(current, p.PeriodSeconds, up, down, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		limit = pick(limit, proposed)
	}
	return limit
}

// scaleDownLimit mirrors horizontal.go, calculateScaleDownLimitWithBehaviors: the
// lowest count each policy allows from the start of its period; a percentage is
// truncated toward zero.
func scaleDownLimit(current int32, up, down []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	pick, limit := selectPolicy(*rules.SelectPolicy, false)
	if pick == nil {
		return current
	}
	for _, p := range rules.Policies {
		start := periodStart(current, p.PeriodSeconds, up, down, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		limit = pick(limit, proposed)
	}
	return limit
}

// selectPolicy turns selectPolicy into the fold horizontal.go uses: Max means the
// biggest change (the highest limit up, the lowest limit down), Min the smallest, and
// Disabled (nil) no change at all.
func selectPolicy(sel autoscalingv2.ScalingPolicySelect, up bool) (func(a, b int32) int32, int32) {
	higher := func(a, b int32) int32 { return max(a, b) }
	lower := func(a, b int32) int32 { return min(a, b) }
	switch {
	case sel == autoscalingv2.DisabledPolicySelect:
		return nil, 0
	case (sel == autoscalingv2.MinChangePolicySelect) == up:
		return lower, math.MaxInt32
	default:
		return higher, math.MinInt32
	}
}

// longestPeriod mirrors horizontal.go, getLongestPolicyPeriod.
func longestPeriod(rules *autoscalingv2.HPAScalingRules) int32 {
	var longest int32
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	return longest
}

// recordScaleEvent mirrors one direction of horizontal.go, storeScaleEvent: events older
// than the longest policy period are marked outdated, and the last outdated slot is
// reused for the new event, so the history does not grow without bound.
func recordScaleEvent(events []scaleEvent, change, longestPeriodSeconds int32, now time.Time) []scaleEvent {
	cutoff := now.Add(-time.Duration(longestPeriodSeconds) * time.Second)
	reuse := -1
	for i := range events {
		if events[i].at.Before(cutoff) {
			events[i].outdated = true
		}
		if events[i].outdated {
			reuse = i
		}
	}
	e := scaleEvent{change: change, at: now}
	if reuse >= 0 {
		events[reuse] = e
		return events
	}
	return append(events, e)
}

// rateLimited mirrors horizontal.go, convertDesiredReplicasWithBehaviorRate: it bounds
// desired by the behavior's policies and by minReplicas/maxReplicas and names the bound
// that applied. A policy limit that points the wrong way (because of earlier events)
// freezes the count at current.
func rateLimited(n normalization, up, down []scaleEvent, now time.Time) (int32, string) {
	switch {
	case n.desired > n.current:
		limit := max(scaleUpLimit(n.current, up, down, n.up, now), n.current)
		ceiling, reason := n.max, "TooManyReplicas"
		if ceiling > limit {
			ceiling, reason = limit, "ScaleUpLimit"
		}
		if n.desired > ceiling {
			return ceiling, reason
		}
	case n.desired < n.current:
		limit := min(scaleDownLimit(n.current, up, down, n.down, now), n.current)
		floor, reason := n.min, "TooFewReplicas"
		if floor < limit {
			floor, reason = limit, "ScaleDownLimit"
		}
		if n.desired < floor {
			return floor, reason
		}
	}
	return n.desired, "DesiredWithinRange"
}

// normalization is horizontal.go's NormalizationArg without the key.
type normalization struct {
	current, desired int32
	min, max         int32
	up, down         *autoscalingv2.HPAScalingRules
}
