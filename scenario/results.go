package scenario

import (
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/model/library"
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
			Headless:                svc.Headless(),
		}
		if g := pod.GRPC; g != nil && g.MaxConnectionAge != nil {
			rs.GRPCMaxConnectionAgeS = g.MaxConnectionAge.Duration.Seconds()
			if g.MaxConnectionAgeGrace != nil {
				rs.GRPCMaxConnectionAgeGraceS = g.MaxConnectionAgeGrace.Duration.Seconds()
			}
		}
		if d := pod.OnSigterm.DrainTimeout; d != nil && pod.OnSigterm.Action == SigtermDrain {
			rs.DrainTimeoutS = d.Duration.Seconds()
		}
		out = append(out, rs)
	}
	return out
}

// ClientResolution is how client library lib resolves a headless Service's name
// (library.ResolutionOf), for the Result; nil where that is not modelled.
func ClientResolution(lib string) *result.Resolution {
	r := library.ResolutionOf(lib)
	if r == nil {
		return nil
	}
	out := &result.Resolution{CacheS: r.Cache.Seconds(), Pick: r.Pick, OneAddress: r.OneAddress,
		ReresolveS: r.Reresolve.Seconds(), SkipsEarly: r.SkipsEarly}
	if r.Cache == library.CacheForever {
		out.CacheS = -1
	}
	return out
}
