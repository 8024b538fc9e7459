// Package emulate runs a scenario for real on this Linux machine: its nodes and pods
// as network namespaces (emulate/topo), kube-proxy's own rules in each node
// (emulate/proxyrules) or its userspace proxy (emulate/userspace), every service pod
// a `trafficlab serve` process under the CPU limit its spec gives (emulate/cgroup),
// every client pod a `trafficlab load` process (emulate/load) in its namespace and a
// control group of its own (clients.go), and the scenario's packet loss and delay on the pods' veths
// (emulate/faults, emulate/delay); a node's disk a throttled loop device
// (emulate/disk) where the pods' access logs go (emulate/containerlog), and a
// sidecar nginx in Envoy's place (emulate/sidecar). Pods are placed where a simulation of the scenario places them
// (its Engine.Layout), and the pod changes of that simulation are replayed. The run fills the same result.Result as simulate, with
// engine "emulate", so every report and compare read it.
//
// It needs root, iproute2, and iptables or nft, and refuses, pointing at the
// scenario line, what it cannot run yet (unsupported), and scenarios larger than
// the machine (checkSize, with a --scale that fits).
package emulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/emulate/cgroup"
	"trafficlab/emulate/delay"
	"trafficlab/emulate/disk"
	"trafficlab/emulate/faults"
	"trafficlab/emulate/load"
	"trafficlab/emulate/topo"
	"trafficlab/model/scheduler"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// Options are how a run is carried out; none of them changes what it models.
type Options struct {
	// Exe is the trafficlab binary each service pod runs as `trafficlab serve`.
	// Default: this process's own executable.
	Exe string
	// Log receives a line per step of building the cluster and the warnings of
	// what emulate does not model. Nil: discarded.
	Log io.Writer
	// Progress, when set, is called about five times a second with the time the
	// load has run.
	Progress func(elapsed, total time.Duration)
}

// Plan is a scenario checked for emulation: where its pods start, the pod changes
// a run replays, and what the run would warn of. Check makes it; Run runs it.
type Plan struct {
	Scenario *scenario.Scenario
	Layout   *placement.Layout
	// Warnings are the differences between what the scenario asks for and what
	// emulate runs that do not stop a run but change what it measures.
	Warnings []string
	replay   *replay
}

// Check tells whether sc can be emulated on this machine, without building anything:
// a *scenario.FieldError for a part emulate does not run, a *SizeError for a
// scenario too large.
func Check(sc *scenario.Scenario) (*Plan, error) {
	if err := unsupported(sc); err != nil {
		return nil, err
	}
	// The reference simulation: the placement the run starts from and the pod
	// changes it replays.
	e, err := simulate.New(sc)
	if err != nil {
		return nil, err
	}
	l := e.Layout()
	if len(l.Pending) > 0 {
		return nil, &scenario.FieldError{Path: "spec.services", Err: fmt.Errorf(
			"pods %v cannot be scheduled at the start; emulate starts from a settled cluster", l.Pending)}
	}
	e.Run(nil)
	rp := replayOf(sc, e.Result(), l)
	if path := sidecarPath(sc); path != "" && (len(rp.events) > 0 || slices.ContainsFunc(sc.Spec.Services, func(s scenario.Service) bool { return s.Autoscaler != nil })) {
		return nil, &scenario.FieldError{Path: path, Err: errors.New(
			"a sidecar with pods created or deleted during the run is not emulated yet (nginx, which stands in for Envoy, would need a reload for each change); `trafficlab simulate` runs it")}
	}
	if len(rp.events) > 0 && delays(sc) {
		return nil, &scenario.FieldError{Path: "spec.cluster.network", Err: errors.New(
			"delay together with pods created or deleted during the run is not emulated yet; `trafficlab simulate` runs it")}
	}
	if err := checkSize(sc, l, rp.peakPods); err != nil {
		return nil, err
	}
	return &Plan{Scenario: sc, Layout: l, Warnings: warnings(sc), replay: rp}, nil
}

// Run builds the cluster of a plan, runs its load for spec.duration, and tears
// every part of it down again, whatever happens: on success, on an error, and when
// ctx is cancelled (the CLI cancels it on SIGINT and SIGTERM). A result is returned
// with the teardown's error, if any; a cancelled run returns what it measured.
func Run(ctx context.Context, p *Plan, opt Options) (res *result.Result, err error) {
	sc, layout, rp := p.Scenario, p.Layout, p.replay
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(opt.Log, "emulate: warning: %s\n", w)
	}
	if opt.Exe == "" {
		if opt.Exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	autoscalers, sched, err := newAutoscalers(sc, layout)
	if err != nil {
		return nil, err
	}
	c := &cluster{sc: sc, opt: opt, layout: layout, replay: rp, spawner: newSpawner(), autoscalers: autoscalers, sched: sched,
		activeFaults: map[int]bool{}, faultDelays: map[int][]*delay.Delayer{}, starting: map[int][]string{}, cancelled: map[string]bool{}}
	defer func() {
		if e := c.teardown(); e != nil {
			err = errors.Join(err, fmt.Errorf("tearing down: %w (`trafficlab emulate --cleanup` removes what is left)", e))
		}
	}()
	if sc.HasCalls() {
		if c.figures, err = os.MkdirTemp("", "trafficlab-emulate-figures-"); err != nil {
			return nil, err
		}
	}
	if err := c.build(ctx); err != nil {
		return nil, err
	}
	c.run(ctx)
	syncErrs := c.endpoints.stop() // before c.mu: a change takes c.mu, then the endpoints' lock
	c.mu.Lock()
	c.errs = append(c.errs, syncErrs...)
	res = c.result()
	c.mu.Unlock()
	if c.figures != "" {
		c.addCalls(res) // it ends the pods: after the result took their state
	}
	if len(c.disks) > 0 {
		c.addLogWaits(res) // it ends the pods too
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return res, errors.Join(c.errs...)
}

// cluster is one emulated run.
type cluster struct {
	sc      *scenario.Scenario
	opt     Options
	layout  *placement.Layout
	net     *topo.Topology
	servers []*server
	proxy   *kubeProxy
	clients []*clientPod
	delays  []*delay.Delayer
	// replay is the pod changes the run makes; endpoints carries them to the
	// nodes' kube-proxies.
	replay     *replay
	replayDone sync.WaitGroup
	endpoints  *endpoints
	dns        *clusterDNS // nil without a headless Service
	spawner    *spawner
	timers     []*time.Timer // the kubelet's SIGTERMs and SIGKILLs to come
	// autoscalers are the services scaled for real, by index; sched places their new
	// pods; starting are the pods in their startup delay, by service; cancelled those
	// a scale-in deleted before they started; scaleEvents what the HPAs did.
	autoscalers map[int]*autoscaled
	sched       *scheduler.Scheduler
	starting    map[int][]string
	cancelled   map[string]bool
	scaleEvents []result.ScaleEvent
	// activeFaults are the timed network faults on now, by index in spec.faults;
	// faultDelays the Delayers of the delay faults on now.
	activeFaults map[int]bool
	faultDelays  map[int][]*delay.Delayer
	// start is when the load began; ran how long it ran.
	start time.Time
	ran   time.Duration
	tl    *load.Timeline

	// figures is where each pod writes what its app did when it exits, when services
	// call services (calls.go); "" without calls.
	figures string
	// disks are the nodes' volumes, by node, for those whose disk has a limit or
	// that a background workload writes to; backgrounds are those workloads.
	disks       map[string]*nodeDisk
	backgrounds []*backgroundPod
	// sidecars are the pods' sidecars; sidecarDir holds their files ("" without).
	sidecars   []*podSidecar
	sidecarDir string

	// mu guards servers, their state, errs and closing once the run has begun.
	mu      sync.Mutex
	errs    []error
	closing bool
}

func (c *cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.opt.Log, "emulate: "+format+"\n", args...)
}

func (c *cluster) build(ctx context.Context) (err error) {
	spec := &c.sc.Spec
	if c.net, err = topo.Build(c.layout.Nodes); err != nil {
		return err
	}
	// TCP as the scenario's nodes run it, not as this host does.
	if err := c.net.SetCongestionControl(spec.Cluster.Network.CongestionControl); err != nil {
		return err
	}
	c.logf("nodes as network namespaces %s*: %d", c.net.Prefix(), len(c.layout.Nodes))
	if err := c.makeDisks(); err != nil {
		return err
	}
	if anyHeadless(c.sc) {
		// First: the pods calling a headless Service are told where it answers.
		dns, err := startDNS(c)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.dns = dns
		c.mu.Unlock()
		c.logf("cluster DNS for the headless Services on %s", dns.addr())
	}
	for _, p := range c.layout.Pods {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := startServer(ctx, c.spawner.start, c.net, c.opt.Exe, p.Name, p.Owner, p.Node, &spec.Services[p.Index].Pod, spec.Seed, c.serveArgs(p.Owner, p.Name), c.podLogFile(p.Name, p.Node, &spec.Services[p.Index].Pod), c.exited)
		if err != nil {
			return err
		}
		c.mu.Lock()
		s.ready, s.readyAt = true, 0 // a run starts from a settled cluster
		c.servers = append(c.servers, s)
		c.mu.Unlock()
	}
	c.logf("service pods serving on :%d: %d", podPort, len(c.servers))
	if c.dns != nil {
		c.dns.settle(c.podStates()) // a run starts from a settled cluster
	}
	services := usableServices(c.sc, c.podStates())
	if c.proxy, err = startKubeProxy(ctx, spec.Cluster.ProxyMode, c.net, c.layout.Nodes, services, spec.Seed); err != nil {
		return err
	}
	c.mu.Lock()
	c.endpoints = newEndpoints(c, services)
	c.mu.Unlock()
	c.logf("kube-proxy (%s) programmed on every node", spec.Cluster.ProxyMode)
	c.tl = load.NewTimeline(len(c.layout.Clients))
	for _, p := range c.layout.Clients {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The load generator is the client's app; its sidecar is started beside it
		// (startSidecars).
		app := spec.Clients[p.Index]
		app.Sidecar = nil
		client := &app
		svc := services[serviceIndex(c.sc, client.Target)]
		target, dns := fmt.Sprintf("http://%s:%d/", svc.ClusterIP, svc.Port), ""
		if !svc.ClusterIP.IsValid() {
			target, dns = headlessTarget(client.Target), c.dns.addr()
		}
		// The process checks the spec alike; an error here points at the scenario.
		if _, err := load.FromClient(client, target, spec.Duration.Duration, spec.Seed); err != nil {
			return &scenario.FieldError{Path: fmt.Sprintf("spec.clients[%d]", p.Index), Err: err}
		}
		cp, err := startClient(ctx, c.spawner.start, c.net, c.opt.Exe, p, client, target, dns, spec.Duration.Duration, spec.Report.SlowThreshold.Duration, spec.Seed)
		if err != nil {
			return err
		}
		c.clients = append(c.clients, cp)
	}
	c.logf("client pods ready: %d", len(c.clients))
	if err := c.startSidecars(ctx, services); err != nil {
		return err
	}
	if len(c.sidecars) > 0 {
		c.logf("sidecars (nginx in Envoy's place) ready: %d", len(c.sidecars))
	}
	if err := c.applyLoss(ctx); err != nil {
		return err
	}
	return c.applyDelay(ctx)
}

func serviceIndex(sc *scenario.Scenario, name string) int {
	for i := range sc.Spec.Services {
		if sc.Spec.Services[i].Name == name {
			return i
		}
	}
	return -1 // validation makes every target a service
}

// run starts every client pod's load at one instant and waits for all of them.
func (c *cluster) run(ctx context.Context) {
	total := c.sc.Spec.Duration.Duration
	c.mu.Lock()
	c.start = time.Now().Add(100 * time.Millisecond)
	for _, s := range c.servers {
		s.cpuAtStart, _ = s.group.Usage()
		s.bandwidthAtStart, _ = s.group.Stat()
	}
	for _, nd := range c.disks {
		nd.atStart, _ = nd.volume.Stats()
	}
	if err := c.startBackgrounds(); err != nil {
		c.errs = append(c.errs, err)
	}
	c.mu.Unlock()
	if len(c.sidecars) > 0 {
		// Marked at the load's start, as the client pods' CPU is.
		go func() {
			time.Sleep(time.Until(c.start))
			c.markSidecars(true)
		}()
	}
	replayCtx, stopReplay := context.WithCancel(ctx)
	c.replayDone.Add(2)
	go func() {
		defer c.replayDone.Done()
		c.runReplay(replayCtx)
	}()
	go func() {
		defer c.replayDone.Done()
		c.runFaults(replayCtx)
	}()
	for _, a := range c.autoscalers {
		c.replayDone.Add(1)
		go func() {
			defer c.replayDone.Done()
			c.runAutoscaler(replayCtx, a)
		}()
	}
	defer func() {
		stopReplay()
		c.replayDone.Wait() // a pod it is starting is in c.servers, or killed, before teardown
	}()
	var wg sync.WaitGroup
	for i, cp := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cp.run(ctx, c.start, c.tl, i); err != nil {
				c.mu.Lock()
				c.errs = append(c.errs, err)
				c.mu.Unlock()
			}
			c.tl.Ended(i)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			c.mu.Lock()
			c.stopBackgrounds()
			c.mu.Unlock()
			c.markSidecars(false)
			c.readSidecarStats(context.WithoutCancel(ctx))
			// A run that was not stopped lasts its duration, as in simulate, even if
			// every client's phases ended before.
			c.ran = total
			if ctx.Err() != nil {
				c.ran = min(max(time.Since(c.start), 0), total)
			}
			return
		case <-tick.C:
			if c.opt.Progress != nil {
				c.opt.Progress(min(max(time.Since(c.start), 0), total), total)
			}
		}
	}
}

// applyLoss puts the scenario's packet loss on the pods' veths: the cluster's on
// every service pod's, both ways (every request and answer crosses one, so each
// packet between pods is lost once with the given chance, one hop as simulate
// counts it), a link override's and an active loss or partition fault's on their
// target's pods in their direction.
func (c *cluster) applyLoss(ctx context.Context) error {
	if !lossy(c.sc) {
		return nil // no nft needed
	}
	byNode := map[string][]faults.Loss{}
	add := func(pods []*topo.Pod, dir string, fraction float64) {
		if fraction <= 0 {
			return
		}
		for _, p := range pods {
			byNode[p.Node] = append(byNode[p.Node], faults.Loss{Veth: p.Veth, Direction: dir, Fraction: fraction})
		}
	}
	n := &c.sc.Spec.Cluster.Network
	if n.Loss != nil {
		add(c.servicePods(), faults.Both, n.Loss.Fraction)
	}
	for _, l := range n.Links {
		if l.Link.Loss != nil {
			add(c.targets(&l.Target), cmp.Or(l.Direction, faults.Both), l.Link.Loss.Fraction)
		}
	}
	c.mu.Lock()
	active := maps.Clone(c.activeFaults)
	c.mu.Unlock()
	for i, f := range c.sc.Spec.Faults {
		switch {
		case !active[i]:
		case f.Kind == scenario.FaultLoss:
			add(c.targets(&f.Target), cmp.Or(f.Direction, faults.To), f.Loss.Fraction)
		case f.Kind == scenario.FaultPartition:
			add(c.targets(&f.Target), cmp.Or(f.Direction, faults.To), 1)
		}
	}
	// Every node, even one left without losses: a veth name freed by a gone pod
	// goes to the next pod on its node, which must not inherit its rules.
	for _, node := range c.layout.Nodes {
		if err := faults.Apply(ctx, c.net.NodeNS(node), byNode[node]); err != nil {
			return err
		}
	}
	return nil
}

// lossy tells whether the network loses packets anywhere, ever.
func lossy(sc *scenario.Scenario) bool {
	for _, f := range sc.Spec.Faults {
		if f.Kind == scenario.FaultLoss || f.Kind == scenario.FaultPartition {
			return true
		}
	}
	n := &sc.Spec.Cluster.Network
	if n.Loss != nil && n.Loss.Fraction > 0 {
		return true
	}
	for _, l := range n.Links {
		if l.Link.Loss != nil && l.Link.Loss.Fraction > 0 {
			return true
		}
	}
	return false
}

// applyDelay delays packets on the pods' veths as applyLoss drops them: the
// cluster's latency and jitter on every service pod's, both ways, a link
// override's on its target's pods, where delayed says emulate adds them.
func (c *cluster) applyDelay(ctx context.Context) error {
	n := &c.sc.Spec.Cluster.Network
	byNode := map[string][]delay.Rule{}
	if delayed(n.Latency.Duration, n.Jitter) {
		addDelay(byNode, c.servicePods(), faults.Both, n.Latency.Duration, n.Jitter, n.JitterDistribution)
	}
	for _, l := range n.Links {
		latency := n.Latency.Duration // what the override leaves out comes from below
		if l.Link.Latency != nil {
			latency = l.Link.Latency.Duration
		}
		if (l.Link.Latency != nil || l.Link.Jitter != nil) && delayed(latency, l.Link.Jitter) {
			addDelay(byNode, c.targets(&l.Target), cmp.Or(l.Direction, faults.Both), latency, l.Link.Jitter, l.Link.JitterDistribution)
		}
	}
	started, err := c.startDelayers(ctx, byNode)
	c.delays = append(c.delays, started...)
	return err
}

// addDelay adds to byNode a rule delaying packets on each pod's veth.
func addDelay(byNode map[string][]delay.Rule, pods []*topo.Pod, dir string, latency time.Duration, jitter *metav1.Duration, dist string) {
	for _, p := range pods {
		r := delay.Rule{Veth: p.Veth, Direction: dir, Latency: latency, Distribution: dist}
		if jitter != nil {
			r.Jitter = jitter.Duration
		}
		byNode[p.Node] = append(byNode[p.Node], r)
	}
}

// startDelayers starts a Delayer for each node's rules; on an error it returns
// those it started, for the caller to close.
func (c *cluster) startDelayers(ctx context.Context, byNode map[string][]delay.Rule) ([]*delay.Delayer, error) {
	var started []*delay.Delayer
	for _, node := range c.layout.Nodes {
		if len(byNode[node]) == 0 {
			continue
		}
		d, err := delay.Start(ctx, delay.Config{NS: c.net.NodeNS(node), Seed: c.sc.Spec.Seed, Rules: byNode[node]})
		if err != nil {
			return started, err
		}
		started = append(started, d)
	}
	return started, nil
}

// delays tells whether a run of sc delays any packets.
func delays(sc *scenario.Scenario) bool {
	for _, f := range sc.Spec.Faults {
		if f.Kind == scenario.FaultDelay {
			return true
		}
	}
	return staticDelay(sc)
}

// staticDelay tells whether the network delays packets from start to end.
func staticDelay(sc *scenario.Scenario) bool {
	n := &sc.Spec.Cluster.Network
	if delayed(n.Latency.Duration, n.Jitter) {
		return true
	}
	for _, l := range n.Links {
		if l.Link.Latency != nil && delayed(l.Link.Latency.Duration, l.Link.Jitter) || l.Link.Jitter != nil {
			return true
		}
	}
	return false
}

// selects tells whether a selector picks a pod; owner is a service's name, or
// "client/" and a client Deployment's.
func selects(sel *scenario.Selector, pod, owner, node string) bool {
	switch {
	case sel.Pod != "":
		return sel.Pod == pod
	case sel.Service != "":
		return sel.Service == owner
	case sel.Client != "":
		return "client/"+sel.Client == owner
	default:
		return sel.Node == node
	}
}

// teardown removes everything the run made, going on past errors.
func (c *cluster) teardown() error {
	c.mu.Lock()
	c.closing = true
	servers := c.servers
	for _, t := range c.timers {
		t.Stop()
	}
	ep, dns := c.endpoints, c.dns
	c.mu.Unlock()
	var errs []error
	if ep != nil {
		ep.stop() // again after a run, whose syncs' errors Run reported; at once after a failed build
	}
	if dns != nil {
		dns.stop()
	}
	for _, cp := range c.clients {
		errs = append(errs, cp.kill())
	}
	if c.proxy != nil {
		errs = append(errs, c.proxy.close())
	}
	for _, d := range c.delays {
		errs = append(errs, d.Close())
	}
	for _, ds := range c.faultDelays {
		for _, d := range ds {
			errs = append(errs, d.Close())
		}
	}
	for _, ps := range c.sidecars {
		errs = append(errs, ps.proxy.Stop())
	}
	for _, s := range servers {
		errs = append(errs, s.kill())
	}
	errs = append(errs, c.killBackgrounds())
	errs = append(errs, c.closeDisks()) // after the pods, their log writers and the workloads
	c.spawner.close()
	if c.net != nil {
		errs = append(errs, c.net.Close())
	}
	if c.figures != "" {
		errs = append(errs, os.RemoveAll(c.figures))
	}
	if c.sidecarDir != "" {
		errs = append(errs, os.RemoveAll(c.sidecarDir))
	}
	return errors.Join(errs...)
}

// Cleanup removes what crashed runs left behind: their namespaces (and with them
// every link, route and rule in them) and their control groups, killing any
// process still in one. It returns what it removed.
func Cleanup() ([]string, error) {
	namespaces, err := topo.Cleanup()
	groups, gerr := cgroup.Cleanup(topo.Stale)
	for _, g := range groups {
		namespaces = append(namespaces, "cgroup "+cgroup.Parent+"/"+g)
	}
	disks, derr := disk.Cleanup(DisksDir, topo.Stale)
	for _, d := range disks {
		namespaces = append(namespaces, "disk "+filepath.Join(DisksDir, d))
	}
	return namespaces, errors.Join(err, gerr, derr)
}
