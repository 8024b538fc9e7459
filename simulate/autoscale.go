package simulate

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"trafficlab/model/hpa"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/sim"
	"trafficlab/simulate/autoscaler"
)

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

// addAutoscaler gives service si its HPA.
func (e *Engine) addAutoscaler(si int32) error {
	a := e.services[si].spec.Autoscaler
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
	e.autoscalers.Add(si, autoscaler.Spec{HPA: h, Sync: sim.Duration(ctl.SyncPeriod.Duration),
		Resolution: sim.Duration(ctl.MetricResolution.Duration)})
	return nil
}

// workloads is what the autoscalers see of the cluster: the Engine's services and
// pods, through autoscaler.Workloads.
type workloads struct{ e *Engine }

func (w workloads) Replicas(si int32) int { return w.e.services[si].replicas }

func (w workloads) Scale(si int32, n int, reason string) { w.e.scaleTo(si, n, reason) }

func (w workloads) CPUUsed(id int32, now sim.Time) float64 { return w.e.pods[id].grp.Used(now) }

func (w workloads) Pods(si int32, now sim.Time, into []autoscaler.Pod) []autoscaler.Pod {
	e := w.e
	svc := &e.services[si]
	request := milli(placement.CPURequest(&svc.spec.Pod.Resources))
	for _, id := range svc.pods {
		p := &e.pods[id]
		into = append(into, autoscaler.Pod{
			ID: id, Name: p.name, Starting: p.phase == podStarting,
			Running:  p.phase == podRunning || p.phase == podDraining,
			Deleting: p.deleting, Ready: p.ready,
			Scheduled: p.scheduled, Started: p.started, ReadySince: p.readySince,
			CPURequestMilli: request,
		})
	}
	for i := range e.pending {
		if pp := &e.pending[i]; pp.svc == si {
			into = append(into, autoscaler.Pod{ID: -1, Name: pp.name, Pending: true})
		}
	}
	return into
}
