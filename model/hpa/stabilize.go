package hpa

import (
	"math"
	"time"
)

// The no-behavior scale-up cap of horizontal.go (scaleUpLimitFactor, scaleUpLimitMinimum):
// at most double, and at least 4, per reconcile.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// recommendation is horizontal.go's timestampedRecommendation: one unstabilized
// proposal of the metrics.
type recommendation struct {
	replicas int32
	at       time.Time
}

// stabilize mirrors horizontal.go, stabilizeRecommendation (no spec.behavior): the
// result is the highest recommendation not older than window, the new one included,
// so a scale-down waits until every recommendation of the window agrees. The newest
// recommendation takes the slot of the last one older than the window, or is appended.
func stabilize(recs []recommendation, desired int32, window time.Duration, now time.Time) (int32, []recommendation) {
	cutoff := now.Add(-window)
	highest := desired
	reuse := -1
	for i, r := range recs {
		if r.at.Before(cutoff) {
			reuse = i
		} else {
			highest = max(highest, r.replicas)
		}
	}
	return highest, storeRecommendation(recs, reuse, recommendation{desired, now})
}

// stabilizeWithBehavior mirrors horizontal.go, stabilizeRecommendationWithBehaviors: the
// count may rise no higher than the lowest recommendation of the scale-up window and
// fall no lower than the highest of the scale-down window. Windows exclude their exact
// start (After, not !Before), unlike stabilize. reason names the direction of the
// unstabilized recommendation, as the controller's AbleToScale condition does.
func stabilizeWithBehavior(recs []recommendation, current, desired int32, upWindow, downWindow time.Duration, now time.Time) (int32, string, []recommendation) {
	upCutoff, downCutoff := now.Add(-upWindow), now.Add(-downWindow)
	upBound, downBound := desired, desired
	reuse := -1
	for i, r := range recs {
		if r.at.After(upCutoff) {
			upBound = min(upBound, r.replicas)
		}
		if r.at.After(downCutoff) {
			downBound = max(downBound, r.replicas)
		}
		if r.at.Before(upCutoff) && r.at.Before(downCutoff) {
			reuse = i
		}
	}
	stabilized := min(max(current, upBound), downBound)
	reason := "ScaleDownStabilized"
	if desired >= current {
		reason = "ScaleUpStabilized"
	}
	return stabilized, reason, storeRecommendation(recs, reuse, recommendation{desired, now})
}

func storeRecommendation(recs []recommendation, reuse int, r recommendation) []recommendation {
	if reuse >= 0 {
		recs[reuse] = r
		return recs
	}
	return append(recs, r)
}

// clampWithoutBehavior mirrors horizontal.go, convertDesiredReplicasWithRules: without
// spec.behavior one reconcile may at most double the count (at least up to 4), never
// pass maxReplicas and never go below minReplicas. The reason is the condition reason
// the controller sets on ScalingLimited.
func clampWithoutBehavior(current, desired, minReplicas, maxReplicas int32) (int32, string) {
	ceiling, reason := maxReplicas, "TooManyReplicas"
	if limit := noBehaviorScaleUpLimit(current); maxReplicas > limit {
		ceiling, reason = limit, "ScaleUpLimit"
	}
	switch {
	case desired < minReplicas:
		return minReplicas, "TooFewReplicas"
	case desired > ceiling:
		return ceiling, reason
	}
	return desired, "DesiredWithinRange"
}

// noBehaviorScaleUpLimit mirrors horizontal.go, calculateScaleUpLimit.
func noBehaviorScaleUpLimit(current int32) int32 {
	return int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
}
