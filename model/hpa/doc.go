// Package hpa reimplements the decision logic of the Kubernetes Horizontal Pod
// Autoscaler for CPU Resource metrics, as a pure function of its inputs and an
// injected clock.
//
// It follows kubernetes/kubernetes v1.36.3 (the newest release whose source the Go
// module proxy serves; the module's k8s.io/api is v0.37.2, whose autoscaling/v2 types
// are the same for everything used here):
//
//   - pkg/controller/podautoscaler/replica_calculator.go and metrics/utilization.go:
//     the replica calculator (ResourceReplicas);
//   - pkg/controller/podautoscaler/horizontal.go: the per-HPA controller state and
//     reconcileAutoscaler (Autoscaler.Reconcile);
//   - pkg/apis/autoscaling/v2/defaults.go and pkg/apis/autoscaling/validation: what the
//     API server does to a spec before the controller sees it (New);
//   - pkg/controller/podautoscaler/config/v1alpha1/defaults.go: the controller flags
//     (DefaultSettings).
//
// The replica calculator is separate from the controller loop, as in Kubernetes, so
// that it can be table-tested on its own.
package hpa
