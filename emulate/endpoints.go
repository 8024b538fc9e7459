package emulate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"time"

	"trafficlab/emulate/proxyrules"
	"trafficlab/model/kubeproxy"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// endpoints carries pod changes to every node's kube-proxy as a cluster does
// (simulate/endpoints.go models the same): each change makes a new version of the
// Services' endpoints, which reaches each node after its own delay, uniform in
// [latency, latency+jitter] (spec.cluster.endpointPropagation), never before an
// earlier version; the node then syncs its rules, at most once per minSyncPeriod
// (model/kubeproxy.SyncRunner, kube-proxy's BoundedFrequencyRunner). Conntrack is
// left alone, as kube-proxy leaves TCP entries: established connections keep going
// to the pod they opened to.
type endpoints struct {
	c      *cluster
	mu     sync.Mutex
	latest []proxyrules.Service // newest version
	nodes  []*nodeProxy
	spread *rand.Rand
	errs   []error
}

// nodeProxy is one node's kube-proxy as it learns of versions.
type nodeProxy struct {
	index     int
	runner    *kubeproxy.SyncRunner
	delivered []proxyrules.Service // newest version its watch delivered
	deliverAt time.Time            // when the newest delivery lands
	pending   bool                 // a sync is waiting for the rate limit
	applying  sync.Mutex           // syncs of one node never overlap
}

func newEndpoints(c *cluster, initial []proxyrules.Service) *endpoints {
	ep := &endpoints{c: c, latest: initial, spread: sim.Stream(c.sc.Spec.Seed, "emulate/endpoint-propagation")}
	for i := range c.layout.Nodes {
		ep.nodes = append(ep.nodes, &nodeProxy{index: i, runner: kubeproxy.NewSyncRunner(c.sc.Spec.Cluster.MinSyncPeriod.Duration), delivered: initial})
	}
	return ep
}

// changed recomputes every Service's endpoints from the pods' state and, if kube-proxy
// would program something else, sends the new version on its way to every node.
func (ep *endpoints) changed() {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	next := usableServices(ep.c.sc, ep.c.podStates())
	if equalServices(next, ep.latest) {
		return // conditions moved, the rules would not
	}
	ep.latest = next
	prop := &ep.c.sc.Spec.Cluster.EndpointPropagation
	now := time.Now()
	for _, n := range ep.nodes {
		at := now.Add(prop.Latency.Duration)
		if j := prop.Jitter.Duration; j > 0 {
			at = at.Add(time.Duration(ep.spread.Int64N(int64(j) + 1)))
		}
		if at.Before(n.deliverAt) {
			at = n.deliverAt // a watch delivers in order
		}
		n.deliverAt = at
		time.AfterFunc(time.Until(at), func() { ep.deliver(n, next) })
	}
}

// deliver: node n's kube-proxy hears of a version and syncs, now or when its rate
// limit allows.
func (ep *endpoints) deliver(n *nodeProxy, version []proxyrules.Service) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	n.delivered = version
	if n.pending {
		return // the waiting sync will read this version
	}
	since := time.Since(ep.c.start)
	if n.runner.TryRun(since) {
		go ep.sync(n)
		return
	}
	n.pending = true
	time.AfterFunc(n.runner.RetryAt()-since, func() {
		ep.mu.Lock()
		n.pending = false
		if !n.runner.TryRun(time.Since(ep.c.start)) {
			panic("emulate: kube-proxy sync refused at its retry time")
		}
		ep.mu.Unlock()
		ep.sync(n)
	})
}

// sync rewrites node n's rules (or its userspace proxy's endpoints) from the newest
// version it has.
func (ep *endpoints) sync(n *nodeProxy) {
	n.applying.Lock()
	defer n.applying.Unlock()
	ep.mu.Lock()
	version := n.delivered
	ep.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ep.c.proxy.program(ctx, n.index, version); err != nil {
		ep.mu.Lock()
		ep.errs = append(ep.errs, fmt.Errorf("kube-proxy sync on %s: %w", ep.c.layout.Nodes[n.index], err))
		ep.mu.Unlock()
	}
}

// podState is what the EndpointSlice controller reads of a service pod.
type podState struct {
	service            string
	addr               netip.AddrPort
	ready, terminating bool
}

// usableServices are the Services with the endpoints kube-proxy programs from these
// pods: the ready ones, or, only if none is, the serving terminating ones
// (kubeproxy.Usable).
func usableServices(sc *scenario.Scenario, pods []podState) []proxyrules.Service {
	var out []proxyrules.Service
	for i := range sc.Spec.Services {
		name := sc.Spec.Services[i].Name
		var states []kubeproxy.EndpointState
		var addrs []netip.AddrPort
		for _, p := range pods {
			if p.service == name {
				states = append(states, kubeproxy.Conditions(int32(len(addrs)), p.ready, p.terminating))
				addrs = append(addrs, p.addr)
			}
		}
		s := proxyrules.Service{Name: name, ClusterIP: serviceIP(i), Port: servicePort}
		for _, e := range kubeproxy.Usable(states, nil) {
			s.Endpoints = append(s.Endpoints, addrs[e])
		}
		out = append(out, s)
	}
	return out
}

func equalServices(a, b []proxyrules.Service) bool {
	return slices.EqualFunc(a, b, func(x, y proxyrules.Service) bool { return slices.Equal(x.Endpoints, y.Endpoints) })
}
