// Package faults is the simulator's timed-faults subsystem (spec.faults): pods
// killed at an instant, and network faults (loss, delay, a partition) that hold
// between a start and an end. It owns the faults' timers; it acts on the cluster
// through Cluster, which kills pods and re-applies the network's settings.
package faults

import (
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Cluster is what the faults act on.
type Cluster interface {
	// KillPods ends at once the processes of the pods target selects that still run.
	KillPods(target *scenario.Selector)
	// Reconfigure applies the links and the network faults active now to every path.
	Reconfigure()
}

// Faults are a run's timed faults, in spec.faults order.
type Faults struct {
	k     *sim.Kernel
	c     Cluster
	specs []scenario.Fault
	ev    uint8
}

// New registers the faults' event with k.
func New(k *sim.Kernel, c Cluster) *Faults {
	fs := &Faults{k: k, c: c}
	fs.ev = k.Register(fs.onFault)
	return fs
}

// Start schedules every fault's start, and the end of each network fault that ends
// within the run.
func (fs *Faults) Start(specs []scenario.Fault, end sim.Time) {
	fs.specs = specs
	for i := range specs {
		f := &specs[i]
		fs.k.At(sim.Duration(f.Start.Duration), fs.ev, int32(i), 1)
		if f.Kind != scenario.FaultPodKill && sim.Duration(f.End.Duration) < end {
			fs.k.At(sim.Duration(f.End.Duration), fs.ev, int32(i), 0)
		}
	}
}

// ActiveOnNetwork tells whether f is a network fault that holds at now.
func ActiveOnNetwork(f *scenario.Fault, now sim.Time) bool {
	return f.Kind != scenario.FaultPodKill && now >= sim.Duration(f.Start.Duration) && now < sim.Duration(f.End.Duration)
}

// onFault: a fault starts or ends.
func (fs *Faults) onFault(ev sim.Event) {
	f := &fs.specs[ev.Obj]
	if f.Kind == scenario.FaultPodKill {
		fs.c.KillPods(&f.Target)
		return
	}
	fs.c.Reconfigure()
}

// Result is the faults that started before end, with their ends cut at it.
func Result(specs []scenario.Fault, end sim.Time) []result.Fault {
	var out []result.Fault
	for _, f := range specs {
		start := sim.Duration(f.Start.Duration)
		if start >= end {
			continue
		}
		rf := result.Fault{Name: f.Name, Kind: f.Kind, Target: selected(f.Target), StartS: start.Seconds(), EndS: start.Seconds()}
		if f.Kind != scenario.FaultPodKill {
			rf.Direction = f.Direction
			rf.EndS = min(sim.Duration(f.End.Duration), end).Seconds()
			if f.Peer != nil {
				rf.Peer = selected(*f.Peer)
			}
		}
		out = append(out, rf)
	}
	return out
}

// selected names what a selector picks, for the report.
func selected(s scenario.Selector) string {
	switch {
	case s.Pod != "":
		return "pod " + s.Pod
	case s.Service != "":
		return "service " + s.Service
	case s.Client != "":
		return "client " + s.Client
	case s.Node != "":
		return "node " + s.Node
	}
	return "every pod"
}
