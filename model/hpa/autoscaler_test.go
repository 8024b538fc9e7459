package hpa

import (
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// reconcileCase rebuilds the harness of horizontal_test.go (v1.36.3): pods test-pod-N,
// one per entry of requests (or specReplicas of them), each with a Ready condition whose
// lastTransitionTime equals its start time (the zero time unless given); one metric per
// entry of levels, stamped now over a one-minute window, each container reporting
// level/2; the same Settings as the replica calculator tests; minReplicas, maxReplicas
// and a CPU Utilization target; spec.behavior only when rules are given.
type reconcileCase struct {
	name               string // the Kubernetes test this mirrors
	min, max           int32
	current            int32 // specReplicas
	targetUtilization  int32
	upRules, downRules *autoscalingv2.HPAScalingRules
	levels             []int64
	requests           []int64 // per pod, millicores; nil = current pods of 1000m
	readiness          []bool
	starts             []time.Time
	phases             []corev1.PodPhase
	deleting           []bool
	recommendations    []recommendation // nil: the controller starts with none
	want               int32
	wantConditions     []string // "Type=Status/Reason"; nil: not checked
	wantReason         string   // Decision.Reason; "" = not checked
	wantUtilization    int32    // 0 = not checked
}

// statusOk mirrors statusOkWithOverrides in horizontal_test.go.
func statusOk(overrides ...string) []string {
	out := []string{"AbleToScale=True/SucceededRescale", "ScalingActive=True/ValidMetricFound", "ScalingLimited=False/DesiredWithinRange"}
	for _, o := range overrides {
		typ := o[:strings.Index(o, "=")]
		for i := range out {
			if strings.HasPrefix(out[i], typ+"=") {
				out[i] = o
			}
		}
	}
	return out
}

func (c reconcileCase) inputs() ([]Pod, map[string]Metric) {
	requests := c.requests
	if requests == nil {
		requests = reqs(1000, int(c.current))
	}
	pods := make([]Pod, len(requests))
	for i := range pods {
		start := time.Time{}
		if c.starts != nil {
			start = c.starts[i]
		}
		p := Pod{
			Name:              fmt.Sprintf("test-pod-%d", i),
			Phase:             corev1.PodRunning,
			HasReadyCondition: true,
			Ready:             c.readiness == nil || c.readiness[i],
			ReadyTransition:   start,
			StartTime:         &start,
			CPURequestMilli:   requests[i] / 2 * 2,
		}
		if c.phases != nil {
			p.Phase = c.phases[i]
		}
		if c.deleting != nil {
			p.Deleting = c.deleting[i]
		}
		pods[i] = p
	}
	metrics := map[string]Metric{}
	for i, l := range c.levels {
		metrics[fmt.Sprintf("test-pod-%d", i)] = Metric{MilliCores: l / 2 * 2, Timestamp: testNow, Window: time.Minute}
	}
	return pods, metrics
}

func (c reconcileCase) spec() autoscalingv2.HorizontalPodAutoscalerSpec {
	min, target := c.min, c.targetUtilization
	spec := autoscalingv2.HorizontalPodAutoscalerSpec{
		MinReplicas: &min,
		MaxReplicas: c.max,
		Metrics: []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &target},
			},
		}},
	}
	if c.upRules != nil || c.downRules != nil {
		spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: c.upRules, ScaleDown: c.downRules}
	}
	return spec
}

func (c reconcileCase) run(t *testing.T) {
	t.Helper()
	a, err := New(c.spec(), testSettings)
	if err != nil {
		t.Fatal(err)
	}
	a.recommendations = c.recommendations
	pods, metrics := c.inputs()
	d := a.Reconcile(testNow, c.current, pods, metrics)
	if d.Current != c.current || d.Desired != c.want {
		t.Errorf("current %d desired %d, want %d %d (%s, %v)", d.Current, d.Desired, c.current, c.want, d.Reason, d.Err)
	}
	if c.wantConditions != nil {
		var got []string
		for _, cond := range d.Conditions {
			got = append(got, fmt.Sprintf("%s=%s/%s", cond.Type, cond.Status, cond.Reason))
		}
		if strings.Join(got, " ") != strings.Join(c.wantConditions, " ") {
			t.Errorf("conditions\n got %v\nwant %v", got, c.wantConditions)
		}
	}
	if c.wantReason != "" && d.Reason != c.wantReason {
		t.Errorf("reason %q, want %q", d.Reason, c.wantReason)
	}
	if c.wantUtilization != 0 && d.Usage.Utilization != c.wantUtilization {
		t.Errorf("utilization %d, want %d", d.Usage.Utilization, c.wantUtilization)
	}
}

// reconcileCases are horizontal_test.go's cases, one per Kubernetes test function.
var reconcileCases = []reconcileCase{
	{name: "TestScaleUp", min: 2, max: 6, current: 3, targetUtilization: 30,
		levels: []int64{300, 500, 700}, want: 5, wantUtilization: 50,
		wantConditions: statusOk(), wantReason: "SucceededRescale"},
	{name: "TestScaleUpUnreadyLessScale", min: 2, max: 6, current: 3, targetUtilization: 30,
		levels: []int64{300, 500, 700}, readiness: []bool{false, true, true}, want: 4, wantUtilization: 60},
	{name: "TestScaleUpHotCpuLessScale", min: 2, max: 6, current: 3, targetUtilization: 30,
		levels: []int64{300, 500, 700}, starts: []time.Time{hot(), cool(), cool()}, want: 4, wantUtilization: 60},
	{name: "TestScaleUpUnreadyNoScale", min: 2, max: 6, current: 3, targetUtilization: 30,
		levels: []int64{400, 500, 700}, readiness: []bool{true, false, false}, want: 3, wantUtilization: 40,
		wantConditions: statusOk("AbleToScale=True/ReadyForNewScale"), wantReason: "DesiredWithinRange"},
	{name: "TestScaleUpHotCpuNoScale", min: 2, max: 6, current: 3, targetUtilization: 30,
		levels: []int64{400, 500, 700}, readiness: []bool{true, false, false}, starts: []time.Time{cool(), hot(), hot()},
		want: 3, wantUtilization: 40, wantConditions: statusOk("AbleToScale=True/ReadyForNewScale")},
	{name: "TestScaleUpIgnoresFailedPods", min: 2, max: 6, current: 2, targetUtilization: 30,
		levels: []int64{500, 700}, requests: reqs(1000, 4), readiness: []bool{true, true, false, false},
		phases: []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodFailed, corev1.PodFailed},
		want:   4, wantUtilization: 60},
	{name: "TestScaleDown", min: 2, max: 6, current: 5, targetUtilization: 50,
		levels: []int64{100, 300, 500, 250, 250}, recommendations: []recommendation{}, want: 3, wantUtilization: 28},
	{name: "TestScaleDownIncludeUnreadyPods", min: 2, max: 6, current: 5, targetUtilization: 50,
		levels: []int64{100, 300, 500, 250, 250}, readiness: []bool{true, true, true, false, false},
		recommendations: []recommendation{}, want: 2, wantUtilization: 30},
	{name: "TestScaleDownIgnoresDeletionPods", min: 2, max: 6, current: 5, targetUtilization: 50,
		levels: []int64{100, 300, 500, 250, 250}, requests: reqs(1000, 7),
		readiness:       []bool{true, true, true, true, true, false, false},
		deleting:        []bool{false, false, false, false, false, true, true},
		recommendations: []recommendation{}, want: 3, wantUtilization: 28},
	{name: "TestScaleDownStabilizeInitialSize", min: 2, max: 6, current: 5, targetUtilization: 50,
		levels: []int64{100, 300, 500, 250, 250}, want: 5,
		wantConditions: statusOk("AbleToScale=True/ScaleDownStabilized"), wantReason: "ScaleDownStabilized"},
	{name: "TestStabilizeDownscale", min: 1, max: 5, current: 4, targetUtilization: 100,
		levels: []int64{50, 50, 50}, requests: reqs(100, 3),
		recommendations: []recommendation{rec(10, 10*time.Minute), rec(4, time.Minute)}, want: 4,
		wantConditions: statusOk("AbleToScale=True/ScaleDownStabilized")},
	{name: "TestTolerance", min: 1, max: 5, current: 3, targetUtilization: 100,
		levels: []int64{1010, 1030, 1020}, requests: []int64{900, 1000, 1100}, want: 3,
		wantConditions: statusOk("AbleToScale=True/ReadyForNewScale")},
	{name: "TestMinReplicas", min: 2, max: 5, current: 3, targetUtilization: 90,
		levels: []int64{10, 95, 10}, requests: []int64{900, 1000, 1100}, recommendations: []recommendation{}, want: 2,
		wantConditions: statusOk("ScalingLimited=True/TooFewReplicas"), wantReason: "TooFewReplicas"},
	{name: "TestMinReplicasDesiredZero", min: 2, max: 5, current: 3, targetUtilization: 90,
		levels: []int64{0, 0, 0}, requests: []int64{900, 1000, 1100}, recommendations: []recommendation{}, want: 2,
		wantConditions: statusOk("ScalingLimited=True/TooFewReplicas")},
	{name: "TestMaxReplicas", min: 2, max: 5, current: 3, targetUtilization: 90,
		levels: []int64{8000, 9500, 1000}, requests: []int64{900, 1000, 1100}, want: 5,
		wantConditions: statusOk("ScalingLimited=True/TooManyReplicas"), wantReason: "TooManyReplicas"},
	{name: "TestZeroReplicas", min: 3, max: 5, current: 0, targetUtilization: 90, requests: []int64{}, want: 0,
		wantConditions: []string{"AbleToScale=True/SucceededGetScale", "ScalingActive=False/ScalingDisabled"}, wantReason: "ScalingDisabled"},
	{name: "TestTooFewReplicas", min: 3, max: 5, current: 2, targetUtilization: 90, requests: []int64{}, want: 3,
		wantConditions: []string{"AbleToScale=True/SucceededRescale"}},
	{name: "TestTooManyReplicas", min: 3, max: 5, current: 10, targetUtilization: 90, requests: []int64{}, want: 5,
		wantConditions: []string{"AbleToScale=True/SucceededRescale"}},
	{name: "TestMoreReplicasThanSpecNoScale", min: 1, max: 8, current: 4, targetUtilization: 50,
		levels: []int64{500, 500, 500, 500, 500}, requests: reqs(1000, 5), want: 4,
		wantConditions: statusOk("AbleToScale=True/ReadyForNewScale")},
	{name: "TestMissingMetrics", min: 2, max: 6, current: 4, targetUtilization: 100,
		levels: []int64{400, 95}, recommendations: []recommendation{}, want: 3},
	{name: "TestEmptyMetrics", min: 2, max: 6, current: 4, targetUtilization: 100, levels: []int64{}, want: 4,
		wantConditions: []string{"AbleToScale=True/SucceededGetScale", "ScalingActive=False/FailedGetResourceMetric"},
		wantReason:     "FailedGetResourceMetric"},
	{name: "TestEmptyCPURequest", min: 1, max: 5, current: 1, targetUtilization: 100,
		levels: []int64{200}, requests: []int64{}, want: 1,
		wantConditions: []string{"AbleToScale=True/SucceededGetScale", "ScalingActive=False/FailedGetResourceMetric"}},

	// With spec.behavior.
	{name: "TestScaleDownWithScalingRules", min: 2, max: 6, current: 5, targetUtilization: 50,
		upRules: generateScalingRules(0, 0, 100, 15, 30),
		levels:  []int64{100, 300, 500, 250, 250}, recommendations: []recommendation{}, want: 3, wantUtilization: 28},
	{name: "TestUpscaleCap", min: 1, max: 100, current: 3, targetUtilization: 10,
		upRules: generateScalingRules(0, 0, 700, 60, 0),
		levels:  []int64{100, 200, 300}, requests: reqs(100, 3), want: 24,
		wantConditions: statusOk("ScalingLimited=True/ScaleUpLimit"), wantReason: "ScaleUpLimit"},
	{name: "TestUpscaleCapGreaterThanMaxReplicas", min: 1, max: 20, current: 3, targetUtilization: 10,
		upRules: generateScalingRules(0, 0, 700, 60, 0),
		levels:  []int64{100, 200, 300}, requests: reqs(100, 3), want: 20,
		wantConditions: statusOk("ScalingLimited=True/TooManyReplicas")},
	{name: "TestConfigurableTolerance/Scaling up because of a 1% configurable tolerance", min: 1, max: 5, current: 3, targetUtilization: 100,
		upRules: &autoscalingv2.HPAScalingRules{Tolerance: quantity("0.01")},
		levels:  []int64{1010, 1030, 1020}, requests: []int64{900, 1000, 1100}, want: 4,
		wantConditions: statusOk("AbleToScale=True/SucceededRescale")},
	{name: "TestConfigurableTolerance/No scale-down because of a 90% configurable tolerance", min: 1, max: 5, current: 3, targetUtilization: 100,
		downRules: &autoscalingv2.HPAScalingRules{Tolerance: quantity("0.9")},
		levels:    []int64{300, 300, 300}, want: 3,
		wantConditions: statusOk("AbleToScale=True/ReadyForNewScale")},
	{name: "TestConfigurableTolerance/No scaling because of the large default tolerance", min: 1, max: 5, current: 3, targetUtilization: 100,
		levels: []int64{1010, 1030, 1020}, requests: []int64{900, 1000, 1100}, want: 3,
		wantConditions: statusOk("AbleToScale=True/ReadyForNewScale")},
}

// Cases from horizontal_test.go, one per Kubernetes test function, with its expected
// desired replicas and conditions. (That file raises scaleUpLimitFactor to 8 in init();
// none of these cases reaches the no-behavior cap, so its real value, 2, gives the
// same result.)
func TestReconcile(t *testing.T) {
	cases := reconcileCases
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// Derived from horizontal.go (no Kubernetes test runs the controller twice): with the
// default behavior a scale-up is limited per 15 s period by the scale events the
// autoscaler remembers, and without behavior a scale-down waits for the 5-minute window.
func TestReconcileSequence(t *testing.T) {
	busy := func(n int) ([]Pod, map[string]Metric) {
		c := reconcileCase{current: int32(n), levels: make([]int64, n)}
		for i := range c.levels {
			c.levels[i] = 1000 // 100% of a 1000m request
		}
		return c.inputs()
	}
	target := int32(10)
	spec := reconcileCase{min: 1, max: 100, targetUtilization: target}.spec()
	spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	a, err := New(spec, testSettings)
	if err != nil {
		t.Fatal(err)
	}
	// 1 pod at 100% against a 10% target asks for 10; the default scale-up rules allow
	// max(1+4, 2×1) = 5 now and, 15 s later, max(5+4, 2×5) = 10 (the first event is then
	// exactly one period old, which no longer counts).
	steps := []struct {
		at     time.Duration
		want   int32
		reason string
	}{{0, 5, "ScaleUpLimit"}, {10 * time.Second, 5, "ScaleUpLimit"}, {15 * time.Second, 10, "ScaleUpLimit"}}
	current := int32(1)
	for _, s := range steps {
		pods, metrics := busy(int(current))
		d := a.Reconcile(testNow.Add(s.at), current, pods, metrics)
		if d.Desired != s.want || d.Reason != s.reason {
			t.Fatalf("at +%v from %d: desired %d (%s), want %d (%s)", s.at, current, d.Desired, d.Reason, s.want, s.reason)
		}
		current = d.Desired
	}

	// Without behavior: 4 pods at 10% of a 50% target ask for 1, but the first
	// recommendation (4, recorded when the controller first saw the HPA) holds the count
	// for the whole 5-minute window.
	b, err := New(reconcileCase{min: 1, max: 10, targetUtilization: 50}.spec(), testSettings)
	if err != nil {
		t.Fatal(err)
	}
	idle := reconcileCase{current: 4, levels: []int64{100, 100, 100, 100}}
	pods, metrics := idle.inputs()
	for _, at := range []time.Duration{0, time.Minute, 5 * time.Minute} {
		if d := b.Reconcile(testNow.Add(at), 4, pods, metrics); d.Desired != 4 || d.Reason != "ScaleDownStabilized" {
			t.Fatalf("at +%v: desired %d (%s), want 4 (ScaleDownStabilized)", at, d.Desired, d.Reason)
		}
	}
	if d := b.Reconcile(testNow.Add(5*time.Minute+time.Second), 4, pods, metrics); d.Desired != 1 || d.Reason != "SucceededRescale" {
		t.Fatalf("after the window: desired %d (%s), want 1 (SucceededRescale)", d.Desired, d.Reason)
	}
}

func TestNewDefaultsAndValidation(t *testing.T) {
	a, err := New(autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{}}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	spec := a.Spec()
	m := spec.Metrics[0].Resource
	if *spec.MinReplicas != 1 || m.Name != corev1.ResourceCPU || *m.Target.AverageUtilization != 80 {
		t.Errorf("defaults: minReplicas %d, metric %s %d%%; want 1, cpu 80%%", *spec.MinReplicas, m.Name, *m.Target.AverageUtilization)
	}
	if w := *spec.Behavior.ScaleDown.StabilizationWindowSeconds; w != 300 {
		t.Errorf("scale-down window %d, want 300 from --horizontal-pod-autoscaler-downscale-stabilization", w)
	}
	if w := *spec.Behavior.ScaleUp.StabilizationWindowSeconds; w != 0 {
		t.Errorf("scale-up window %d, want 0", w)
	}

	zero, two := int32(0), int32(2)
	memory := int32(50)
	bad := []autoscalingv2.HorizontalPodAutoscalerSpec{
		{MinReplicas: &zero, MaxReplicas: 3},
		{MinReplicas: &two, MaxReplicas: 1},
		{MaxReplicas: 3, Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType}}},
		{MaxReplicas: 3, Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &memory}}}}},
		{MaxReplicas: 3, Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &memory, AverageValue: quantity("100m")}}}}},
		{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{}}}},
		{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: generateScalingRules(1, 1801, 0, 0, 0)}},
	}
	for i, spec := range bad {
		if _, err := New(spec, testSettings); err == nil {
			t.Errorf("spec %d: accepted, want an error", i)
		}
	}
}

// An AverageValue target goes through calcPlainMetricReplicas; Metric names it per pod.
func TestReconcileAverageValue(t *testing.T) {
	spec := reconcileCase{min: 1, max: 10}.spec()
	spec.Metrics[0].Resource.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("250m")}
	a, err := New(spec, testSettings)
	if err != nil {
		t.Fatal(err)
	}
	pods, metrics := reconcileCase{current: 2, levels: []int64{300, 320}}.inputs()
	d := a.Reconcile(testNow, 2, pods, metrics)
	// average 310m / 250m = 1.24 → ceil(2.48) = 3
	if d.Desired != 3 || d.Metric != "cpu 310m per pod (target 250m)" || d.RescaleReason != "cpu resource above target" {
		t.Errorf("desired %d, metric %q, rescale reason %q", d.Desired, d.Metric, d.RescaleReason)
	}
}

func TestDecisionExplain(t *testing.T) {
	for _, tc := range []struct {
		d    Decision
		want string
	}{
		{Decision{Metric: "cpu 310m per pod (target 250m)", RescaleReason: "cpu resource above target", Reason: "SucceededRescale"},
			"cpu resource above target: cpu 310m per pod (target 250m)"},
		{Decision{Metric: "cpu 1100m per pod (target 100m)", RescaleReason: "cpu resource above target", Reason: "TooManyReplicas"},
			"cpu resource above target: cpu 1100m per pod (target 100m) (TooManyReplicas)"},
		{Decision{Metric: "cpu utilization 20% (target 50%)", Reason: "ScaleDownStabilized"}, "cpu utilization 20% (target 50%) (ScaleDownStabilized)"},
	} {
		if got := tc.d.Explain(); got != tc.want {
			t.Errorf("Explain() = %q, want %q", got, tc.want)
		}
	}
}
