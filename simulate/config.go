package simulate

import (
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/result"
	"trafficlab/scenario"
)

// serviceConfigs records how each server Deployment was configured to end its pods, so
// that the report's advice on removed pods starts from what the pods already do.
func (e *Engine) serviceConfigs() []result.Service {
	var out []result.Service
	for _, s := range e.sc.Spec.Services {
		pod := &s.Pod
		sigterm, _ := kubelet.Termination(pod.TerminationSpec())
		rs := result.Service{
			Name: s.Name, Replicas: s.Replicas, OnSigterm: pod.OnSigterm.Action,
			PreStopS:                sigterm.Seconds(),
			TerminationGracePeriodS: (time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second).Seconds(),
		}
		if d := pod.OnSigterm.DrainTimeout; d != nil && pod.OnSigterm.Action == scenario.SigtermDrain {
			rs.DrainTimeoutS = d.Duration.Seconds()
		}
		if e.graph {
			f := &e.svcFigures[len(out)]
			lat := f.latency.result()
			rs.Calls, rs.Requests, rs.Errors, rs.LatencyMS = true, f.requests, f.errors, &lat
		}
		out = append(out, rs)
	}
	return out
}
