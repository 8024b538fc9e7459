// Package simulate is the discrete-event engine: it builds the cluster twin from a
// scenario, runs it on the sim kernel and fills a result.Result.
package simulate

import (
	"context"
	"time"

	"trafficlab/model/client"
	"trafficlab/model/kubeproxy"
	"trafficlab/model/netw"
	"trafficlab/model/node"
	"trafficlab/model/scheduler"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate/accesslog"
	"trafficlab/simulate/autoscaler"
	"trafficlab/simulate/background"
	"trafficlab/simulate/deployment"
	"trafficlab/simulate/endpoints"
	"trafficlab/simulate/faults"
	"trafficlab/simulate/lifecycle"
	"trafficlab/simulate/loadgen"
	"trafficlab/simulate/mesh"
	"trafficlab/simulate/network"
	"trafficlab/simulate/resolver"
)

// Engine is one simulation run: the wiring of the subsystems that own their state
// (the fields of their own package's types) and the request path they share: the
// callers and their pools and connections, the requests at the pods' apps, and the
// fast path's constant-delay hops.
type Engine struct {
	k   *sim.Kernel
	sc  *scenario.Scenario
	end sim.Time
	// planned is the duration an interrupted run was to cover (end is where it
	// stopped); 0 when it ran to the end.
	planned sim.Time
	err     error // why the run stopped early (see maxLiveRequests)
	check   bool  // set up for Check: pods placed, no client callers

	// Subsystems.
	routing     *endpoints.Routing
	resolvers   *resolver.Resolvers
	load        *loadgen.Generator
	deployments *deployment.Controllers
	autoscalers *autoscaler.Controllers
	faults      *faults.Faults
	logs        *accesslog.Paths
	backgrounds *background.Workloads
	mesh        *mesh.Mesh
	net         *network.Network // the network beyond constant delays; nil on the fast path
	life        *lifecycle.Pods

	// The cluster: nodes, services and their pods' apps (cluster.go, lifecycle.go).
	nodes      []nodeState
	services   []service
	pods       []pod
	sched      *scheduler.Scheduler
	nodeUsedAt []float64 // per node: core-seconds used up to the last timeline interval

	// Latencies of the datapath.
	mode  kubeproxy.Mode
	hop   sim.Time // one-way pod-to-pod latency
	local sim.Time // one-way latency that stays on the client's node
	// relay is the extra one-way leg through the node's userspace proxy process
	// (local in userspace mode, else 0): the client talks to it, it talks to the pod.
	relay sim.Time

	// The callers and their connections (clients.go, caller.go, conns.go, dial.go).
	deps      []clientDeployment
	cpods     []clientPod
	slots     []slot
	pools     []client.Pool
	poolOwner []int32    // client pod of each pool
	sweepAt   []sim.Time // pending idle-timeout sweep per pool; 0 = none
	conns     client.Conns
	connSeq   []uint32 // per connection slot: bumped when it closes
	expired   []client.ConnID
	live      func(client.Waiter) bool
	// kube-proxy's relaying CPU in userspace mode (proxycpu.go): per connection,
	// per request, per KiB (ns), and the work waiting for it.
	relayConnCPU, relayReqCPU sim.Time
	relayKiBCPU               float64
	relayTasks                tasks[relayTask]
	// The client pods' own CPU work (clientcpu.go), and scratch for finished tasks.
	cpuTasks  tasks[cpuTask]
	doneTasks []int32
	jobsDone  []int32 // scratch: the requests' jobs among a pod's finished CPU work
	tasksDone []int32 // scratch: its calls' own work among it
	liveLimit int     // maxLiveRequests; tests lower it
	openSlots int     // open-loop callers made, each outstanding or free for reuse

	// Requests at the pods' apps (jobs.go, server.go).
	jobs     []job
	freeJobs []int32
	serial   uint32
	done     []int32 // scratch for finished CPU work
	resumed  []int32 // scratch: jobs a log pipe hands back

	// Services calling services (calls.go): one edge per caller and Service called,
	// the call each caller slot of a service pod carries, and where each request at a
	// pod with calls stands (by job). graph is set when any service calls another.
	edges      []edge
	callSlots  []callSlot
	jobCalls   []jobCalls
	svcFigures []serviceFigures
	callsSent  int64 // attempts of calls sent
	graph      bool
	// The critical path (critical.go): each request's at a pod with calls (by job),
	// and the slow requests' sums.
	paths       [][]pathItem
	tail        map[pathKey]int64
	tailNS      int64
	scratchPath []pathItem

	// What the run reports (stats.go, requests.go).
	stats     stats
	slowAfter sim.Time              // latency over which a request is slow
	onRequest func(*result.Request) // StreamRequests' function, or nil
	request   result.Request        // reused for each call of onRequest

	evReady, evArrive, evCPU, evWait, evResponse, evTimeout, evRefused, evReset, evClosed, evRedial, evNoSuchHost, evTick, evSweep,
	evRefusedStream, evClientCPU, evProxyCPU, evAppIdle, evAppAge, evAppAgeClose uint8
	// The connections apps end on their own (keepalive.go).
	appCloses appCloses
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
	e.relayCosts()
	e.slowAfter = sim.Duration(spec.Report.SlowThreshold.Duration)
	e.hop = sim.Duration(spec.Cluster.Network.Latency.Duration)
	e.local = sim.Duration(spec.Cluster.Network.LocalLatency.Duration)
	if e.mode.Relays() {
		e.relay = e.local
	}
	e.live = e.waiterLive
	if network.Needed(sc) {
		e.net = network.New(e.k, network.Config{Seed: spec.Seed, Relay: e.relay,
			Reno: spec.Cluster.Network.CongestionControl == scenario.CongestionReno,
			Spec: &spec.Cluster.Network, Faults: spec.Faults, Seq: &e.connSeq}, networkEnds{e})
	}

	e.registerCallers()
	e.registerServers()
	e.life = lifecycle.New(e.k, spec.Seed, sim.Duration(spec.Cluster.PodNetworkTeardown.Duration), podCluster{e})
	e.load = loadgen.New(e.k, loadCallers{e})
	e.autoscalers = autoscaler.New(e.k, workloads{e})
	e.faults = faults.New(e.k, faultTargets{e})
	e.mesh = mesh.New(e.k, mesh.Config{Seed: spec.Seed, Local: e.local, Hop: e.hop,
		Tables: mesh.Tables{Pools: &e.pools, Conns: &e.conns, Seq: &e.connSeq}}, meshApps{e}, meshUpstream{e})
	if e.net != nil {
		e.net.Start(networkMessages{e})
	}
	e.logs = accesslog.New(e.k, podApps{e})
	e.backgrounds = background.New(e.k, e.end)
	e.deployments = deployment.New(e.k, deploymentPods{e})
	e.registerTimeline()

	e.addNodes(spec)
	e.routing = endpoints.New(e.k, e.routingConfig(spec), e)
	e.resolvers = resolver.New(e.k, e.routing, spec.Seed, e.channelResolved)
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
	names := make([]string, len(e.services))
	headless := make([]bool, len(e.services))
	for i := range e.services {
		names[i], headless[i] = e.services[i].name, e.services[i].spec.Headless()
	}
	e.routing.Start(names, headless)
	for di := range spec.Clients {
		if err := e.addClient(int32(di), &spec.Clients[di]); err != nil {
			return nil, err
		}
	}
	if err := e.addCalls(); err != nil {
		return nil, err
	}
	if check {
		return e, nil // every pod is placed; nothing further can fail
	}
	e.faults.Start(spec.Faults, e.end)
	e.life.Run()
	e.stats.init(e.end, &spec.Report, spec.Seed)
	if e.stats.step < e.end {
		e.k.At(e.stats.step, e.evTick, 0, 0)
	}
	return e, nil
}

func fieldError(path string, err error) error { return &scenario.FieldError{Path: path, Err: err} }

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

// Requests is the number of requests sent so far: the clients' and, when services
// call services, every attempt of their calls.
func (e *Engine) Requests() int64 { return e.stats.sent + e.callsSent }

// Events is the number of events handled so far.
func (e *Engine) Events() uint64 { return e.k.Processed }

// addNodes makes the nodes of every pool, named pool-0, pool-1, ...
func (e *Engine) addNodes(spec *scenario.Spec) {
	for _, pool := range spec.Cluster.Nodes {
		cores := 0.0
		if pool.CPU != nil {
			cores = pool.CPU.AsApproximateFloat64()
		}
		for i := 0; i < pool.Count; i++ {
			cpu := node.NewCPU(cores)
			cpu.Changed = e.cpuChanged
			n := nodeState{name: placement.Name(pool.Name, i), cpu: cpu, disk: newDisk(pool.Disk)}
			if pool.Bandwidth != nil {
				n.nicOut, n.nicIn = &netw.NIC{BitsPerSecond: pool.Bandwidth.BitsPerSecond}, &netw.NIC{BitsPerSecond: pool.Bandwidth.BitsPerSecond}
			}
			e.nodes = append(e.nodes, n)
		}
	}
}

// routingConfig is the cluster's routing set-up for the endpoints subsystem.
func (e *Engine) routingConfig(spec *scenario.Spec) endpoints.Config {
	prop := &spec.Cluster.EndpointPropagation
	cfg := endpoints.Config{Mode: e.mode, IPVSScheduler: spec.Cluster.IPVSScheduler,
		MinSyncPeriod: spec.Cluster.MinSyncPeriod.Duration, Seed: spec.Seed,
		Latency: sim.Duration(prop.Latency.Duration), Jitter: sim.Duration(prop.Jitter.Duration)}
	for i := range e.nodes {
		cfg.Nodes = append(cfg.Nodes, e.nodes[i].name)
	}
	return cfg
}
