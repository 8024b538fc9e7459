package simulate

import (
	"cmp"
	"maps"
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
	ok, slow  int64
	okSpent   spent
	slowSpent spent
	slowMain  [parts]int64 // slow requests by their largest part
}

// observe accounts a successful request of the given latency, answered as job j
// records (served ≥ 0), toward its pod's diagnosis and the run's slow counts.
func (e *Engine) observe(j *job, latency sim.Time) {
	slow := latency > e.slowAfter
	if slow {
		e.stats.slow++
		e.stats.tlSlow++
	}
	var s spent
	if !e.answeredBy(j, latency, &s) || !slow {
		return
	}
	d := &e.pods[j.served].diag
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

// answeredBy accounts an answer received after latency, answered as job j records,
// toward the answering pod's diagnosis: a client's request, or a service's call.
// It sets s to where the request's time went; false when no pod answered.
func (e *Engine) answeredBy(j *job, latency sim.Time, s *spent) bool {
	if j.served < 0 {
		return false
	}
	d := &e.pods[j.served].diag
	*s = j.spent
	s[partNetwork] = max(0, int64(latency)-s.atPod())
	d.ok++
	d.okSpent.add(s)
	return true
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
		if e.logs.Has(int32(i)) {
			rp.LogBlocked = e.logs.Stats(int32(i)).Blocked
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
	for _, w := range e.backgrounds.All() {
		if w.Node == ni && w.CPU != nil {
			used[w.Spec.Name] += w.CPU.Used(e.end)
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
