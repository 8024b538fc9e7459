package emulate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"trafficlab/emulate/delay"
	"trafficlab/emulate/faults"
	"trafficlab/emulate/topo"
	"trafficlab/scenario"
)

// Timed network faults (spec.faults of kind loss, partition and delay) act on the
// target's pods' veths from Start to End, in series with the network's own loss
// and delay, as simulate's addFault composes them: losses compound (a second drop
// rule sees what the first let through), a partition drops everything, a delay
// adds to the link's.

// unsupportedFaults refuses the faults emulate cannot run yet, at their path.
func unsupportedFaults(sc *scenario.Scenario) error {
	delayFaults := 0
	for i, f := range sc.Spec.Faults {
		path := fmt.Sprintf("spec.faults[%d]", i)
		not := func(field, what string) error {
			return &scenario.FieldError{Path: path + field, Err: fmt.Errorf("%s not emulated yet; `trafficlab simulate` runs it", what)}
		}
		switch {
		case f.Kind == scenario.FaultPodKill:
			continue
		case f.Kind == scenario.FaultBandwidth:
			return not(".kind", "a bandwidth fault is")
		case f.Peer != nil:
			return not(".peer", "a fault between two sets of pods is")
		case f.Correlation != nil:
			return not(".correlation", "loss correlation is")
		case f.Kind == scenario.FaultDelay:
			delayFaults++
			// A packet a Delayer accepts leaves the netfilter table it was queued
			// from: a second delay on the same path would never see it.
			if delayFaults > 1 || staticDelay(sc) {
				return not(".latency", "a delay fault over another delay is")
			}
		}
	}
	return nil
}

// faultToggle is a fault starting (on) or ending, at a time since the run's start.
type faultToggle struct {
	at    time.Duration
	index int
	on    bool
}

// faultToggles are the timed network faults' starts and ends within the run.
func faultToggles(sc *scenario.Scenario) []faultToggle {
	var out []faultToggle
	for i, f := range sc.Spec.Faults {
		if f.Kind == scenario.FaultPodKill {
			continue
		}
		out = append(out, faultToggle{at: f.Start.Duration, index: i, on: true})
		if f.End != nil && f.End.Duration < sc.Spec.Duration.Duration {
			out = append(out, faultToggle{at: f.End.Duration, index: i})
		}
	}
	slices.SortStableFunc(out, func(a, b faultToggle) int { return cmp.Compare(a.at, b.at) })
	return out
}

// runFaults turns the timed faults on and off on the wall clock until ctx ends.
func (c *cluster) runFaults(ctx context.Context) {
	for _, tg := range faultToggles(c.sc) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(c.start.Add(tg.at))):
		}
		c.mu.Lock()
		c.activeFaults[tg.index] = tg.on
		c.mu.Unlock()
		var err error
		if c.sc.Spec.Faults[tg.index].Kind == scenario.FaultDelay {
			err = c.toggleDelayFault(ctx, tg.index, tg.on)
		} else {
			err = c.applyLoss(ctx)
		}
		if err != nil {
			c.fail(fmt.Errorf("spec.faults[%d]: %w", tg.index, err))
		}
	}
}

// toggleDelayFault starts or stops delay fault i's Delayers, one per node with a
// target pod.
func (c *cluster) toggleDelayFault(ctx context.Context, i int, on bool) error {
	c.mu.Lock()
	running := c.faultDelays[i]
	delete(c.faultDelays, i)
	c.mu.Unlock()
	for _, d := range running {
		if err := d.Close(); err != nil {
			return err
		}
	}
	if !on {
		return nil
	}
	f := &c.sc.Spec.Faults[i]
	byNode := map[string][]delay.Rule{}
	addDelay(byNode, c.targets(&f.Target), cmp.Or(f.Direction, faults.To), f.Latency.Duration, f.Jitter, "")
	started, err := c.startDelayers(ctx, byNode)
	c.mu.Lock()
	c.faultDelays[i] = started // teardown closes them, also after an error
	c.mu.Unlock()
	return err
}

// servicePods are the running service pods.
func (c *cluster) servicePods() []*topo.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*topo.Pod
	for _, s := range c.servers {
		if !s.gone {
			out = append(out, s.net)
		}
	}
	return out
}

// targets are the running pods (service and client) a selector picks.
func (c *cluster) targets(sel *scenario.Selector) []*topo.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*topo.Pod
	for _, s := range c.servers {
		if !s.gone && selects(sel, s.name, s.service, s.node) {
			out = append(out, s.net)
		}
	}
	for _, cp := range c.clients {
		if selects(sel, cp.placed.Name, "client/"+cp.placed.Owner, cp.placed.Node) {
			out = append(out, cp.net)
		}
	}
	return out
}
