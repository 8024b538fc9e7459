package hpa

import (
	"errors"
	"fmt"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Usage is what one replica calculation saw. Ratio, Utilization and AverageMilli are
// computed over the ready pods that have a metric, before missing and unready pods are
// filled in, which is what the controller reports in status.currentMetrics.
type Usage struct {
	Ratio              float64 // current / target
	Utilization        int32   // percent of requests, truncated to an integer (Utilization targets only)
	AverageMilli       int64   // average usage per counted pod, millicores, truncated
	TargetUtilization  int32   // set for a Utilization target
	TargetAverageMilli int64   // set for an AverageValue target
	Ready              int     // pods counted with a metric
	Missing            int     // running pods without a metric
	Unready            int     // pending pods, and pods whose CPU sample is not trusted yet
	Ignored            int     // deleting or failed pods
}

var (
	errNoMetrics  = errors.New("unable to get metrics for resource cpu: no metrics returned from resource metrics API")
	errNoPods     = errors.New("no pods returned by selector while calculating replica count")
	errNoTargeted = errors.New("did not receive metrics for targeted pods (pods might be unready)")
	errNoMatch    = errors.New("no metrics returned matched known pods")
)

// ResourceReplicas is the replica calculator for a cpu Resource metric: it returns the
// replica count the metric asks for, given the scale target's current (spec) replicas,
// its pods and their metrics. An AverageValue target mirrors
// replica_calculator.go, GetRawResourceReplicas and calcPlainMetricReplicas; otherwise
// AverageUtilization is used, mirroring GetResourceReplicas. tol is the tolerance band
// (Settings.Tolerance both ways, unless spec.behavior sets its own); of s only
// CPUInitializationPeriod and InitialReadinessDelay are read, as given. now stands for
// the controller's time.Now().
func ResourceReplicas(current int32, target autoscalingv2.MetricTarget, tol Tolerances, pods []Pod, metrics map[string]Metric, s Settings, now time.Time) (int32, Usage, error) {
	if len(metrics) == 0 {
		return 0, Usage{}, errNoMetrics
	}
	if len(pods) == 0 {
		return 0, Usage{}, errNoPods
	}
	g := groupPods(pods, metrics, s.CPUInitializationPeriod, s.InitialReadinessDelay, now)
	values := trustedValues(metrics, g)
	if len(values) == 0 {
		return 0, Usage{}, errNoTargeted
	}
	switch {
	case target.AverageValue != nil:
		return averageValueReplicas(current, target.AverageValue.MilliValue(), tol, g, values)
	case target.AverageUtilization != nil:
		return utilizationReplicas(current, *target.AverageUtilization, tol, pods, g, values)
	}
	return 0, Usage{}, errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
}

// podGroups sorts the pods the way replica_calculator.go, groupPods does; names keep the
// order of the pod list so that every result is deterministic.
type podGroups struct {
	ready   int
	unready []string
	missing []string
	ignored []string
}

func (g podGroups) usage() Usage {
	return Usage{Ready: g.ready, Missing: len(g.missing), Unready: len(g.unready), Ignored: len(g.ignored)}
}

// groupPods mirrors replica_calculator.go, groupPods for the cpu resource. Deleting and
// failed pods are ignored outright; pending pods count as unready even without a metric;
// a running pod without a metric is missing.
func groupPods(pods []Pod, metrics map[string]Metric, initPeriod, readinessDelay time.Duration, now time.Time) podGroups {
	var g podGroups
	for _, p := range pods {
		if p.Deleting || p.Phase == corev1.PodFailed {
			g.ignored = append(g.ignored, p.Name)
			continue
		}
		if p.Phase == corev1.PodPending {
			g.unready = append(g.unready, p.Name)
			continue
		}
		m, ok := metrics[p.Name]
		if !ok {
			g.missing = append(g.missing, p.Name)
			continue
		}
		if cpuSampleUntrusted(p, m, initPeriod, readinessDelay, now) {
			g.unready = append(g.unready, p.Name)
			continue
		}
		g.ready++
	}
	return g
}

// cpuSampleUntrusted holds the CPU-only readiness rules of replica_calculator.go,
// groupPods. They exist because a starting container burns CPU that says nothing about
// load: during the initialization period a sample counts only if the pod is ready and a
// whole metric window has passed since it became ready; afterwards a pod is distrusted
// only if it is not ready and has never been ready (its last transition came within the
// initial readiness delay of its start).
func cpuSampleUntrusted(p Pod, m Metric, initPeriod, readinessDelay time.Duration, now time.Time) bool {
	if !p.HasReadyCondition || p.StartTime == nil {
		return true
	}
	if p.StartTime.Add(initPeriod).After(now) {
		return !p.Ready || m.Timestamp.Before(p.ReadyTransition.Add(m.Window))
	}
	return !p.Ready && p.StartTime.Add(readinessDelay).After(p.ReadyTransition)
}

// trustedValues copies the metrics without ignored and unready pods, as
// replica_calculator.go does with removeMetricsForPods. Metrics of pods that are not in
// the pod list stay, as they do in Kubernetes.
func trustedValues(metrics map[string]Metric, g podGroups) map[string]int64 {
	values := make(map[string]int64, len(metrics))
	for name, m := range metrics {
		values[name] = m.MilliCores
	}
	for _, name := range g.ignored {
		delete(values, name)
	}
	for _, name := range g.unready {
		delete(values, name)
	}
	return values
}

// utilizationReplicas mirrors replica_calculator.go, GetResourceReplicas after the
// metrics are fetched and the pods grouped.
func utilizationReplicas(current, target int32, tol Tolerances, pods []Pod, g podGroups, values map[string]int64) (int32, Usage, error) {
	requests, err := podRequests(pods)
	if err != nil {
		return 0, Usage{}, err
	}
	ratio, util, avg, err := utilizationRatio(values, requests, target)
	if err != nil {
		return 0, Usage{}, err
	}
	u := g.usage()
	u.Ratio, u.Utilization, u.AverageMilli, u.TargetUtilization = ratio, util, avg, target

	if len(g.missing) == 0 && !scaleUpWithUnready(g, ratio) {
		return plainProposal(current, ratio, g.ready, tol), u, nil
	}
	// On a scale-down a missing pod is assumed to use its whole request, or the target
	// when the target is above 100%; on a scale-up it is assumed idle.
	fallback := int64(max(100, target))
	fill(values, g.missing, ratio, func(name string) int64 { return requests[name] * fallback / 100 })
	if scaleUpWithUnready(g, ratio) {
		for _, name := range g.unready {
			values[name] = 0
		}
	}
	newRatio, _, _, err := utilizationRatio(values, requests, target)
	if err != nil {
		return 0, u, err
	}
	if tol.within(newRatio) || flips(ratio, newRatio) {
		return current, u, nil
	}
	return towardRatio(current, newRatio, len(values)), u, nil
}

// averageValueReplicas mirrors replica_calculator.go, calcPlainMetricReplicas (reached
// through GetRawResourceReplicas). Unlike the utilization path it needs no requests, and
// a missing pod is assumed to use exactly the target on a scale-down.
func averageValueReplicas(current int32, target int64, tol Tolerances, g podGroups, values map[string]int64) (int32, Usage, error) {
	ratio, avg := usageRatio(values, target)
	u := g.usage()
	u.Ratio, u.AverageMilli, u.TargetAverageMilli = ratio, avg, target

	if len(g.missing) == 0 && !scaleUpWithUnready(g, ratio) {
		return plainProposal(current, ratio, g.ready, tol), u, nil
	}
	fill(values, g.missing, ratio, func(string) int64 { return target })
	if scaleUpWithUnready(g, ratio) {
		for _, name := range g.unready {
			values[name] = 0
		}
	}
	newRatio, _ := usageRatio(values, target)
	if tol.within(newRatio) || flips(ratio, newRatio) {
		return current, u, nil
	}
	return towardRatio(current, newRatio, len(values)), u, nil
}

// towardRatio is the last step of both calculators in replica_calculator.go: the
// adjusted ratio applied to every pod counted, unless the result lies on the wrong side
// of current (more replicas while the ratio is below 1, or fewer while above), as it can
// when more pods exist than spec.replicas, e.g. during a rolling update's surge; then
// nothing changes.
func towardRatio(current int32, newRatio float64, counted int) int32 {
	replicas := ceilReplicas(newRatio * float64(counted))
	if (newRatio < 1 && replicas > current) || (newRatio > 1 && replicas < current) {
		return current
	}
	return replicas
}

// scaleUpWithUnready is the condition under which replica_calculator.go counts unready
// pods at all: only a scale-up, where they are assumed idle, so that pods still starting
// damp the scale-up instead of being ignored.
func scaleUpWithUnready(g podGroups, ratio float64) bool {
	return len(g.unready) > 0 && ratio > 1
}

// plainProposal is the simple case of replica_calculator.go: no missing pods and no
// unready pods to count, so the ratio applies to the ready pods.
func plainProposal(current int32, ratio float64, ready int, tol Tolerances) int32 {
	if tol.within(ratio) {
		return current
	}
	return ceilReplicas(ratio * float64(ready))
}

// fill gives missing pods a value that damps the change, as replica_calculator.go does:
// onScaleDown(name) when ratio < 1, zero when ratio > 1, nothing at exactly 1.
func fill(values map[string]int64, missing []string, ratio float64, onScaleDown func(string) int64) {
	for _, name := range missing {
		switch {
		case ratio < 1:
			values[name] = onScaleDown(name)
		case ratio > 1:
			values[name] = 0
		}
	}
}

// flips reports whether filling in pods turned a scale-up into a scale-down or the
// reverse; replica_calculator.go then keeps the current count.
func flips(ratio, newRatio float64) bool {
	return (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1)
}

// ceilReplicas is int32(math.Ceil(x)) as replica_calculator.go writes it, saturated at
// MaxInt32 (as getUsageRatioReplicaCount does) instead of overflowing.
func ceilReplicas(x float64) int32 {
	c := math.Ceil(x)
	if c >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(c)
}

// podRequests mirrors replica_calculator.go, calculateRequests: every listed pod,
// including ignored and unready ones, must have a CPU request for a Utilization target.
func podRequests(pods []Pod) (map[string]int64, error) {
	requests := make(map[string]int64, len(pods))
	for _, p := range pods {
		if p.CPURequestMilli <= 0 {
			return nil, fmt.Errorf("missing request for cpu in Pod %s", p.Name)
		}
		requests[p.Name] = p.CPURequestMilli
	}
	return requests, nil
}

// utilizationRatio mirrors metrics/utilization.go, GetResourceUtilizationRatio. The
// utilization is truncated to a whole percent before it is divided by the target, so
// the ratio moves in steps of 1/target. Metrics of pods without a request (pods not in
// the list) are skipped.
func utilizationRatio(values, requests map[string]int64, target int32) (ratio float64, util int32, avg int64, err error) {
	var usage, requested, n int64
	for name, v := range values {
		r, ok := requests[name]
		if !ok {
			continue
		}
		usage += v
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, 0, errNoMatch
	}
	util = int32(usage * 100 / requested)
	return float64(util) / float64(target), util, usage / n, nil
}

// usageRatio mirrors metrics/utilization.go, GetMetricUsageRatio: the average is
// truncated to a whole millicore before it is divided by the target.
func usageRatio(values map[string]int64, target int64) (ratio float64, avg int64) {
	var total int64
	for _, v := range values {
		total += v
	}
	avg = total / int64(len(values))
	return float64(avg) / float64(target), avg
}
