// Package endpoints is the simulator's Service-routing subsystem: the EndpointSlice
// of each Service, its way to every node's kube-proxy (a watch per node, delivering
// versions in order after the propagation delay), each kube-proxy's rate-limited
// syncs, and the rules they program, which pick a pod for a new connection. A
// headless Service's slice goes to cluster DNS instead, whose answer lists its
// ready pods. It owns all of that; it reads the pods' state through a Source, as
// the EndpointSlice controller reads pods from the API server.
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
	// Ready is the endpoints of service svc whose Ready condition holds now, in a
	// stable order: what cluster DNS answers for a headless Service.
	Ready(svc int32) []kubeproxy.Endpoint
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
// programs from it, or for a headless Service to what DNS answers.
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
	// A headless Service's slice reaches CoreDNS's watch only: kube-proxy's
	// informer selects away slices labelled service.kubernetes.io/headless
	// (cmd/kube-proxy/app/server.go noHeadlessEndpoints).
	headless bool
	dns      view
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
	dnsSpread *rand.Rand           // CoreDNS's watch's delays
	// started is false while the initial cluster is built: it is settled, its pods
	// run and every node's rules list them.
	started                           bool
	evSlice, evDeliver, evSync, evDNS uint8
}

// New registers the subsystem's events with k.
func New(k *sim.Kernel, cfg Config, src Source) *Routing {
	r := &Routing{k: k, cfg: cfg, src: src, spread: sim.Stream(cfg.Seed, "endpoint-propagation"),
		dnsSpread: sim.Stream(cfg.Seed, "coredns-propagation")}
	for range cfg.Nodes {
		r.proxies = append(r.proxies, proxy{sync: kubeproxy.NewSyncRunner(cfg.MinSyncPeriod)})
	}
	r.evSlice = k.Register(r.onSlice)
	r.evDeliver = k.Register(r.onDeliver)
	r.evSync = k.Register(r.onSync)
	r.evDNS = k.Register(r.onDNS)
	return r
}

// Start programs the initial cluster's Services, named in order, on every node,
// and serves the headless ones in DNS: a run starts from a settled state. Changes
// publish from then on.
func (r *Routing) Start(services []string, headless []bool) {
	for si, name := range services {
		svc := service{name: name, version: 1, headless: headless[si], dns: view{delivered: 1}}
		svc.history = []version{{version: 1, usable: r.listed(&svc, int32(si))}}
		r.services = append(r.services, svc)
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
	return r.versionOf(svc, r.views[r.index(n, svc)].programmed)
}

// versionOf is version want of service svc's endpoint list.
func (r *Routing) versionOf(svc int32, want uint32) []kubeproxy.Endpoint {
	for _, h := range r.services[svc].history {
		if h.version == want {
			return h.usable
		}
	}
	panic("endpoints: endpoint version in use pruned")
}

func (r *Routing) index(n, svc int32) int { return int(n)*len(r.services) + int(svc) }

// onSlice publishes a new EndpointSlice version and starts its way to every node:
// each node's watch delivers it after its own delay, never before an earlier version.
func (r *Routing) onSlice(ev sim.Event) {
	si := ev.Obj
	svc := &r.services[si]
	svc.dirty = false
	usable := r.listed(svc, si)
	if slices.Equal(usable, svc.history[len(svc.history)-1].usable) {
		return // conditions moved, kube-proxy's rules (or DNS's answer) would not
	}
	svc.version++
	svc.history = append(svc.history, version{version: svc.version, usable: usable})
	now := r.k.Now()
	if svc.headless {
		// CoreDNS's informer writes the slice straight into the store its answers
		// read (plugin/kubernetes/controller.go: no resync, no batching).
		at := now + r.cfg.Latency
		if r.cfg.Jitter > 0 {
			at += sim.Time(r.dnsSpread.Int64N(int64(r.cfg.Jitter) + 1))
		}
		svc.dns.deliverAt = max(svc.dns.deliverAt, at)
		r.k.At(svc.dns.deliverAt, r.evDNS, si, svc.version)
		return
	}
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

// listed is what a version of service svc (index si) holds: the endpoints
// kube-proxy would use, or for a headless Service the ready ones DNS answers with.
func (r *Routing) listed(svc *service, si int32) []kubeproxy.Endpoint {
	if svc.headless {
		return r.src.Ready(si)
	}
	return r.src.Usable(si)
}

// onDNS: CoreDNS's watch delivers a headless Service's new slice version.
func (r *Routing) onDNS(ev sim.Event) {
	svc := &r.services[ev.Obj]
	svc.dns.delivered = max(svc.dns.delivered, ev.Gen)
	r.pruneHistory(ev.Obj)
}

// Answer is the pods cluster DNS answers headless service svc's name with now, in
// the slice's order (the caller shuffles it as CoreDNS does), for reading at once;
// empty is NXDOMAIN.
func (r *Routing) Answer(svc int32) []kubeproxy.Endpoint {
	return r.versionOf(svc, r.services[svc].dns.delivered)
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
	oldest := svc.dns.delivered
	if !svc.headless {
		oldest = svc.version
		for n := range r.cfg.Nodes {
			oldest = min(oldest, r.views[r.index(int32(n), si)].programmed)
		}
	}
	i := 0
	for i < len(svc.history)-1 && svc.history[i].version < oldest {
		i++
	}
	svc.history = svc.history[i:]
}
