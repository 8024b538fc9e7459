// Package kubelet holds the kubelet's timing of a pod's termination, shared by
// simulate (which models it) and emulate (which runs it, and whose pods' servers
// bound their drain by it).
package kubelet

import "time"

// MinimumGracePeriod is what the kubelet still allows the app after SIGTERM when
// the preStop hook used up the grace period (pkg/kubelet/kuberuntime/
// kuberuntime_container.go, minimumGracePeriodInSeconds).
const MinimumGracePeriod = 2 * time.Second

// TerminationSpec is what of a pod decides its termination's timing.
type TerminationSpec struct {
	// GracePeriod is the pod's terminationGracePeriodSeconds.
	GracePeriod time.Duration
	// PreStop is how long the pod's preStop hook runs; 0 without one.
	PreStop time.Duration
}

// Termination is when, counted from a pod's deletion, the kubelet sends the app
// SIGTERM and SIGKILL (kuberuntime_container.go killContainer): SIGTERM once the
// preStop hook is over, which may take at most the grace period; SIGKILL at the end
// of the grace period, the hook's time taken from it, but never sooner than
// MinimumGracePeriod after SIGTERM.
func Termination(s TerminationSpec) (sigterm, sigkill time.Duration) {
	sigterm = min(s.PreStop, s.GracePeriod)
	return sigterm, sigterm + max(s.GracePeriod-sigterm, MinimumGracePeriod)
}
