// Package kubelet holds the kubelet's timing of a pod's termination, shared by
// simulate (which models it) and emulate (which runs it, and whose pods' servers
// bound their drain by it).
package kubelet

import (
	"time"

	"trafficlab/scenario"
)

// MinimumGracePeriod is what the kubelet still allows the app after SIGTERM when
// the preStop hook used up the grace period (pkg/kubelet/kuberuntime/
// kuberuntime_container.go, minimumGracePeriodInSeconds).
const MinimumGracePeriod = 2 * time.Second

// PreStop is how long the pod's preStop hook runs: a sleep action's seconds, or an
// exec hook's duration.
func PreStop(spec *scenario.Pod) time.Duration {
	if spec.Lifecycle == nil || spec.Lifecycle.PreStop == nil {
		return 0
	}
	h := spec.Lifecycle.PreStop
	if h.Sleep != nil {
		return time.Duration(h.Sleep.Seconds) * time.Second
	}
	if h.Exec != nil && h.Exec.Duration != nil {
		return h.Exec.Duration.Duration
	}
	return 0
}

// Termination is when, counted from a pod's deletion, the kubelet sends the app
// SIGTERM and SIGKILL (kuberuntime_container.go killContainer): SIGTERM once the
// preStop hook is over, which may take at most the grace period; SIGKILL at the end
// of the grace period, the hook's time taken from it, but never sooner than
// MinimumGracePeriod after SIGTERM. spec is defaulted (the grace period is set).
func Termination(spec *scenario.Pod) (sigterm, sigkill time.Duration) {
	grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	sigterm = min(PreStop(spec), grace)
	return sigterm, sigterm + max(grace-sigterm, MinimumGracePeriod)
}
