package emulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"syscall"
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/scenario"
)

// Pods created, made ready and deleted during a run come from a simulation of the
// scenario, replayed on the wall clock: the same scheduler placing new pods, the
// same ReplicaSet choosing which to delete, the same rollouts and pod-kill faults,
// and the HPA deciding from the simulated pods' CPU. What follows a decision is
// real: the app's start, the endpoint change reaching each node's kube-proxy late,
// preStop, SIGTERM and the app's own exit or drain, SIGKILL, and the pod's network
// going away.

type eventKind int

const (
	podCreated eventKind = iota
	podReady
	podDeleted
)

// podEvent is one change of a service pod, at a time since the run's start.
type podEvent struct {
	at      time.Duration
	kind    eventKind
	pod     string
	service string
	node    string
	index   int  // the service's index in spec.services
	kill    bool // podDeleted by a pod-kill fault: SIGKILL, no preStop or SIGTERM
}

// replay is the simulation's pod changes after the start, in time order, and the
// scale events and rollouts behind them.
type replay struct {
	events   []podEvent
	rollouts []result.Rollout
	// peakPods is the most service pods that exist at once (deleted ones counted
	// until their process ends), autoscaled services counted at their maximum.
	peakPods int
}

// replayOf is the pod changes of r, the simulation of sc, that emulate replays on
// top of layout, the pods it starts with.
func replayOf(sc *scenario.Scenario, r *result.Result, layout *placement.Layout) *replay {
	rp := &replay{rollouts: r.Rollouts} // scale events are the live HPAs' (autoscale.go)
	at := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	initial := map[string]bool{}
	for _, p := range layout.Pods {
		initial[p.Name] = true
	}
	type change struct {
		at    time.Duration
		delta int
	}
	var live []change
	for _, p := range r.Pods {
		ev := podEvent{pod: p.Name, service: p.Service, node: p.Node, index: serviceIndex(sc, p.Service)}
		if sc.Spec.Services[ev.index].Autoscaler != nil {
			continue // scaled for real (autoscale.go)
		}
		if !initial[p.Name] {
			ev.kind, ev.at = podCreated, at(p.StartS+p.PendingS)
			rp.events = append(rp.events, ev)
			live = append(live, change{ev.at, 1})
		}
		if p.EndS != nil {
			live = append(live, change{at(*p.EndS), -1})
		}
		if p.ReadyS != nil && !initial[p.Name] {
			ev.kind, ev.at = podReady, at(*p.ReadyS)
			rp.events = append(rp.events, ev)
		}
		kill := killedAt(sc, &p)
		if p.DeletedS != nil && (kill < 0 || at(*p.DeletedS) < kill) {
			ev.kind, ev.at = podDeleted, at(*p.DeletedS)
			rp.events = append(rp.events, ev)
		}
		if kill >= 0 {
			ev.kind, ev.at, ev.kill = podDeleted, kill, true
			rp.events = append(rp.events, ev)
		}
	}
	slices.SortStableFunc(rp.events, func(a, b podEvent) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.kind, b.kind)
	})
	// Ends before starts at one instant: a pod gone as another comes is not two.
	slices.SortFunc(live, func(a, b change) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	n := len(layout.Pods)
	rp.peakPods = n
	defer func() {
		for i := range sc.Spec.Services {
			if a := sc.Spec.Services[i].Autoscaler; a != nil {
				rp.peakPods += max(0, int(a.MaxReplicas)-sc.Spec.Services[i].Replicas)
			}
		}
	}()
	for _, ch := range live {
		n += ch.delta
		rp.peakPods = max(rp.peakPods, n)
	}
	return rp
}

// killedAt is when a pod-kill fault killed the pod (simulate's killPod: a pod
// already terminating is killed too), or -1.
func killedAt(sc *scenario.Scenario, p *result.Pod) time.Duration {
	for _, f := range sc.Spec.Faults {
		start := f.Start.Duration
		if f.Kind != scenario.FaultPodKill || !selects(&f.Target, p.Name, p.Service, p.Node) {
			continue
		}
		created := time.Duration(math.Round(p.StartS * 1e9))
		ended := p.EndS == nil || time.Duration(math.Round(*p.EndS*1e9)) >= start
		if created <= start && ended {
			return start
		}
	}
	return -1
}

// runReplay carries out the events on the wall clock from the run's start until ctx
// ends.
func (c *cluster) runReplay(ctx context.Context) {
	for _, ev := range c.replay.events {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(c.start.Add(ev.at))):
		}
		if err := c.apply(ctx, ev); err != nil {
			c.fail(err)
		}
	}
}

func (c *cluster) apply(ctx context.Context, ev podEvent) error {
	switch ev.kind {
	case podCreated:
		s, err := startServer(ctx, c.spawner.start, c.net, c.opt.Exe, ev.pod, ev.service, ev.node, &c.sc.Spec.Services[ev.index].Pod, c.sc.Spec.Seed, c.serveArgs(ev.service, ev.pod), c.podLogFile(ev.pod, ev.node, &c.sc.Spec.Services[ev.index].Pod), c.exited)
		if err != nil {
			return err
		}
		c.mu.Lock()
		s.created = time.Since(c.start)
		c.servers = append(c.servers, s)
		c.mu.Unlock()
		return c.applyLoss(ctx) // the new pod's veth too
	case podReady:
		if s := c.server(ev.pod); s != nil {
			c.mu.Lock()
			s.ready, s.readyAt = true, time.Since(c.start)
			c.mu.Unlock()
			c.endpoints.changed()
		}
		return nil
	}
	s := c.server(ev.pod)
	if s == nil {
		return nil
	}
	return c.deletePod(s, ev.kill, &c.sc.Spec.Services[ev.index].Pod)
}

// deletePod deletes a pod: its endpoint turns terminating at once; then the kubelet
// sends SIGTERM once preStop is over and SIGKILL at the end of the grace period
// (kubelet.Termination), or SIGKILL at once for a kill (grace period 0).
func (c *cluster) deletePod(s *server, kill bool, spec *scenario.Pod) error {
	c.mu.Lock()
	s.deleting, s.deletedAt = true, time.Since(c.start)
	c.mu.Unlock()
	c.endpoints.changed()
	if kill {
		if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		return nil
	}
	sigterm, sigkill := kubelet.Termination(spec.TerminationSpec())
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers,
		time.AfterFunc(sigterm, func() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }),
		time.AfterFunc(sigkill, func() { _ = s.cmd.Process.Kill() }))
	return nil
}

// exited is called when a pod's app has ended: its endpoint stops serving, and
// after the sandbox's teardown (spec.cluster.podNetworkTeardown) its address goes:
// until then a packet to it meets a closed port (a reset), afterwards the node's
// blackhole for its pod range (no answer).
func (c *cluster) exited(s *server) {
	c.mu.Lock()
	s.ready, s.gone = false, true
	if !c.start.IsZero() {
		s.ended = time.Since(c.start)
	}
	closing, ep := c.closing, c.endpoints
	c.mu.Unlock()
	if closing || ep == nil {
		return // torn down, or still being built (whose error says so)
	}
	ep.changed()
	time.AfterFunc(c.sc.Spec.Cluster.PodNetworkTeardown.Duration, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closing {
			return
		}
		if err := c.net.RemovePod(s.name); err != nil {
			c.errs = append(c.errs, fmt.Errorf("pod %s: removing its network: %w", s.name, err))
		}
	})
}

// server is the named service pod; nil if it never started.
func (c *cluster) server(name string) *server {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.servers {
		if s.name == name {
			return s
		}
	}
	return nil
}

// podStates are the service pods as the EndpointSlice controller sees them.
func (c *cluster) podStates() []podState {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []podState
	for _, s := range c.servers {
		if s.gone && s.deleting {
			continue // the pod object is gone
		}
		out = append(out, podState{service: s.service, addr: s.addr(), ready: s.ready && !s.gone, terminating: s.deleting})
	}
	return out
}

func (c *cluster) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}
