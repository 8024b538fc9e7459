package scenario

import (
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/result"
)

// ServiceConfigs are how each service of s ends its pods, as every engine's Result
// records them (result.Service), so that the reports' advice on removed pods
// starts from what the pods already do.
func (s *Scenario) ServiceConfigs() []result.Service {
	var out []result.Service
	for _, svc := range s.Spec.Services {
		pod := &svc.Pod
		sigterm, _ := kubelet.Termination(pod.TerminationSpec())
		rs := result.Service{
			Name: svc.Name, Replicas: svc.Replicas, OnSigterm: pod.OnSigterm.Action,
			PreStopS:                sigterm.Seconds(),
			TerminationGracePeriodS: (time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second).Seconds(),
			IdleTimeoutS:            pod.IdleTimeout.Duration.Seconds(),
		}
		if g := pod.GRPC; g != nil && g.MaxConnectionAge != nil {
			rs.GRPCMaxConnectionAgeS = g.MaxConnectionAge.Duration.Seconds()
		}
		if d := pod.OnSigterm.DrainTimeout; d != nil && pod.OnSigterm.Action == SigtermDrain {
			rs.DrainTimeoutS = d.Duration.Seconds()
		}
		out = append(out, rs)
	}
	return out
}
