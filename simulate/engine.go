// Package simulate is the discrete-event engine: it builds the cluster twin from a
// scenario, runs it on the sim kernel and fills a result.Result.
package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/model/client"
	"trafficlab/model/dist"
	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
	"trafficlab/model/node"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Engine is one simulation run.
type Engine struct {
	k   *sim.Kernel
	sc  *scenario.Scenario
	end sim.Time

	mode  string
	hop   sim.Time // one-way pod-to-pod latency
	local sim.Time // one-way latency that stays on the client's node
	// relay is the extra one-way leg through the node's userspace proxy process
	// (local in userspace mode, else 0): the client talks to it, it talks to the pod.
	relay sim.Time

	nodes     []nodeState
	services  []service
	pods      []pod
	balancers []kubeproxy.Balancer // per client node × service, nil until used
	deps      []deployment
	cpods     []clientPod
	slots     []slot
	pools     []client.Pool
	poolOwner []int32    // client pod of each pool
	sweepAt   []sim.Time // pending idle-timeout sweep per pool; 0 = none
	conns     client.Conns
	jobs      []job
	freeJobs  []int32
	done      []int32 // scratch for finished CPU work
	expired   []client.ConnID
	live      func(client.Waiter) bool

	stats stats

	evReady, evArrive, evCPU, evWait, evResponse, evTimeout, evRefused, evReset, evRedial, evArrival, evTick, evSweep uint8
}

type nodeState struct {
	name string
	cpu  *node.CPU
	pods int
}

type service struct {
	name string
	pods []int32
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
	// accepting is false once the process no longer listens: new connections are refused.
	accepting   bool
	requests    int64
	connections int64
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
	interval  float64 // open loop: mean ns between arrivals per pod
	poisson   bool
	pods      []int32

	open, peak, opened int64
	requests, errors   int64
	reached            []bool
}

type clientPod struct {
	dep      int32
	node     int32
	pool     int32 // shared pool, or -1 when each slot has its own
	rng      *rand.Rand
	free     []int32 // idle open-loop slots
	slots    int
	arrivals int64
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
	cpod     int32
	pool     int32
	gen      uint32
	state    uint8
	attempt  uint8
	conn     client.ConnID
	pod      int32 // pod being dialled
	sent     sim.Time
	deadline sim.Time
	timerAt  sim.Time // time of the pending timeout event; 0 = none
	rng      *rand.Rand
}

// job is a request as the server sees it.
type job struct {
	slot    int32
	gen     uint32
	pod     int32
	newConn bool
	wait    int64
}

// New builds the cluster twin. The scenario must have been validated.
func New(sc *scenario.Scenario) (*Engine, error) {
	e := &Engine{k: sim.New(), sc: sc}
	spec := &sc.Spec
	e.end = sim.Duration(spec.Duration.Duration)
	e.mode = spec.Cluster.ProxyMode
	e.hop = sim.Duration(spec.Cluster.Network.Latency.Duration)
	e.local = sim.Duration(spec.Cluster.Network.LocalLatency.Duration)
	if e.mode == scenario.ProxyUserspace {
		e.relay = e.local
	}
	e.live = e.waiterLive

	for _, kind := range []*uint8{&e.evReady, &e.evArrive, &e.evCPU, &e.evWait, &e.evResponse,
		&e.evTimeout, &e.evRefused, &e.evReset, &e.evRedial, &e.evArrival, &e.evTick, &e.evSweep} {
		*kind = e.k.Register(e)
	}

	for _, pool := range spec.Cluster.Nodes {
		cores := 0.0
		if pool.CPU != nil {
			cores = pool.CPU.AsApproximateFloat64()
		}
		for i := 0; i < pool.Count; i++ {
			cpu := node.NewCPU(cores)
			cpu.Changed = e.cpuChanged
			e.nodes = append(e.nodes, nodeState{name: fmt.Sprintf("%s-%d", pool.Name, i), cpu: cpu})
		}
	}
	place := newPlacement(len(e.nodes))
	for si := range spec.Services {
		if err := e.addService(int32(si), &spec.Services[si], place); err != nil {
			return nil, err
		}
	}
	e.balancers = make([]kubeproxy.Balancer, len(e.nodes)*len(e.services))
	for di := range spec.Clients {
		if err := e.addClient(int32(di), &spec.Clients[di], place); err != nil {
			return nil, err
		}
	}
	e.stats.init(e.end)
	if e.stats.step < e.end {
		e.k.At(e.stats.step, e.evTick, 0, 0)
	}
	return e, nil
}

// FieldError is a scenario value the models cannot use, at Path (e.g.
// spec.services[0].pod.serviceTime), so the CLI can point at its line and column.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }

func fieldError(path string, err error) error { return &FieldError{Path: path, Err: err} }

// Handle dispatches an event with a switch: one indirect call per event instead of
// an interface call into a method value.
func (e *Engine) Handle(ev sim.Event) {
	switch ev.Kind() {
	case e.evArrive:
		e.onArrive(ev)
	case e.evCPU:
		e.onCPU(ev)
	case e.evResponse:
		e.onResponse(ev)
	case e.evReady:
		e.issue(ev.Obj)
	case e.evWait:
		e.finish(ev.Obj)
	case e.evTimeout:
		e.onTimeout(ev)
	case e.evRefused:
		e.dialError(ev, &e.stats.errors.refused)
	case e.evReset:
		e.dialError(ev, &e.stats.errors.reset)
	case e.evSweep:
		e.onSweep(ev)
	case e.evRedial:
		e.onRedial(ev)
	case e.evArrival:
		e.onArrival(ev)
	case e.evTick:
		e.onTick(ev)
	}
}

func (e *Engine) addService(si int32, s *scenario.Service, place *placement) error {
	work, err := dist.New(&s.Pod.ServiceTime)
	if err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.serviceTime", si), err)
	}
	wait, err := dist.New(s.Pod.WaitTime)
	if err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.waitTime", si), err)
	}
	limit := 0.0
	if s.Pod.CPU != nil {
		limit = s.Pod.CPU.AsApproximateFloat64()
	}
	// CFS divides a busy node by cpu.weight, which kubelet derives from the CPU
	// request (pkg/kubelet/cm/helpers_linux.go MilliCPUToShares); with no request
	// every pod weighs the same.
	weight := limit
	if weight == 0 {
		weight = 1
	}
	svc := service{name: s.Name}
	for r := 0; r < s.Replicas; r++ {
		id := int32(len(e.pods))
		n := place.place("service/"+s.Name, limit)
		name := fmt.Sprintf("%s-%d", s.Name, r)
		p := pod{
			name: name, svc: si, node: int32(n), concurrency: s.Pod.Concurrency,
			work: work, wait: wait, acceptCost: int64(s.Pod.AcceptCost.Duration),
			rng: sim.Stream(e.sc.Spec.Seed, "pod/"+name), accepting: true,
		}
		p.grp = e.nodes[n].cpu.AddGroup(id, limit, weight)
		e.nodes[n].pods++
		e.pods = append(e.pods, p)
		svc.pods = append(svc.pods, id)
	}
	e.services = append(e.services, svc)
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

func (e *Engine) addClient(di int32, c *scenario.Client, place *placement) error {
	d := deployment{spec: c, svc: e.serviceIndex(c.Target), reached: make([]bool, len(e.pods))}
	if d.svc < 0 {
		return fieldError(fmt.Sprintf("spec.clients[%d].target", di), fmt.Errorf("no service %q", c.Target))
	}
	if c.ThinkTime != nil {
		var err error
		if d.think, err = dist.New(c.ThinkTime); err != nil {
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
	}
	d.noReuse = conn.Reuse == scenario.ReuseNone
	d.perThread = conn.Reuse == scenario.ReusePerThread
	if c.Rate != nil {
		d.interval = 1e9 / c.Rate.PerSecond
		d.poisson = c.Arrival == scenario.ArrivalPoisson
	}
	e.deps = append(e.deps, d)
	dep := &e.deps[di]
	for r := 0; r < c.Replicas; r++ {
		name := fmt.Sprintf("%s-%d", c.Name, r)
		cp := clientPod{dep: di, node: int32(place.place("client/"+c.Name, 0)), pool: -1,
			rng: sim.Stream(e.sc.Spec.Seed, "client/"+name)}
		ci := int32(len(e.cpods))
		if !d.perThread {
			cp.pool = e.newPool(dep, ci)
		}
		e.cpods = append(e.cpods, cp)
		dep.pods = append(dep.pods, ci)
		if c.Rate != nil {
			e.k.At(0, e.evArrival, ci, 0)
			continue
		}
		for t := 0; t < c.Threads; t++ {
			s := e.newSlot(ci, fmt.Sprintf("client/%s/thread-%d", name, t))
			e.k.At(d.overhead, e.evReady, s, 0)
		}
	}
	return nil
}

func (e *Engine) newPool(d *deployment, ci int32) int32 {
	e.pools = append(e.pools, client.Pool{Limits: d.limits})
	e.poolOwner = append(e.poolOwner, ci)
	e.sweepAt = append(e.sweepAt, 0)
	return int32(len(e.pools) - 1)
}

func (e *Engine) newSlot(ci int32, entity string) int32 {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	s := slot{cpod: ci, pool: cp.pool}
	if s.pool < 0 {
		s.pool = e.newPool(d, ci)
	}
	if d.hasThink {
		s.rng = sim.Stream(e.sc.Spec.Seed, entity)
	}
	e.slots = append(e.slots, s)
	cp.slots++
	return int32(len(e.slots) - 1)
}

// Progress, if set, is called about every simulated second with the simulated time.
type Progress func(now, end sim.Time)

// Run simulates the whole duration.
func (e *Engine) Run(progress Progress) {
	step := sim.Time(1e9)
	for t := step; ; t += step {
		if t > e.end {
			t = e.end
		}
		e.k.Run(t)
		if progress != nil {
			progress(t, e.end)
		}
		if t == e.end {
			break
		}
	}
	// The last interval closes after every event of the final instant has run.
	e.stats.closeInterval((e.end - 1) / e.stats.step * e.stats.step)
}

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
	tlReq    int64
	tlErr    int64
	timeline []point
}

type errorCounts struct{ timeout, refused, reset int64 }

type point struct {
	t        sim.Time
	requests int64
	errors   int64
	p99      int64
}

// maxTimelinePoints bounds the timeline so memory stays flat however long the run.
const maxTimelinePoints = 3600

func (s *stats) init(end sim.Time) {
	// 1 ns to 1 hour at 3 significant digits: about 0.3 MB, whatever the run length.
	s.latency = hdr.New(1, int64(3600e9), 3)
	s.interval = hdr.New(1, int64(3600e9), 2)
	s.step = sim.Time(1e9)
	if n := math.Ceil(float64(end) / float64(s.step)); n > maxTimelinePoints {
		s.step = sim.Time(math.Ceil(float64(end)/maxTimelinePoints/1e9)) * 1e9
	}
	s.timeline = make([]point, 0, (end+s.step-1)/s.step)
}

func (s *stats) success(latency sim.Time) {
	s.ok++
	v := int64(latency)
	if v < 1 {
		v = 1
	}
	// Values above the histogram's hour are clamped rather than lost.
	if v > s.latency.HighestTrackableValue() {
		v = s.latency.HighestTrackableValue()
	}
	_ = s.latency.RecordValue(v)
	_ = s.interval.RecordValue(v)
	s.tlReq++
}

func (s *stats) failure() {
	s.tlReq++
	s.tlErr++
}

// closeInterval appends the timeline point of the interval starting at start.
func (s *stats) closeInterval(start sim.Time) {
	p99 := int64(0)
	if s.interval.TotalCount() > 0 {
		p99 = s.interval.ValueAtQuantile(99)
	}
	s.timeline = append(s.timeline, point{t: start, requests: s.tlReq, errors: s.tlErr, p99: p99})
	s.tlReq, s.tlErr = 0, 0
	s.interval.Reset()
}

// onTick closes a timeline interval and schedules the next.
func (e *Engine) onTick(ev sim.Event) {
	now := e.k.Now()
	e.stats.closeInterval(now - e.stats.step)
	if next := now + e.stats.step; next < e.end {
		e.k.At(next, e.evTick, 0, 0)
	}
}
