package emulate

import (
	"time"

	"trafficlab/emulate/cgroup"
	"trafficlab/emulate/load"
	"trafficlab/model/node"
	"trafficlab/result"
	"trafficlab/scenario"
)

// result fills the Result simulate fills, from the client pods' reports and the
// pods' control groups. Counts per pod come from the clients' side: the answers
// each pod gave, named by its X-Trafficlab-Pod header.
func (c *cluster) result() *result.Result {
	spec := &c.sc.Spec
	dur := c.ran.Seconds()
	r := &result.Result{
		Engine: "emulate", Scenario: c.sc.Metadata.Name, Seed: spec.Seed, DurationS: dur,
		ProxyMode: spec.Cluster.ProxyMode, TimelineIntervalS: 1,
		SlowThresholdMS: float64(spec.Report.SlowThreshold.Duration) / 1e6,
		// How each service was configured, as simulate records it (addFigures
		// adds what the pods did when services call services).
		Services: c.sc.ServiceConfigs(),
	}
	var reps []*load.Report
	pods := make([]load.PodRun, 0, len(c.clients))
	for _, cp := range c.clients {
		pods = append(pods, load.PodRun{Client: cp.placed.Index, Name: cp.placed.Name, Node: cp.placed.Node,
			Limit: cp.limit, CPUUsed: cp.cpuUsed, Report: cp.report})
		if cp.report != nil {
			reps = append(reps, cp.report)
		}
	}
	sum := load.Add(reps)
	sum.Fill(r, dur)
	r.Pods, r.Nodes = c.podResults(sum.Pods, dur)
	c.diskResults(r.Nodes, dur)
	load.SlowShares(r.Pods, r.Nodes, sum.Pods)
	r.Clients = load.Clients(c.sc, pods, dur, nodeCores(c))
	r.Timeline = c.tl.Points(reps, r.TimelineIntervalS, c.replicasAt)
	r.ScaleEvents, r.Rollouts = c.replayedUntil(c.ran)
	r.Sidecars = c.sidecarResults()
	r.Background = c.backgroundResults(dur)
	return r
}

// podResults are the service pods and the nodes, in layout order.
func (c *cluster) podResults(perPod map[string]load.Pod, dur float64) ([]result.Pod, []result.Node) {
	cores := nodeCores(c)
	nodeUsed := map[string]float64{}
	nodePods := map[string]int{}
	var pods []result.Pod
	for _, s := range c.servers {
		spec := &c.sc.Spec.Services[serviceIndex(c.sc, s.service)].Pod
		counted := perPod[s.name]
		rp := result.Pod{
			Name: s.name, Service: s.service, Node: s.node, StartS: result.Round(s.created.Seconds(), 6),
			Requests: counted.Requests, Connections: counted.Connections,
			QoSClass: string(node.QOSClass(spec.Resources.Requests, spec.Resources.Limits)),
		}
		if s.readyAt >= 0 {
			rp.ReadyS = secondsPtr(s.readyAt)
		}
		if s.deleting {
			rp.DeletedS = secondsPtr(s.deletedAt)
		}
		// CPU figures are over the pod's life within the run, as simulate's.
		life := dur - s.created.Seconds()
		if s.gone {
			rp.EndS = secondsPtr(s.ended)
			life = (s.ended - s.created).Seconds()
		}
		used, err := s.cpu()
		if err == nil && life > 0 {
			rp.CPUCores = result.Round(used.Seconds()/life, 4)
			capacity := cores[s.node]
			if spec.CPU != nil {
				capacity = spec.CPU.AsApproximateFloat64()
			}
			if capacity > 0 {
				rp.CPUUtilization = result.Round(used.Seconds()/(capacity*life), 4)
			}
			nodeUsed[s.node] += used.Seconds()
		}
		if spec.CPU != nil {
			if st, err := s.group.Stat(); err == nil {
				st = since(st, s.bandwidthAtStart)
				rp.Throttling = &result.Throttling{Periods: st.Periods, ThrottledPeriods: st.Throttled, ThrottledS: result.Round(st.ThrottledTime.Seconds(), 6)}
			}
		}
		if !s.gone {
			nodePods[s.node]++ // as simulate counts them: those running at the end
		}
		pods = append(pods, rp)
	}
	// Client pods and sidecars spend their node's CPU too, as in simulate.
	clientUsed := map[string]float64{}
	for _, cp := range c.clients {
		clientUsed[cp.placed.Node] += cp.cpuUsed.Seconds()
		nodeUsed[cp.placed.Node] += cp.cpuUsed.Seconds()
	}
	for _, ps := range c.sidecars {
		nodeUsed[ps.node] += (ps.cpuAtEnd - ps.cpuAtStart).Seconds()
	}
	var nodes []result.Node
	for _, n := range c.layout.Nodes {
		rn := result.Node{Name: n, CPU: cores[n], Pods: nodePods[n]}
		if dur > 0 {
			rn.ClientCPUCores = result.Round(clientUsed[n]/dur, 4)
		}
		if cores[n] > 0 && dur > 0 {
			rn.CPUUtilization = result.Round(nodeUsed[n]/(cores[n]*dur), 4)
		}
		nodes = append(nodes, rn)
	}
	return pods, nodes
}

func secondsPtr(d time.Duration) *float64 {
	s := result.Round(d.Seconds(), 6)
	return &s
}

func since(now, start cgroup.Bandwidth) cgroup.Bandwidth {
	return cgroup.Bandwidth{Periods: now.Periods - start.Periods, Throttled: now.Throttled - start.Throttled,
		ThrottledTime: now.ThrottledTime - start.ThrottledTime}
}

// nodeCores is each node's allocatable CPU in cores; 0 when unset.
func nodeCores(c *cluster) map[string]float64 {
	out := map[string]float64{}
	for i, pool := range nodePools(c.sc) {
		if pool.CPU != nil {
			out[c.layout.Nodes[i]] = pool.CPU.AsApproximateFloat64()
		}
	}
	return out
}

// nodePools is the pool of each node, in the order the layout names the nodes:
// POOL-0, POOL-1, … pool by pool.
func nodePools(sc *scenario.Scenario) []*scenario.NodePool {
	var out []*scenario.NodePool
	for i := range sc.Spec.Cluster.Nodes {
		pool := &sc.Spec.Cluster.Nodes[i]
		for range pool.Count {
			out = append(out, pool)
		}
	}
	return out
}

// replayedUntil is the scale events, and the simulation's rollouts that began
// before the run ended (all of them, unless it was interrupted); a rollout not done
// by then is not done.
func (c *cluster) replayedUntil(ran time.Duration) ([]result.ScaleEvent, []result.Rollout) {
	end := ran.Seconds()
	events := c.scaleEvents // the live HPAs', made during the run
	var rollouts []result.Rollout
	for _, r := range c.replay.rollouts {
		if r.StartS <= end {
			if r.DoneS != nil && *r.DoneS > end {
				r.DoneS = nil
			}
			rollouts = append(rollouts, r)
		}
	}
	return events, rollouts
}

// replicasAt counts each service's pods at time t since the start: those created
// and not yet deleting, and of them the ready endpoints.
func (c *cluster) replicasAt(t time.Duration) (replicas, ready map[string]int) {
	replicas, ready = map[string]int{}, map[string]int{}
	for i := range c.sc.Spec.Services {
		name := c.sc.Spec.Services[i].Name
		replicas[name], ready[name] = 0, 0
	}
	for _, s := range c.servers {
		if s.created > t || s.deleting && s.deletedAt <= t {
			continue
		}
		replicas[s.service]++
		if s.readyAt >= 0 && s.readyAt <= t && !(s.gone && s.ended <= t) {
			ready[s.service]++
		}
	}
	return replicas, ready
}
