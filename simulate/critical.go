package simulate

import (
	"cmp"
	"slices"

	"trafficlab/result"
	"trafficlab/sim"
)

// The critical path: where a request's time went across the services it called.
// A request's time at its pod is its own parts (work, queue, CPU, throttling, disk,
// waitTime) and its steps of calls; a step lasts as long as its branch that ended
// last, so only that branch's time is on the path: each of its calls is the time on
// the way (network, connection waits, failed attempts) and the callee's own path.
// Summed over slow requests this names where the tail is made ("cart waiting for
// db-2's disk").

// pathItem is time on a request's critical path: a part of pod's own time, reached
// by the call on edge via (-1: the client's request), or the time on the way of a
// call on edge via (pod -1, part partNetwork; via -1: the client's own network and
// connection waits).
type pathItem struct {
	via, pod int32
	part     int8
	ns       int64
}

// pathKey is an item's place in the tail's sums.
type pathKey struct {
	via, pod int32
	part     int8
}

// addItem adds ns to the item of key k in path, appending one when none has it.
func addItem(path []pathItem, via, pod int32, part int8, ns int64) []pathItem {
	if ns <= 0 {
		return path
	}
	for i := range path {
		if it := &path[i]; it.via == via && it.pod == pod && it.part == part {
			it.ns += ns
			return path
		}
	}
	return append(path, pathItem{via, pod, part, ns})
}

// jobPath is the critical path of job ji (a copy j, its slot maybe freed), answered
// at its pod, reached by a call on edge via: its own parts, and for a pod with calls,
// its critical branches' items gathered as its steps ended (e.paths).
func (e *Engine) jobPath(out []pathItem, ji int32, j *job, via int32) []pathItem {
	pod := j.served // the app's request to its sidecar has its attempt's
	if pod < 0 {
		return out
	}
	calls := int64(0)
	if e.pods[pod].calls {
		calls = e.jobCalls[ji].callsNS
		for _, it := range e.paths[ji] {
			out = addItem(out, it.via, it.pod, it.part, it.ns)
		}
	}
	for part := range partNetwork {
		ns := j.spent[part]
		if part == partDependency {
			ns -= calls // the calls' time is in the items above
		}
		out = addItem(out, via, pod, int8(part), ns)
	}
	return out
}

// branchCall adds the call that just ended on slot si (answered by job callee, a
// copy, or failed: callee nil) to its branch's path: its time on the way and the
// callee's own path.
func (e *Engine) branchCall(cs *callSlot, calleeJob int32, callee *job) {
	took := int64(e.k.Now() - cs.start)
	at := int64(0)
	if callee != nil {
		cs.path = e.jobPath(cs.path, calleeJob, callee, cs.spec.edge)
		at = callee.spent.atPod()
	}
	cs.path = addItem(cs.path, cs.spec.edge, -1, partNetwork, took-at)
}

// tailPath adds a slow client request's path (answered by job ji, a copy j, after
// latency) to the run's tail sums.
func (e *Engine) tailPath(ji int32, j *job, latency sim.Time) {
	e.scratchPath = e.jobPath(e.scratchPath[:0], ji, j, -1)
	e.scratchPath = addItem(e.scratchPath, -1, -1, partNetwork, int64(latency)-j.spent.atPod())
	if e.tail == nil {
		e.tail = map[pathKey]int64{}
	}
	for _, it := range e.scratchPath {
		e.tail[pathKey{it.via, it.pod, it.part}] += it.ns
		e.tailNS += it.ns
	}
}

// slowPath is the tail's sums by caller, service and part, the largest first, each
// with the pod that made the most of it; parts under minShare of the tail are left
// out as noise.
func (e *Engine) slowPath() []result.PathShare {
	if e.tailNS == 0 {
		return nil
	}
	type group struct {
		caller, svc int32 // -1: the clients; the service called, or the pod's
		part        int8
	}
	sums := map[group]int64{}
	top := map[group]pathKey{}
	for k, ns := range e.tail {
		g := group{caller: -1, svc: -1, part: k.part}
		if k.via >= 0 {
			g.caller, g.svc = e.edges[k.via].from, e.edges[k.via].to
		}
		if k.pod >= 0 {
			g.svc = e.pods[k.pod].svc
		}
		sums[g] += ns
		if t, ok := top[g]; !ok || ns > e.tail[t] || ns == e.tail[t] && k.pod < t.pod {
			top[g] = k
		}
	}
	var out []result.PathShare
	for g, ns := range sums {
		sh := float64(ns) / float64(e.tailNS)
		if sh < minShare {
			continue
		}
		ps := result.PathShare{Part: partNames[g.part], ShareOfTail: result.Round(sh, 4)}
		if g.caller >= 0 {
			ps.Caller = e.services[g.caller].name
		}
		if g.svc >= 0 {
			ps.Service = e.services[g.svc].name
		}
		if t := top[g]; t.pod >= 0 {
			ps.Pod, ps.PodShare = e.pods[t.pod].name, result.Round(float64(e.tail[t])/float64(e.tailNS), 4)
		}
		out = append(out, ps)
	}
	slices.SortFunc(out, func(a, b result.PathShare) int {
		if c := cmp.Compare(b.ShareOfTail, a.ShareOfTail); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Caller, b.Caller), cmp.Compare(a.Service, b.Service), cmp.Compare(a.Part, b.Part))
	})
	return out
}

// copyPath gives job to (the app's request to its sidecar) the path of job from (its
// attempt, answered at a pod with calls).
func (e *Engine) copyPath(from, to int32) {
	e.growCalls(to)
	e.jobCalls[to].callsNS = e.jobCalls[from].callsNS
	e.paths[to] = append(e.paths[to][:0], e.paths[from]...)
}
