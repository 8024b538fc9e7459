package simulate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"trafficlab/model/node"
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

// overloads finds the services whose clients offered more than their pods served
// while a resource of theirs was saturated and requests failed or were not sent,
// and estimates the replicas that would carry the load.
func (e *Engine) overloads(r *result.Result) []result.Overload {
	dur := e.end.Seconds()
	var out []result.Overload
	for si := range e.services {
		svc := &e.services[si]
		var offered, failed int64
		for di := range e.deps {
			if d := &e.deps[di]; d.svc == int32(si) {
				offered += d.sent + d.notSent
				failed += d.errors + d.notSent
			}
		}
		var served, queued, replicas int64
		var used, life, capLife, workerLife, ok float64
		var periods, throttled int64
		var hold spent
		for pi := range e.pods {
			p := &e.pods[pi]
			if p.svc != int32(si) {
				continue
			}
			served += p.requests
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
		if offered == 0 || served == 0 || life == 0 || failed == 0 ||
			float64(offered-served) <= unservedShare*float64(offered) {
			continue
		}
		o := result.Overload{
			Service: svc.name, OfferedRPS: result.Round(float64(offered)/dur, 3), ServedRPS: result.Round(float64(served)/dur, 3),
			QueuedAtEnd: queued, PoolWaitersAtEnd: e.poolWaiters(int32(si)), Replicas: int(replicas),
			Workers: svc.spec.Pod.Concurrency, ThrottledShare: share(throttled, periods),
		}
		// Without a limit the pods share their nodes' cores, and the nodes' use is
		// what runs out.
		cpuUtil := e.nodeUse(r, int32(si))
		if svc.limit > 0 {
			cpuUtil = used / capLife
		}
		o.CPUUtilization = result.Round(min(1, cpuUtil), 4)
		perReq := used / float64(served) // core-seconds a request
		o.CPUPerRequestMS = result.Round(perReq*1e3, 4)
		o.CoresPerPod = result.Round(used/life, 4)
		holdS := 0.0
		if ok > 0 {
			holdS = float64(hold.atPod()-hold[partQueue]) / ok / 1e9
		}
		o.HoldMS = result.Round(holdS*1e3, 4)
		// Each pod carries at most its cores' worth of CPU work a second, and, with
		// bounded workers, workers/hold requests a second (Little's law). The offered
		// load needs x pods' worth of the resource that ran out: x = λ·c/cores, or
		// λ·hold/workers. A queue is stable only below 100 % use, so fewer than
		// ⌊x⌋+1 pods cannot serve it at all; how many more keep the tail within the
		// timeout depends on the service-time spread, which the sweep measures.
		x := 0.0
		offeredRPS := float64(offered) / dur
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
		if workerLife > 0 && holdS > 0 && float64(served)*holdS/workerLife >= saturated {
			o.Saturated = append(o.Saturated, "workers")
			x = max(x, offeredRPS*holdS/float64(o.Workers))
		}
		if len(o.Saturated) == 0 {
			continue
		}
		if x == 0 {
			out = append(out, o)
			continue
		}
		o.ReplicasNeeded = int(math.Floor(x)) + 1
		o.ReplicasPath = fmt.Sprintf("spec.services[%d].replicas", si)
		if svc.spec.Autoscaler != nil {
			o.ReplicasPath = fmt.Sprintf("spec.services[%d].autoscaler.maxReplicas", si)
		}
		from := o.Replicas + 1
		to := max(from+1, o.ReplicasNeeded, int(math.Ceil(x/sweepTarget)))
		o.Sweep = fmt.Sprintf("trafficlab sweep FILE --set '%s=%d..%d' --find 'min %s where errors == 0'", o.ReplicasPath, from, to, o.ReplicasPath)
		out = append(out, o)
	}
	return out
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
