package hpa

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// generateScalingRules mirrors the helper of the same name in horizontal_test.go.
func generateScalingRules(pods, podsPeriod, percent, percentPeriod, window int32) *autoscalingv2.HPAScalingRules {
	sel := autoscalingv2.MaxChangePolicySelect
	r := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &window, SelectPolicy: &sel}
	if pods != 0 {
		r.Policies = append(r.Policies, autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: pods, PeriodSeconds: podsPeriod})
	}
	if percent != 0 {
		r.Policies = append(r.Policies, autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: percent, PeriodSeconds: percentPeriod})
	}
	return r
}

// eventsUniform mirrors generateEventsUniformDistribution in horizontal_test.go: the
// events sit in the middles of equal slices of the last periodSeconds.
func eventsUniform(changes []int32, periodSeconds int) []scaleEvent {
	events := make([]scaleEvent, len(changes))
	segment := float64(periodSeconds) / float64(len(changes))
	for i, c := range changes {
		ago := time.Duration(float64(periodSeconds) - segment*float64(i+1) + segment/2)
		events[i] = scaleEvent{change: c, at: testNow.Add(-time.Second * ago)}
	}
	return events
}

// scalingWithRulesCases are horizontal_test.go's TestScalingWithRules cases.
var scalingWithRulesCases = []struct {
	name               string
	up, down           []scaleEvent
	min, max           int32
	upRules, downRules *autoscalingv2.HPAScalingRules
	current, desired   int32
	want               int32
	wantReason         string
}{
	{name: "prenormalized desired replicas within range", current: 5, desired: 7, min: 3, max: 8, want: 7, wantReason: "DesiredWithinRange"},
	{name: "prenormalized desired replicas < minReplicas", current: 3, desired: 1, min: 2, max: 8, want: 2, wantReason: "TooFewReplicas"},
	{name: "prenormalized desired replicas within range when minReplicas is 0", current: 1, desired: 0, min: 0, max: 10, want: 0, wantReason: "DesiredWithinRange"},
	{name: "maxReplicas is the limit because maxReplicas < scaleUpLimit", current: 20, desired: 1000, min: 1, max: 10, want: 10, wantReason: "TooManyReplicas"},
	{name: "desired replica count is more than the maximum replica count", current: 100, desired: 1000, min: 100, max: 150, want: 150, wantReason: "TooManyReplicas"},
	{name: "scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies", current: 3, desired: 1000, min: 1, max: 2000,
		upRules: generateScalingRules(0, 0, 1, 60, 0), want: 4, wantReason: "ScaleUpLimit"},
	// Skipped upstream (testThis), kept here because its numbers follow from the rules.
	{name: "scaleDownLimit is the limit because scaleDownLimit > minReplicas with user defined policies", current: 1000, desired: 3, min: 3, max: 2000,
		downRules: generateScalingRules(20, 60, 0, 0, 0), want: 980, wantReason: "ScaleDownLimit"},
	{name: "scaleUp with default behavior", min: 1, max: 1000, current: 10, desired: 50, want: 20, wantReason: "ScaleUpLimit"},
	{name: "scaleUp with pods policy larger than percent policy", min: 1, max: 1000, upRules: generateScalingRules(100, 60, 100, 60, 0),
		current: 10, desired: 500, want: 110, wantReason: "ScaleUpLimit"},
	{name: "scaleUp with percent policy larger than pods policy", min: 1, max: 1000, upRules: generateScalingRules(2, 60, 100, 60, 0),
		current: 10, desired: 500, want: 20, wantReason: "ScaleUpLimit"},
	{name: "scaleUp with spec MaxReplicas limitation with large pod policy", min: 1, max: 1000, upRules: generateScalingRules(100, 60, 0, 0, 0),
		current: 10, desired: 50, want: 50, wantReason: "DesiredWithinRange"},
	{name: "scaleUp with pod policy limitation", min: 1, max: 1000, upRules: generateScalingRules(30, 60, 0, 0, 0),
		current: 10, desired: 50, want: 40, wantReason: "ScaleUpLimit"},
	{name: "scaleUp with percent policy limitation", min: 1, max: 1000, upRules: generateScalingRules(0, 0, 200, 60, 0),
		current: 10, desired: 50, want: 30, wantReason: "ScaleUpLimit"},
	{name: "scaleDown with percent policy larger than pod policy", min: 1, max: 1000, downRules: generateScalingRules(20, 60, 1, 60, 300),
		current: 100, desired: 2, want: 80, wantReason: "ScaleDownLimit"},
	{name: "scaleDown with pod policy larger than percent policy", min: 1, max: 1000, downRules: generateScalingRules(2, 60, 1, 60, 300),
		current: 100, desired: 2, want: 98, wantReason: "ScaleDownLimit"},
	{name: "scaleDown with spec MinReplicas limitation with large percent policy", min: 5, max: 1000, downRules: generateScalingRules(0, 0, 100, 60, 300),
		current: 10, desired: 2, want: 5, wantReason: "TooFewReplicas"},
	{name: "scaleDown with pod policy limitation", min: 1, max: 1000, downRules: generateScalingRules(5, 60, 0, 0, 300),
		current: 10, desired: 2, want: 5, wantReason: "ScaleDownLimit"},
	{name: "scaleDown with percent policy limitation", min: 1, max: 1000, downRules: generateScalingRules(0, 0, 50, 60, 300),
		current: 10, desired: 5, want: 5, wantReason: "DesiredWithinRange"},
	{name: "scaleUp with spec MaxReplicas limitation with large pod policy and events", up: eventsUniform([]int32{1, 5, 9}, 120),
		min: 1, max: 200, upRules: generateScalingRules(300, 60, 0, 0, 0), current: 100, desired: 500, want: 200, wantReason: "TooManyReplicas"},
	{name: "scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events", up: eventsUniform([]int32{1, 5, 9}, 120),
		min: 1, max: 1000, upRules: generateScalingRules(5, 120, 0, 0, 0), current: 100, desired: 500, want: 100, wantReason: "ScaleUpLimit"},
	{name: "scaleUp with pod policy and previous scale up events", up: eventsUniform([]int32{1, 5, 9}, 120),
		min: 1, max: 1000, upRules: generateScalingRules(150, 120, 0, 0, 0), current: 100, desired: 500, want: 235, wantReason: "ScaleUpLimit"},
	{name: "scaleUp with percent policy and previous scale up events", up: eventsUniform([]int32{1, 5, 9}, 120),
		min: 1, max: 1000, upRules: generateScalingRules(0, 0, 200, 120, 0), current: 100, desired: 500, want: 255, wantReason: "ScaleUpLimit"},
	{name: "scaleUp with percent policy and previous scale up and down events", up: eventsUniform([]int32{4}, 120), down: eventsUniform([]int32{2}, 120),
		min: 1, max: 1000, upRules: generateScalingRules(0, 0, 300, 300, 0), current: 6, desired: 24, want: 16, wantReason: "ScaleUpLimit"},
	{name: "scaleDown with default policy and previous events", down: eventsUniform([]int32{1, 5, 9}, 120),
		min: 1, max: 1000, current: 10, desired: 5, want: 5, wantReason: "DesiredWithinRange"},
	{name: "scaleDown with spec MinReplicas limitation with large pod policy and previous events", down: eventsUniform([]int32{1, 5, 9}, 120),
		min: 5, max: 1000, downRules: generateScalingRules(130, 120, 0, 0, 300), current: 100, desired: 0, want: 5, wantReason: "TooFewReplicas"},
	{name: "scaleDown with pod policy limitation and previous events", down: eventsUniform([]int32{1, 5, 9}, 120),
		min: 1, max: 1000, downRules: generateScalingRules(5, 120, 0, 0, 300), current: 100, desired: 2, want: 100, wantReason: "ScaleDownLimit"},
	{name: "scaleDown with percent policy limitation and previous events", down: eventsUniform([]int32{2, 4, 6}, 120),
		min: 1, max: 1000, downRules: generateScalingRules(0, 0, 50, 120, 300), current: 100, desired: 0, want: 56, wantReason: "ScaleDownLimit"},
	{name: "scaleDown with percent policy and previous scale up and down events", up: eventsUniform([]int32{2}, 120), down: eventsUniform([]int32{4}, 120),
		min: 1, max: 1000, downRules: generateScalingRules(0, 0, 50, 180, 0), current: 10, desired: 1, want: 6, wantReason: "ScaleDownLimit"},
	{name: "scaleDown with previous events preventing further scale down", down: eventsUniform([]int32{10, 10, 10}, 120),
		min: 1, max: 1000, downRules: generateScalingRules(0, 0, 10, 120, 300), current: 100, desired: 0, want: 100, wantReason: "ScaleDownLimit"},
	{name: "scaleDown with with previous events still allowing more scale down", down: eventsUniform([]int32{10, 10, 10}, 120),
		min: 1, max: 1000, downRules: generateScalingRules(0, 0, 1000, 120, 300), current: 10, desired: 5, want: 5, wantReason: "DesiredWithinRange"},
	{name: "check that events were marked 'outdated' for two different policies in the behavior for up", up: eventsUniform([]int32{8, 12, 9, 11}, 120),
		min: 1, max: 1000, upRules: generateScalingRules(1000, 30, 100, 60, 0), current: 100, desired: 200, want: 200, wantReason: "DesiredWithinRange"},
	{name: "check that events were marked 'outdated' for two different policies in the behavior for down", down: eventsUniform([]int32{8, 12, 9, 11}, 120),
		min: 1, max: 1000, downRules: generateScalingRules(1000, 30, 100, 60, 300), current: 100, desired: 5, want: 5, wantReason: "DesiredWithinRange"},
}

// Cases from horizontal_test.go, TestScalingWithRules: convertDesiredReplicasWithBehaviorRate
// with rules completed by GenerateHPAScale{Up,Down}Rules.
func TestScalingWithRules(t *testing.T) {
	cases := scalingWithRulesCases
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := normalization{current: c.current, desired: c.desired, min: c.min, max: c.max,
				up: scaleUpRulesWithDefaults(c.upRules), down: scaleDownRulesWithDefaults(c.downRules)}
			got, reason := rateLimited(n, c.up, c.down, testNow)
			if got != c.want || reason != c.wantReason {
				t.Errorf("got %d (%s), want %d (%s)", got, reason, c.want, c.wantReason)
			}
		})
	}
}

// horizontal_test.go, TestCalculateScaleUpLimitWithScalingRules and
// TestCalculateScaleDownLimitWithBehaviors: selectPolicy Min picks the smallest change.
func TestScaleLimitsSelectMin(t *testing.T) {
	sel := autoscalingv2.MinChangePolicySelect
	window := int32(300)
	rules := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: &window,
		SelectPolicy:               &sel,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 60},
		},
	}
	if got := scaleUpLimit(1, nil, nil, rules, testNow); got != 2 {
		t.Errorf("TestCalculateScaleUpLimitWithScalingRules: got %d, want 2", got)
	}
	if got := scaleDownLimit(5, nil, nil, rules, testNow); got != 3 {
		t.Errorf("TestCalculateScaleDownLimitWithBehaviors: got %d, want 3", got)
	}
	disabled := autoscalingv2.DisabledPolicySelect
	rules.SelectPolicy = &disabled
	if up, down := scaleUpLimit(5, nil, nil, rules, testNow), scaleDownLimit(5, nil, nil, rules, testNow); up != 5 || down != 5 {
		t.Errorf("Disabled: limits %d and %d, want the current count 5", up, down)
	}
}

// Cases from horizontal_test.go, TestStoreScaleEvents: how many replicas the last 60 s
// changed, and the event list after one more rescale of 5 (up from 10, then down from
// 10), with or without behavior.
func TestStoreScaleEvents(t *testing.T) {
	ago := func(s int) time.Time { return testNow.Add(-time.Duration(s) * time.Second) }
	cases := []struct {
		name       string
		prev       []scaleEvent
		rules      *autoscalingv2.HPAScalingRules
		wantChange int32
		want       []scaleEvent // change and outdated only
	}{
		{name: "empty entries with default behavior", wantChange: 0},
		{name: "empty entries with two-policy-behavior", rules: generateScalingRules(10, 60, 100, 60, 0),
			want: []scaleEvent{{change: 5}}},
		{name: "one outdated entry to be kept untouched without behavior", prev: []scaleEvent{{change: 7, at: ago(61)}},
			want: []scaleEvent{{change: 7}}},
		{name: "one outdated entry to be replaced with behavior", prev: []scaleEvent{{change: 7, at: ago(61)}},
			rules: generateScalingRules(10, 60, 100, 60, 0), want: []scaleEvent{{change: 5}}},
		{name: "one actual entry to be not touched with behavior", prev: []scaleEvent{{change: 7, at: ago(58)}},
			rules: generateScalingRules(10, 60, 100, 60, 0), wantChange: 7, want: []scaleEvent{{change: 7}, {change: 5}}},
		{name: "two entries, one of them to be replaced", prev: []scaleEvent{{change: 7, at: ago(61)}, {change: 6, at: ago(59)}},
			rules: generateScalingRules(10, 60, 0, 0, 0), wantChange: 6, want: []scaleEvent{{change: 5}, {change: 6}}},
		{name: "replace one entry, use policies with different periods",
			prev:  []scaleEvent{{change: 8, at: ago(29)}, {change: 6, at: ago(59)}, {change: 7, at: ago(61)}, {change: 9, at: ago(61)}},
			rules: generateScalingRules(10, 60, 100, 30, 0), wantChange: 14,
			want: []scaleEvent{{change: 8}, {change: 6}, {change: 7, outdated: true}, {change: 5}}},
		{name: "two entries, both actual", prev: []scaleEvent{{change: 7, at: ago(58)}, {change: 6, at: ago(59)}},
			rules: generateScalingRules(10, 120, 100, 30, 0), wantChange: 13,
			want: []scaleEvent{{change: 7}, {change: 6}, {change: 5}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, up := range []bool{true, false} {
				a := &Autoscaler{}
				if c.rules != nil {
					a.spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
					if up {
						a.spec.Behavior.ScaleUp = c.rules
					} else {
						a.spec.Behavior.ScaleDown = c.rules
					}
				}
				events := &a.scaleDowns
				next := int32(10 - 5)
				if up {
					events, next = &a.scaleUps, 10+5
				}
				*events = append([]scaleEvent(nil), c.prev...)
				if got := changeInPeriod(60, *events, testNow); got != c.wantChange {
					t.Errorf("up=%v: change in the last 60s = %d, want %d", up, got, c.wantChange)
				}
				a.storeScaleEvent(10, next, testNow)
				if !sameEvents(*events, c.want) {
					t.Errorf("up=%v: events %+v, want %+v", up, *events, c.want)
				}
			}
		})
	}
}

func sameEvents(got, want []scaleEvent) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].change != want[i].change || got[i].outdated != want[i].outdated {
			return false
		}
	}
	return true
}

// Cases from pkg/apis/autoscaling/v2/defaults_test.go, TestGenerateScaleUpRules and
// TestGenerateScaleDownRules.
func TestGenerateScalingRules(t *testing.T) {
	maxSel, minSel := autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect
	i32 := func(v int32) *int32 { return &v }
	pods := func(v, p int32) autoscalingv2.HPAScalingPolicy {
		return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: v, PeriodSeconds: p}
	}
	pct := func(v, p int32) autoscalingv2.HPAScalingPolicy {
		return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: v, PeriodSeconds: p}
	}
	half := resource.MustParse("0.5")
	cases := []struct {
		name      string
		up        bool
		in        *autoscalingv2.HPAScalingRules
		policies  []autoscalingv2.HPAScalingPolicy
		window    *int32
		sel       autoscalingv2.ScalingPolicySelect
		tolerance *resource.Quantity
	}{
		{name: "TestGenerateScaleUpRules/Default values", up: true, in: &autoscalingv2.HPAScalingRules{},
			policies: []autoscalingv2.HPAScalingPolicy{pods(4, 15), pct(100, 15)}, window: i32(0), sel: maxSel},
		{name: "TestGenerateScaleUpRules/All parameters are specified", up: true,
			in:       &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: i32(25), SelectPolicy: &maxSel, Policies: []autoscalingv2.HPAScalingPolicy{pods(1, 2), pct(3, 4)}},
			policies: []autoscalingv2.HPAScalingPolicy{pods(1, 2), pct(3, 4)}, window: i32(25), sel: maxSel},
		{name: "TestGenerateScaleUpRules/Pod policy is specified", up: true,
			in:       &autoscalingv2.HPAScalingRules{SelectPolicy: &minSel, Policies: []autoscalingv2.HPAScalingPolicy{pods(1, 2)}},
			policies: []autoscalingv2.HPAScalingPolicy{pods(1, 2)}, window: i32(0), sel: minSel},
		{name: "TestGenerateScaleUpRules/Percent policy and tolerance is specified", up: true,
			in:       &autoscalingv2.HPAScalingRules{Tolerance: &half, Policies: []autoscalingv2.HPAScalingPolicy{pct(7, 10)}},
			policies: []autoscalingv2.HPAScalingPolicy{pct(7, 10)}, window: i32(0), sel: maxSel, tolerance: &half},
		{name: "TestGenerateScaleDownRules/Default values", in: &autoscalingv2.HPAScalingRules{},
			policies: []autoscalingv2.HPAScalingPolicy{pct(100, 15)}, sel: maxSel},
		{name: "TestGenerateScaleDownRules/All parameters are specified",
			in:       &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: i32(25), SelectPolicy: &maxSel, Policies: []autoscalingv2.HPAScalingPolicy{pods(1, 2), pct(3, 4)}},
			policies: []autoscalingv2.HPAScalingPolicy{pods(1, 2), pct(3, 4)}, window: i32(25), sel: maxSel},
		{name: "TestGenerateScaleDownRules/Percent policy is specified",
			in:       &autoscalingv2.HPAScalingRules{SelectPolicy: &minSel, Policies: []autoscalingv2.HPAScalingPolicy{pct(1, 2)}},
			policies: []autoscalingv2.HPAScalingPolicy{pct(1, 2)}, sel: minSel},
		{name: "TestGenerateScaleDownRules/Pods policy is specified",
			in:       &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{pods(3, 4)}},
			policies: []autoscalingv2.HPAScalingPolicy{pods(3, 4)}, sel: maxSel},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := scaleDownRulesWithDefaults(c.in)
			if c.up {
				got = scaleUpRulesWithDefaults(c.in)
			}
			if !reflect.DeepEqual(got.Policies, c.policies) {
				t.Errorf("policies %+v, want %+v", got.Policies, c.policies)
			}
			if (got.StabilizationWindowSeconds == nil) != (c.window == nil) ||
				(c.window != nil && *got.StabilizationWindowSeconds != *c.window) {
				t.Errorf("window %v, want %v", got.StabilizationWindowSeconds, c.window)
			}
			if *got.SelectPolicy != c.sel {
				t.Errorf("selectPolicy %s, want %s", *got.SelectPolicy, c.sel)
			}
			if got.Tolerance != c.tolerance {
				t.Errorf("tolerance %v, want %v", got.Tolerance, c.tolerance)
			}
		})
	}
}

// An HPA as the API server stores it, defaulted, reads back as the manifest
// it came from, and both scale alike.
func TestUndefaulted(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	minSel := autoscalingv2.MinChangePolicySelect
	util := func(u int32) []autoscalingv2.MetricSpec {
		m := DefaultMetrics()
		m[0].Resource.Target.AverageUtilization = &u
		return m
	}
	pods := []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60}}
	for _, tc := range []struct {
		name     string
		manifest autoscalingv2.HorizontalPodAutoscalerSpec
	}{
		{"bounds only", autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5}},
		{"a CPU target", autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: i32(2), MaxReplicas: 5, Metrics: util(60)}},
		{"a scale-down window", autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5,
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: i32(60)}}}},
		{"rules of its own", autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5,
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: &minSel, Policies: pods}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := defaultSpec(tc.manifest)
			got := Undefaulted(stored)
			if !equality.Semantic.DeepEqual(got, tc.manifest) {
				t.Errorf("Undefaulted(%+v)\n= %+v\nwant %+v", stored, got, tc.manifest)
			}
			if again := defaultSpec(got); !equality.Semantic.DeepEqual(again, stored) {
				t.Errorf("defaulted again %+v, want %+v", again, stored)
			}
		})
	}
}
