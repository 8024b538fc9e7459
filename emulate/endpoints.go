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
	"trafficlab/emulate/topo"
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
	latest version
	nodes  []*nodeProxy
	spread *rand.Rand
	errs   []error
	// timers and syncs still to come; stop ends them before the cluster goes.
	timers  []*time.Timer
	syncs   sync.WaitGroup
	stopped bool
	// origin is the rate limiters' zero.
	origin time.Time
}

// version is one version of every Service's endpoints; seq orders them.
type version struct {
	seq      int
	services []proxyrules.Service
}

// nodeProxy is one node's kube-proxy as it learns of versions.
type nodeProxy struct {
	index     int
	runner    *kubeproxy.SyncRunner
	delivered version   // newest version its watch delivered
	deliverAt time.Time // when the newest delivery lands
	pending   bool      // a sync is waiting for the rate limit
	applying  sync.Mutex
}

func newEndpoints(c *cluster, initial []proxyrules.Service) *endpoints {
	ep := &endpoints{c: c, latest: version{services: initial}, origin: time.Now(), spread: sim.Stream(c.sc.Spec.Seed, "emulate/endpoint-propagation")}
	for i := range c.layout.Nodes {
		ep.nodes = append(ep.nodes, &nodeProxy{index: i, runner: kubeproxy.NewSyncRunner(c.sc.Spec.Cluster.MinSyncPeriod.Duration), delivered: ep.latest})
	}
	return ep
}

// changed recomputes every Service's endpoints from the pods' state and, if kube-proxy
// would program something else, sends the new version on its way to every node.
func (ep *endpoints) changed() {
	states := ep.c.podStates()
	if ep.c.dns != nil {
		ep.c.dns.changed(states) // CoreDNS's own watch of the headless Services' slices
	}
	services := usableServices(ep.c.sc, states)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.stopped || equalServices(services, ep.latest.services) {
		return // conditions moved, the rules would not
	}
	ep.latest = version{seq: ep.latest.seq + 1, services: services}
	next := ep.latest
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
		ep.timers = append(ep.timers, time.AfterFunc(time.Until(at), func() { ep.deliver(n, next) }))
	}
}

// deliver: node n's kube-proxy hears of a version and syncs, now or when its rate
// limit allows. Deliveries due at one instant may run in any order: an older
// version than the node has is dropped, as a watch never goes back.
func (ep *endpoints) deliver(n *nodeProxy, v version) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.stopped || v.seq <= n.delivered.seq {
		return
	}
	n.delivered = v
	if !n.pending {
		ep.trySync(n)
	}
}

// trySync syncs node n now if its rate limit allows, else once it does. ep.mu is held.
func (ep *endpoints) trySync(n *nodeProxy) {
	since := time.Since(ep.origin)
	if n.runner.TryRun(since) {
		n.pending = false
		ep.syncs.Add(1)
		go ep.sync(n)
		return
	}
	n.pending = true
	ep.timers = append(ep.timers, time.AfterFunc(n.runner.RetryAt()-since, func() {
		ep.mu.Lock()
		defer ep.mu.Unlock()
		if !ep.stopped {
			ep.trySync(n)
		}
	}))
}

// sync rewrites node n's rules (or its userspace proxy's endpoints) from the newest
// version it has.
func (ep *endpoints) sync(n *nodeProxy) {
	defer ep.syncs.Done()
	n.applying.Lock()
	defer n.applying.Unlock()
	ep.mu.Lock()
	v, stopped := n.delivered, ep.stopped
	ep.mu.Unlock()
	if stopped {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ep.c.proxy.program(ctx, n.index, v.services); err != nil {
		ep.mu.Lock()
		ep.errs = append(ep.errs, fmt.Errorf("kube-proxy sync on %s: %w", ep.c.layout.Nodes[n.index], err))
		ep.mu.Unlock()
	}
}

// stop ends every delivery and sync still to come, waits for those under way, and
// returns the syncs' errors.
func (ep *endpoints) stop() []error {
	ep.mu.Lock()
	ep.stopped = true
	for _, t := range ep.timers {
		t.Stop()
	}
	ep.mu.Unlock()
	ep.syncs.Wait()
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.errs
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
		if sc.Spec.Services[i].Headless() {
			// No ClusterIP, and nothing for kube-proxy: its informer selects
			// headless slices away (cmd/kube-proxy/app/server.go noHeadlessEndpoints).
			out = append(out, proxyrules.Service{Name: name, Port: servicePort})
			continue
		}
		s := proxyrules.Service{Name: name, ClusterIP: topo.ServiceIP(i), Port: servicePort}
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
