package simulate

import (
	"fmt"
	"math/rand/v2"

	"trafficlab/model/client"
	"trafficlab/model/dist"
	"trafficlab/model/library"
	"trafficlab/model/node"
	"trafficlab/placement"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate/resolver"
)

// clientDeployment is one client Deployment of the scenario.
type clientDeployment struct {
	spec      *scenario.Client
	svc       int32
	from      int32 // the service whose pods call through it; -1 for a client
	think     dist.Sampler
	hasThink  bool
	overhead  sim.Time
	timeout   sim.Time
	limits    client.Limits
	noReuse   bool
	perThread bool
	// What the client library does when a connection fails under a request.
	retriesStale, abortsRun bool
	// uncheckedIdle: an idle connection idle less long is reused without looking
	// for the server's close (library.Profile.UncheckedIdle).
	uncheckedIdle          sim.Time
	headerBytes, bodyBytes int64
	errSeen                uint8    // error kinds seen on its requests, a bit each (ended.seen)
	windows                [2]int64 // HTTP/2 receive windows of its pods: stream, connection
	http2                  bool
	pods                   []int32
	// resolve is how its pods resolve a headless target (headless.go); roundRobin
	// is a gRPC channel's round_robin over one.
	headless, roundRobin bool
	resolve              resolver.Spec

	open, peak, opened int64
	requests, errors   int64
	// sent counts requests issued; notSent open-loop arrivals with no free slot;
	// behind those its CPU had not caught up with when their phase ended, and
	// maxLate the latest an arrival was sent after it fell due.
	sent, notSent, behind, due int64
	maxLate                    sim.Time
	// reqCPU and connCPU are its own CPU work per request and per new connection;
	// steadyCPU the cores its process burns whatever it sends.
	reqCPU, connCPU sim.Time
	steadyCPU       float64
	// Waits for a pooled connection (diagnosis.go): requests that waited and their
	// summed wait, those that timed out still waiting (never sent to a pod), and the
	// summed time successes held their connection.
	poolWaited, poolTimedOut int64
	poolWaitNS, heldNS       int64
	reached                  []bool
}

type clientPod struct {
	dep     int32
	node    int32
	entry   int32 // the node its connections enter by: its own, or its client's entryNode
	name    string
	pool    int32   // shared pool, or -1 when each slot has its own
	free    []int32 // idle open-loop slots
	threads []int32 // the slot of each closed-loop thread, made on first use
	slots   []int32 // every slot of this pod
	aborted int64   // runs the client library aborted
	envoy   int32   // its sidecar in the mesh, or -1
	from    int32   // the service pod whose calls it makes, or -1 for a client's pod
	// resolver is its process's resolver of a headless target; -1 for a ClusterIP.
	resolver resolver.ID
	// connsTo counts the connections it opened by server pod, for a client's pod.
	connsTo []int32
	// grp is its container's CPU on its node, nil when its client spends none;
	// senders how many requests its open loop prepares at once (0: no bound), and
	// late the arrivals waiting for one, by when they fell due (clientcpu.go).
	grp     *node.Group
	senders int
	late    sim.FIFO[sim.Time]
	waking  int // open-loop requests in their overhead, to be prepared next
}

// Slot states.
const (
	idle uint8 = iota
	waitingConn
	dialing
	inFlight
	preparing // its client's CPU builds the request
	opening   // its client's CPU sets a new connection up, before the dial
)

// slot is a caller: a closed-loop thread or one open-loop request in flight.
type slot struct {
	cpod      int32
	pool      int32
	thread    int32 // closed-loop thread number; -1 in an open loop
	gen       uint32
	epoch     uint32 // the client pod's phase epoch when the request was issued
	state     uint8
	attempt   uint8
	scheduled bool // an evReady is pending
	fresh     bool // the request went on a connection opened for it
	// open: an open-loop request, counted as offered when it fell due, at due
	// (plus the client's overhead).
	open     bool
	due      sim.Time
	accepted bool // a userspace proxy has accepted its connection and spent its CPU on it
	expired  bool // its timeout passed while its client's CPU built it or its connection
	waking   bool // an open-loop request counted in its pod's waking
	conn     client.ConnID
	connSeq  uint32 // conn's close count when taken: stale once it differs
	// job is the request's job at the client pod's sidecar, while serial matches.
	job       int32
	jobSerial uint32
	pod       int32  // pod dialled or connected to; -1 when none
	call      int32  // the call it carries for a service pod (e.callSlots), or -1
	seq       uint64 // the request's place in sending order
	sent      sim.Time
	deadline  sim.Time
	timerAt   sim.Time // time of the pending timeout event; 0 = none
	// waitFrom is when the request began waiting for a pooled connection; waited
	// how long it waited for one.
	waitFrom, waited sim.Time
	rng              *rand.Rand
}

func (e *Engine) addClient(di int32, c *scenario.Client) error {
	svc := e.serviceIndex(c.Target)
	if svc < 0 {
		return fieldError(fmt.Sprintf("spec.clients[%d].target", di), fmt.Errorf("no service %q", c.Target))
	}
	d := e.newDeployment(c, svc)
	if c.ThinkTime != nil {
		var err error
		if d.think, err = dist.New(c.ThinkTime.Spec()); err != nil {
			return fieldError(fmt.Sprintf("spec.clients[%d].thinkTime", di), err)
		}
		d.hasThink = true
	}
	e.load.AddPlan(c, e.sc.Spec.Duration.Duration)
	e.deps = append(e.deps, d)
	dep := &e.deps[di]
	for r := 0; r < c.Replicas; r++ {
		name := placement.Name(c.Name, r)
		node, err := e.sched.Schedule(placement.ClientPod(c, name))
		if err != nil {
			return fieldError(fmt.Sprintf("spec.clients[%d].replicas", di), placement.Unschedulable(name, err))
		}
		if e.check {
			continue
		}
		cp := clientPod{dep: di, node: int32(node), entry: int32(node), pool: -1, name: name, envoy: -1, from: -1,
			resolver: e.resolverFor(dep, name)}
		if c.EntryNode != "" {
			cp.entry = e.nodeIndex(c.EntryNode)
		}
		e.load.AddPod(di, sim.Stream(e.sc.Spec.Seed, "client/"+name))
		ci := int32(len(e.cpods))
		if c.Sidecar != nil {
			cp.envoy = e.mesh.Add(c.Sidecar, false, ci, cp.node, name)
		}
		if !d.perThread {
			cp.pool = e.newPool(dep, ci)
		}
		e.cpods = append(e.cpods, cp)
		dep.pods = append(dep.pods, ci)
		e.clientGroup(ci)
		e.load.Start(ci)
	}
	return nil
}

// newDeployment sets up callers of service svc with client c's library, pools,
// timeout and requests: a client Deployment, or a service's pods calling another.
func (e *Engine) newDeployment(c *scenario.Client, svc int32) clientDeployment {
	d := clientDeployment{spec: c, svc: svc, from: -1}
	d.overhead = sim.Duration(c.Overhead.Duration)
	if w := c.Work.PerRequest; w != nil {
		d.reqCPU = sim.Duration(w.Duration)
	}
	if w := c.Work.PerConnection; w != nil {
		d.connCPU = sim.Duration(w.Duration)
	}
	if w := c.Work.Steady; w != nil {
		d.steadyCPU = w.AsApproximateFloat64()
	}
	d.timeout = sim.Duration(c.Timeout.Duration)
	conn := c.Connections
	d.limits = client.Limits{
		MaxPerHost:  *conn.MaxPerHost,
		MaxIdle:     *conn.MaxIdlePerHost,
		IdleTimeout: sim.Duration(conn.IdleTimeout.Duration),
		MaxLifetime: sim.Duration(conn.MaxLifetime.Duration),
	}
	if p, ok := library.Lookup(c.Library); ok {
		d.limits.Pick = idlePick(p.IdlePick)
		d.uncheckedIdle = sim.Duration(p.UncheckedIdle)
		d.retriesStale = p.RetriesStaleIdempotent && replayable(c.Request.Method)
		d.abortsRun = p.AbortsRun
	}
	d.noReuse = conn.Reuse == scenario.ReuseNone
	d.headerBytes, d.bodyBytes = *c.Request.HeaderBytes, c.Request.BodyBytes
	if w := c.Connections.HTTP2; w != nil {
		d.windows = [2]int64{*w.StreamWindowBytes, *w.ConnectionWindowBytes}
	}
	d.http2 = scenario.Multiplexed(conn.Protocol) && !d.noReuse
	if d.http2 {
		d.limits.Streams = e.services[svc].streams
	}
	d.perThread = conn.Reuse == scenario.ReusePerThread
	e.headlessTarget(&d, c)
	return d
}

// replayable tells whether a library may resend a request of this method on another
// connection without the caller knowing. Go's rule (net/http request.go
// isReplayable: GET, HEAD, OPTIONS, TRACE) is the strictest of the libraries with
// RetriesStaleIdempotent, and a POST is never resent by any of them.
func replayable(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// reach records that the deployment's connections reached pod (of npods so far).
func (d *clientDeployment) reach(pod int32, npods int) {
	if int(pod) >= len(d.reached) {
		d.reached = append(d.reached, make([]bool, npods-len(d.reached))...)
	}
	d.reached[pod] = true
}

func (e *Engine) newPool(d *clientDeployment, ci int32) int32 {
	e.pools = append(e.pools, client.Pool{Limits: d.limits})
	e.poolOwner = append(e.poolOwner, ci)
	e.sweepAt = append(e.sweepAt, 0)
	return int32(len(e.pools) - 1)
}

// newSlot adds a caller to client pod ci: closed-loop thread number thread, or an
// open-loop slot when thread is -1.
func (e *Engine) newSlot(ci, thread int32) int32 {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	s := slot{cpod: ci, pool: cp.pool, thread: thread, pod: -1, call: -1}
	if s.pool < 0 {
		s.pool = e.newPool(d, ci)
	}
	if d.hasThink {
		s.rng = sim.Stream(e.sc.Spec.Seed, fmt.Sprintf("client/%s/thread-%d", cp.name, thread))
	}
	si := int32(len(e.slots))
	e.slots = append(e.slots, s)
	cp.slots = append(cp.slots, si)
	return si
}

// idlePick is the pool order of a library's IdlePick.
func idlePick(pick string) client.Pick {
	switch pick {
	case library.PickFIFO:
		return client.LongestIdle
	case library.PickCreated:
		return client.FirstOpened
	}
	return client.MostRecent
}
