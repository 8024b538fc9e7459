// Package autoscaler is the simulator's autoscaling subsystem: each service's
// HorizontalPodAutoscaler controller and the metrics-server readings it decides
// from. It owns those readings and its timers; it sees the pods and scales the
// Deployments through Workloads, as the real controller reaches them through the
// API server's pod lister and the scale subresource.
package autoscaler

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/hpa"
	"trafficlab/sim"
)

// Workloads is what the controllers see of the cluster.
type Workloads interface {
	// Replicas is the service's Deployment spec.replicas.
	Replicas(svc int32) int
	// Pods appends the service's pods that exist, and then its Pending ones, to into.
	Pods(svc int32, now sim.Time, into []Pod) []Pod
	// CPUUsed is the core-seconds a running pod used up to now, as the kubelet
	// reports its container's cumulative CPU time.
	CPUUsed(pod int32, now sim.Time) float64
	// Scale sets the service's Deployment to n replicas, for reason.
	Scale(svc int32, n int, reason string)
}

// Pod is what the controller and metrics-server read of one pod.
type Pod struct {
	ID   int32 // stable for the pod's life; -1 for a Pending pod
	Name string
	// Pending: no node has it yet, and it has no other field. Starting: scheduled,
	// not yet running its app. Running: its app runs, and its CPU counts.
	Pending, Starting, Running     bool
	Deleting, Ready                bool
	Scheduled, Started, ReadySince sim.Time
	CPURequestMilli                int64
	CPUUsed                        float64 // core-seconds up to now
}

// Spec is one service's autoscaler: the HPA's spec, the controller's settings and
// metrics-server's scrape interval.
type Spec struct {
	HPA        *hpa.Autoscaler
	Sync       sim.Time // the controller's resync period
	Resolution sim.Time // metrics-server's scrape interval
}

// Controllers are the HPA controllers of a run, one per autoscaled service.
type Controllers struct {
	k                *sim.Kernel
	w                Workloads
	specs            map[int32]*Spec
	readings         []reading // by pod ID
	pods             []Pod     // scratch
	evScrape, evSync uint8
}

// reading is metrics-server's view of one pod: its last reading of cumulative CPU
// and the usage it reports.
type reading struct {
	sampled   float64
	sampledAt sim.Time // -1: none
	metric    hpa.Metric
	hasMetric bool
}

// New registers the controllers' events with k.
func New(k *sim.Kernel, w Workloads) *Controllers {
	c := &Controllers{k: k, w: w, specs: map[int32]*Spec{}}
	c.evScrape = k.Register(c.onScrape)
	c.evSync = k.Register(c.onSync)
	return c
}

// Add starts an autoscaler for service svc. metrics-server scrapes from the start;
// the controller's first pass comes a period in, when the pods have a reading.
func (c *Controllers) Add(svc int32, s Spec) {
	c.specs[svc] = &s
	c.k.At(0, c.evScrape, svc, 0)
	c.k.At(s.Sync, c.evSync, svc, 0)
}

func (c *Controllers) reading(id int32) *reading {
	for int(id) >= len(c.readings) {
		c.readings = append(c.readings, reading{sampledAt: -1})
	}
	return &c.readings[id]
}

// onScrape: metrics-server reads every running pod's cumulative CPU time from the
// kubelet; a pod's usage is the rate between its last two readings, stamped with
// the newer one and the window between them (pkg/storage/types.go resourceUsage).
func (c *Controllers) onScrape(ev sim.Event) {
	svc := ev.Obj
	s := c.specs[svc]
	now := c.k.Now()
	c.pods = c.w.Pods(svc, now, c.pods[:0])
	for i := range c.pods {
		p := &c.pods[i]
		if p.Pending {
			continue
		}
		r := c.reading(p.ID)
		if !p.Running {
			r.hasMetric, r.sampledAt = false, -1
			continue
		}
		used := c.w.CPUUsed(p.ID, now)
		prevAt, prev := r.sampledAt, r.sampled
		if prevAt < 0 {
			if age := now - p.Started; age >= sim.Duration(hpa.FreshContainerWindow) && age < s.Resolution {
				prevAt, prev = p.Started, 0
			}
		}
		if prevAt >= 0 && now > prevAt {
			window := now - prevAt
			r.metric = hpa.Metric{
				MilliCores: int64((used - prev) * 1000 / window.Seconds()),
				Timestamp:  now.Clock(), Window: time.Duration(window),
			}
			r.hasMetric = true
		}
		r.sampled, r.sampledAt = used, now
	}
	c.k.After(s.Resolution, c.evScrape, svc, 0)
}

// onSync: the HPA controller's pass over service svc's autoscaler.
func (c *Controllers) onSync(ev sim.Event) {
	svc := ev.Obj
	s := c.specs[svc]
	c.k.After(s.Sync, c.evSync, svc, 0)
	now := c.k.Now()
	var pods []hpa.Pod
	metrics := map[string]hpa.Metric{}
	c.pods = c.w.Pods(svc, now, c.pods[:0])
	for i := range c.pods {
		p := &c.pods[i]
		if p.Pending {
			pods = append(pods, hpa.Pod{Name: p.Name, Phase: corev1.PodPending})
			continue
		}
		start := p.Scheduled.Clock()
		hp := hpa.Pod{
			Name: p.Name, Phase: corev1.PodRunning, Deleting: p.Deleting,
			HasReadyCondition: true, Ready: p.Ready, ReadyTransition: p.ReadySince.Clock(),
			StartTime: &start, CPURequestMilli: p.CPURequestMilli,
		}
		if p.Starting {
			hp.Phase = corev1.PodPending
		}
		pods = append(pods, hp)
		if r := c.reading(p.ID); r.hasMetric {
			metrics[p.Name] = r.metric
		}
	}
	replicas := c.w.Replicas(svc)
	d := s.HPA.Reconcile(now.Clock(), int32(replicas), pods, metrics)
	if int(d.Desired) != replicas {
		c.w.Scale(svc, int(d.Desired), d.Explain())
	}
}
