// Package resolver is the simulator's name-resolution subsystem: what each client
// process knows of the headless Services it calls. An HTTP library looks a name up
// when it opens a connection, or reads the answer it cached; a gRPC channel keeps
// the addresses it resolved and looks again only after a connection closes, at
// most as often as its library allows. It owns those caches and schedules; it reads
// cluster DNS through Answers.
package resolver

import (
	"math/rand/v2"
	"slices"

	"trafficlab/model/dns"
	"trafficlab/model/kubeproxy"
	"trafficlab/sim"
)

// Answers is cluster DNS: the pods a headless Service's name resolves to now, in
// the EndpointSlice's order.
type Answers interface {
	Answer(svc int32) []kubeproxy.Endpoint
}

// ID is one client process's resolver for one Service.
type ID = int32

// Spec is how a client resolves: its library's cache and, for a gRPC channel, its
// re-resolution rule.
type Spec struct {
	Cache   dns.Cache
	Refresh dns.Refresh
	Channel bool
	// OneAddress: a connection tries only its first address (Dial's order).
	OneAddress bool
}

type client struct {
	Spec
	svc int32
	rng *rand.Rand
	// An HTTP library's cached answer.
	cache dns.Resolver[int32]
	// A gRPC channel's addresses, when it resolved them last, and whether a
	// resolution is due.
	addrs    []int32
	last     sim.Time
	resolved bool
	pending  bool
}

// Resolvers are every client process's resolvers.
type Resolvers struct {
	k       *sim.Kernel
	src     Answers
	seed    int64
	clients []client
	// resolved tells the owner of a channel that its addresses changed.
	resolved  func(ID)
	evResolve uint8
	order     []int32
}

// New registers the subsystem's events with k; resolved hears of each channel's
// new addresses.
func New(k *sim.Kernel, src Answers, seed int64, resolved func(ID)) *Resolvers {
	r := &Resolvers{k: k, src: src, seed: seed, resolved: resolved}
	r.evResolve = k.Register(r.onResolve)
	return r
}

// Add makes a resolver for the process named name calling service svc.
func (r *Resolvers) Add(name string, svc int32, spec Spec) ID {
	r.clients = append(r.clients, client{Spec: spec, svc: svc, rng: sim.Stream(r.seed, "dns/"+name)})
	return ID(len(r.clients) - 1)
}

// lookup is a fresh answer, shuffled as CoreDNS shuffles each response.
func (r *Resolvers) lookup(c *client) []int32 {
	return dns.Answer(r.src.Answer(c.svc), c.rng)
}

// Dial is the addresses a new connection of id tries, in turn (only the first with
// OneAddress); empty is NXDOMAIN.
// A channel's are the addresses it holds, resolved on first use; the caller must
// not keep them past its next call.
func (r *Resolvers) Dial(id ID) []int32 {
	c := &r.clients[id]
	if c.Channel {
		return r.Addresses(id)
	}
	r.order = c.cache.Order(r.k.Now(), c.Cache, func() []int32 { return r.lookup(c) }, c.rng, r.order)
	if c.OneAddress && len(r.order) > 1 {
		return r.order[:1]
	}
	return r.order
}

// Addresses is channel id's addresses, resolved on first use.
func (r *Resolvers) Addresses(id ID) []int32 {
	c := &r.clients[id]
	if !c.resolved {
		r.resolve(c)
	}
	return c.addrs
}

// Lost: a connection of channel id closed or failed, and it asks to resolve again
// (grpc-go's ClientConn resolveNow on any connection loss).
func (r *Resolvers) Lost(id ID) {
	c := &r.clients[id]
	if !c.Channel || !c.resolved || c.pending {
		return
	}
	at, ok := c.Refresh.When(r.k.Now(), c.last)
	if !ok {
		return
	}
	c.pending = true
	r.k.At(at, r.evResolve, id, 0)
}

func (r *Resolvers) onResolve(ev sim.Event) {
	c := &r.clients[ev.Obj]
	c.pending = false
	old := c.addrs
	r.resolve(c)
	if !slices.Equal(old, c.addrs) {
		r.resolved(ev.Obj)
	}
}

func (r *Resolvers) resolve(c *client) {
	c.addrs, c.last, c.resolved = r.lookup(c), r.k.Now(), true
}
