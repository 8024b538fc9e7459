package load

import (
	"cmp"
	"slices"
	"time"

	"trafficlab/result"
	"trafficlab/scenario"
)

// PodRun is one load pod's part in a run.
type PodRun struct {
	Client     int // its client's index in the scenario
	Name, Node string
	// Limit is its CPU limit in cores, 0 without one; CPUUsed what its load
	// generator spent from the run's start to its load's end.
	Limit   float64
	CPUUsed time.Duration
	Report  *Report // nil when it did not report
}

// Clients sum up each client's pods over the run's dur seconds, nodeCores being
// each node's allocatable cores (0 unknown). PeakOpen is the sum of its pods'
// peaks, which may not have come at one instant.
func Clients(sc *scenario.Scenario, pods []PodRun, dur float64, nodeCores map[string]float64) []result.Client {
	var out []result.Client
	for i := range sc.Spec.Clients {
		spec := &sc.Spec.Clients[i]
		rc := result.Client{Name: spec.Name, Target: spec.Target, Replicas: spec.Replicas, Threads: spec.Threads,
			Library: spec.Library, Reuse: spec.Connections.Reuse}
		if spec.Connections.Protocol != scenario.ProtocolHTTP1 {
			rc.Protocol = spec.Connections.Protocol
		}
		rc.LoadBalancing = spec.Connections.LoadBalancing
		if target := slices.IndexFunc(sc.Spec.Services, func(s scenario.Service) bool { return s.Name == spec.Target }); sc.Spec.Services[target].Headless() {
			rc.Resolution = scenario.ClientResolution(spec.Library)
		}
		if spec.Connections.MaxPerHost != nil {
			rc.MaxPerHost = *spec.Connections.MaxPerHost
		}
		if spec.Connections.MaxIdlePerHost != nil {
			rc.MaxIdle = *spec.Connections.MaxIdlePerHost
		}
		if spec.Connections.MaxLifetime != nil {
			rc.MaxLifetimeS = spec.Connections.MaxLifetime.Duration.Seconds()
		}
		if spec.Rate != nil {
			rc.RatePerPod = spec.Rate.PerSecond
		}
		var reached []string
		used := 0.0 // core-seconds its pods' load generators spent
		for _, p := range pods {
			rep := p.Report
			if p.Client != i || rep == nil {
				continue
			}
			rc.Sent += rep.Sent
			rc.Due += rep.Due
			rc.Behind += rep.Requests.Behind
			rc.MaxLateS = max(rc.MaxLateS, rep.MaxLateS)
			rc.Pods = append(rc.Pods, p.cpuResult(nodeCores[p.Node], dur))
			used += p.CPUUsed.Seconds()
			rc.ConnectionsOpened += rep.Connections.Opened
			rc.PeakOpen += rep.Connections.PeakOpen
			rc.OpenAtEnd += rep.Connections.OpenAtEnd
			rc.Requests += rep.Requests.Total
			rc.Errors += rep.Requests.Failed
			rc.RunsAborted += rep.RunsAborted
			h := result.HeldConnections{Pod: p.Name, To: map[string]int64{}}
			for _, q := range rep.Pods {
				if !slices.Contains(reached, q.Name) {
					reached = append(reached, q.Name)
				}
				if q.Connections > 0 {
					h.To[q.Name] = q.Connections
				}
			}
			rc.Held = append(rc.Held, h)
		}
		rc.PodsReached = len(reached)
		if !result.LongLived(rc.Requests, rc.ConnectionsOpened) {
			rc.Held = nil
		}
		if dur > 0 {
			rc.CPUCores = result.Round(used/dur, 4)
		}
		if rc.Sent > 0 {
			rc.CPUPerRequestMS = result.Round(used/float64(rc.Sent)*1e3, 6)
		}
		out = append(out, rc)
	}
	return out
}

// cpuResult is the CPU the pod's load generator used over the run's dur seconds,
// against its limit or else its node's cores.
func (p PodRun) cpuResult(nodeCores, dur float64) result.ClientPod {
	out := result.ClientPod{Name: p.Name, Node: p.Node, CPULimit: p.Limit}
	if dur <= 0 {
		return out
	}
	used := p.CPUUsed.Seconds()
	out.CPUCores = result.Round(used/dur, 4)
	if capacity := cmp.Or(p.Limit, nodeCores); capacity > 0 {
		out.CPUUtilization = result.Round(used/(capacity*dur), 4)
	}
	return out
}
