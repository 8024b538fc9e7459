package hpa

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The fixtures below rebuild the harness of kubernetes/kubernetes
// pkg/controller/podautoscaler/replica_calculator_test.go (v1.36.3): pods named
// test-pod-N with two containers, each requesting the listed amount and each reporting
// the listed usage; a Ready condition whose lastTransitionTime is the zero time; a
// start time that is the zero time unless given ("hot" = now, "cool" = now-3m); metrics
// stamped with the zero time over a one-minute window; tolerance 0.1, CPU
// initialization period 2m, initial readiness delay 10s.

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func hot() time.Time  { return testNow }
func cool() time.Time { return testNow.Add(-3 * time.Minute) }

var testSettings = Settings{
	SyncPeriod:              15 * time.Second,
	Tolerance:               0.1,
	DownscaleStabilization:  5 * time.Minute,
	CPUInitializationPeriod: 2 * time.Minute,
	InitialReadinessDelay:   10 * time.Second,
}

const containersPerPod = 2

type calcCase struct {
	name    string // the Kubernetes test this mirrors
	current int32

	targetUtilization int32 // a Utilization target, or
	targetMilli       int64 // an AverageValue target (levels are then per pod, not per container)

	requests  []int64   // per container, millicores
	levels    [][]int64 // per pod, per container
	podNames  []string  // names of the metrics, when not test-pod-N
	readiness []bool
	starts    []time.Time
	phases    []corev1.PodPhase
	deleting  []bool
	tol       *Tolerances

	want        int32
	wantUtil    int32
	wantAverage int64
	wantErr     string
}

// levels mirrors makePodMetricLevels: every container of pod i uses level[i].
func levels(perContainer ...int64) [][]int64 {
	out := make([][]int64, len(perContainer))
	for i, l := range perContainer {
		out[i] = []int64{l, l}
	}
	return out
}

// perPod gives each pod one value (the custom-metric tests of the same file).
func perPod(values ...int64) [][]int64 {
	out := make([][]int64, len(values))
	for i, v := range values {
		out[i] = []int64{v}
	}
	return out
}

// startAt is a start time d after testNow.
func startAt(d time.Duration) *time.Time { x := testNow.Add(d); return &x }

func reqs(milli int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = milli
	}
	return out
}

func (c calcCase) pods() []Pod {
	n := int(c.current)
	if len(c.phases) > n {
		n = len(c.phases)
	}
	pods := make([]Pod, n)
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
			StartTime:         &start,
		}
		if c.phases != nil {
			p.Phase = c.phases[i]
		}
		if c.deleting != nil {
			p.Deleting = c.deleting[i]
		}
		if i < len(c.requests) {
			p.CPURequestMilli = containersPerPod * c.requests[i]
		}
		pods[i] = p
	}
	return pods
}

func (c calcCase) metrics() map[string]Metric {
	m := map[string]Metric{}
	for i, containers := range c.levels {
		name := fmt.Sprintf("test-pod-%d", i)
		if i < len(c.podNames) {
			name = c.podNames[i]
		}
		var sum int64
		for _, v := range containers {
			sum += v
		}
		m[name] = Metric{MilliCores: sum, Window: time.Minute}
	}
	return m
}

func (c calcCase) target() autoscalingv2.MetricTarget {
	if c.targetMilli > 0 {
		q := resource.NewMilliQuantity(c.targetMilli, resource.DecimalSI)
		return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q}
	}
	u := c.targetUtilization
	return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u}
}

func (c calcCase) run(t *testing.T) {
	t.Helper()
	tol := Tolerances{ScaleDown: 0.1, ScaleUp: 0.1}
	if c.tol != nil {
		tol = *c.tol
	}
	got, usage, err := ResourceReplicas(c.current, c.target(), tol, c.pods(), c.metrics(), testSettings, testNow)
	if c.wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got != c.want || usage.Utilization != c.wantUtil || usage.AverageMilli != c.wantAverage {
		t.Errorf("got %d replicas, utilization %d, average %d; want %d, %d, %d",
			got, usage.Utilization, usage.AverageMilli, c.want, c.wantUtil, c.wantAverage)
	}
}

// resourceReplicasCases are replica_calculator_test.go's cases, one per Kubernetes test
// function (or sub-test).
var resourceReplicasCases = []calcCase{
	{
		name: "TestReplicaCalcDisjointResourcesMetrics", current: 1, targetUtilization: 100,
		requests: reqs(1000, 1), levels: levels(100), podNames: []string{"an-older-pod-name"},
		wantErr: "no metrics returned matched known pods",
	},
	{
		name: "TestReplicaCalcScaleUp", current: 3, targetUtilization: 30,
		requests: reqs(1000, 3), levels: levels(300, 500, 700),
		want: 5, wantUtil: 50, wantAverage: containersPerPod * 500,
	},
	{
		name: "TestReplicaCalcScaleUpUnreadyLessScale", current: 3, targetUtilization: 30,
		readiness: []bool{false, true, true},
		requests:  reqs(1000, 3), levels: levels(300, 500, 700),
		want: 4, wantUtil: 60, wantAverage: containersPerPod * 600,
	},
	{
		name: "TestReplicaCalcScaleUpHotCpuLessScale", current: 3, targetUtilization: 30,
		starts:   []time.Time{hot(), cool(), cool()},
		requests: reqs(1000, 3), levels: levels(300, 500, 700),
		want: 4, wantUtil: 60, wantAverage: containersPerPod * 600,
	},
	{
		name: "TestReplicaCalcScaleUpUnreadyNoScale", current: 3, targetUtilization: 30,
		readiness: []bool{true, false, false},
		requests:  reqs(1000, 3), levels: levels(400, 500, 700),
		want: 3, wantUtil: 40, wantAverage: containersPerPod * 400,
	},
	{
		name: "TestReplicaCalcScaleHotCpuNoScale", current: 3, targetUtilization: 30,
		readiness: []bool{true, false, false},
		starts:    []time.Time{cool(), hot(), hot()},
		requests:  reqs(1000, 3), levels: levels(400, 500, 700),
		want: 3, wantUtil: 40, wantAverage: containersPerPod * 400,
	},
	{
		name: "TestReplicaCalcScaleUpIgnoresFailedPods", current: 2, targetUtilization: 30,
		readiness: []bool{true, true, false, false},
		phases:    []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodFailed, corev1.PodFailed},
		requests:  reqs(1000, 4), levels: levels(500, 700),
		want: 4, wantUtil: 60, wantAverage: containersPerPod * 600,
	},
	{
		name: "TestReplicaCalcScaleUpIgnoresDeletionPods", current: 2, targetUtilization: 30,
		readiness: []bool{true, true, false, false},
		phases:    []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning},
		deleting:  []bool{false, false, true, true},
		requests:  reqs(1000, 4), levels: levels(500, 700),
		want: 4, wantUtil: 60, wantAverage: containersPerPod * 600,
	},
	{
		name: "TestReplicaCalcScaleDown", current: 5, targetUtilization: 50,
		requests: reqs(1000, 5), levels: levels(100, 300, 500, 250, 250),
		want: 3, wantUtil: 28, wantAverage: containersPerPod * 280,
	},
	{
		name: "TestReplicaCalcScaleDownExcludeUnreadyPods", current: 5, targetUtilization: 50,
		readiness: []bool{true, true, true, false, false},
		requests:  reqs(1000, 5), levels: levels(100, 300, 500, 250, 250),
		want: 2, wantUtil: 30, wantAverage: containersPerPod * 300,
	},
	{
		name: "TestReplicaCalcScaleDownExcludeUnscheduledPods", current: 5, targetUtilization: 50,
		readiness: []bool{true, false, false, false, false},
		phases:    []corev1.PodPhase{corev1.PodRunning, corev1.PodPending, corev1.PodPending, corev1.PodPending, corev1.PodPending},
		requests:  reqs(1000, 5), levels: levels(100),
		want: 1, wantUtil: 10, wantAverage: containersPerPod * 100,
	},
	{
		name: "TestReplicaCalcScaleDownIgnoreHotCpuPods", current: 5, targetUtilization: 50,
		starts:   []time.Time{cool(), cool(), cool(), hot(), hot()},
		requests: reqs(1000, 5), levels: levels(100, 300, 500, 250, 250),
		want: 2, wantUtil: 30, wantAverage: containersPerPod * 300,
	},
	{
		name: "TestReplicaCalcScaleDownIgnoresFailedPods", current: 5, targetUtilization: 50,
		readiness: []bool{true, true, true, true, true, false, false},
		phases:    []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodFailed, corev1.PodFailed},
		requests:  reqs(1000, 7), levels: levels(100, 300, 500, 250, 250),
		want: 3, wantUtil: 28, wantAverage: containersPerPod * 280,
	},
	{
		name: "TestReplicaCalcScaleDownIgnoresDeletionPods", current: 5, targetUtilization: 50,
		readiness: []bool{true, true, true, true, true, false, false},
		phases:    []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning},
		deleting:  []bool{false, false, false, false, false, true, true},
		requests:  reqs(1000, 7), levels: levels(100, 300, 500, 250, 250),
		want: 3, wantUtil: 28, wantAverage: containersPerPod * 280,
	},
	{
		name: "TestReplicaCalcTolerance", current: 3, targetUtilization: 100,
		requests: []int64{900, 1000, 1100}, levels: levels(1010, 1030, 1020),
		want: 3, wantUtil: 102, wantAverage: containersPerPod * 1020,
	},
	{
		name: "TestReplicaCalcConfigurableTolerance/Outside of a 0% tolerance", current: 3, targetUtilization: 100,
		tol:      &Tolerances{0, 0},
		requests: []int64{900, 1000, 1100}, levels: levels(909, 1010, 1111),
		want: 4, wantUtil: 101, wantAverage: containersPerPod * 1010,
	},
	{
		name: "TestReplicaCalcConfigurableTolerance/Within a 200% scale-up tolerance", current: 3, targetUtilization: 100,
		tol:      &Tolerances{ScaleDown: 0.1, ScaleUp: 2},
		requests: []int64{900, 1000, 1100}, levels: levels(1890, 1910, 1900),
		want: 3, wantUtil: 190, wantAverage: containersPerPod * 1900,
	},
	{
		name: "TestReplicaCalcConfigurableTolerance/Outside 8% scale-up tolerance", current: 3, targetUtilization: 100,
		tol:      &Tolerances{ScaleDown: 2, ScaleUp: 0.08},
		requests: []int64{900, 1000, 1100}, levels: levels(1100, 1080, 1090),
		want: 4, wantUtil: 109, wantAverage: containersPerPod * 1090,
	},
	{
		name: "TestReplicaCalcConfigurableTolerance/Within a 36% scale-down tolerance", current: 3, targetUtilization: 100,
		tol:      &Tolerances{ScaleDown: 0.36, ScaleUp: 0.1},
		requests: []int64{900, 1000, 1100}, levels: levels(660, 640, 650),
		want: 3, wantUtil: 65, wantAverage: containersPerPod * 650,
	},
	{
		name: "TestReplicaCalcConfigurableTolerance/Outside a 34% scale-down tolerance", current: 3, targetUtilization: 100,
		tol:      &Tolerances{ScaleDown: 0.34, ScaleUp: 0.1},
		requests: []int64{900, 1000, 1100}, levels: levels(660, 640, 650),
		want: 2, wantUtil: 65, wantAverage: containersPerPod * 650,
	},
	{
		name: "TestReplicaCalcSuperfluousMetrics", current: 4, targetUtilization: 100,
		requests: reqs(1000, 4), levels: levels(4000, 9500, 3000, 7000, 3200, 2000),
		want: 24, wantUtil: 587, wantAverage: containersPerPod * 5875,
	},
	{
		name: "TestReplicaCalcMissingMetrics", current: 4, targetUtilization: 100,
		requests: reqs(1000, 4), levels: levels(400, 95),
		want: 3, wantUtil: 24, wantAverage: 495,
	},
	{
		name: "TestReplicaCalcEmptyMetrics", current: 4, targetUtilization: 100,
		requests: reqs(1000, 3), levels: levels(),
		wantErr: "unable to get metrics for resource cpu: no metrics returned from resource metrics API",
	},
	{
		name: "TestReplicaCalcEmptyCPURequest", current: 1, targetUtilization: 100,
		requests: []int64{}, levels: levels(200),
		wantErr: "missing request for",
	},
	{
		name: "TestReplicaCalcMissingMetricsNoChangeEq", current: 2, targetUtilization: 100,
		requests: reqs(1000, 2), levels: levels(1000),
		want: 2, wantUtil: 100, wantAverage: containersPerPod * 1000,
	},
	{
		name: "TestReplicaCalcMissingMetricsNoChangeGt", current: 2, targetUtilization: 100,
		requests: reqs(1000, 2), levels: levels(1900),
		want: 2, wantUtil: 190, wantAverage: containersPerPod * 1900,
	},
	{
		name: "TestReplicaCalcMissingMetricsNoChangeLt", current: 2, targetUtilization: 100,
		requests: reqs(1000, 2), levels: levels(600),
		want: 2, wantUtil: 60, wantAverage: containersPerPod * 600,
	},
	{
		name: "TestReplicaCalcMissingMetricsUnreadyChange", current: 3, targetUtilization: 50,
		readiness: []bool{false, true, true},
		requests:  reqs(1000, 3), levels: levels(100, 450),
		want: 3, wantUtil: 45, wantAverage: containersPerPod * 450,
	},
	{
		name: "TestReplicaCalcMissingMetricsHotCpuNoChange", current: 3, targetUtilization: 50,
		starts:   []time.Time{hot(), cool(), cool()},
		requests: reqs(1000, 3), levels: levels(100, 450),
		want: 3, wantUtil: 45, wantAverage: containersPerPod * 450,
	},
	{
		name: "TestReplicaCalcMissingMetricsUnreadyScaleUp", current: 3, targetUtilization: 50,
		readiness: []bool{false, true, true},
		requests:  reqs(1000, 3), levels: levels(100, 2000),
		want: 4, wantUtil: 200, wantAverage: containersPerPod * 2000,
	},
	{
		name: "TestReplicaCalcMissingMetricsHotCpuScaleUp", current: 3, targetUtilization: 50,
		readiness: []bool{false, true, true},
		starts:    []time.Time{hot(), cool(), cool()},
		requests:  reqs(1000, 3), levels: levels(100, 2000),
		want: 4, wantUtil: 200, wantAverage: containersPerPod * 2000,
	},
	{
		name: "TestReplicaCalcMissingMetricsUnreadyScaleDown", current: 4, targetUtilization: 50,
		readiness: []bool{false, true, true, true},
		requests:  reqs(1000, 4), levels: levels(100, 100, 100),
		want: 3, wantUtil: 10, wantAverage: containersPerPod * 100,
	},
	{
		name: "TestReplicaCalcMissingMetricsScaleDownTargetOver100", current: 4, targetUtilization: 300,
		readiness: []bool{false, true, true, true},
		requests:  []int64{1000, 1000, 2000, 2000}, levels: levels(200, 100, 100),
		want: 2, wantUtil: 6, wantAverage: containersPerPod * 100,
	},
	{
		name: "TestReplicaCalcDuringRollingUpdateWithMaxSurge", current: 2, targetUtilization: 50,
		phases:   []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning},
		requests: reqs(1000, 3), levels: levels(100, 100),
		want: 2, wantUtil: 10, wantAverage: containersPerPod * 100,
	},

	// The custom pod-metric tests run calcPlainMetricReplicas, the same function an
	// AverageValue cpu target runs; their pods are all ready and long started, so
	// the CPU readiness rules change nothing.
	{
		name: "TestReplicaCalcScaleUpCM", current: 3, targetMilli: 15000,
		levels: perPod(20000, 10000, 30000),
		want:   4, wantAverage: 20000,
	},
	{
		name: "TestReplicaCalcScaleDownCM", current: 5, targetMilli: 20000,
		levels: perPod(12000, 12000, 12000, 12000, 12000),
		want:   3, wantAverage: 12000,
	},
	{
		name: "TestReplicaCalcToleranceCM", current: 3, targetMilli: 20000,
		levels: perPod(20000, 21000, 21000),
		want:   3, wantAverage: 20666,
	},
	{
		name: "TestReplicaCalcConfigurableToleranceCM", current: 3, targetMilli: 20000,
		tol:    &Tolerances{ScaleDown: 0.1, ScaleUp: 0.01},
		levels: perPod(20000, 21000, 21000),
		want:   4, wantAverage: 20666,
	},
	{
		name: "TestPlainMetricReplicaCalcMissingMetricsNoChangeEq", current: 5, targetMilli: 20000,
		levels: perPod(20000, 19000, 21000),
		want:   5, wantAverage: 20000,
	},
	{
		name: "TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM", current: 2, targetMilli: 17000,
		phases: []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning},
		levels: perPod(10000, 10000),
		want:   2, wantAverage: 10000,
	},
}

// Cases from replica_calculator_test.go, one per Kubernetes test function (or
// sub-test), with its expected replicas, utilization and raw average value.
func TestResourceReplicas(t *testing.T) {
	cases := resourceReplicasCases
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// TestReplicaCalcComputedToleranceAlgImplementation back-computes a target just outside
// the tolerance (a scale-down is expected) and one just inside it (none is).
func TestReplicaCalcComputedToleranceAlgImplementation(t *testing.T) {
	startPods := int32(10)
	used := int64(startPods * 150)
	requested := int32(2 * used)
	requestedToUsed := float64(requested / int32(used))
	perPodRequested := int64(requested / startPods)

	target := math.Abs(1/(requestedToUsed*(1-0.1))) + .01
	ratio := float64(used) / (float64(requested) * target)
	c := calcCase{
		current:           startPods,
		targetUtilization: int32(target * 100),
		want:              int32(math.Ceil(ratio * float64(startPods))),
		levels:            levels(150, 150, 150, 150, 150, 150, 150, 150, 150, 150),
		requests: []int64{
			perPodRequested + 100, perPodRequested - 100, perPodRequested + 10, perPodRequested - 10,
			perPodRequested + 2, perPodRequested - 2, perPodRequested + 1, perPodRequested - 1,
			perPodRequested, perPodRequested,
		},
		wantUtil:    int32(used*100) / requested,
		wantAverage: containersPerPod * used / 10,
	}
	t.Run("just outside the tolerance", c.run)

	c.targetUtilization = int32((math.Abs(1/(requestedToUsed*(1-0.1))) + .004) * 100)
	c.want = startPods
	t.Run("just inside the tolerance", c.run)
}

// groupPodsCases are replica_calculator_test.go's TestGroupPods cases.
var groupPodsCases = []struct {
	name                      string
	pods                      []Pod
	metrics                   map[string]Metric
	ready                     int
	unready, missing, ignored []string
}{
	{name: "void"},
	{
		name:    "unready a pod without ready condition - CPU",
		pods:    []Pod{{Name: "lucretius", Phase: corev1.PodSucceeded, StartTime: startAt(0)}},
		metrics: map[string]Metric{"lucretius": {MilliCores: 1}},
		unready: []string{"lucretius"},
	},
	{
		name: "count in a ready pod with fresh metrics during initialization period - CPU",
		pods: []Pod{{Name: "bentham", Phase: corev1.PodSucceeded, StartTime: startAt(-time.Minute),
			HasReadyCondition: true, Ready: true, ReadyTransition: *startAt(-30 * time.Second)}},
		metrics: map[string]Metric{"bentham": {MilliCores: 1, Timestamp: testNow, Window: 30 * time.Second}},
		ready:   1,
	},
	{
		name: "unready a ready pod without fresh metrics during initialization period - CPU",
		pods: []Pod{{Name: "bentham", Phase: corev1.PodSucceeded, StartTime: startAt(-time.Minute),
			HasReadyCondition: true, Ready: true, ReadyTransition: *startAt(-30 * time.Second)}},
		metrics: map[string]Metric{"bentham": {MilliCores: 1, Timestamp: testNow, Window: 60 * time.Second}},
		unready: []string{"bentham"},
	},
	{
		name: "unready an unready pod during initialization period - CPU",
		pods: []Pod{{Name: "lucretius", Phase: corev1.PodSucceeded, StartTime: startAt(-10 * time.Minute),
			HasReadyCondition: true, ReadyTransition: *startAt(-9*time.Minute - 54*time.Second)}},
		metrics: map[string]Metric{"lucretius": {MilliCores: 1}},
		unready: []string{"lucretius"},
	},
	{
		name: "count in a ready pod without fresh metrics after initialization period - CPU",
		pods: []Pod{{Name: "bentham", Phase: corev1.PodSucceeded, StartTime: startAt(-3 * time.Minute),
			HasReadyCondition: true, Ready: true, ReadyTransition: *startAt(-3 * time.Minute)}},
		metrics: map[string]Metric{"bentham": {MilliCores: 1, Timestamp: testNow.Add(-2 * time.Minute), Window: time.Minute}},
		ready:   1,
	},
	{
		name: "count in an unready pod that was ready after initialization period - CPU",
		pods: []Pod{{Name: "lucretius", Phase: corev1.PodSucceeded, StartTime: startAt(-10 * time.Minute),
			HasReadyCondition: true, ReadyTransition: *startAt(-9 * time.Minute)}},
		metrics: map[string]Metric{"lucretius": {MilliCores: 1}},
		ready:   1,
	},
	{
		name: "unready pod that has never been ready after initialization period - CPU",
		pods: []Pod{{Name: "lucretius", Phase: corev1.PodSucceeded, StartTime: startAt(-10 * time.Minute),
			HasReadyCondition: true, ReadyTransition: *startAt(-9*time.Minute - 50*time.Second)}},
		metrics: map[string]Metric{"lucretius": {MilliCores: 1}},
		ready:   1, // start+10s is not strictly after the transition
	},
	{
		name:    "a missing pod",
		pods:    []Pod{{Name: "epicurus", Phase: corev1.PodSucceeded, StartTime: startAt(-3 * time.Minute)}},
		missing: []string{"epicurus"},
	},
	{
		name: "several pods",
		pods: []Pod{
			{Name: "lucretius", Phase: corev1.PodSucceeded, StartTime: startAt(0)},
			{Name: "niccolo", Phase: corev1.PodSucceeded, StartTime: startAt(-3 * time.Minute),
				HasReadyCondition: true, Ready: true, ReadyTransition: *startAt(-3 * time.Minute)},
			{Name: "epicurus", Phase: corev1.PodSucceeded, StartTime: startAt(-3 * time.Minute)},
		},
		metrics: map[string]Metric{"lucretius": {MilliCores: 1}, "niccolo": {MilliCores: 1}},
		ready:   1,
		unready: []string{"lucretius"},
		missing: []string{"epicurus"},
	},
	{
		name:    "pending pods are unreadied",
		pods:    []Pod{{Name: "unscheduled", Phase: corev1.PodPending}},
		unready: []string{"unscheduled"},
	},
	{
		name:    "ignore pods with deletion timestamps",
		pods:    []Pod{{Name: "deleted", Phase: corev1.PodPending, Deleting: true}},
		metrics: map[string]Metric{"deleted": {MilliCores: 1}},
		ignored: []string{"deleted"},
	},
	{
		name:    "ignore pods in a failed state",
		pods:    []Pod{{Name: "failed", Phase: corev1.PodFailed}},
		metrics: map[string]Metric{"failed": {MilliCores: 1}},
		ignored: []string{"failed"},
	},
}

// Cases from replica_calculator_test.go, TestGroupPods (its memory case does not apply:
// only cpu is modelled).
func TestGroupPods(t *testing.T) {
	cases := groupPodsCases
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := groupPods(c.pods, c.metrics, 2*time.Minute, 10*time.Second, testNow)
			if g.ready != c.ready || !sameNames(g.unready, c.unready) || !sameNames(g.missing, c.missing) || !sameNames(g.ignored, c.ignored) {
				t.Errorf("got ready %d unready %v missing %v ignored %v; want %d %v %v %v",
					g.ready, g.unready, g.missing, g.ignored, c.ready, c.unready, c.missing, c.ignored)
			}
		})
	}
}

func sameNames(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}
