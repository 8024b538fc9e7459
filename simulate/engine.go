// Package simulate is the discrete-event engine: it builds the cluster twin from a
// scenario, runs it on the sim kernel and fills a result.Result.
package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/model/client"
	"trafficlab/model/disk"
	"trafficlab/model/dist"
	"trafficlab/model/hpa"
	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
	"trafficlab/model/logpipe"
	"trafficlab/model/netw"
	"trafficlab/model/node"
	"trafficlab/model/scheduler"
	"trafficlab/model/sidecar"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Engine is one simulation run.
type Engine struct {
	k   *sim.Kernel
	sc  *scenario.Scenario
	end sim.Time
	// planned is the duration an interrupted run was to cover (end is where it
	// stopped); 0 when it ran to the end.
	planned sim.Time

	mode  kubeproxy.Mode
	hop   sim.Time // one-way pod-to-pod latency
	local sim.Time // one-way latency that stays on the client's node
	// relay is the extra one-way leg through the node's userspace proxy process
	// (local in userspace mode, else 0): the client talks to it, it talks to the pod.
	relay sim.Time

	nodes     []nodeState
	services  []service
	pods      []pod
	sched     *scheduler.Scheduler
	balancers []kubeproxy.Balancer // per client node × service, nil until used
	views     []proxyView          // per node × service: what its kube-proxy knows
	spread    *rand.Rand           // endpoint propagation delays
	// started is false while New builds the initial cluster, which is settled: its
	// pods run and every node's rules list them.
	started   bool
	deps      []deployment
	cpods     []clientPod
	slots     []slot
	pools     []client.Pool
	poolOwner []int32    // client pod of each pool
	sweepAt   []sim.Time // pending idle-timeout sweep per pool; 0 = none
	conns     client.Conns
	jobs      []job
	freeJobs  []int32
	err       error   // why the run stopped early (see maxLiveRequests)
	liveLimit int     // maxLiveRequests; tests lower it
	openSlots int     // open-loop callers made, each outstanding or free for reuse
	check     bool    // set up for Check: pods placed, no client callers
	done      []int32 // scratch for finished CPU work
	expired   []client.ConnID
	live      func(client.Waiter) bool

	stats       stats
	onRequest   func(*result.Request) // StreamRequests' function, or nil
	request     result.Request        // reused for each call of onRequest
	scaleEvents []result.ScaleEvent
	rollouts    []result.Rollout

	// The network beyond constant delays (transport.go): nil stack on the fast path.
	stack      *netw.Stack
	paths      map[pathKey]*netw.Path
	pathKeys   []pathKey       // in creation order, for deterministic reconfiguration
	wire       []int32         // per connection: its netw connection, or -1
	connSeq    []uint32        // per connection slot: bumped when it closes
	wireConn   []client.ConnID // per netw connection: the connection over it
	wires      int64           // TCP connections opened
	lost       []int32         // scratch: jobs a closed connection did not deliver
	flow       []flowConn      // per connection: HTTP/2 flow control (flow.go)
	chunks     []chunk
	freeChunks []int32
	worst      []result.TCPConn // the connections with the most retransmissions

	envoys      []envoy
	connWorker  []int16 // per connection: the sidecar worker that accepted it
	poolEnvoy   []int32 // per pool: the envoy owning it, or -1 for a client app's pool
	doneProxy   []int32
	serial      uint32
	resumed     []int32 // scratch: jobs a log pipe hands back
	backgrounds []background
	slowAfter   sim.Time  // latency over which a request is slow
	nodeUsedAt  []float64 // per node: core-seconds used up to the last timeline interval
	// pending are service pods waiting for a node, in the order they were queued;
	// retryAt is when the next of them is due after its backoff.
	pending []pendingPod
	retryAt sim.Time

	evReady, evArrive, evCPU, evWait, evResponse, evTimeout, evRefused, evReset, evClosed, evRedial, evArrival, evTick, evSweep,
	evPodStart, evProbe, evSigterm, evKill, evNetGone, evSlice, evDeliver, evSync,
	evPhaseEnd, evPhaseStart, evScrape, evHPA, evFault,
	evProxyIn, evProxyCPU, evLocalIn, evLocalOut, evUpFail, evProxyRetry, evUnavailable, evRefusedStream, evPerTry, evConnectTimeout, evWindowUpdate,
	evLogWritten, evLogFlush, evBackgroundCPU, evBackgroundWrite, evBackgroundQuota, evSchedule, evRollout uint8
}

// diskWriter is what writes to a node's disk: a pod's logs or a background workload.
type diskWriter struct {
	name       string
	background bool
}

type nodeState struct {
	name    string
	cpu     *node.CPU
	disk    *disk.Device // nil: nothing writes, or writes never wait
	writers []diskWriter // by id, for the report
	pods    int
	// nicOut and nicIn are its network interface each way; nil when unlimited.
	nicOut, nicIn *netw.NIC
	sync          *kubeproxy.SyncRunner // kube-proxy's rate limit on rule syncs
	syncPending   bool
}

type service struct {
	name     string
	spec     *scenario.Service
	replicas int     // the Deployment's spec.replicas
	pods     []int32 // pods not yet gone, in creation order
	created  int     // pods ever created, for their names
	work     dist.Sampler
	wait     dist.Sampler
	startup  dist.Sampler
	// respBytes is the size of an answer; streams the app's HTTP/2 stream limit.
	respBytes int
	streams   int
	windows   [2]int64      // the app's HTTP/2 receive windows: stream, connection
	limit     float64       // CPU limit per pod, cores
	weight    float64       // CFS weight per pod
	logCPU    time.Duration // CPU to encode an access-log line
	// revision is the pod template's: a rollout makes a new one, whose pods form
	// the Deployment's new ReplicaSet. rolling is set while a rollout is under way.
	revision int32
	rolling  bool
	rollout  int // its rollout in progress, in Engine.rollouts
	// The EndpointSlice: each change of the endpoints kube-proxy would use is a new
	// version; history keeps the versions some node has yet to program.
	version uint32
	history []endpointVersion
	dirty   bool // a change is pending in this instant

	autoscaler *autoscaler // nil without an HPA
}

type pod struct {
	name        string
	svc         int32
	node        int32
	grp         *node.Group
	concurrency int
	busy        int
	queue       sim.FIFO[int32] // jobs waiting for a worker
	work, wait  dist.Sampler
	acceptCost  int64
	rng         *rand.Rand
	requests    int64
	tlRequests  int64 // requests at the end of the last timeline interval
	connections int64
	errors      errorCounts // failed requests this pod was the cause of
	diag        podDiag
	// Its access-log path to the node's disk, nil when a log write never waits.
	logs      *logpipe.Pipe
	logBytes  int64
	logWriter int32
	logCPU    int64 // CPU to encode a line, ns

	uid        string
	revision   int32 // its ReplicaSet, as service.revision
	phase      uint8
	deleting   bool     // deletionTimestamp set
	ready      bool     // the Ready condition
	readySince sim.Time // last transition of the Ready condition
	firstReady sim.Time // -1 until first Ready
	envoy      int32    // its sidecar, or -1
	probeOK    bool     // result of the last readiness probe
	probeRun   int32    // results in a row equal to probeOK
	created    sim.Time
	scheduled  sim.Time // bound to its node; later than created if it waited Pending
	started    sim.Time // the app started listening
	deletedAt  sim.Time
	ended      sim.Time // the process ended; -1 while it runs
	// closedAt is when the app closed its idle keep-alive connections (drain or
	// exit); a client learns of it one trip later. Valid once phase ≥ podDraining.
	closedAt sim.Time

	// metrics-server's view: the last reading of cumulative CPU (core-seconds) and
	// the usage it reports.
	sampled   float64
	sampledAt sim.Time // -1: none
	metric    hpa.Metric
	hasMetric bool
}

// deployment is one client Deployment of the scenario.
type deployment struct {
	spec      *scenario.Client
	svc       int32
	think     dist.Sampler
	hasThink  bool
	overhead  sim.Time
	timeout   sim.Time
	limits    client.Limits
	noReuse   bool
	perThread bool
	poisson   bool
	// What the client library does when a connection fails under a request.
	retriesStale, abortsRun bool
	headerBytes, bodyBytes  int64
	errSeen                 uint8    // error kinds seen on its requests, a bit each (ended.seen)
	windows                 [2]int64 // HTTP/2 receive windows of its pods: stream, connection
	http2                   bool
	phases                  []scenario.Phase
	curve                   curve // the rate over the run, or nil
	runs                    int   // phases × repeat
	runStats                []runStats
	pods                    []int32

	open, peak, opened int64
	requests, errors   int64
	// sent counts requests issued; notSent open-loop arrivals with no free slot.
	sent, notSent int64
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
	name    string
	pool    int32 // shared pool, or -1 when each slot has its own
	rng     *rand.Rand
	free    []int32 // idle open-loop slots
	threads []int32 // the slot of each closed-loop thread, made on first use
	slots   []int32 // every slot of this pod
	aborted int64   // runs the client library aborted
	envoy   int32   // its sidecar, or -1

	// The current phase.
	phase     int    // index into the phase list repeated; runs when all are done
	epoch     uint32 // changes at each phase boundary; events of an older one are stale
	active    bool   // the phase is issuing requests
	begun     sim.Time
	issued    int64 // requests issued, answered or failed in this phase
	done      int64
	threadsOn int         // closed loop: threads in this phase
	interval  float64     // open loop without a ramp: ns between arrivals
	ramp      client.Ramp // open loop with a ramp
	segment   int         // open loop on a rate curve: the current segment
	arrivals  int64
	lambda    float64 // open loop, poisson ramp: expected arrivals up to the next one
}

// Slot states.
const (
	idle uint8 = iota
	waitingConn
	dialing
	inFlight
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
	conn      client.ConnID
	connSeq   uint32 // conn's close count when taken: stale once it differs
	// job is the request's job at the client pod's sidecar, while serial matches.
	job       int32
	jobSerial uint32
	pod       int32  // pod dialled or connected to; -1 when none
	seq       uint64 // the request's place in sending order
	sent      sim.Time
	deadline  sim.Time
	timerAt   sim.Time // time of the pending timeout event; 0 = none
	// waitFrom is when the request began waiting for a pooled connection; waited
	// how long it waited for one.
	waitFrom, waited sim.Time
	rng              *rand.Rand
}

// Job states.
const (
	jobFree    uint8 = iota
	jobWire          // on its way to the pod
	jobQueued        // read by the app, waiting for a worker
	jobCPU           // on CPU
	jobWaiting       // off CPU (I/O, a dependency), holding its worker
	jobLogging       // blocked writing its access-log line, holding its worker
	jobReply         // the answer is on its way back
	jobDead          // its pod died while it waited off CPU
)

// job is a request as the server sees it.
type job struct {
	slot    int32
	gen     uint32
	pod     int32
	state   uint8
	newConn bool
	// closeAfter: the answer carries Connection: close (the pod is draining).
	closeAfter bool
	wait       int64
	conn       client.ConnID // the connection it came on, while connSeq[conn] == seq
	seq        uint32
	serial     uint32 // unique among live jobs, for events that must not hit a reused one

	// Where its time went at the pod (diagnosis.go): mark is when its current part
	// began, thr its container's throttled time then; served the pod that answered it
	// (-1: none yet), copied to an envoy's job from its attempt.
	spent  spent
	mark   sim.Time
	thr    sim.Time
	served int32

	// In a sidecar (sidecar.go): the envoy, its worker and the stage there.
	envoy  int32
	worker int16
	stage  uint8
	// attempt: this job is an outbound envoy's request to a pod on behalf of job
	// parent, the app's request to that envoy.
	attempt bool
	parent  int32
	// An outbound envoy's request: the pod it goes to, the pods tried, the pool and
	// connection of the attempt in progress (upConn -1: none), how it failed.
	target        int32
	tried         [3]int32
	tries         uint8
	retryHeld     bool
	failing       bool   // an evUpFail is on its way for the attempt in progress
	waiting       bool   // queued in a pool for a connection
	attemptSerial uint32 // the attempt in progress, for its timers
	// child is the attempt's job at the pod while childSerial matches; delivered
	// tells that a request reached its pod.
	child       int32
	childSerial uint32
	delivered   bool
	// HTTP/2 flow control of the message being sent: DATA bytes not yet sent, the
	// stream's credit, chunks on their way.
	dataLeft, streamCredit int64
	chunksOut              int32
	flowDir                netw.Dir
	reset                  bool // its HTTP/2 stream was reset: no answer is sent
	failure                sidecar.AttemptEnd
	pool                   int32
	upConn                 client.ConnID
	upSeq                  uint32
	cause                  int32
}

// New builds the cluster twin. The scenario must have been validated.
func New(sc *scenario.Scenario) (*Engine, error) { return newEngine(sc, false) }

// Check sets sc up as New does, placing every pod, but without the clients'
// callers, pools and sidecars, which only a run needs: it finds every error New
// would, for validate, without the memory of a million threads.
func Check(sc *scenario.Scenario) error {
	_, err := newEngine(sc, true)
	return err
}

func newEngine(sc *scenario.Scenario, check bool) (*Engine, error) {
	e := &Engine{k: sim.New(), sc: sc, liveLimit: maxLiveRequests, check: check}
	spec := &sc.Spec
	e.end = sim.Duration(spec.Duration.Duration)
	e.mode = spec.Cluster.ProxyMode
	e.slowAfter = sim.Duration(spec.Report.SlowThreshold.Duration)
	e.hop = sim.Duration(spec.Cluster.Network.Latency.Duration)
	e.local = sim.Duration(spec.Cluster.Network.LocalLatency.Duration)
	if e.mode.Relays() {
		e.relay = e.local
	}
	e.live = e.waiterLive
	e.spread = sim.Stream(spec.Seed, "endpoint-propagation")
	e.paths = map[pathKey]*netw.Path{}
	if needsSegments(sc) {
		cfg := netw.DefaultConfig()
		cfg.Reno = spec.Cluster.Network.CongestionControl == scenario.CongestionReno
		e.stack = netw.NewStack(e.k, cfg, e)
	}

	e.registerCallers()
	e.registerServers()
	e.registerLifecycle()
	e.registerEndpoints()
	e.registerPhases()
	e.registerAutoscalers()
	e.registerFaults()
	e.registerSidecars()
	e.registerFlow()
	e.registerLogging()
	e.registerBackground()
	e.registerRollouts()
	e.registerTimeline()

	for _, pool := range spec.Cluster.Nodes {
		cores := 0.0
		if pool.CPU != nil {
			cores = pool.CPU.AsApproximateFloat64()
		}
		for i := 0; i < pool.Count; i++ {
			cpu := node.NewCPU(cores)
			cpu.Changed = e.cpuChanged
			n := nodeState{name: fmt.Sprintf("%s-%d", pool.Name, i), cpu: cpu, disk: newDisk(pool.Disk),
				sync: kubeproxy.NewSyncRunner(spec.Cluster.MinSyncPeriod.Duration)}
			if pool.Bandwidth != nil {
				n.nicOut, n.nicIn = &netw.NIC{BitsPerSecond: pool.Bandwidth.BitsPerSecond}, &netw.NIC{BitsPerSecond: pool.Bandwidth.BitsPerSecond}
			}
			e.nodes = append(e.nodes, n)
		}
	}
	e.nodeUsedAt = make([]float64, len(e.nodes))
	e.sched = placement.NewScheduler(spec)
	// Workloads already on the nodes go first, so pods' affinity rules see them.
	for bi := range spec.Background {
		if err := e.addBackground(int32(bi), &spec.Background[bi]); err != nil {
			return nil, err
		}
	}
	for si := range spec.Services {
		if err := e.addService(int32(si), &spec.Services[si]); err != nil {
			return nil, err
		}
	}
	e.balancers = make([]kubeproxy.Balancer, len(e.nodes)*len(e.services))
	e.views = make([]proxyView, len(e.nodes)*len(e.services))
	e.settleEndpoints()
	for di := range spec.Clients {
		if err := e.addClient(int32(di), &spec.Clients[di]); err != nil {
			return nil, err
		}
	}
	if check {
		return e, nil // every pod is placed; nothing further can fail
	}
	e.scheduleFaults()
	e.started = true
	e.stats.init(e.end, &spec.Report, spec.Seed)
	if e.stats.step < e.end {
		e.k.At(e.stats.step, e.evTick, 0, 0)
	}
	return e, nil
}

func fieldError(path string, err error) error { return &scenario.FieldError{Path: path, Err: err} }

func (e *Engine) addService(si int32, s *scenario.Service) error {
	svc := service{name: s.Name, spec: s, replicas: s.Replicas}
	var err error
	if svc.work, err = dist.New(s.Pod.ServiceTime.Spec()); err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.serviceTime", si), err)
	}
	if svc.wait, err = dist.New(s.Pod.WaitTime.Spec()); err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.waitTime", si), err)
	}
	if svc.startup, err = dist.New(s.Pod.StartupDelay.Spec()); err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.startupDelay", si), err)
	}
	if s.Pod.CPU != nil {
		svc.limit = s.Pod.CPU.AsApproximateFloat64()
	}
	svc.respBytes = int(*s.Pod.ResponseBytes)
	svc.streams = *s.Pod.MaxConcurrentStreams
	svc.windows = [2]int64{*s.Pod.HTTP2.StreamWindowBytes, *s.Pod.HTTP2.ConnectionWindowBytes}
	if a := s.Pod.AccessLog; a != nil {
		svc.logCPU = a.CPU.Duration
	}
	// CFS divides a busy node by cpu.weight, which kubelet derives from the CPU request.
	svc.weight = cpuWeight(&s.Pod.Resources)
	e.services = append(e.services, svc)
	for r := 0; r < s.Replicas; r++ {
		e.createPod(si) // a pod no node can take stays Pending
	}
	e.scheduleRollouts(si)
	if s.Autoscaler != nil {
		return e.addAutoscaler(si)
	}
	return nil
}

func (e *Engine) serviceIndex(name string) int32 {
	for i, s := range e.services {
		if s.name == name {
			return int32(i)
		}
	}
	return -1
}

func (e *Engine) addClient(di int32, c *scenario.Client) error {
	d := deployment{spec: c, svc: e.serviceIndex(c.Target)}
	if d.svc < 0 {
		return fieldError(fmt.Sprintf("spec.clients[%d].target", di), fmt.Errorf("no service %q", c.Target))
	}
	if c.ThinkTime != nil {
		var err error
		if d.think, err = dist.New(c.ThinkTime.Spec()); err != nil {
			return fieldError(fmt.Sprintf("spec.clients[%d].thinkTime", di), err)
		}
		d.hasThink = true
	}
	d.overhead = sim.Duration(c.Overhead.Duration)
	d.timeout = sim.Duration(c.Timeout.Duration)
	conn := c.Connections
	d.limits = client.Limits{
		MaxPerHost:  *conn.MaxPerHost,
		MaxIdle:     *conn.MaxIdlePerHost,
		IdleTimeout: sim.Duration(conn.IdleTimeout.Duration),
		MaxLifetime: sim.Duration(conn.MaxLifetime.Duration),
	}
	if p, ok := library.Lookup(c.Library); ok {
		d.limits.OldestFirst = p.IdlePick == library.PickFIFO
		d.retriesStale = p.RetriesStaleIdempotent && replayable(c.Request.Method)
		d.abortsRun = p.AbortsRun
	}
	d.noReuse = conn.Reuse == scenario.ReuseNone
	d.headerBytes, d.bodyBytes = *c.Request.HeaderBytes, c.Request.BodyBytes
	if w := c.Connections.HTTP2; w != nil {
		d.windows = [2]int64{*w.StreamWindowBytes, *w.ConnectionWindowBytes}
	}
	d.http2 = conn.Protocol == scenario.ProtocolHTTP2 && !d.noReuse
	if d.http2 {
		d.limits.Streams = e.services[d.svc].streams
	}
	d.perThread = conn.Reuse == scenario.ReusePerThread
	d.poisson = c.Arrival == scenario.ArrivalPoisson
	d.phases = c.Phases
	if len(d.phases) == 0 {
		// Threads or a rate for the whole run: one phase without end.
		d.phases = []scenario.Phase{{Threads: c.Threads, Rate: c.Rate}}
	}
	if c.RateCurve != nil {
		d.curve = newCurve(c.RateCurve, e.sc.Spec.Duration.Duration)
		d.phases = []scenario.Phase{{Rate: &scenario.Rate{PerSecond: d.curve[0].ramp.R0}}}
	}
	d.runs = len(d.phases) * max(c.Repeat, 1)
	if len(c.Phases) > 0 {
		d.runStats = make([]runStats, d.runs)
		for i := range d.runStats {
			d.runStats[i].start, d.runStats[i].end = -1, -1
		}
	}
	e.deps = append(e.deps, d)
	dep := &e.deps[di]
	for r := 0; r < c.Replicas; r++ {
		name := fmt.Sprintf("%s-%d", c.Name, r)
		node, err := e.sched.Schedule(placement.ClientPod(c.Name, name))
		if err != nil {
			return fieldError(fmt.Sprintf("spec.clients[%d].replicas", di), placement.Unschedulable(name, err))
		}
		if e.check {
			continue
		}
		cp := clientPod{dep: di, node: int32(node), pool: -1,
			name: name, rng: sim.Stream(e.sc.Spec.Seed, "client/"+name), envoy: -1}
		ci := int32(len(e.cpods))
		if c.Sidecar != nil {
			cp.envoy = e.addEnvoy(c.Sidecar, false, ci, cp.node, d.svc, name)
		}
		if !d.perThread {
			cp.pool = e.newPool(dep, ci)
		}
		e.cpods = append(e.cpods, cp)
		dep.pods = append(dep.pods, ci)
		e.startPhase(ci)
	}
	return nil
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
func (d *deployment) reach(pod int32, npods int) {
	if int(pod) >= len(d.reached) {
		d.reached = append(d.reached, make([]bool, npods-len(d.reached))...)
	}
	d.reached[pod] = true
}

func (e *Engine) newPool(d *deployment, ci int32) int32 {
	e.pools = append(e.pools, client.Pool{Limits: d.limits})
	e.poolOwner = append(e.poolOwner, ci)
	e.poolEnvoy = append(e.poolEnvoy, -1)
	e.sweepAt = append(e.sweepAt, 0)
	return int32(len(e.pools) - 1)
}

// newSlot adds a caller to client pod ci: closed-loop thread number thread, or an
// open-loop slot when thread is -1.
func (e *Engine) newSlot(ci, thread int32) int32 {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	s := slot{cpod: ci, pool: cp.pool, thread: thread, pod: -1}
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

// Progress, if set, is called about every simulated second with the simulated time.
type Progress func(now, end sim.Time)

// Run simulates the whole duration.
func (e *Engine) Run(progress Progress) { e.RunContext(context.Background(), progress) }

// pollEvery is how much simulated time runs between two looks at the context, so
// that an interrupted run usually ends at a round time; a slice too dense to end
// in a fraction of a second is cut short by the kernel itself.
const pollEvery = 10 * sim.Time(time.Millisecond)

// RunContext is Run, ending early when ctx is done: the run then ends at the
// simulated time reached, and the Result covers that time (rates over it), as
// Interrupted reports. Slicing the run changes nothing: the kernel handles the
// same events in the same order however often it is called.
func (e *Engine) RunContext(ctx context.Context, progress Progress) {
	defer context.AfterFunc(ctx, e.k.Stop)()
	step := sim.Time(1e9)
	for t := pollEvery; ; t += pollEvery {
		t = min(t, e.end)
		if !e.k.Run(t) {
			if e.err != nil { // the engine stopped itself: see Err
				return
			}
			// Cut short after the event at Now: the run covered [0, Now].
			e.planned, e.end = e.end, e.k.Now()+1
			break
		}
		if progress != nil && (t%step == 0 || t == e.end) {
			progress(t, e.end)
		}
		if t == e.end {
			break
		}
		if ctx.Err() != nil {
			e.planned, e.end = e.end, t
			break
		}
	}
	// The last interval closes after every event of the final instant has run.
	e.closeInterval((e.end - 1) / e.stats.step * e.stats.step)
}

// Interrupted says whether RunContext ended early, and the duration it was to run.
func (e *Engine) Interrupted() (bool, sim.Time) { return e.planned > 0, e.planned }

// Requests is the number of requests sent so far.
func (e *Engine) Requests() int64 { return e.stats.sent }

// Events is the number of events handled so far.
func (e *Engine) Events() uint64 { return e.k.Processed }

// stats collects results while the run streams by.
type stats struct {
	latency  *hdr.Histogram // successful requests, ns
	interval *hdr.Histogram // this timeline interval's successes, ns
	step     sim.Time
	ok       int64
	errors   errorCounts
	notSent  int64
	sent     int64
	retries  int64 // requests a library resent after a stale connection failed
	// abandoned counts requests in progress when their client aborted its run.
	abandoned int64
	// okMin and okMax are the exact extremes of latency's values, which the
	// histogram knows only to its bucket (result.LatencyBetween).
	okMin     int64
	okMax     int64
	slow      int64 // successes over the slow threshold
	tlSlow    int64
	tlOffered int64 // requests sent or due to be sent in this timeline interval
	tlReq     int64
	tlErr     errorCounts
	timeline  []point
	buckets   buckets
	samples   reservoir
	ended     ended
}

// errorCounts counts failed requests by error kind (errTimeout, errRefused, ...).
type errorCounts [errKinds]int64

func (c *errorCounts) add(kind uint8) { c[kind]++ }

func (c *errorCounts) total() int64 {
	n := int64(0)
	for _, v := range c {
		n += v
	}
	return n
}

type point struct {
	t                   sim.Time
	offered             int64
	requests            int64
	errors              errorCounts
	p50, p90, p99, p999 int64
	slow                int64
	services            []serviceSample
	// podRequests are requests each pod finished in the interval (by pod id, pods
	// that finished none left out); nodeCPU the core-seconds each node's
	// containers used in it.
	podRequests []podCount
	nodeCPU     []float64
}

// podCount is one pod's requests in a timeline interval.
type podCount struct {
	pod      int32
	requests int64
}

// serviceSample is one service's replicas at the end of a timeline interval.
type serviceSample struct {
	desired, current, ready int
}

// maxTimelinePoints bounds the timeline so memory stays flat however long the run.
const maxTimelinePoints = 3600

// maxPodSeries bounds the per-pod series: a run with more pods has none, so that
// memory and the Result stay small (200 pods × 3,600 points is at most 8.6 MB).
const maxPodSeries = 200

func (s *stats) init(end sim.Time, report *scenario.Report, seed int64) {
	s.buckets.init(report.Histogram)
	s.samples.init(*report.Samples, sim.Stream(seed, "samples"))
	// 1 ns to 1 hour at 3 significant digits: about 0.3 MB, whatever the run length.
	s.latency = hdr.New(1, int64(3600e9), 3)
	s.interval = hdr.New(1, int64(3600e9), 2)
	s.ended.EndedTally = result.NewEndedTally()
	s.step = sim.Time(1e9)
	if n := math.Ceil(float64(end) / float64(s.step)); n > maxTimelinePoints {
		s.step = sim.Time(math.Ceil(float64(end)/maxTimelinePoints/1e9)) * 1e9
	}
	s.timeline = make([]point, 0, (end+s.step-1)/s.step)
}

func (s *stats) success(sent, now sim.Time) {
	s.ok++
	s.record(sent, now, -1)
	v := int64(now - sent)
	if v < 1 {
		v = 1
	}
	// Values above the histogram's hour are clamped rather than lost.
	if v > s.latency.HighestTrackableValue() {
		v = s.latency.HighestTrackableValue()
	}
	_ = s.latency.RecordValue(v)
	if s.ok == 1 || v < s.okMin {
		s.okMin = v
	}
	s.okMax = max(s.okMax, v)
	_ = s.interval.RecordValue(v)
	s.tlReq++
}

func (s *stats) failure(kind uint8, sent, now sim.Time) {
	s.record(sent, now, int8(kind))
	s.errors.add(kind)
	s.tlReq++
	s.tlErr.add(kind)
}

// closeInterval appends the timeline point of the interval starting at start.
func (s *stats) closeInterval(start sim.Time) {
	p := point{t: start, offered: s.tlOffered, requests: s.tlReq, errors: s.tlErr, slow: s.tlSlow}
	if s.interval.TotalCount() > 0 {
		p.p50, p.p90 = s.interval.ValueAtQuantile(50), s.interval.ValueAtQuantile(90)
		p.p99, p.p999 = s.interval.ValueAtQuantile(99), s.interval.ValueAtQuantile(99.9)
	}
	s.timeline = append(s.timeline, p)
	s.tlOffered, s.tlReq, s.tlErr, s.tlSlow = 0, 0, errorCounts{}, 0
	s.interval.Reset()
}

// closeInterval ends the timeline interval starting at start, with each service's
// replicas as they stand.
func (e *Engine) closeInterval(start sim.Time) {
	e.stats.closeInterval(start)
	p := &e.stats.timeline[len(e.stats.timeline)-1]
	p.services = make([]serviceSample, len(e.services))
	for i := range e.services {
		p.services[i] = e.replicaCounts(int32(i))
	}
	for i := range e.pods[:min(len(e.pods), maxPodSeries+1)] {
		pd := &e.pods[i]
		if n := pd.requests - pd.tlRequests; n > 0 {
			p.podRequests = append(p.podRequests, podCount{pod: int32(i), requests: n})
			pd.tlRequests = pd.requests
		}
	}
	p.nodeCPU = e.nodeCPU(min(start+e.stats.step, e.end))
	for i, used := range p.nodeCPU {
		p.nodeCPU[i], e.nodeUsedAt[i] = used-e.nodeUsedAt[i], used
	}
}

// onTick closes a timeline interval and schedules the next.
func (e *Engine) onTick(ev sim.Event) {
	now := e.k.Now()
	e.closeInterval(now - e.stats.step)
	if next := now + e.stats.step; next < e.end {
		e.k.At(next, e.evTick, 0, 0)
	}
}

// registerTimeline registers the event kinds of the timeline events with the kernel.
func (e *Engine) registerTimeline() {
	e.evTick = e.k.Register(e.onTick)
}
