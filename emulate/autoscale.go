package emulate

import (
	"context"
	"fmt"
	"slices"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"trafficlab/model/dist"
	"trafficlab/model/hpa"
	"trafficlab/model/replicaset"
	"trafficlab/model/scheduler"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// A service with an autoscaler is scaled for real: metrics-server reads its pods'
// CPU from their cgroups, the HPA (model/hpa, the controller's own algorithm)
// reconciles every sync period, and the ReplicaSet controller creates pods,
// placed by the scheduler the simulation uses (model/scheduler), or deletes the
// ones it ranks first (model/replicaset). simulate/autoscale.go runs the same loop
// on simulated CPU.

// autoscaled is one service's HPA and the state of its Deployment.
type autoscaled struct {
	index      int
	spec       *scenario.Service
	hpa        *hpa.Autoscaler
	replicas   int // the Deployment's spec.replicas
	created    int // pods ever created, for the next name
	sync       time.Duration
	resolution time.Duration
	startup    dist.Sampler
	// samples are each pod's last cumulative CPU reading and when it was taken;
	// metrics what metrics-server serves.
	samples map[string]cpuSample
	metrics map[string]hpa.Metric
}

type cpuSample struct {
	used time.Duration
	at   time.Time
}

// newAutoscalers makes the HPA of every service that has one, and the scheduler
// bound to the pods the run starts with, for the pods they create.
func newAutoscalers(sc *scenario.Scenario, l *placement.Layout) (map[int]*autoscaled, *scheduler.Scheduler, error) {
	out := map[int]*autoscaled{}
	for i := range sc.Spec.Services {
		svc := &sc.Spec.Services[i]
		a := svc.Autoscaler
		if a == nil {
			continue
		}
		ctl := &a.Controller
		h, err := hpa.New(autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: a.MinReplicas, MaxReplicas: a.MaxReplicas, Metrics: a.Metrics, Behavior: a.Behavior},
			hpa.Settings{SyncPeriod: ctl.SyncPeriod.Duration, Tolerance: *ctl.Tolerance, DownscaleStabilization: ctl.DownscaleStabilization.Duration,
				CPUInitializationPeriod: ctl.CPUInitializationPeriod.Duration, InitialReadinessDelay: ctl.InitialReadinessDelay.Duration})
		if err != nil {
			return nil, nil, &scenario.FieldError{Path: fmt.Sprintf("spec.services[%d].autoscaler", i), Err: err}
		}
		startup, err := dist.New(svc.Pod.StartupDelay.Spec())
		if err != nil {
			return nil, nil, &scenario.FieldError{Path: fmt.Sprintf("spec.services[%d].pod.startupDelay", i), Err: err}
		}
		out[i] = &autoscaled{index: i, spec: svc, hpa: h, replicas: svc.Replicas, created: svc.Replicas,
			sync: ctl.SyncPeriod.Duration, resolution: ctl.MetricResolution.Duration, startup: startup,
			samples: map[string]cpuSample{}, metrics: map[string]hpa.Metric{}}
	}
	sched := placement.NewScheduler(&sc.Spec)
	for _, p := range l.Pods {
		sp := placement.ServicePod(&sc.Spec.Services[p.Index], p.Name)
		sp.NodeName = p.Node
		if _, err := sched.Schedule(sp); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range l.Clients {
		cp := placement.ClientPod(clientNamed(sc, p.Owner), p.Name)
		cp.NodeName = p.Node
		if _, err := sched.Schedule(cp); err != nil {
			return nil, nil, err
		}
	}
	return out, sched, nil
}

// runAutoscaler is service a's metrics-server and HPA controller until ctx ends:
// scrapes from the start, the controller's first pass a sync period in.
func (c *cluster) runAutoscaler(ctx context.Context, a *autoscaled) {
	select { // the clocks start with the load, as simulate's at 0
	case <-ctx.Done():
		return
	case <-time.After(time.Until(c.start)):
	}
	scrape := time.NewTicker(a.resolution)
	defer scrape.Stop()
	reconcile := time.NewTicker(a.sync)
	defer reconcile.Stop()
	c.scrape(a)
	for {
		select {
		case <-ctx.Done():
			return
		case <-scrape.C:
			c.scrape(a)
		case <-reconcile.C:
			if err := c.reconcile(ctx, a); err != nil {
				c.fail(err)
			}
		}
	}
}

// scrape reads every running pod's cumulative CPU; a pod's usage is the rate
// between its last two readings, stamped with the newer one and the window between
// them (metrics-server pkg/storage/types.go resourceUsage).
func (c *cluster) scrape(a *autoscaled) {
	now := time.Now()
	for _, s := range c.serversOf(a.spec.Name) {
		c.mu.Lock()
		running, started := !s.gone, c.start.Add(s.created)
		c.mu.Unlock()
		if !running {
			delete(a.samples, s.name)
			delete(a.metrics, s.name)
			continue
		}
		used, err := s.group.Usage()
		if err != nil {
			continue
		}
		prev, ok := a.samples[s.name]
		if !ok {
			if age := now.Sub(started); age >= hpa.FreshContainerWindow && age < a.resolution {
				prev, ok = cpuSample{at: started}, true
			}
		}
		if ok && now.After(prev.at) {
			window := now.Sub(prev.at)
			a.metrics[s.name] = hpa.Metric{MilliCores: int64(float64(used-prev.used) / float64(window) * 1000), Timestamp: now, Window: window}
		}
		a.samples[s.name] = cpuSample{used: used, at: now}
	}
}

// reconcile is one pass of the HPA controller over a's Deployment.
func (c *cluster) reconcile(ctx context.Context, a *autoscaled) error {
	var pods []hpa.Pod
	request := a.spec.Pod.Resources.Requests[corev1.ResourceCPU]
	c.mu.Lock()
	for _, s := range c.servers {
		if s.service != a.spec.Name || s.gone {
			continue
		}
		start := c.start.Add(s.created)
		hp := hpa.Pod{Name: s.name, Phase: corev1.PodRunning, Deleting: s.deleting, HasReadyCondition: true,
			Ready: s.ready, ReadyTransition: c.start.Add(max(s.readyAt, s.created)), StartTime: &start, CPURequestMilli: request.MilliValue()}
		pods = append(pods, hp)
	}
	for _, name := range c.starting[a.index] {
		pods = append(pods, hpa.Pod{Name: name, Phase: corev1.PodPending})
	}
	c.mu.Unlock()
	d := a.hpa.Reconcile(time.Now(), int32(a.replicas), pods, a.metrics)
	if int(d.Desired) == a.replicas {
		return nil
	}
	return c.scaleTo(ctx, a, int(d.Desired), d.Explain())
}

// scaleTo sets a's Deployment to n replicas: the ReplicaSet controller creates
// pods, or deletes those it ranks first (replicaset.PodsToDelete).
func (c *cluster) scaleTo(ctx context.Context, a *autoscaled, n int, reason string) error {
	ev := result.ScaleEvent{TS: result.Round(time.Since(c.start).Seconds(), 6), Service: a.spec.Name, From: a.replicas, To: n, Reason: reason}
	a.replicas = n
	var active []*server
	var ranked []replicaset.Pod
	c.mu.Lock()
	for _, s := range c.servers {
		if s.service == a.spec.Name && !s.gone && !s.deleting {
			active = append(active, s)
			rp := replicaset.Pod{Name: s.name, Node: s.node, Phase: replicaset.PhaseRunning, Ready: s.ready,
				Created: c.start.Add(s.created)}
			if s.ready {
				rp.ReadySince = c.start.Add(max(s.readyAt, 0))
			}
			ranked = append(ranked, rp)
		}
	}
	starting := len(c.starting[a.index])
	c.mu.Unlock()
	switch have := len(active) + starting; {
	case n < have:
		// Pods still starting are Pending, which the ReplicaSet controller deletes
		// before running ones (replicaset.Less rule 2); the newest first.
		cancel := min(have-n, starting)
		c.mu.Lock()
		for range cancel {
			names := c.starting[a.index]
			name := names[len(names)-1]
			c.starting[a.index] = names[:len(names)-1]
			c.cancelled[name] = true
			ev.Deleted = append(ev.Deleted, name)
		}
		c.mu.Unlock()
		for _, i := range replicaset.PodsToDelete(ranked, have-n-cancel, time.Now()) {
			ev.Deleted = append(ev.Deleted, active[i].name)
			if err := c.deletePod(active[i], false, &a.spec.Pod); err != nil {
				return err
			}
		}
	case n > have:
		for range n - have {
			name := placement.Name(a.spec.Name, a.created)
			a.created++
			node, err := c.sched.Schedule(placement.ServicePod(a.spec, name))
			if err != nil {
				ev.Unschedulable = append(ev.Unschedulable, placement.Unschedulable(name, err).Error())
				continue
			}
			ev.Created = append(ev.Created, name)
			c.startPod(ctx, a, name, c.layout.Nodes[node])
		}
	}
	c.mu.Lock()
	c.scaleEvents = append(c.scaleEvents, ev)
	c.mu.Unlock()
	return nil
}

// startPod starts a new pod of a after its startup delay (scheduling, image pull,
// container start: spec.pod.startupDelay, drawn from the pod's own stream), ready
// as soon as it listens.
func (c *cluster) startPod(ctx context.Context, a *autoscaled, name, node string) {
	rng := sim.Stream(c.sc.Spec.Seed, "pod/"+name)
	delay := time.Duration(a.startup.Sample(rng))
	c.mu.Lock()
	c.starting[a.index] = append(c.starting[a.index], name)
	c.mu.Unlock()
	c.replayDone.Add(1)
	go func() {
		defer c.replayDone.Done()
		select {
		case <-ctx.Done():
		case <-time.After(delay):
			c.mu.Lock()
			cancelled := c.cancelled[name]
			c.mu.Unlock()
			if cancelled {
				return
			}
			s, err := startServer(ctx, c.spawner.start, c.net, c.opt.Exe, name, a.spec.Name, node, &a.spec.Pod, c.sc.Spec.Seed, c.serveArgs(a.spec.Name, name), c.podLogFile(name, node, &a.spec.Pod), c.exited)
			if err != nil {
				c.fail(err)
				break
			}
			c.mu.Lock()
			s.created = time.Since(c.start) - delay
			s.ready, s.readyAt = true, time.Since(c.start)
			c.servers = append(c.servers, s)
			c.mu.Unlock()
			if err := c.applyLoss(ctx); err != nil {
				c.fail(err)
			}
			c.endpoints.changed()
		}
		c.mu.Lock()
		c.starting[a.index] = removeName(c.starting[a.index], name)
		c.mu.Unlock()
	}()
}

func removeName(names []string, name string) []string {
	for i, n := range names {
		if n == name {
			return append(names[:i], names[i+1:]...)
		}
	}
	return names
}

// serversOf is the service's pods, every one that ever ran.
func (c *cluster) serversOf(service string) []*server {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*server
	for _, s := range c.servers {
		if s.service == service {
			out = append(out, s)
		}
	}
	return out
}

// clientNamed is sc's client Deployment called name; the layout names only those.
func clientNamed(sc *scenario.Scenario, name string) *scenario.Client {
	i := slices.IndexFunc(sc.Spec.Clients, func(c scenario.Client) bool { return c.Name == name })
	return &sc.Spec.Clients[i]
}
