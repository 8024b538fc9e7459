package scenario

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Disk is a node's disk as cloud block storage limits it: writes beyond the limits
// queue.
type Disk struct {
	// WriteBytesPerSecond is the write throughput limit, a quantity such as 100Mi,
	// as a cloud volume's throughput cap. Unset: unlimited.
	WriteBytesPerSecond *resource.Quantity `yaml:"writeBytesPerSecond"`
	// IOPS is the limit on write operations per second, as a cloud volume's IOPS
	// cap. Default: 0, unlimited.
	IOPS int64 `yaml:"iops"`
}

// AccessLog is the line an app writes to stdout per request, after its handler and
// before the answer leaves (as chi's and zap's request loggers do). The line goes
// through a pipe to the container runtime, which writes it to the node's disk; when
// the disk is slow, the pipe fills and the write blocks the request.
type AccessLog struct {
	// Bytes of one line, at most PIPE_BUF (4096: longer writes to a pipe are not
	// atomic). Default: 200, an assumption (one JSON line of a request logger).
	Bytes *int64 `yaml:"bytes"`
	// Sync: each line is written at once (zap's default, os.Stdout behind a lock).
	// false: lines go to an in-process buffer first (zap's BufferedWriteSyncer).
	// Default: true.
	Sync *bool `yaml:"sync"`
	// BufferBytes is the in-process buffer, with sync false only. Default: 256Ki,
	// zap's.
	BufferBytes *int64 `yaml:"bufferBytes"`
	// CPU to encode one line, added to each request's CPU work. Default: 0.
	CPU metav1.Duration `yaml:"cpu"`
}

// Background is a workload that serves no traffic: a pod that writes to disk, burns
// CPU, or both, on a chosen node or wherever the scheduler puts it.
type Background struct {
	// Name of the workload and its pod, a DNS label unique among workloads. Required.
	Name string `yaml:"name"`
	// Node pins the pod to a node by name, POOL-N (spec.nodeName). Exclusive with
	// Placement. Unset: the scheduler places it.
	Node string `yaml:"node"`
	// Placement lets the scheduler choose, with the pod's constraints.
	Placement *Placement `yaml:"placement"`
	// Labels of the pod, for other pods' affinity; app: NAME is always added.
	Labels map[string]string `yaml:"labels"`
	// Resources of the pod: the CPU request weighs its share of a busy node and
	// counts for scheduling; a CPU limit caps it by CFS quota.
	Resources corev1.ResourceRequirements `yaml:"resources"`
	// CPU is the cores it burns at full intensity, greater than 0. Set it,
	// diskWriteBytesPerSecond or both.
	CPU *resource.Quantity `yaml:"cpu"`
	// DiskWriteBytesPerSecond is what it writes at full intensity, as a quantity
	// (20Mi). Writes go to the disk in chunks of DiskWriteChunkBytes, one at a time,
	// as a process calling write(2) in a loop does. Unset: no writes.
	DiskWriteBytesPerSecond *resource.Quantity `yaml:"diskWriteBytesPerSecond"`
	// DiskWriteChunkBytes is the size of one write. Default: 1Mi, an assumption.
	DiskWriteChunkBytes *int64 `yaml:"diskWriteChunkBytes"`
	// DiskIOBytes is the size of the I/Os a write becomes on the device: 4Ki for
	// small random writes (a database), or 0 for writes merged by the page cache into
	// large I/Os. Default: 0.
	DiskIOBytes *int64 `yaml:"diskIOBytes"`
	// Schedule varies the intensity over time. Unset: always full.
	Schedule *Schedule `yaml:"schedule"`
}

// Placement is the scheduling constraints of a pod, as in a Pod spec.
type Placement struct {
	// NodeSelector places the pod on nodes with these labels, as in a Pod spec.
	NodeSelector map[string]string `yaml:"nodeSelector"`
	// Affinity is node affinity and pod (anti-)affinity, as in a Pod spec.
	Affinity *corev1.Affinity `yaml:"affinity"`
	// Tolerations let the pod onto nodes with matching taints, as in a Pod spec.
	Tolerations []corev1.Toleration `yaml:"tolerations"`
}

// Schedule is a background workload's intensity over time, a factor from 0 to 1 of
// its cpu and disk writes: a diurnal curve, bursts, or both (multiplied).
type Schedule struct {
	// Diurnal is a daily swing of the intensity. Set it, bursts or both.
	Diurnal *DiurnalFactor `yaml:"diurnal"`
	// Bursts switch the workload on and off. Set them, diurnal or both.
	Bursts *Bursts `yaml:"bursts"`
}

// DiurnalFactor swings between Min and Max (fractions of full intensity) along a
// cosine with the given period, at Max at PeakAt.
type DiurnalFactor struct {
	// Min is the intensity at the trough, a fraction from 0 to 1. Default: 0.
	Min float64 `yaml:"min"`
	// Max is the intensity at the peak, from min to 1. Default: 1.
	Max *float64 `yaml:"max"`
	// Period of the cosine. Default: 24h.
	Period metav1.Duration `yaml:"period"`
	// PeakAt is when the intensity is at Max, from the start of the run. Default: 0.
	PeakAt metav1.Duration `yaml:"peakAt"`
}

// Bursts run the workload for Length every Every, starting at Start; off between.
type Bursts struct {
	// Every is the time from one burst's start to the next's, greater than 0.
	// Required.
	Every metav1.Duration `yaml:"every"`
	// Length of a burst, greater than 0 and not longer than every. Required.
	Length metav1.Duration `yaml:"length"`
	// Start of the first burst, from the start of the run. Default: 0.
	Start metav1.Duration `yaml:"start"`
}

// RateCurve is an open loop's rate over time: points joined by straight lines (the
// last rate holds after the last point), or a diurnal cosine.
type RateCurve struct {
	// Points are rates at times, in time order, joined by straight lines. Set them
	// or diurnal.
	Points []RatePoint `yaml:"points"`
	// Diurnal is a rate along a daily cosine. Set it or points.
	Diurnal *Diurnal `yaml:"diurnal"`
}

// RatePoint is the rate at one time.
type RatePoint struct {
	// At is the time, from the start of the run, later than the point before.
	// Default: 0.
	At metav1.Duration `yaml:"at"`
	// Rate per client pod at that time. Required.
	Rate *Rate `yaml:"rate"`
}

// Diurnal is a rate that swings between Min and Max along a cosine with the given
// period (default 24h), at Max at PeakAt: rate(t) = min + (max−min)·(1+cos(2π(t−peakAt)/period))/2.
type Diurnal struct {
	// Min is the rate per client pod at the trough. Required.
	Min *Rate `yaml:"min"`
	// Max is the rate per client pod at the peak, not below min. Required.
	Max *Rate `yaml:"max"`
	// Period of the cosine, greater than 0. Default: 24h.
	Period *metav1.Duration `yaml:"period"`
	// PeakAt is when the rate is at Max, from the start of the run. Default: 0.
	PeakAt metav1.Duration `yaml:"peakAt"`
}
