package simulate

import (
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
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
		out = append(out, rs)
	}
	return out
}

// faultsRun records the faults that started before the run's end, each cut to it.
func (e *Engine) faultsRun() []result.Fault {
	var out []result.Fault
	for _, f := range e.sc.Spec.Faults {
		start := sim.Duration(f.Start.Duration)
		if start >= e.end {
			continue
		}
		rf := result.Fault{Name: f.Name, Kind: f.Kind, Target: selected(f.Target), StartS: start.Seconds(), EndS: start.Seconds()}
		if f.Kind != scenario.FaultPodKill {
			rf.Direction = f.Direction
			rf.EndS = min(sim.Duration(f.End.Duration), e.end).Seconds()
			if f.Peer != nil {
				rf.Peer = selected(*f.Peer)
			}
		}
		out = append(out, rf)
	}
	return out
}

// selected writes a selector as the scenario wrote it: "pod web-1", "service web".
func selected(s scenario.Selector) string {
	switch {
	case s.Pod != "":
		return "pod " + s.Pod
	case s.Service != "":
		return "service " + s.Service
	case s.Client != "":
		return "client " + s.Client
	case s.Node != "":
		return "node " + s.Node
	}
	return "every pod"
}
