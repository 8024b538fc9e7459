package hpa

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Settings are kube-controller-manager's HPA flags.
type Settings struct {
	SyncPeriod              time.Duration // --horizontal-pod-autoscaler-sync-period, 15s
	Tolerance               float64       // --horizontal-pod-autoscaler-tolerance, 0.1
	DownscaleStabilization  time.Duration // --horizontal-pod-autoscaler-downscale-stabilization, 5m
	CPUInitializationPeriod time.Duration // --horizontal-pod-autoscaler-cpu-initialization-period, 5m
	InitialReadinessDelay   time.Duration // --horizontal-pod-autoscaler-initial-readiness-delay, 30s
}

// DefaultSettings returns the flag defaults of kube-controller-manager
// (pkg/controller/podautoscaler/config/v1alpha1/defaults.go,
// RecommendedDefaultHPAControllerConfiguration).
func DefaultSettings() Settings {
	return Settings{
		SyncPeriod:              15 * time.Second,
		Tolerance:               0.1,
		DownscaleStabilization:  5 * time.Minute,
		CPUInitializationPeriod: 5 * time.Minute,
		InitialReadinessDelay:   30 * time.Second,
	}
}

// withDefaults replaces zero fields by their defaults, because the controller's config
// defaulting treats a zero flag as unset (config/v1alpha1/defaults.go,
// RecommendedDefaultHPAControllerConfiguration).
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	if s.SyncPeriod == 0 {
		s.SyncPeriod = d.SyncPeriod
	}
	if s.Tolerance == 0 {
		s.Tolerance = d.Tolerance
	}
	if s.DownscaleStabilization == 0 {
		s.DownscaleStabilization = d.DownscaleStabilization
	}
	if s.CPUInitializationPeriod == 0 {
		s.CPUInitializationPeriod = d.CPUInitializationPeriod
	}
	if s.InitialReadinessDelay == 0 {
		s.InitialReadinessDelay = d.InitialReadinessDelay
	}
	return s
}

// Pod is what the replica calculator sees of one pod of the scale target.
type Pod struct {
	Name              string
	Phase             corev1.PodPhase
	Deleting          bool      // metadata.deletionTimestamp set
	HasReadyCondition bool      // status.conditions has a Ready condition
	Ready             bool      // Ready condition status is True (false means False; Unknown cannot be expressed)
	ReadyTransition   time.Time // Ready condition lastTransitionTime
	StartTime         *time.Time
	// CPURequestMilli is the pod's CPU request in millicores: the sum over its containers
	// and restartable init containers, or the pod-level request when one is set
	// (replica_calculator.go, calculateRequests). 0 means no request; a Utilization target
	// then fails, as it does in Kubernetes.
	CPURequestMilli int64
}

// Metric is one pod's CPU usage as metrics-server reports it (the sum over the pod's
// containers, metrics/client.go getPodMetrics). A pod metrics-server has nothing for is
// left out of the map.
type Metric struct {
	MilliCores int64
	Timestamp  time.Time
	Window     time.Duration
}

// Tolerances is the band around a usage ratio of 1.0 inside which the HPA keeps the
// current replica count. Both edges are inclusive.
type Tolerances struct {
	ScaleDown float64 // keep while ratio >= 1 - ScaleDown
	ScaleUp   float64 // keep while ratio <= 1 + ScaleUp
}

// within mirrors replica_calculator.go, Tolerances.isWithin: the edges count as inside,
// so a ratio of exactly 0.9 or 1.1 with tolerance 0.1 changes nothing.
func (t Tolerances) within(ratio float64) bool {
	return 1-t.ScaleDown <= ratio && ratio <= 1+t.ScaleUp
}
