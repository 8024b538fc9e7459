package simulate

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"trafficlab/model/hpa"
	"trafficlab/placement"
	"trafficlab/sim"
	"trafficlab/simulate/autoscaler"
	"trafficlab/simulate/lifecycle"
)

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

func (w workloads) Replicas(si int32) int { return w.e.deployments.Replicas(si) }

func (w workloads) Scale(si int32, n int, reason string) { w.e.deployments.Scale(si, n, reason) }

func (w workloads) CPUUsed(id int32, now sim.Time) float64 { return w.e.pods[id].grp.Used(now) }

func (w workloads) Pods(si int32, now sim.Time, into []autoscaler.Pod) []autoscaler.Pod {
	e := w.e
	svc := &e.services[si]
	request := milli(placement.CPURequest(&svc.spec.Pod.Resources))
	for _, id := range svc.pods {
		st, ph := e.life.Pod(id), e.life.Phase(id)
		into = append(into, autoscaler.Pod{
			ID: id, Name: e.pods[id].name, Starting: ph == lifecycle.Starting,
			Running:  ph == lifecycle.Running || ph == lifecycle.Draining,
			Deleting: st.Deleting, Ready: st.Ready,
			Scheduled: st.Scheduled, Started: st.Started, ReadySince: st.ReadySince,
			CPURequestMilli: request,
		})
	}
	for _, pp := range e.life.Pending() {
		if pp.Svc == si {
			into = append(into, autoscaler.Pod{ID: -1, Name: pp.Name, Pending: true})
		}
	}
	return into
}
