package simulate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"trafficlab/model/node"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/sim"
)

// Where a request's time went at the pod that answered it: the parts of spent.
const (
	partWork       = iota // its own CPU work
	partQueue             // waiting for an app worker
	partCPU               // runnable, waiting for a core others held
	partThrottled         // stalled by its container's CFS quota
	partDisk              // blocked writing its access log
	partDependency        // off CPU, waiting on a dependency
	partNetwork           // the rest: network, client, sidecars
	parts
)

var partNames = [parts]string{"work", "queue", "cpu", "throttled", "disk", "dependency", "network"}

// spent is time per part, in ns.
type spent [parts]int64

func (s *spent) add(o *spent) {
	for i := range s {
		s[i] += o[i]
	}
}

// atPod is the time spent at the pod: every part but the network.
func (s *spent) atPod() int64 {
	n := int64(0)
	for _, v := range s[:partNetwork] {
		n += v
	}
	return n
}

// podDiag sums, over the requests a pod answered that their clients received, where
// their time went: all of them and the slow ones.
type podDiag struct {
	ok, slow   int64
	okSpent    spent
	slowSpent  spent
	slowMain   [parts]int64 // slow requests by their largest part
	logBlocked int64
}

// observe accounts a successful request of the given latency, answered as job j
// records (served ≥ 0), toward its pod's diagnosis and the run's slow counts.
func (e *Engine) observe(j *job, latency sim.Time) {
	slow := latency > e.slowAfter
	if slow {
		e.stats.slow++
		e.stats.tlSlow++
	}
	if j.served < 0 {
		return
	}
	d := &e.pods[j.served].diag
	s := j.spent
	s[partNetwork] = max(0, int64(latency)-s.atPod())
	d.ok++
	d.okSpent.add(&s)
	if !slow {
		return
	}
	d.slow++
	d.slowSpent.add(&s)
	main := 0
	for i := range s {
		if s[i] > s[main] {
			main = i
		}
	}
	d.slowMain[main]++
}

// waitMS is the mean of each part per request, in ms.
func waitMS(sum *spent, n int64) result.Wait {
	if n == 0 {
		return result.Wait{}
	}
	ms := func(part int) float64 { return result.Round(float64(sum[part])/float64(n)/1e6, 4) }
	return result.Wait{
		Work: ms(partWork), Queue: ms(partQueue), CPU: ms(partCPU), Throttled: ms(partThrottled),
		Disk: ms(partDisk), Dependency: ms(partDependency), Network: ms(partNetwork),
	}
}

// maxSuspects bounds the ranked list; suspects below minShare of the tail are noise.
const (
	maxSuspects = 5
	minShare    = 0.01
)

// suspects ranks (node, part) pairs by their share of all slow requests' time, with
// the neighbour that used the node's resource most.
func (e *Engine) suspects() []result.Suspect {
	type key struct {
		node int32
		part int
	}
	sum := map[key]int64{}
	main := map[key]int64{}
	total := int64(0)
	for i := range e.pods {
		p := &e.pods[i]
		for part := range parts {
			v := p.diag.slowSpent[part]
			total += v
			k := key{p.node, part}
			sum[k] += v
			main[k] += p.diag.slowMain[part]
		}
	}
	if total == 0 {
		return nil
	}
	var out []result.Suspect
	for k, v := range sum {
		share := float64(v) / float64(total)
		if share < minShare {
			continue
		}
		out = append(out, result.Suspect{
			Node: e.nodes[k.node].name, Resource: partNames[k.part], ShareOfTail: result.Round(share, 4),
			SlowRequests: main[k], Neighbour: e.neighbour(k.node, k.part),
		})
	}
	slices.SortFunc(out, func(a, b result.Suspect) int {
		if c := cmp.Compare(b.ShareOfTail, a.ShareOfTail); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Resource, b.Resource))
	})
	if len(out) > maxSuspects {
		out = out[:maxSuspects]
	}
	return out
}

// share is part over whole, 0 when whole is.
func share(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return result.Round(float64(part)/float64(whole), 6)
}

// diagnose adds the node and pod diagnosis, the slow counts and the suspects to r,
// whose pods and nodes are in engine order.
func (e *Engine) diagnose(r *result.Result) {
	dur := e.end.Seconds()
	r.SlowThresholdMS = float64(e.slowAfter) / 1e6
	r.Slow = e.stats.slow
	r.SlowShare = share(e.stats.slow, e.stats.ok)
	nodeOK, nodeSlow := make([]int64, len(e.nodes)), make([]int64, len(e.nodes))
	for i := range e.pods {
		p := &e.pods[i]
		rp := &r.Pods[i]
		res := &e.services[p.svc].spec.Pod.Resources
		rp.QoSClass = string(node.QOSClass(res.Requests, res.Limits))
		rp.Slow, rp.SlowShare = p.diag.slow, share(p.diag.slow, p.diag.ok)
		rp.WaitMS = waitMS(&p.diag.okSpent, p.diag.ok)
		if e.services[p.svc].limit > 0 {
			st := p.grp.Stat(e.end)
			rp.Throttling = &result.Throttling{Periods: st.NrPeriods, ThrottledPeriods: st.NrThrottled, ThrottledS: result.Round(st.ThrottledTime.Seconds(), 6)}
		}
		if p.logs != nil {
			rp.LogBlocked = p.logs.Stats().Blocked
		}
		nodeOK[p.node] += p.diag.ok
		nodeSlow[p.node] += p.diag.slow
	}
	for i := range e.nodes {
		n := &e.nodes[i]
		rn := &r.Nodes[i]
		rn.Slow, rn.SlowShare = nodeSlow[i], share(nodeSlow[i], nodeOK[i])
		if n.disk != nil && n.disk.Limited() {
			rn.DiskUtilization = result.Round(n.disk.Busy(e.end).Seconds()/dur, 4)
			rn.DiskMaxWaitMS = result.Round(float64(n.disk.Total().MaxWait)/1e6, 3)
		}
	}
	r.Suspects = e.suspects()
	r.Overloads = e.overloads(r)
}

// neighbour is who else used the resource of a suspect on node ni.
func (e *Engine) neighbour(ni int32, part int) string {
	switch part {
	case partDisk:
		return e.diskNeighbour(ni)
	case partCPU:
		return e.cpuNeighbour(ni)
	}
	return ""
}

// diskNeighbour is the background workload that wrote most to node ni's disk; empty
// when none wrote, the pods' own logs being the load then.
func (e *Engine) diskNeighbour(ni int32) string {
	n := &e.nodes[ni]
	best, bestBytes := "", int64(0)
	for id, w := range n.writers {
		if b := n.disk.Writer(int32(id)).Bytes; w.background && b > bestBytes {
			best, bestBytes = w.name, b
		}
	}
	return best
}

// cpuNeighbour is the workload on node ni that used most CPU, other than the
// services whose pods there were slow: a background workload or another service.
func (e *Engine) cpuNeighbour(ni int32) string {
	used := map[string]float64{}
	slow := map[string]bool{}
	for i := range e.pods {
		p := &e.pods[i]
		if p.node != ni {
			continue
		}
		name := e.services[p.svc].name
		used[name] += p.grp.Used(e.end)
		if p.diag.slow > 0 {
			slow[name] = true
		}
	}
	for _, w := range e.backgrounds {
		if w.node == ni && w.grp != nil {
			used[w.spec.Name] += w.grp.Used(e.end)
		}
	}
	best, most := "", 0.0
	for _, name := range slices.Sorted(maps.Keys(used)) {
		if !slow[name] && used[name] > most {
			best, most = name, used[name]
		}
	}
	return best
}

// saturated is the share of a resource in use above which it has no room left: a
// queue's wait grows as 1/(1−ρ), twenty service times at 95 %.
const saturated = 0.95

// unservedShare is the share of the offered requests its pods must leave unfinished
// for a service to count as overloaded. One that keeps up leaves only those in
// progress at the end, λ·W by Little's law: a few response times' worth of the
// run's λ·T; an overloaded one falls behind by (λ−μ)·T.
const unservedShare = 0.05

// sweepTarget is the CPU or worker utilisation the sweep range reaches up to: at
// 70 % an M/M/1 queue's mean wait is 2.3 service times, a load most services carry
// without timeouts.
const sweepTarget = 0.7

// overloads finds the services whose clients offered more than was answered in time
// while a resource was saturated (their pods' CPU or workers, or their clients'
// connection pools) and requests failed or were not sent, and estimates what would
// carry the load.
func (e *Engine) overloads(r *result.Result) []result.Overload {
	dur := e.end.Seconds()
	var out []result.Overload
	for si := range e.services {
		svc := &e.services[si]
		var offered, failed, answered int64
		for di := range e.deps {
			if d := &e.deps[di]; d.svc == int32(si) {
				offered += d.sent + d.notSent
				failed += d.errors + d.notSent
				answered += d.requests
			}
		}
		var finished, queued, replicas int64
		var used, life, capLife, workerLife, ok float64
		var periods, throttled int64
		var hold spent
		for pi := range e.pods {
			p := &e.pods[pi]
			if p.svc != int32(si) {
				continue
			}
			finished += p.requests
			queued += int64(p.queue.Len())
			if !p.deleting && p.phase < podExited {
				replicas++
			}
			end := e.end
			if p.ended >= 0 {
				end = p.ended
			}
			l := (end - p.created).Seconds()
			used += p.grp.Used(e.end)
			life += l
			capLife += p.grp.Capacity() * l
			workerLife += float64(p.concurrency) * l
			hold.add(&p.diag.okSpent)
			ok += float64(p.diag.ok)
			if svc.limit > 0 {
				st := p.grp.Stat(e.end)
				periods += st.NrPeriods
				throttled += st.NrThrottled
			}
		}
		// Requests that finished after their clients gave up count as not served:
		// the overload is what the clients did not get.
		if offered == 0 || finished == 0 || life == 0 || failed == 0 ||
			float64(offered-answered) <= unservedShare*float64(offered) {
			continue
		}
		o := result.Overload{
			Service: svc.name, OfferedRPS: result.Round(float64(offered)/dur, 3),
			ServedRPS: result.Round(float64(answered)/dur, 3), FinishedRPS: result.Round(float64(finished)/dur, 3),
			QueuedAtEnd: queued, QueuedAbandonedAtEnd: e.queuedAbandoned(int32(si)), PoolWaitersAtEnd: e.poolWaiters(int32(si)),
			Replicas: int(replicas), PendingAtEnd: e.pendingOf(int32(si)),
			Workers: svc.spec.Pod.Concurrency, ThrottledShare: share(throttled, periods),
		}
		// Without a limit the pods share their nodes' cores, and the nodes' use is
		// what runs out.
		cpuUtil := e.nodeUse(r, int32(si))
		if svc.limit > 0 {
			cpuUtil = used / capLife
		}
		o.CPUUtilization = result.Round(min(1, cpuUtil), 4)
		perReq := used / float64(finished) // core-seconds a request
		o.CPUPerRequestMS = result.Round(perReq*1e3, 4)
		o.CoresPerPod = result.Round(used/life, 4)
		holdS := 0.0
		if ok > 0 {
			holdS = float64(hold.atPod()-hold[partQueue]) / ok / 1e9
		}
		o.HoldMS = result.Round(holdS*1e3, 4)
		offeredRPS := float64(offered) / dur
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
			x = offeredRPS * perReq / (used / life)
		default:
			// More replicas on the same nodes share the same cores: no count of them
			// fixes this, more cores do.
			o.Saturated = append(o.Saturated, "node_cpu")
			o.NodeCores = e.nodeCores(int32(si))
		}
		if workerLife > 0 && holdS > 0 && float64(finished)*holdS/workerLife >= saturated {
			o.Saturated = append(o.Saturated, "workers")
			x = max(x, offeredRPS*holdS/float64(o.Workers))
		}
		// When the pods ran out, the time a request holds its connection includes
		// their queue: the pools fill as a symptom, and more connections would only
		// queue more at the pods.
		e.poolOverload(&o, int32(si), offeredRPS, len(o.Saturated) == 0)
		if len(o.Saturated) == 0 {
			continue
		}
		if x > 0 {
			e.replicasFix(&o, int32(si), x)
		}
		out = append(out, o)
	}
	return out
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
		if path == "" {
			path, perHost = fmt.Sprintf("spec.clients[%d].connections.maxPerHost", di), e.pools[e.cpods[d.pods[0]].pool].MaxPerHost
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
		if p.svc != si && !p.deleting && p.phase < podGone {
			others[p.node] += milli(placement.CPURequest(&e.services[p.svc].spec.Pod.Resources))
		}
	}
	for i := range e.backgrounds {
		w := &e.backgrounds[i]
		others[w.node] += milli(placement.CPURequest(&w.spec.Resources))
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
	for i := range e.pending {
		if e.pending[i].svc == si {
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
