package simulate

import (
	"slices"
	"time"

	"trafficlab/model/kubeproxy"
	"trafficlab/sim"
)

// endpointVersion is one version of a Service's EndpointSlice, reduced to what
// kube-proxy programs from it.
type endpointVersion struct {
	version uint32
	usable  []kubeproxy.Endpoint
}

// proxyView is what one node's kube-proxy knows of one Service.
type proxyView struct {
	delivered  uint32   // newest EndpointSlice version its watch has delivered
	programmed uint32   // version its rules hold
	deliverAt  sim.Time // when the newest delivery lands: a watch delivers in order
}

// endpointsChanged notes that service si's EndpointSlice may have changed; every
// change within one instant makes one new version.
func (e *Engine) endpointsChanged(si int32) {
	svc := &e.services[si]
	if !e.started || svc.dirty {
		return
	}
	svc.dirty = true
	e.k.After(0, e.evSlice, si, 0)
}

// usable is what kube-proxy would program for service si from its pods' state now.
func (e *Engine) usable(si int32) []kubeproxy.Endpoint {
	svc := &e.services[si]
	states := make([]kubeproxy.EndpointState, 0, len(svc.pods))
	for _, id := range svc.pods {
		p := &e.pods[id]
		states = append(states, kubeproxy.Conditions(id, p.ready, p.deleting))
	}
	return kubeproxy.Usable(states, nil)
}

// settleEndpoints programs the initial cluster on every node: a run starts from a
// settled state.
func (e *Engine) settleEndpoints() {
	for si := range e.services {
		svc := &e.services[si]
		svc.version = 1
		svc.history = []endpointVersion{{version: 1, usable: e.usable(int32(si))}}
	}
	for i := range e.views {
		e.views[i] = proxyView{delivered: 1, programmed: 1}
	}
}

// onSlice publishes a new EndpointSlice version and starts its way to every node:
// each node's watch delivers it after its own delay, never before an earlier version.
func (e *Engine) onSlice(ev sim.Event) {
	si := ev.Obj
	svc := &e.services[si]
	svc.dirty = false
	usable := e.usable(si)
	if slices.Equal(usable, svc.history[len(svc.history)-1].usable) {
		return // conditions moved, kube-proxy's rules would not
	}
	svc.version++
	svc.history = append(svc.history, endpointVersion{version: svc.version, usable: usable})
	prop := &e.sc.Spec.Cluster.EndpointPropagation
	lat, jit := sim.Duration(prop.Latency.Duration), sim.Duration(prop.Jitter.Duration)
	now := e.k.Now()
	for n := range e.nodes {
		v := &e.views[n*len(e.services)+int(si)]
		at := now + lat
		if jit > 0 {
			at += sim.Time(e.spread.Int64N(int64(jit) + 1))
		}
		v.deliverAt = max(v.deliverAt, at)
		e.k.At(v.deliverAt, e.evDeliver, int32(n*len(e.services))+si, svc.version)
	}
}

// onDeliver: a node's kube-proxy hears of a new version and asks for a sync.
func (e *Engine) onDeliver(ev sim.Event) {
	v := &e.views[ev.Obj]
	v.delivered = max(v.delivered, ev.Gen)
	n := int(ev.Obj) / len(e.services)
	ns := &e.nodes[n]
	if ns.syncPending {
		return // the pending sync will read this version too
	}
	if ns.sync.TryRun(time.Duration(e.k.Now())) {
		e.sync(n)
		return
	}
	ns.syncPending = true
	e.k.At(sim.Time(ns.sync.RetryAt()), e.evSync, int32(n), 0)
}

// onSync: a sync the rate limit had put off.
func (e *Engine) onSync(ev sim.Event) {
	ns := &e.nodes[ev.Obj]
	ns.syncPending = false
	if !ns.sync.TryRun(time.Duration(e.k.Now())) {
		panic("simulate: kube-proxy sync refused at its retry time")
	}
	e.sync(int(ev.Obj))
}

// sync: node n's kube-proxy rewrites its rules from the versions it has.
func (e *Engine) sync(n int) {
	for si := range e.services {
		v := &e.views[n*len(e.services)+si]
		if v.programmed == v.delivered {
			continue
		}
		v.programmed = v.delivered
		if b := e.balancers[n*len(e.services)+si]; b != nil {
			b.SetEndpoints(e.programmed(int32(n), int32(si)))
		}
		e.pruneHistory(int32(si))
	}
}

// programmed is the endpoint list node n's rules hold for service si.
func (e *Engine) programmed(n, si int32) []kubeproxy.Endpoint {
	return slices.Clone(e.programmedView(n, si))
}

// programmedView is programmed without the copy, for reading at once.
func (e *Engine) programmedView(n, si int32) []kubeproxy.Endpoint {
	want := e.views[int(n)*len(e.services)+int(si)].programmed
	for _, h := range e.services[si].history {
		if h.version == want {
			return h.usable
		}
	}
	panic("simulate: programmed endpoint version pruned")
}

// pruneHistory drops versions every node has moved past.
func (e *Engine) pruneHistory(si int32) {
	svc := &e.services[si]
	oldest := svc.version
	for n := range e.nodes {
		oldest = min(oldest, e.views[n*len(e.services)+int(si)].programmed)
	}
	i := 0
	for i < len(svc.history)-1 && svc.history[i].version < oldest {
		i++
	}
	svc.history = svc.history[i:]
}

// replicaCounts is service si's Deployment spec.replicas, its pods that are not
// terminating (Pending ones included), and its ready endpoints in the EndpointSlice.
func (e *Engine) replicaCounts(si int32) serviceSample {
	svc := &e.services[si]
	s := serviceSample{desired: svc.replicas, current: len(e.replicas(si, anyRevision))}
	for _, id := range svc.pods {
		if p := &e.pods[id]; p.ready && !p.deleting {
			s.ready++
		}
	}
	return s
}

// registerEndpoints registers the event kinds of endpoint propagation events with the kernel.
func (e *Engine) registerEndpoints() {
	e.evSlice = e.k.Register(e.onSlice)
	e.evDeliver = e.k.Register(e.onDeliver)
	e.evSync = e.k.Register(e.onSync)
}
