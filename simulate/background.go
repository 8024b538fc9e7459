package simulate

import (
	"fmt"
	"math"

	"trafficlab/model/disk"
	"trafficlab/model/node"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// background is a workload that serves no traffic: it burns CPU, writes to its
// node's disk, or both, at an intensity its schedule sets.
type background struct {
	spec   *scenario.Background
	node   int32
	grp    *node.Group // nil when it burns no CPU
	cores  float64     // at full intensity
	rate   float64     // disk bytes per second at full intensity; 0 = none
	chunk  int64
	ioSize int64
	writer int32
}

// scheduleStep is how often a diurnal intensity is updated: the same chords as a
// diurnal rate curve.
func scheduleStep(s *scenario.Schedule) sim.Time {
	return sim.Duration(s.Diurnal.Period.Duration) / diurnalSteps
}

// intensity is a schedule's factor at t, from 0 to 1: the diurnal cosine times 1 in
// a burst and 0 between bursts.
func intensity(s *scenario.Schedule, t sim.Time) float64 {
	if s == nil {
		return 1
	}
	f := 1.0
	if d := s.Diurnal; d != nil {
		phase := 2 * math.Pi * (t - sim.Duration(d.PeakAt.Duration)).Seconds() / d.Period.Seconds()
		f = d.Min + (*d.Max-d.Min)*(1+math.Cos(phase))/2
	}
	if b := s.Bursts; b != nil && !inBurst(b, t) {
		f = 0
	}
	return f
}

func inBurst(b *scenario.Bursts, t sim.Time) bool {
	start := sim.Duration(b.Start.Duration)
	if t < start {
		return false
	}
	return (t-start)%sim.Duration(b.Every.Duration) < sim.Duration(b.Length.Duration)
}

// nextChange is the next time after t at which a schedule's intensity moves: a burst
// edge or the next diurnal step.
func nextChange(s *scenario.Schedule, t sim.Time) sim.Time {
	next := sim.Time(math.MaxInt64)
	if s.Diurnal != nil {
		next = t + scheduleStep(s)
	}
	if b := s.Bursts; b != nil {
		start, every, length := sim.Duration(b.Start.Duration), sim.Duration(b.Every.Duration), sim.Duration(b.Length.Duration)
		edge := start
		if t >= start {
			k := (t - start) / every
			edge = start + k*every
			if t >= edge+length {
				edge += every
			} else {
				edge += length
			}
		}
		next = min(next, edge)
	}
	return next
}

// addBackground places workload bi and starts it.
func (e *Engine) addBackground(bi int32, b *scenario.Background) error {
	n, err := e.sched.Schedule(placement.BackgroundPod(b))
	if err != nil {
		return fieldError(fmt.Sprintf("spec.background[%d]", bi), placement.Unschedulable(b.Name, err))
	}
	w := background{spec: b, node: int32(n), writer: -1}
	if b.CPU != nil {
		w.cores = b.CPU.AsApproximateFloat64()
		w.grp = e.nodes[n].cpu.AddGroup(backgroundGroup(bi), cpuWeight(&b.Resources), e.cpuQuota(&b.Resources, "background/"+b.Name))
		e.k.At(0, e.evBackgroundCPU, bi, 0)
	}
	if q := b.DiskWriteBytesPerSecond; q != nil {
		if e.nodes[n].disk == nil {
			// Its writes never wait, but they are counted.
			e.nodes[n].disk = disk.New(disk.Limits{})
		}
		w.rate = q.AsApproximateFloat64()
		w.chunk, w.ioSize = *b.DiskWriteChunkBytes, *b.DiskIOBytes
		w.writer = e.addWriter(int32(n), b.Name, true)
		e.k.At(0, e.evBackgroundWrite, bi, 0)
	}
	e.backgrounds = append(e.backgrounds, w)
	return nil
}

// onBackgroundCPU sets a burner's demand for its schedule's intensity now.
func (e *Engine) onBackgroundCPU(ev sim.Event) {
	w := &e.backgrounds[ev.Obj]
	now := e.k.Now()
	w.grp.SetDemand(now, w.cores*intensity(w.spec.Schedule, now))
	if s := w.spec.Schedule; s != nil {
		if next := nextChange(s, now); next < e.end {
			e.k.At(next, e.evBackgroundCPU, ev.Obj, 0)
		}
	}
}

// onBackgroundQuota: a burner's CFS period moved it in or out of throttling.
func (e *Engine) onBackgroundQuota(ev sim.Event) {
	if g := e.backgrounds[ev.Obj].grp; g.Gen == ev.Gen {
		g.Finish(e.k.Now(), nil)
	}
}

// onBackgroundWrite issues a writer's next write(2): one at a time, as a process
// writing in a loop, paced to its rate at the schedule's intensity.
func (e *Engine) onBackgroundWrite(ev sim.Event) {
	w := &e.backgrounds[ev.Obj]
	now := e.k.Now()
	f := intensity(w.spec.Schedule, now)
	if f == 0 {
		if next := nextChange(w.spec.Schedule, now); next < e.end {
			e.k.At(next, e.evBackgroundWrite, ev.Obj, 0)
		}
		return
	}
	done := e.nodes[w.node].disk.Write(now, w.writer, w.chunk, w.ioSize)
	// A slow pace set at a low intensity ends when the schedule changes.
	paced := now + sim.Time(float64(w.chunk)/(w.rate*f)*1e9)
	if s := w.spec.Schedule; s != nil {
		paced = min(paced, nextChange(s, now))
	}
	e.k.At(max(done, paced), e.evBackgroundWrite, ev.Obj, 0)
}

// backgroundGroup is the CPU group ID of background workload bi: IDs below the
// envoys' (which count down from -1) would collide, so workloads count up from the
// lowest int32.
func backgroundGroup(bi int32) int32 { return math.MinInt32 + bi }

// backgroundResult reports what each workload used.
func (e *Engine) backgroundResult() []result.Background {
	var out []result.Background
	dur := e.end.Seconds()
	for _, w := range e.backgrounds {
		rb := result.Background{Name: w.spec.Name, Node: e.nodes[w.node].name}
		if w.grp != nil {
			rb.CPUCores = result.Round(w.grp.Used(e.end)/dur, 4)
		}
		if w.writer >= 0 {
			rb.DiskWrittenBytes = e.nodes[w.node].disk.Writer(w.writer).Bytes
			rb.DiskBytesPerSecond = result.Round(float64(rb.DiskWrittenBytes)/dur, 0)
		}
		out = append(out, rb)
	}
	return out
}

// registerBackground registers the event kinds of background workload events with the kernel.
func (e *Engine) registerBackground() {
	e.evBackgroundCPU = e.k.Register(e.onBackgroundCPU)
	e.evBackgroundWrite = e.k.Register(e.onBackgroundWrite)
	e.evBackgroundQuota = e.k.Register(e.onBackgroundQuota)
}
