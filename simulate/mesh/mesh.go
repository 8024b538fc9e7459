// Package mesh is the simulator's service mesh: Envoy sidecars as Istio injects
// them (model/sidecar has the policies and their sources).
//
// An envoy runs a few worker threads; each downstream connection stays on the worker
// that accepted it, and a worker handles its requests one task at a time: reading and
// routing a request, then relaying its answer, each costing half the sidecar's
// per-request CPU on that worker. The workers share the proxy container's CPU on the
// node, so a CPU limit below the worker count slows them all; above it the worker
// count is the cap (R5).
//
// An inbound envoy (on a service's pod) passes requests to its app over loopback,
// reusing its idle connections to the app. An outbound envoy (on a client pod) takes
// the app's requests over loopback and sends each to a pod it picks itself, per
// request, among the endpoints of the target service: Istio's sidecars route to pod
// IPs, not through the ClusterIP, so kube-proxy's per-connection pinning is gone. Each
// worker keeps its own pool per upstream pod (HTTP/1.1: a request per connection;
// HTTP/2: streams on one connection), under the envoy's circuit breakers; a failed
// connection attempt is retried on another pod per the retry policy, and what cannot
// be served comes back to the app as a 503.
//
// The mesh owns the envoys, their workers, pools' ownership and each request's state
// inside an envoy. Requests are the engine's (their IDs index its job table); the mesh
// reaches the apps through Apps and the connections and pods through Upstream.
package mesh

import (
	"math/rand/v2"

	"trafficlab/model/client"
	"trafficlab/model/node"
	"trafficlab/model/sidecar"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Apps is the request path on the apps' side of the sidecars. A request is the
// engine's job ID.
type Apps interface {
	// ToApp: inbound request ji crossed loopback to its pod's app, on a new
	// connection to the app or an idle one.
	ToApp(ji int32, newConn bool)
	// Closed: the pod exited under inbound request ji's answer, on its way to the
	// sidecar: the connection it came on closes, the client hears and the request
	// ends.
	Closed(ji int32)
	// Reply sends inbound request ji's answer from its pod to the client.
	Reply(ji int32)
	// Answer sends outbound request ji's answer over loopback to its app.
	Answer(ji int32)
	// Unavailable: the app reads a 503 for outbound request ji, caused by pod cause
	// (-1: none); the request ends.
	Unavailable(ji, cause int32)
	// Free ends request ji, whose client no longer waits.
	Free(ji int32)
}

// Reach is how a pod answers a new connection to its IP.
type Reach uint8

const (
	Accepts Reach = iota // the app listens
	Refuses              // the pod is up but nothing listens: a reset
	Silent               // no pod holds the IP yet, or any more: no answer
)

// Upstream is what outbound envoys reach beyond their pod: the service's endpoints,
// the pods, and the connections the engine carries over the network.
type Upstream interface {
	// Endpoints are the pods of service svc that node's programming lists.
	Endpoints(node, svc int32) []int32
	Reach(pod int32) Reach
	// NewPool makes a connection pool of client pod owner's envoy, for service svc:
	// no limits of its own (the circuit breakers are), streams per connection when
	// http2.
	NewPool(owner, svc int32, http2 bool) int32
	// Dial opens a connection of pool pi from client pod owner to pod.
	Dial(owner, pod, pi int32) client.ConnID
	// Wired tells whether connection id runs on the segment-level network.
	Wired(id client.ConnID) bool
	// Send sends request req's attempt (gen: req's serial) on connection id; the
	// attempt is a request of its own at the pod.
	Send(req int32, gen uint32, id client.ConnID, newConn bool) (attempt int32, serial uint32)
	// OnItsWay tells whether attempt (serial) is still on its way to its pod: it
	// has not arrived, and its request has not ended.
	OnItsWay(attempt int32, serial uint32) bool
	// ResetStream resets attempt's HTTP/2 stream.
	ResetStream(attempt int32, serial uint32)
	// GoAways retires pool pi's HTTP/2 connections whose server has gone away.
	GoAways(pi int32)
	// ServerClosed tells whether the pod has closed idle connection id and the
	// envoy has heard.
	ServerClosed(id client.ConnID) bool
	// Close closes connection id.
	Close(id client.ConnID)
	// CPU is a container's CPU group on node n, with cpu.weight and a CPU limit in
	// cores (0: none).
	CPU(n, id int32, weight, limit float64, name string) *node.Group
}

// Config is the mesh's set-up.
type Config struct {
	Seed int64
	// Local is loopback's one-way latency; Hop is a pod-to-pod one.
	Local, Hop sim.Time
	// Tables are the engine's connection tables, which the envoys' pools share with
	// the apps': the mesh reads and updates them in place, as the apps' callers do.
	Tables Tables
}

// Tables are the connection tables of a run: every pool by ID, the connections,
// and each connection's sequence number, bumped when it closes.
type Tables struct {
	Pools *[]client.Pool
	Conns *client.Conns
	Seq   *[]uint32
}

// Mesh is every sidecar of a run.
type Mesh struct {
	k    *sim.Kernel
	apps Apps
	up   Upstream
	cfg  Config

	envoys     []envoy
	tasks      []task                   // per request (job ID): its state in an envoy
	connWorker []int16                  // per connection: the worker that accepted it
	poolEnvoy  []int32                  // per pool: the envoy owning it, -1 or beyond: an app's
	poolSvc    []int32                  // per envoy pool: the service it reaches
	serial     uint32                   // of attempts, for their timers
	pendingFn  func(client.Waiter) bool // pending, as the pools take it
	done       []int32                  // scratch: tasks a CPU finished
	doneCopy   []int32

	evProxyIn, evCPU, evLocalIn, evLocalOut, evUpFail, evRetry, evUnavailable, evPerTry, evConnectTimeout uint8
}

// New registers the mesh's event kinds with k.
func New(k *sim.Kernel, cfg Config, apps Apps, up Upstream) *Mesh {
	m := &Mesh{k: k, cfg: cfg, apps: apps, up: up}
	m.pendingFn = m.pending
	m.evProxyIn = k.Register(m.onProxyIn)
	m.evCPU = k.Register(m.onCPU)
	m.evLocalIn = k.Register(m.onLocalIn)
	m.evLocalOut = k.Register(m.onLocalOut)
	m.evUpFail = k.Register(m.onUpFail)
	m.evRetry = k.Register(m.onRetry)
	m.evUnavailable = k.Register(m.onUnavailable)
	m.evPerTry = k.Register(m.onPerTry)
	m.evConnectTimeout = k.Register(m.onConnectTimeout)
	return m
}

// Stages of a request inside an envoy.
const (
	stageIn  uint8 = iota + 1 // the request is being read and routed
	stageOut                  // the answer is being relayed back
)

// task is a request's state in an envoy.
type task struct {
	envoy  int32
	worker int16
	stage  uint8
	// newConn: inbound, the envoy opened a connection to the app for it.
	newConn bool

	// An outbound request (out): live until its job is freed; gone once its app gave
	// up on it (Abandon); serial is its job's. It goes to service svc for the app's
	// client pod caller, whose pools and network end its attempts use.
	out    bool
	live   bool
	gone   bool
	serial uint32
	svc    int32
	caller int32
	// The pod it goes to, the pods tried, the pool and connection of the attempt in
	// progress (upConn -1: none), how it failed.
	target        int32
	tried         [3]int32
	tries         uint8
	retryHeld     bool
	failing       bool // an evUpFail is on its way for the attempt in progress
	waiting       bool // queued in a pool for a connection
	attemptSerial uint32
	// child is the attempt's request at the pod while childSerial matches.
	child       int32
	childSerial uint32
	failure     sidecar.AttemptEnd
	pool        int32
	upConn      client.ConnID
	upSeq       uint32
	cause       int32
}

// envoy is one sidecar proxy.
type envoy struct {
	name    string
	inbound bool  // on a service pod, else on a client pod
	owner   int32 // the service pod, or the client pod
	node    int32
	calls   bool // a service pod's, whose app has made calls out through it
	grp     *node.Group
	limit   float64 // CPU limit, cores; 0 = none
	half    int64   // worker CPU per request and direction, ns
	http2   bool    // upstream protocol (outbound)
	workers []worker
	// Its circuit breakers and, per worker, balancers are per upstream service, as
	// Istio applies them per destination cluster (upstreams.go): the first service's
	// made with the envoy, the others' when first called.
	breaker    *sidecar.Breaker
	breakerSvc int32 // the service breaker is for; -1 until a request goes out
	breakers   map[int32]*sidecar.Breaker
	thresholds sidecar.Thresholds
	lbPolicy   string
	retry      sidecar.RetryPolicy
	rng        *rand.Rand
	stopped    bool           // inbound: its pod has exited (Stop)
	active     []int32        // requests in progress per upstream pod (LEAST_REQUEST)
	hosts      []sidecar.Host // scratch
	created    sim.Time

	requests, overflows, retries, unavailable int64
}

type worker struct {
	busy    bool
	since   sim.Time
	busyNs  sim.Time
	queue   sim.FIFO[int32]
	lb      sidecar.Balancer           // for the envoy's breakerSvc
	lbs     map[int32]sidecar.Balancer // for any other upstream service
	pools   map[int32]int32            // outbound: upstream pod → pool
	appIdle int                        // inbound: idle connections to the app
}

// Add builds sidecar s in pod owner (a service pod when inbound, else a client pod)
// on node n, and returns its ID. Both kinds relay their app's requests out (Out).
func (m *Mesh) Add(s *scenario.Sidecar, inbound bool, owner, n int32, name string) int32 {
	ei := int32(len(m.envoys))
	limit := 0.0
	if s.CPU != nil {
		limit = s.CPU.AsApproximateFloat64()
	}
	// Istio requests 100m for its proxy, whatever the limit; cpu.weight follows it.
	weight := float64(node.CPUWeight(sidecar.IstioProxyCPURequestMilli))
	x := envoy{
		name: name, inbound: inbound, owner: owner, node: n,
		grp: m.up.CPU(n, -ei-1, weight, limit, "sidecar/"+name), limit: limit,
		half: int64(s.PerRequestCPU.Duration) / 2, http2: s.UpstreamProtocol == scenario.ProtocolHTTP2,
		thresholds: sidecar.Thresholds{
			MaxConnections: uint32(*s.CircuitBreakers.MaxConnections), MaxPendingRequests: uint32(*s.CircuitBreakers.MaxPendingRequests),
			MaxRequests: uint32(*s.CircuitBreakers.MaxRequests), MaxRetries: uint32(*s.CircuitBreakers.MaxRetries),
		},
		breakerSvc: -1, lbPolicy: s.LBPolicy,
		rng: sim.Stream(m.cfg.Seed, "sidecar/"+name), created: m.k.Now(),
	}
	x.breaker = sidecar.NewBreaker(x.thresholds)
	x.retry = retryPolicy(s.Retries)
	x.workers = make([]worker, *s.Concurrency)
	for w := range x.workers {
		lb, err := sidecar.NewBalancer(s.LBPolicy, x.rng)
		if err != nil {
			panic(err) // validation admits only known policies
		}
		x.workers[w].lb = lb
		x.workers[w].pools = map[int32]int32{}
	}
	m.envoys = append(m.envoys, x)
	return ei
}

// retryPolicy is Istio's route retry policy with the scenario's attempts and
// conditions.
func retryPolicy(r *scenario.Retries) sidecar.RetryPolicy {
	p := sidecar.IstioOutboundRetryPolicy()
	p.NumRetries = *r.Attempts
	p.RetryOn, p.RetriableStatusCodes = 0, nil
	for _, c := range r.RetryOn {
		on, codes, err := sidecar.ParseRetryOn(c)
		if err != nil {
			panic(err) // validation admits only known conditions
		}
		p.RetryOn |= on
		p.RetriableStatusCodes = append(p.RetriableStatusCodes, codes...)
	}
	if r.PerTryTimeout != nil {
		p.PerTryTimeout = sim.Duration(r.PerTryTimeout.Duration)
	}
	return p
}

func (m *Mesh) conns() *client.Conns        { return m.cfg.Tables.Conns }
func (m *Mesh) pool(pi int32) *client.Pool  { return &(*m.cfg.Tables.Pools)[pi] }
func (m *Mesh) seq(id client.ConnID) uint32 { return (*m.cfg.Tables.Seq)[id] }

// task is request ji's state, the table grown to hold it.
func (m *Mesh) task(ji int32) *task {
	for int(ji) >= len(m.tasks) {
		m.tasks = append(m.tasks, task{})
	}
	return &m.tasks[ji]
}

// Accept puts connection id, new to envoy ei, on the worker the kernel's accept
// gives it.
func (m *Mesh) Accept(ei int32, id client.ConnID) {
	x := &m.envoys[ei]
	for int(id) >= len(m.connWorker) {
		m.connWorker = append(m.connWorker, 0)
	}
	m.connWorker[id] = int16(sidecar.AssignWorker(x.rng, len(x.workers)))
}

// workerOf is the worker that accepted connection id.
func (m *Mesh) workerOf(id client.ConnID) int16 {
	if int(id) >= len(m.connWorker) {
		return 0
	}
	return m.connWorker[id]
}

// Free forgets outbound request ji, which the engine has freed, and what its retry
// held.
func (m *Mesh) Free(ji int32) {
	t := &m.tasks[ji]
	m.releaseRetry(t)
	t.live = false
}

// releaseRetry gives back the Retries circuit breaker's count t's retry held.
func (m *Mesh) releaseRetry(t *task) {
	if t.retryHeld {
		m.envoys[t.envoy].breakerOf(t.svc).Release(sidecar.Retries)
		t.retryHeld = false
	}
}

// Owns tells whether pool pi is an envoy's.
func (m *Mesh) Owns(pi int32) bool { return int(pi) < len(m.poolEnvoy) && m.poolEnvoy[pi] >= 0 }

// CPUChanged is told that the node's CPU rescheduled group g's next completion at;
// it reports whether g was a sidecar's.
func (m *Mesh) CPUChanged(g *node.Group, at sim.Time) bool {
	ei := -g.ID - 1
	if ei < 0 || ei >= int32(len(m.envoys)) {
		return false
	}
	m.k.At(at, m.evCPU, ei, g.Gen)
	return true
}
