package simulate

import (
	"fmt"
	"math"

	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/simulate/lifecycle"
)

// overloads finds the services whose clients offered more than was answered in time
// while a resource was saturated (their pods' CPU or workers, or their clients'
// connection pools) and requests failed or were not sent, and estimates what would
// carry the load.
func (e *Engine) overloads(r *result.Result) []result.Overload {
	var out []result.Overload
	for si := range e.services {
		dem, use := e.demandOn(int32(si)), e.useOf(int32(si))
		// Requests that finished after their clients gave up count as not served:
		// the overload is what the clients did not get.
		if dem.offered == 0 || use.finished == 0 || use.life == 0 || dem.failed == 0 ||
			float64(dem.offered-dem.answered) <= unservedShare*float64(dem.offered) {
			continue
		}
		if o := e.overload(r, int32(si), dem, &use); len(o.Saturated) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// demand is what a service's clients asked of it over the run.
type demand struct{ offered, failed, answered int64 }

func (e *Engine) demandOn(si int32) demand {
	var dem demand
	for di := range e.deps {
		if d := &e.deps[di]; d.svc == si {
			dem.offered += d.sent + d.notSent
			dem.failed += d.errors + d.notSent
			dem.answered += d.requests
		}
	}
	return dem
}

// podsUse sums what a service's pods did over their lives in the run.
type podsUse struct {
	finished, queued, replicas          int64
	used, life, capLife, workerLife, ok float64
	periods, throttled                  int64
	hold                                spent
}

func (e *Engine) useOf(si int32) podsUse {
	var u podsUse
	limited := e.services[si].limit > 0
	for pi := range e.pods {
		p := &e.pods[pi]
		if p.svc != si {
			continue
		}
		u.finished += p.requests
		u.queued += int64(p.queue.Len())
		st := e.life.Pod(int32(pi))
		if !st.Deleting && e.life.Phase(int32(pi)) < lifecycle.Exited {
			u.replicas++
		}
		end := e.end
		if st.Ended >= 0 {
			end = st.Ended
		}
		l := (end - st.Created).Seconds()
		u.used += p.grp.Used(e.end)
		u.life += l
		u.capLife += p.grp.Capacity() * l
		u.workerLife += float64(p.concurrency) * l
		u.hold.add(&p.diag.okSpent)
		u.ok += float64(p.diag.ok)
		if limited {
			st := p.grp.Stat(e.end)
			u.periods += st.NrPeriods
			u.throttled += st.NrThrottled
		}
	}
	return u
}

// overload is service si's diagnosis: what saturated and what would fix it; no
// Saturated entry when nothing did.
func (e *Engine) overload(r *result.Result, si int32, dem demand, u *podsUse) result.Overload {
	dur := e.end.Seconds()
	svc := &e.services[si]
	o := result.Overload{
		Service: svc.name, OfferedRPS: result.Round(float64(dem.offered)/dur, 3),
		ServedRPS: result.Round(float64(dem.answered)/dur, 3), FinishedRPS: result.Round(float64(u.finished)/dur, 3),
		QueuedAtEnd: u.queued, QueuedAbandonedAtEnd: e.queuedAbandoned(si), PoolWaitersAtEnd: e.poolWaiters(si),
		Replicas: int(u.replicas), PendingAtEnd: e.pendingOf(si),
		Workers: svc.spec.Pod.Concurrency, ThrottledShare: share(u.throttled, u.periods),
	}
	// Without a limit the pods share their nodes' cores, and the nodes' use is
	// what runs out.
	cpuUtil := e.nodeUse(r, si)
	if svc.limit > 0 {
		cpuUtil = u.used / u.capLife
	}
	o.CPUUtilization = result.Round(min(1, cpuUtil), 4)
	perReq := u.used / float64(u.finished) // core-seconds a request
	o.CPUPerRequestMS = result.Round(perReq*1e3, 4)
	o.CoresPerPod = result.Round(u.used/u.life, 4)
	holdS := 0.0
	if u.ok > 0 {
		holdS = float64(u.hold.atPod()-u.hold[partQueue]) / u.ok / 1e9
	}
	o.HoldMS = result.Round(holdS*1e3, 4)
	offeredRPS := float64(dem.offered) / dur
	// Each pod carries at most its cores' worth of CPU work a second, and, with
	// bounded workers, workers/hold requests a second (Little's law). The offered
	// load needs x pods' worth of the resource that ran out: x = λ·c/cores, or
	// λ·hold/workers. A queue is stable only below 100 % use, so fewer than ⌈x⌉
	// pods cannot serve it at all; how many more keep the tail within the
	// timeout depends on the service-time spread, which the sweep measures.
	x := 0.0
	switch {
	case cpuUtil < saturated || o.CoresPerPod == 0:
	case svc.limit > 0:
		o.Saturated = append(o.Saturated, "cpu")
		x = offeredRPS * perReq / (u.used / u.life)
	default:
		// More replicas on the same nodes share the same cores: no count of them
		// fixes this, more cores do.
		o.Saturated = append(o.Saturated, "node_cpu")
		o.NodeCores = e.nodeCores(si)
		o.PodsCores = result.Round(u.used/dur, 4)
		o.NodeProxyCores, o.NodeClientCores, o.NodeOtherCores = e.nodeOthers(r, si, o.PodsCores)
	}
	if u.workerLife > 0 && holdS > 0 && float64(u.finished)*holdS/u.workerLife >= saturated {
		o.Saturated = append(o.Saturated, "workers")
		x = max(x, offeredRPS*holdS/float64(o.Workers))
	}
	// When the pods ran out, the time a request holds its connection includes
	// their queue: the pools fill as a symptom, and more connections would only
	// queue more at the pods.
	e.poolOverload(&o, si, offeredRPS, len(o.Saturated) == 0)
	if len(o.Saturated) > 0 && x > 0 {
		e.replicasFix(&o, si, x)
	}
	return o
}

// poolOverload adds the clients' pool figures and marks the pools as what ran out
// when the pods kept up, requests waited for a pooled connection and the offered
// load needs about all the connections the pools may hold: λ·hold of them busy
// (Little's law), hold being the time an answered request held its connection.
func (e *Engine) poolOverload(o *result.Overload, si int32, offeredRPS float64, podsKeptUp bool) {
	var waited, timedOut, waitNS, held, answered int64
	conns, pools, path, perHost := 0, 0, "", 0
	for di := range e.deps {
		d := &e.deps[di]
		if d.svc != si {
			continue
		}
		waited += d.poolWaited
		timedOut += d.poolTimedOut
		waitNS += d.poolWaitNS
		held += d.heldNS
		answered += d.requests
		for _, ci := range d.pods {
			pi := e.cpods[ci].pool
			if pi < 0 || d.http2 || e.pools[pi].MaxPerHost == 0 {
				// No shared pool, streams multiplexed, or no bound: requests do not
				// wait for a connection to this service.
				return
			}
			conns += e.pools[pi].MaxPerHost
			pools++
		}
		if path == "" && len(d.pods) > 0 {
			path = fmt.Sprintf("spec.clients[%d].connections.maxPerHost", di)
			if d.from >= 0 {
				path = fmt.Sprintf("spec.services[%d].pod.client.connections.maxPerHost", d.from)
			}
			perHost = e.pools[e.cpods[d.pods[0]].pool].MaxPerHost
		}
	}
	o.PoolWaited, o.PoolTimedOut = waited, timedOut
	if waited > 0 {
		o.PoolWaitMS = result.Round(float64(waitNS)/float64(waited)/1e6, 4)
	}
	if conns == 0 || answered == 0 {
		return
	}
	holdS := float64(held) / float64(answered) / 1e9
	o.PoolConnections = conns
	o.PoolHoldMS = result.Round(holdS*1e3, 4)
	busy := offeredRPS * holdS
	if !podsKeptUp || waited+o.PoolWaitersAtEnd == 0 || busy < saturated*float64(conns) {
		return
	}
	o.Saturated = append(o.Saturated, "pool")
	o.ConnectionsNeeded = int(math.Ceil(busy))
	o.MaxPerHostNeeded = (o.ConnectionsNeeded + pools - 1) / pools
	o.PoolPath = path
	to := max(o.MaxPerHostNeeded, int(math.Ceil(busy/sweepTarget/float64(pools))))
	o.Sweep = &result.OverloadSweep{Path: path, From: perHost + 1, To: max(perHost+2, to)}
}

// replicasFix sets the replicas x pods' worth of load needs and, when they fit on
// the nodes, the sweep that finds the fewest with no errors; when they do not,
// the nodes they would need.
func (e *Engine) replicasFix(o *result.Overload, si int32, x float64) {
	svc := &e.services[si]
	o.ReplicasNeeded = int(math.Ceil(x))
	o.ReplicasPath = fmt.Sprintf("spec.services[%d].replicas", si)
	if svc.spec.Autoscaler != nil {
		o.ReplicasPath = fmt.Sprintf("spec.services[%d].autoscaler.maxReplicas", si)
	}
	from := o.Replicas + 1
	to := max(from+1, o.ReplicasNeeded, int(math.Ceil(x/sweepTarget)))
	if o.Replicas >= o.ReplicasNeeded {
		// Enough pods at the end: the queue built while fewer served, as the
		// autoscaler scaled out or pods were replaced. The fix is to have them from
		// the start: the Deployment's replicas, which an autoscaler above them
		// scales down to its maxReplicas.
		o.ReplicasPath = fmt.Sprintf("spec.services[%d].replicas", si)
		from, to = o.ReplicasNeeded, max(o.ReplicasNeeded+1, int(math.Ceil(x/sweepTarget)))
		if a := svc.spec.Autoscaler; a != nil {
			to = min(to, int(a.MaxReplicas))
		}
	}
	fit, each, perNode := e.podsFit(si)
	if fit >= 0 {
		if o.ReplicasNeeded > fit {
			o.PodRequestCores = placement.CPURequest(&svc.spec.Pod.Resources)
			o.PodsFit = fit
			o.NodeCoresEach = each
			o.NodesNeeded = (o.ReplicasNeeded - fit + perNode - 1) / perNode
			return
		}
		// More pods than fit would stay Pending: the sweep's rows past fit are
		// all alike.
		to = min(to, fit)
	}
	if from > to {
		return
	}
	o.Sweep = &result.OverloadSweep{Path: o.ReplicasPath, From: from, To: to}
}

// podsFit is how many pods of service si the nodes' allocatable CPU takes beside
// the requests of the other pods and workloads bound to them, as the scheduler's
// NodeResourcesFit filter counts (milli-CPU), the cores of the largest node and
// how many such pods it takes on its own; fit is -1 when the pods have no CPU
// request or a node has no CPU bound, the scheduler then not counting CPU.
func (e *Engine) podsFit(si int32) (fit int, each float64, perNode int) {
	req := milli(placement.CPURequest(&e.services[si].spec.Pod.Resources))
	if req == 0 {
		return -1, 0, 0
	}
	others := make([]int64, len(e.nodes))
	for i := range e.pods {
		p := &e.pods[i]
		if st := e.life.Pod(int32(i)); p.svc != si && !st.Deleting && e.life.Phase(int32(i)) < lifecycle.Gone {
			others[p.node] += milli(placement.CPURequest(&e.services[p.svc].spec.Pod.Resources))
		}
	}
	for _, w := range e.backgrounds.All() {
		others[w.Node] += milli(placement.CPURequest(&w.Spec.Resources))
	}
	for i := range e.nodes {
		cores := e.nodes[i].cpu.Cores()
		if cores == 0 {
			return -1, 0, 0
		}
		alloc := milli(cores)
		fit += int(max(0, alloc-others[i]) / req)
		if cores > each {
			each, perNode = cores, int(alloc/req)
		}
	}
	return fit, each, max(1, perNode)
}

// pendingOf counts service si's pods no node could take at the end.
func (e *Engine) pendingOf(si int32) int {
	n := 0
	for _, pp := range e.life.Pending() {
		if pp.Svc == si {
			n++
		}
	}
	return n
}

// queuedAbandoned counts the requests waiting for a worker at service si's pods
// whose clients had given up on them (timed out), as answer does.
func (e *Engine) queuedAbandoned(si int32) int64 {
	n := int64(0)
	for i := range e.jobs {
		j := &e.jobs[i]
		if j.state != jobQueued || j.pod < 0 || e.pods[j.pod].svc != si {
			continue
		}
		if !e.awaited(j) {
			n++
		}
	}
	return n
}

// awaited says whether a client still waits for job j's answer: its slot's request
// is still j's (as answer checks), or, for a sidecar's attempt, its downstream job
// is still there and awaited.
func (e *Engine) awaited(j *job) bool {
	for j.slot < 0 {
		if !j.attempt {
			return false
		}
		parent := &e.jobs[j.parent]
		if parent.serial != j.gen || parent.state == jobFree {
			return false
		}
		j = parent
	}
	s := &e.slots[j.slot]
	return s.gen == j.gen && s.state == inFlight
}

// poolWaiters counts the requests of service si's clients waiting for a pooled
// connection at the end.
func (e *Engine) poolWaiters(si int32) int64 {
	n := int64(0)
	for i := range e.slots {
		s := &e.slots[i]
		if s.state == waitingConn && e.deps[e.cpods[s.cpod].dep].svc == si {
			n++
		}
	}
	return n
}

// nodeCores are the cores of the nodes that ran a pod of service si.
func (e *Engine) nodeCores(si int32) float64 {
	seen := map[int32]bool{}
	n := 0.0
	for i := range e.pods {
		if p := &e.pods[i]; p.svc == si && !seen[p.node] {
			seen[p.node] = true
			n += e.nodes[p.node].cpu.Cores()
		}
	}
	return n
}

// nodeOthers is what kube-proxy's relaying, client pods' own work and everything
// else but service si's own pods (pods cores) used on the nodes they ran on, in
// cores over the run.
func (e *Engine) nodeOthers(r *result.Result, si int32, pods float64) (proxy, clients, other float64) {
	seen := map[int32]bool{}
	used := 0.0
	for i := range e.pods {
		if p := &e.pods[i]; p.svc == si && !seen[p.node] {
			seen[p.node] = true
			n := &r.Nodes[p.node]
			proxy += n.ProxyCPUCores
			clients += n.ClientCPUCores
			used += n.CPUUtilization * n.CPU
		}
	}
	return result.Round(proxy, 4), result.Round(clients, 4), result.Round(max(0, used-pods-proxy-clients), 4)
}

// nodeUse is the CPU use of the busiest node that ran a pod of service si.
func (e *Engine) nodeUse(r *result.Result, si int32) float64 {
	most := 0.0
	for i := range e.pods {
		if p := &e.pods[i]; p.svc == si {
			most = max(most, r.Nodes[p.node].CPUUtilization)
		}
	}
	return most
}
