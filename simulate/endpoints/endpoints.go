// Package endpoints is the simulator's Service-routing subsystem: the EndpointSlice
// of each Service, its way to every node's kube-proxy (a watch per node, delivering
// versions in order after the propagation delay), each kube-proxy's rate-limited
// syncs, and the rules they program, which pick a pod for a new connection. It owns
// all of that; it reads the pods' state through a Source, as the EndpointSlice
// controller reads pods from the API server.
package endpoints

import (
	"math/rand/v2"
	"slices"
	"time"

	"trafficlab/model/kubeproxy"
	"trafficlab/sim"
)

// Source is the EndpointSlice controller's reading of a Service's pods.
type Source interface {
	// Usable is what kube-proxy would program for service svc from its pods' state
	// now (kubeproxy.Usable), in a stable order.
	Usable(svc int32) []kubeproxy.Endpoint
}

// Config is the cluster's routing set-up.
type Config struct {
	Mode          kubeproxy.Mode
	IPVSScheduler string
	MinSyncPeriod time.Duration
	// Latency and Jitter are how long an EndpointSlice change takes to reach a
	// node's kube-proxy: Latency plus a uniform draw up to Jitter, per node.
	Latency, Jitter sim.Time
	Seed            int64
	Nodes           []string // names, for each balancer's random stream
}

// version is one version of a Service's EndpointSlice, reduced to what kube-proxy
// programs from it.
type version struct {
	version uint32
	usable  []kubeproxy.Endpoint
}

// service is one Service's EndpointSlice: each change of the endpoints kube-proxy
// would use is a new version; history keeps the versions some node has yet to
// program.
type service struct {
	name    string
	version uint32
	history []version
	dirty   bool // a change is pending in this instant
}

// view is what one node's kube-proxy knows of one Service.
type view struct {
	delivered  uint32   // newest EndpointSlice version its watch has delivered
	programmed uint32   // version its rules hold
	deliverAt  sim.Time // when the newest delivery lands: a watch delivers in order
}

// proxy is one node's kube-proxy process.
type proxy struct {
	sync        *kubeproxy.SyncRunner // its rate limit on rule syncs
	syncPending bool
}

// Routing is every Service's endpoints and every node's kube-proxy.
type Routing struct {
	k         *sim.Kernel
	cfg       Config
	src       Source
	services  []service
	proxies   []proxy
	views     []view               // per node × service
	balancers []kubeproxy.Balancer // per node × service, nil until used
	spread    *rand.Rand           // propagation delays
	// started is false while the initial cluster is built: it is settled, its pods
	// run and every node's rules list them.
	started                    bool
	evSlice, evDeliver, evSync uint8
}

// New registers the subsystem's events with k.
func New(k *sim.Kernel, cfg Config, src Source) *Routing {
	r := &Routing{k: k, cfg: cfg, src: src, spread: sim.Stream(cfg.Seed, "endpoint-propagation")}
	for range cfg.Nodes {
		r.proxies = append(r.proxies, proxy{sync: kubeproxy.NewSyncRunner(cfg.MinSyncPeriod)})
	}
	r.evSlice = k.Register(r.onSlice)
	r.evDeliver = k.Register(r.onDeliver)
	r.evSync = k.Register(r.onSync)
	return r
}

// Start programs the initial cluster's Services, named in order, on every node:
// a run starts from a settled state. Changes publish from then on.
func (r *Routing) Start(services []string) {
	for si, name := range services {
		r.services = append(r.services, service{name: name, version: 1,
			history: []version{{version: 1, usable: r.src.Usable(int32(si))}}})
	}
	r.views = make([]view, len(r.cfg.Nodes)*len(services))
	for i := range r.views {
		r.views[i] = view{delivered: 1, programmed: 1}
	}
	r.balancers = make([]kubeproxy.Balancer, len(r.views))
	r.started = true
}

// Changed notes that service svc's pods may have changed what the EndpointSlice
// lists; every change within one instant makes one new version.
func (r *Routing) Changed(svc int32) {
	if !r.started || r.services[svc].dirty {
		return
	}
	r.services[svc].dirty = true
	r.k.After(0, r.evSlice, svc, 0)
}

// Balancer is node n's kube-proxy rules for service svc, made on first use.
func (r *Routing) Balancer(n, svc int32) kubeproxy.Balancer {
	i := r.index(n, svc)
	if b := r.balancers[i]; b != nil {
		return b
	}
	rng := sim.Stream(r.cfg.Seed, "kube-proxy/"+r.cfg.Nodes[n]+"/"+r.services[svc].name)
	b, err := kubeproxy.New(r.cfg.Mode, r.cfg.IPVSScheduler, rng)
	if err != nil {
		panic(err) // validation admits only known modes
	}
	b.SetEndpoints(slices.Clone(r.Programmed(n, svc)))
	r.balancers[i] = b
	return b
}

// Programmed is the endpoint list node n's rules hold for service svc, for
// reading at once: the caller must not keep or change it.
func (r *Routing) Programmed(n, svc int32) []kubeproxy.Endpoint {
	want := r.views[r.index(n, svc)].programmed
	for _, h := range r.services[svc].history {
		if h.version == want {
			return h.usable
		}
	}
	panic("endpoints: programmed endpoint version pruned")
}

func (r *Routing) index(n, svc int32) int { return int(n)*len(r.services) + int(svc) }

// onSlice publishes a new EndpointSlice version and starts its way to every node:
// each node's watch delivers it after its own delay, never before an earlier version.
func (r *Routing) onSlice(ev sim.Event) {
	si := ev.Obj
	svc := &r.services[si]
	svc.dirty = false
	usable := r.src.Usable(si)
	if slices.Equal(usable, svc.history[len(svc.history)-1].usable) {
		return // conditions moved, kube-proxy's rules would not
	}
	svc.version++
	svc.history = append(svc.history, version{version: svc.version, usable: usable})
	now := r.k.Now()
	for n := range r.cfg.Nodes {
		i := r.index(int32(n), si)
		v := &r.views[i]
		at := now + r.cfg.Latency
		if r.cfg.Jitter > 0 {
			at += sim.Time(r.spread.Int64N(int64(r.cfg.Jitter) + 1))
		}
		v.deliverAt = max(v.deliverAt, at)
		r.k.At(v.deliverAt, r.evDeliver, int32(i), svc.version)
	}
}

// onDeliver: a node's kube-proxy hears of a new version and asks for a sync.
func (r *Routing) onDeliver(ev sim.Event) {
	v := &r.views[ev.Obj]
	v.delivered = max(v.delivered, ev.Gen)
	n := int(ev.Obj) / len(r.services)
	p := &r.proxies[n]
	if p.syncPending {
		return // the pending sync will read this version too
	}
	if p.sync.TryRun(time.Duration(r.k.Now())) {
		r.sync(n)
		return
	}
	p.syncPending = true
	r.k.At(sim.Time(p.sync.RetryAt()), r.evSync, int32(n), 0)
}

// onSync: a sync the rate limit had put off.
func (r *Routing) onSync(ev sim.Event) {
	p := &r.proxies[ev.Obj]
	p.syncPending = false
	if !p.sync.TryRun(time.Duration(r.k.Now())) {
		panic("endpoints: kube-proxy sync refused at its retry time")
	}
	r.sync(int(ev.Obj))
}

// sync: node n's kube-proxy rewrites its rules from the versions it has.
func (r *Routing) sync(n int) {
	for si := range r.services {
		i := r.index(int32(n), int32(si))
		v := &r.views[i]
		if v.programmed == v.delivered {
			continue
		}
		v.programmed = v.delivered
		if b := r.balancers[i]; b != nil {
			b.SetEndpoints(slices.Clone(r.Programmed(int32(n), int32(si))))
		}
		r.pruneHistory(int32(si))
	}
}

// pruneHistory drops versions every node has moved past.
func (r *Routing) pruneHistory(si int32) {
	svc := &r.services[si]
	oldest := svc.version
	for n := range r.cfg.Nodes {
		oldest = min(oldest, r.views[r.index(int32(n), si)].programmed)
	}
	i := 0
	for i < len(svc.history)-1 && svc.history[i].version < oldest {
		i++
	}
	svc.history = svc.history[i:]
}
