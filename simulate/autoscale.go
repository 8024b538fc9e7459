package simulate

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/hpa"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/sim"
)

// epoch maps simulated time onto the wall-clock times the Kubernetes algorithms
// read (pod start, condition transitions, metric timestamps).
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func clock(t sim.Time) time.Time { return epoch.Add(time.Duration(t)) }

// scaleTo sets service si's Deployment to n replicas: the ReplicaSet controller
// creates pods, or deletes the ones it ranks first (replicaset.PodsToDelete).
// During a rollout, old ReplicaSets give up pods first and the rollout creates
// the new ones: Kubernetes' proportional scaling across ReplicaSets
// (sync.go scale) is not modelled.
func (e *Engine) scaleTo(si int32, n int, reason string) {
	svc := &e.services[si]
	ev := result.ScaleEvent{TS: e.k.Now().Seconds(), Service: svc.name, From: svc.replicas, To: n, Reason: reason}
	svc.replicas = n
	active := len(e.replicas(si, anyRevision))
	switch {
	case n < active:
		oldRS := e.replicas(si, e.old(si))
		ev.Deleted = e.deleteReplicas(si, oldRS, min(active-n, len(oldRS)))
		ev.Deleted = append(ev.Deleted, e.deleteReplicas(si, e.replicas(si, e.current(si)), active-n-len(ev.Deleted))...)
	case svc.rolling:
		e.syncRollout(si)
	default:
		ev.Created, ev.Unschedulable = e.createReplicas(si, n-active)
	}
	e.scaleEvents = append(e.scaleEvents, ev)
}

// autoscaler is one service's HorizontalPodAutoscaler and the metrics-server
// readings it decides from.
type autoscaler struct {
	hpa        *hpa.Autoscaler
	sync       sim.Time // the controller's resync period
	resolution sim.Time // metrics-server's scrape interval
}

func (e *Engine) addAutoscaler(si int32) error {
	svc := &e.services[si]
	a := svc.spec.Autoscaler
	ctl := &a.Controller
	settings := hpa.Settings{
		SyncPeriod:              ctl.SyncPeriod.Duration,
		Tolerance:               *ctl.Tolerance,
		DownscaleStabilization:  ctl.DownscaleStabilization.Duration,
		CPUInitializationPeriod: ctl.CPUInitializationPeriod.Duration,
		InitialReadinessDelay:   ctl.InitialReadinessDelay.Duration,
	}
	spec := autoscalingv2.HorizontalPodAutoscalerSpec{
		MinReplicas: a.MinReplicas, MaxReplicas: a.MaxReplicas, Metrics: a.Metrics, Behavior: a.Behavior,
	}
	h, err := hpa.New(spec, settings)
	if err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].autoscaler", si), err)
	}
	svc.autoscaler = &autoscaler{hpa: h, sync: sim.Duration(ctl.SyncPeriod.Duration),
		resolution: sim.Duration(ctl.MetricResolution.Duration)}
	// metrics-server scrapes from the start; the controller's first pass comes a
	// period in, when the pods have a reading.
	e.k.At(0, e.evScrape, si, 0)
	e.k.At(svc.autoscaler.sync, e.evHPA, si, 0)
	return nil
}

// onScrape: metrics-server reads every running pod's cumulative CPU time from the
// kubelet; a pod's usage is the rate between its last two readings, stamped with
// the newer one and the window between them (pkg/storage/types.go resourceUsage).
func (e *Engine) onScrape(ev sim.Event) {
	si := ev.Obj
	svc := &e.services[si]
	now := e.k.Now()
	for _, id := range svc.pods {
		p := &e.pods[id]
		if p.phase != podRunning && p.phase != podDraining {
			p.hasMetric, p.sampledAt = false, -1
			continue
		}
		used := p.grp.Used(now)
		prevAt, prev := p.sampledAt, p.sampled
		if prevAt < 0 {
			if age := now - p.started; age >= sim.Duration(hpa.FreshContainerWindow) && age < svc.autoscaler.resolution {
				prevAt, prev = p.started, 0
			}
		}
		if prevAt >= 0 && now > prevAt {
			window := now - prevAt
			p.metric = hpa.Metric{
				MilliCores: int64((used - prev) * 1000 / window.Seconds()),
				Timestamp:  clock(now), Window: time.Duration(window),
			}
			p.hasMetric = true
		}
		p.sampled, p.sampledAt = used, now
	}
	e.k.After(svc.autoscaler.resolution, e.evScrape, si, 0)
}

// onHPA: the HPA controller's pass over service si's autoscaler.
func (e *Engine) onHPA(ev sim.Event) {
	si := ev.Obj
	svc := &e.services[si]
	a := svc.autoscaler
	e.k.After(a.sync, e.evHPA, si, 0)
	now := e.k.Now()
	var pods []hpa.Pod
	metrics := map[string]hpa.Metric{}
	for _, id := range svc.pods {
		p := &e.pods[id]
		start := clock(p.scheduled)
		hp := hpa.Pod{
			Name: p.name, Phase: corev1.PodRunning, Deleting: p.deleting,
			HasReadyCondition: true, Ready: p.ready, ReadyTransition: clock(p.readySince),
			StartTime: &start, CPURequestMilli: milli(placement.CPURequest(&svc.spec.Pod.Resources)),
		}
		if p.phase == podStarting {
			hp.Phase = corev1.PodPending
		}
		pods = append(pods, hp)
		if p.hasMetric {
			metrics[p.name] = p.metric
		}
	}
	for i := range e.pending {
		if pp := &e.pending[i]; pp.svc == si {
			pods = append(pods, hpa.Pod{Name: pp.name, Phase: corev1.PodPending})
		}
	}
	d := a.hpa.Reconcile(clock(now), int32(svc.replicas), pods, metrics)
	if int(d.Desired) != svc.replicas {
		e.scaleTo(si, int(d.Desired), d.Explain())
	}
}

// registerAutoscalers registers the event kinds of the autoscaler events with the kernel.
func (e *Engine) registerAutoscalers() {
	e.evScrape = e.k.Register(e.onScrape)
	e.evHPA = e.k.Register(e.onHPA)
}
