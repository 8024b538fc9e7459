package simulate

import (
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate/faults"
)

// Result summarises the run. Call it after Run.
func (e *Engine) Result() *result.Result {
	sc := e.sc
	dur := e.end.Seconds()
	st := &e.stats
	r := &result.Result{
		Engine:            "simulate",
		Scenario:          sc.Metadata.Name,
		Seed:              sc.Spec.Seed,
		DurationS:         dur,
		ProxyMode:         e.mode,
		IPVSScheduler:     sc.Spec.Cluster.IPVSScheduler,
		Errors:            errorsOf(st.errors),
		LatencyMS:         result.LatencyBetween(st.latency, st.okMin, st.okMax),
		TimelineIntervalS: st.step.Seconds(),
	}
	failed := r.Errors.Total()
	r.Requests = result.Requests{
		Total: st.ok + failed, OK: st.ok, Failed: failed,
		InFlight: e.inFlight(), NotSent: st.notSent, Behind: e.behindAll(), Retried: st.retries, Abandoned: st.abandoned,
	}
	r.ThroughputRPS = result.Round(float64(st.ok)/dur, 3)
	r.RateRPS = result.Round(float64(st.sent)/dur, 3)

	r.Pods = e.podResults()
	r.Nodes = e.nodeResults()
	e.diagnose(r)
	r.Background = e.backgrounds.Result(e.end, func(n int32) string { return e.nodes[n].name })
	r.Clients = e.clientResults()
	r.Timeline = e.timelineResult()
	r.ScaleEvents = e.deployments.ScaleEvents()
	r.Rollouts = e.deployments.Rollouts()
	for _, pp := range e.life.Pending() {
		r.Pending = append(r.Pending, result.PendingPod{Name: pp.Name, Service: e.services[pp.Svc].name, SinceS: pp.Created.Seconds(), Reason: pp.Reason})
	}
	if len(st.buckets.bounds) > 0 {
		r.Histogram = st.buckets.result()
	}
	r.Samples = st.samples.result()
	r.LatencySpectrum = result.SpectrumOf(st.latency)
	r.Ended = st.ended.result()
	r.Sidecars = e.mesh.Result(e.end, func(pod int32) sim.Time { return e.life.Pod(pod).Ended }, func(n int32) string { return e.nodes[n].name })
	if e.net != nil {
		r.TCP = e.net.Result()
	}
	r.Services, r.Faults = e.serviceConfigs(), faults.Result(e.sc.Spec.Faults, e.end)
	if e.graph {
		r.Edges, r.SlowPath = e.edgeResults(), e.slowPath()
	}
	return r
}

// podResults is every pod the run created, in creation order.
func (e *Engine) podResults() []result.Pod {
	dur := e.end.Seconds()
	var out []result.Pod
	for i := range e.pods {
		p, st := &e.pods[i], e.life.Pod(int32(i))
		used := p.grp.Used(e.end)
		// Utilisation and cores are over the pod's life within the run.
		life := dur - st.Created.Seconds()
		if st.Ended >= 0 {
			life = (st.Ended - st.Created).Seconds()
		}
		util, cores := 0.0, 0.0
		if life > 0 {
			cores = used / life
			if c := p.grp.Capacity(); c > 0 {
				util = used / (c * life)
			}
		}
		rp := result.Pod{
			Name: p.name, Service: e.services[p.svc].name, Node: e.nodes[p.node].name,
			Requests: p.requests, Connections: p.connections, InProgress: int64(p.busy + p.queue.Len()),
			CPUUtilization: result.Round(util, 4), CPUCores: result.Round(cores, 4),
			StartS: st.Created.Seconds(), PendingS: result.Round((st.Scheduled - st.Created).Seconds(), 6), Errors: errorsOf(p.errors),
		}
		if st.FirstReady >= 0 {
			rp.ReadyS = seconds(st.FirstReady)
		}
		if st.Deleting {
			rp.DeletedS = seconds(st.DeletedAt)
		}
		if st.Ended >= 0 {
			rp.EndS = seconds(st.Ended)
		}
		out = append(out, rp)
	}
	return out
}

// nodeResults is each node's CPU and network use over the run.
func (e *Engine) nodeResults() []result.Node {
	dur := e.end.Seconds()
	nodeUsed, clientUsed, proxyUsed := e.nodeCPU(e.end), make([]float64, len(e.nodes)), make([]float64, len(e.nodes))
	e.addClientCPUUsed(e.end, clientUsed)
	e.addProxyCPUUsed(e.end, proxyUsed)
	var out []result.Node
	for i, n := range e.nodes {
		util := 0.0
		if c := n.cpu.Cores(); c > 0 {
			util = nodeUsed[i] / (c * dur)
		}
		rn := result.Node{Name: n.name, CPU: n.cpu.Cores(), CPUUtilization: result.Round(util, 4), Pods: n.pods,
			ClientCPUCores: result.Round(clientUsed[i]/dur, 4), ProxyCPUCores: result.Round(proxyUsed[i]/dur, 4)}
		if n.nicOut != nil {
			// Packets handed to a NIC before the end but sent after it count in full.
			rn.NICTxUtilization = result.Round(min(1, n.nicOut.Busy.Seconds()/dur), 4)
			rn.NICRxUtilization = result.Round(min(1, n.nicIn.Busy.Seconds()/dur), 4)
			rn.NICMaxWaitMS = result.Round(max(n.nicOut.MaxWait, n.nicIn.MaxWait).Seconds()*1e3, 3)
		}
		out = append(out, rn)
	}
	return out
}

// clientResults is each client Deployment's connections, requests and runs.
func (e *Engine) clientResults() []result.Client {
	var out []result.Client
	for di := range e.sc.Spec.Clients {
		d := &e.deps[di]
		c := d.spec
		rc := result.Client{
			Name: c.Name, TimeoutS: c.Timeout.Duration.Seconds(), Target: c.Target, Replicas: c.Replicas, Threads: c.Threads,
			Library: c.Library, Reuse: c.Connections.Reuse, Protocol: resultProtocol(c.Connections.Protocol),
			LoadBalancing: c.Connections.LoadBalancing,
			MaxPerHost:    *c.Connections.MaxPerHost, MaxIdle: *c.Connections.MaxIdlePerHost,
			MaxLifetimeS:      c.Connections.MaxLifetime.Duration.Seconds(),
			ConnectionsOpened: d.opened, PeakOpen: d.peak, OpenAtEnd: d.open,
			Requests: d.requests, Errors: d.errors, Sent: d.sent, Due: d.due,
		}
		if d.headless {
			rc.Resolution = scenario.ClientResolution(c.Library)
		}
		for _, ci := range d.pods {
			rc.RunsAborted += e.cpods[ci].aborted
		}
		e.clientCPUResult(d, &rc)
		rc.Runs = e.load.Runs(int32(di), e.end)
		if c.Rate != nil {
			rc.RatePerPod = c.Rate.PerSecond
		}
		rc.ClosedLoop = c.Threads > 0
		for _, ph := range c.Phases {
			rc.ClosedLoop = rc.ClosedLoop || ph.Threads > 0
		}
		for _, hit := range d.reached {
			if hit {
				rc.PodsReached++
			}
		}
		rc.Held = e.held(d)
		out = append(out, rc)
	}
	return out
}

// timelineResult is the run interval by interval.
func (e *Engine) timelineResult() []result.Point {
	st := &e.stats
	var out []result.Point
	for _, p := range st.timeline {
		pt := result.Point{
			TS: p.t.Seconds(), Offered: p.offered, Requests: p.requests, Errors: p.errors.total(),
			P50MS: result.MS(p.p50), P90MS: result.MS(p.p90), P99MS: result.MS(p.p99), P999MS: result.MS(p.p999), Slow: p.slow,
			Replicas: map[string]int{}, DesiredReplicas: map[string]int{}, ReadyEndpoints: map[string]int{},
		}
		if len(p.podRequests) > 0 && len(e.pods) <= maxPodSeries {
			pt.PodRequests = make(map[string]int64, len(p.podRequests))
			for _, c := range p.podRequests {
				pt.PodRequests[e.pods[c.pod].name] = c.requests
			}
		}
		if len(p.nodeCPU) > 1 {
			pt.NodeCPUCores = make(map[string]float64, len(p.nodeCPU))
			span := (min(p.t+st.step, e.end) - p.t).Seconds()
			for i, used := range p.nodeCPU {
				pt.NodeCPUCores[e.nodes[i].name] = result.Round(used/span, 4)
			}
		}
		for i, s := range p.services {
			name := e.services[i].name
			pt.Replicas[name], pt.DesiredReplicas[name], pt.ReadyEndpoints[name] = s.current, s.desired, s.ready
		}
		if pt.Errors > 0 {
			kinds := errorsOf(p.errors)
			pt.ErrorsByKind = &kinds
		}
		for i, v := range p.svcP99 {
			if v > 0 {
				if pt.ServiceP99MS == nil {
					pt.ServiceP99MS = map[string]float64{}
				}
				pt.ServiceP99MS[e.services[i].name] = result.MS(v)
			}
		}
		out = append(out, pt)
	}
	return out
}

// nodeCPU is the core-seconds each node's containers used up to now: its pods,
// sidecars, client pods and background workloads.
func (e *Engine) nodeCPU(now sim.Time) []float64 {
	used := make([]float64, len(e.nodes))
	e.mesh.AddCPUUsed(now, used)
	e.addClientCPUUsed(now, used)
	e.addProxyCPUUsed(now, used)
	for _, w := range e.backgrounds.All() {
		if w.CPU != nil {
			used[w.Node] += w.CPU.Used(now)
		}
	}
	for i := range e.pods {
		used[e.pods[i].node] += e.pods[i].grp.Used(now)
	}
	return used
}

func errorsOf(c errorCounts) result.Errors {
	var e result.Errors
	for kind, n := range c {
		e.Add(result.ErrorKind(kind), n)
	}
	return e
}

func seconds(t sim.Time) *float64 {
	s := t.Seconds()
	return &s
}

func (e *Engine) inFlight() int64 {
	n := int64(0)
	for i := range e.slots {
		if e.slots[i].state != idle {
			n++
		}
	}
	return n
}

// resultProtocol is a client's protocol as the Result records it: "" for
// HTTP/1.1, the default.
func resultProtocol(p string) string {
	if p == scenario.ProtocolHTTP1 {
		return ""
	}
	return p
}

// held is which of client deployment d's pods opened connections to which server
// pod, when its connections were long-lived (result.Client.Held); nil otherwise.
func (e *Engine) held(d *clientDeployment) []result.HeldConnections {
	if !result.LongLived(d.requests, d.opened) {
		return nil
	}
	var out []result.HeldConnections
	for _, ci := range d.pods {
		cp := &e.cpods[ci]
		h := result.HeldConnections{Pod: cp.name, To: map[string]int64{}}
		for pod, n := range cp.connsTo {
			if n > 0 {
				h.To[e.pods[pod].name] = int64(n)
			}
		}
		out = append(out, h)
	}
	return out
}
