// Package background is the simulator's background-workload subsystem: processes
// that serve no traffic but burn CPU on a node or write to its disk, at an
// intensity their schedule sets (spec.background). It owns the workloads and
// their timers, and reaches a node through the CPU group and disk the engine
// gives each workload when it places it.
package background

import (
	"math"
	"time"

	"trafficlab/model/disk"
	"trafficlab/model/node"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Workload is one placed background workload.
type Workload struct {
	Spec   *scenario.Background
	Node   int32
	CPU    *node.Group  // nil when it burns no CPU
	Disk   *disk.Device // its node's disk; nil when it writes nothing
	Writer int32        // its writer on Disk; -1 when it writes nothing

	cores  float64 // at full intensity
	rate   float64 // disk bytes per second at full intensity
	chunk  int64
	ioSize int64
}

// Workloads are a run's background workloads, by index in spec.background.
type Workloads struct {
	k                       *sim.Kernel
	end                     sim.Time
	list                    []Workload
	evCPU, evWrite, evQuota uint8
}

// New registers the workloads' events with k, for a run that ends at end.
func New(k *sim.Kernel, end sim.Time) *Workloads {
	ws := &Workloads{k: k, end: end}
	ws.evCPU = k.Register(ws.onCPU)
	ws.evWrite = k.Register(ws.onWrite)
	ws.evQuota = k.Register(ws.onQuota)
	return ws
}

// GroupID is the CPU group ID of workload bi: IDs below the sidecars' (which
// count down from -1) would collide, so workloads count up from the lowest int32.
func GroupID(bi int32) int32 { return math.MinInt32 + bi }

// Add starts w, the next workload of spec.background, at time 0.
func (ws *Workloads) Add(w Workload) {
	bi := int32(len(ws.list))
	b := w.Spec
	if w.CPU != nil {
		w.cores = b.CPU.AsApproximateFloat64()
		ws.k.At(0, ws.evCPU, bi, 0)
	}
	if w.Writer >= 0 {
		w.rate = b.DiskWriteBytesPerSecond.AsApproximateFloat64()
		w.chunk, w.ioSize = *b.DiskWriteChunkBytes, *b.DiskIOBytes
		ws.k.At(0, ws.evWrite, bi, 0)
	}
	ws.list = append(ws.list, w)
}

// All is every workload, for the engine's diagnosis; callers must not change them.
func (ws *Workloads) All() []Workload { return ws.list }

// CPUChanged is told that the node's CPU moved group g, if it is a workload's,
// in or out of CFS throttling; it reports whether g was one.
func (ws *Workloads) CPUChanged(g *node.Group, at sim.Time) bool {
	bi := g.ID - GroupID(0)
	if bi < 0 || bi >= int32(len(ws.list)) {
		return false
	}
	ws.k.At(at, ws.evQuota, bi, g.Gen)
	return true
}

// onCPU sets a burner's demand for its schedule's intensity now.
func (ws *Workloads) onCPU(ev sim.Event) {
	w := &ws.list[ev.Obj]
	now := ws.k.Now()
	w.CPU.SetDemand(now, w.cores*w.Spec.Schedule.Intensity(time.Duration(now)))
	if s := w.Spec.Schedule; s != nil {
		if next := sim.Time(s.NextChange(time.Duration(now))); next < ws.end {
			ws.k.At(next, ws.evCPU, ev.Obj, 0)
		}
	}
}

// onQuota: a burner's CFS period moved it in or out of throttling.
func (ws *Workloads) onQuota(ev sim.Event) {
	if g := ws.list[ev.Obj].CPU; g.Gen == ev.Gen {
		g.Finish(ws.k.Now(), nil)
	}
}

// onWrite issues a writer's next write(2): one at a time, as a process writing in
// a loop, paced to its rate at the schedule's intensity.
func (ws *Workloads) onWrite(ev sim.Event) {
	w := &ws.list[ev.Obj]
	now := ws.k.Now()
	f := w.Spec.Schedule.Intensity(time.Duration(now))
	if f == 0 {
		if next := sim.Time(w.Spec.Schedule.NextChange(time.Duration(now))); next < ws.end {
			ws.k.At(next, ws.evWrite, ev.Obj, 0)
		}
		return
	}
	done := w.Disk.Write(now, w.Writer, w.chunk, w.ioSize)
	// A slow pace set at a low intensity ends when the schedule changes.
	paced := now + sim.Time(float64(w.chunk)/(w.rate*f)*1e9)
	if s := w.Spec.Schedule; s != nil {
		paced = min(paced, sim.Time(s.NextChange(time.Duration(now))))
	}
	ws.k.At(max(done, paced), ws.evWrite, ev.Obj, 0)
}

// Result is what each workload used over a run that ended at end; nodeName names
// a node.
func (ws *Workloads) Result(end sim.Time, nodeName func(int32) string) []result.Background {
	var out []result.Background
	dur := end.Seconds()
	for _, w := range ws.list {
		rb := result.Background{Name: w.Spec.Name, Node: nodeName(w.Node)}
		if w.CPU != nil {
			rb.CPUCores = result.Round(w.CPU.Used(end)/dur, 4)
		}
		if w.Writer >= 0 {
			rb.DiskWrittenBytes = w.Disk.Writer(w.Writer).Bytes
			rb.DiskBytesPerSecond = result.Round(float64(rb.DiskWrittenBytes)/dur, 0)
		}
		out = append(out, rb)
	}
	return out
}
