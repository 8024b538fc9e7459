package scenario

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trafficlab/model/logpipe"
)

// Defaults of node resources, logging, background workloads and Deployment strategy.
const (
	defaultSlowThreshold = 500 * time.Millisecond
	defaultDiurnalPeriod = 24 * time.Hour
	// An assumption: one JSON access-log line of a request logger (method, path,
	// status, duration, remote address, user agent) is about 200 bytes.
	defaultAccessLogBytes = 200
	defaultLogBufferBytes = logpipe.ZapBufferSize
	// A background writer's write(2) size: an assumption, 1 MiB per call.
	defaultWriteChunkBytes = 1 << 20
)

// defaultResources applies the API server's defaulting of a container's resources
// (pkg/apis/core/v1/defaults.go SetDefaults_Pod: a resource with a limit and no
// request gets the limit as its request), taking the pod's cpu shorthand as a limit.
func defaultResources(r *corev1.ResourceRequirements, cpuLimit *resource.Quantity) {
	if cpuLimit != nil {
		if _, ok := r.Limits[corev1.ResourceCPU]; !ok {
			if r.Limits == nil {
				r.Limits = corev1.ResourceList{}
			}
			r.Limits[corev1.ResourceCPU] = *cpuLimit
		}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[name] = q
		}
	}
}

func defaultAccessLog(a *AccessLog) {
	if a.Bytes == nil {
		n := int64(defaultAccessLogBytes)
		a.Bytes = &n
	}
	if a.Sync == nil {
		sync := true
		a.Sync = &sync
	}
	if !*a.Sync && a.BufferBytes == nil {
		n := int64(defaultLogBufferBytes)
		a.BufferBytes = &n
	}
}

func defaultBackground(b *Background) {
	defaultResources(&b.Resources, nil)
	if b.DiskWriteBytesPerSecond != nil && b.DiskWriteChunkBytes == nil {
		n := int64(defaultWriteChunkBytes)
		b.DiskWriteChunkBytes = &n
	}
	if b.DiskWriteBytesPerSecond != nil && b.DiskIOBytes == nil {
		var n int64
		b.DiskIOBytes = &n
	}
	if s := b.Schedule; s != nil && s.Diurnal != nil {
		if s.Diurnal.Max == nil {
			one := 1.0
			s.Diurnal.Max = &one
		}
		if s.Diurnal.Period.Duration == 0 {
			s.Diurnal.Period.Duration = defaultDiurnalPeriod
		}
	}
}

// DefaultStrategy is apps/v1 SetDefaults_Deployment (pkg/apis/apps/v1/defaults.go):
// RollingUpdate, with maxSurge and maxUnavailable 25 % each when unset.
func DefaultStrategy(st *appsv1.DeploymentStrategy) {
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if st.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return
	}
	if st.RollingUpdate == nil {
		st.RollingUpdate = &appsv1.RollingUpdateDeployment{}
	}
	quarter := intstr.FromString("25%")
	if st.RollingUpdate.MaxUnavailable == nil {
		st.RollingUpdate.MaxUnavailable = &quarter
	}
	if st.RollingUpdate.MaxSurge == nil {
		st.RollingUpdate.MaxSurge = &quarter
	}
}
