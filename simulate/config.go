package simulate

import (
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/result"
	"trafficlab/scenario"
)

// serviceConfigs records how each server Deployment was configured to end its pods, so
// that the report's advice on removed pods starts from what the pods already do; and
// when services call services, what each service's pods did.
func (e *Engine) serviceConfigs() []result.Service {
	out := ServiceConfigs(e.sc)
	if e.graph {
		for i := range out {
			f := &e.svcFigures[i]
			lat := f.latency.result()
			out[i].Calls, out[i].Requests, out[i].Errors, out[i].LatencyMS = true, f.requests, f.errors, &lat
		}
	}
	return out
}

// ServiceConfigs are how each service of sc ends its pods, as every engine's Result
// records them.
func ServiceConfigs(sc *scenario.Scenario) []result.Service {
	var out []result.Service
	for _, s := range sc.Spec.Services {
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
		out = append(out, rs)
	}
	return out
}
