package node

import (
	"math"
	"testing"

	"trafficlab/sim"
)

// driver runs a CPU on the event kernel and records each job's completion time.
type driver struct {
	k    *sim.Kernel
	kind uint8
	cpu  *CPU
	grp  []*Group
	done map[int32]sim.Time
}

func newDriver(cores float64) *driver {
	d := &driver{k: sim.New(), cpu: NewCPU(cores), done: map[int32]sim.Time{}}
	d.kind = d.k.Register(d)
	d.cpu.Changed = func(g *Group) {
		if at, ok := g.Next(); ok {
			d.k.At(at, d.kind, g.ID, g.Gen)
		}
	}
	return d
}

func (d *driver) Handle(ev sim.Event) {
	g := d.grp[ev.Obj]
	if ev.Gen != g.Gen {
		return
	}
	for _, j := range g.Finish(d.k.Now(), nil) {
		d.done[j] = d.k.Now()
	}
}

func (d *driver) group(limit, weight float64) *Group {
	g := d.cpu.AddGroup(int32(len(d.grp)), limit, weight)
	d.grp = append(d.grp, g)
	return g
}

const ms = sim.Time(1e6)

func TestProcessorSharing(t *testing.T) {
	type start struct {
		group int
		job   int32
		at    sim.Time
		work  sim.Time
	}
	cases := []struct {
		name   string
		cores  float64
		limits []float64
		weight []float64
		starts []start
		want   map[int32]sim.Time
	}{
		{
			// DESIGN.md: 4 busy threads under a 1-CPU limit share one core.
			name: "four requests share a 1-core limit", limits: []float64{1},
			starts: []start{{0, 1, 0, 25 * ms}, {0, 2, 0, 25 * ms}, {0, 3, 0, 25 * ms}, {0, 4, 0, 25 * ms}},
			want:   map[int32]sim.Time{1: 100 * ms, 2: 100 * ms, 3: 100 * ms, 4: 100 * ms},
		},
		{
			name: "unlimited: a request never waits for another", limits: []float64{0},
			starts: []start{{0, 1, 0, 10 * ms}, {0, 2, 0, 30 * ms}, {0, 3, 5 * ms, 10 * ms}},
			want:   map[int32]sim.Time{1: 10 * ms, 2: 30 * ms, 3: 15 * ms},
		},
		{
			// Two share one core: job 1 (10 ms of work) ends at 20 ms; job 2 has 10 ms of
			// its 20 left and, alone at full speed, ends at 30 ms.
			name: "a short request leaves early and the rest speed up", limits: []float64{1},
			starts: []start{{0, 1, 0, 10 * ms}, {0, 2, 0, 20 * ms}},
			want:   map[int32]sim.Time{1: 20 * ms, 2: 30 * ms},
		},
		{
			// A thread uses at most one core even under a 2-core limit.
			name: "one request cannot use two cores", limits: []float64{2},
			starts: []start{{0, 1, 0, 10 * ms}},
			want:   map[int32]sim.Time{1: 10 * ms},
		},
		{
			// 2 cores, 2 pods with 2 requests each: a core per pod, half a core per request.
			name: "node cores split between pods", cores: 2, limits: []float64{0, 0},
			starts: []start{{0, 1, 0, 10 * ms}, {0, 2, 0, 10 * ms}, {1, 3, 0, 10 * ms}, {1, 4, 0, 10 * ms}},
			want:   map[int32]sim.Time{1: 20 * ms, 2: 20 * ms, 3: 20 * ms, 4: 20 * ms},
		},
		{
			// 2 cores; pod A has 1 request (can use 1 core), pod B 3 requests: max-min
			// fairness gives A its 1 core and B the other: B's requests run at 1/3.
			name: "water-filling gives spare share to the busier pod", cores: 2, limits: []float64{0, 0},
			starts: []start{{0, 1, 0, 10 * ms}, {1, 2, 0, 10 * ms}, {1, 3, 0, 10 * ms}, {1, 4, 0, 10 * ms}},
			// B: 0-10 ms at 1/3 → 3.33 ms done each; then 2 cores for 3: 2/3 each, 6.67 ms
			// left → 10 ms more: all end at 20 ms.
			want: map[int32]sim.Time{1: 10 * ms, 2: 20 * ms, 3: 20 * ms, 4: 20 * ms},
		},
		{
			// 1 core, weights 2:1, both saturated: A gets 2/3 core. A's 20 ms job ends at
			// 30 ms; B did 10 ms of its 20 by then and finishes alone at 40 ms.
			name: "busy node divides by weight", cores: 1, limits: []float64{0, 0}, weight: []float64{2, 1},
			starts: []start{{0, 1, 0, 20 * ms}, {1, 2, 0, 20 * ms}},
			want:   map[int32]sim.Time{1: 30 * ms, 2: 40 * ms},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDriver(c.cores)
			for i, l := range c.limits {
				w := 1.0
				if c.weight != nil {
					w = c.weight[i]
				}
				d.group(l, w)
			}
			for _, s := range c.starts {
				d.k.Run(s.at)
				d.grp[s.group].Start(d.k.Now(), s.job, int64(s.work))
			}
			d.k.Run(10 * 1000 * ms)
			for job, want := range c.want {
				if got := d.done[job]; got < want-1 || got > want+1 {
					t.Errorf("job %d done at %v ms, want %v ms", job, float64(got)/1e6, float64(want)/1e6)
				}
			}
		})
	}
}

func TestUsedCountsCoreSeconds(t *testing.T) {
	d := newDriver(0)
	g := d.group(1, 1)
	for j := int32(0); j < 4; j++ {
		g.Start(0, j, int64(25*ms))
	}
	d.k.Run(1000 * ms)
	// 100 ms of work on a 1-core limit: 0.1 core-seconds used.
	if got := g.Used(d.k.Now()); math.Abs(got-0.1) > 1e-9 {
		t.Fatalf("used %.6f core-s, want 0.1", got)
	}
}

// A pod whose process dies frees its cores at once: on a 1-core node shared by two
// pods, the survivor's request runs at full speed from the abort on.
func TestAbortFreesTheNode(t *testing.T) {
	d := newDriver(1)
	dying, survivor := d.group(0, 1), d.group(0, 1)
	dying.Start(0, 0, int64(100*ms))
	survivor.Start(0, 1, int64(100*ms))
	d.k.Run(40 * ms) // both at half speed: 20 ms of work each so far
	if got := dying.Abort(d.k.Now(), nil); len(got) != 1 || got[0] != 0 {
		t.Fatalf("aborted %v, want [0]", got)
	}
	dying.Remove()
	d.k.Run(1000 * ms)
	if _, ok := d.done[0]; ok {
		t.Errorf("aborted job 0 completed")
	}
	// 80 ms of work left at full speed from 40 ms.
	if got := d.done[1]; got < 120*ms-1 || got > 120*ms+1 {
		t.Errorf("survivor done at %v ms, want 120", float64(got)/1e6)
	}
	if n := len(d.cpu.groups); n != 1 {
		t.Errorf("%d groups left on the node, want 1", n)
	}
	// Core-time used by the dead pod stays counted: 20 ms.
	if got := dying.Used(d.k.Now()); math.Abs(got-0.02) > 1e-9 {
		t.Errorf("dead pod used %.6f core-s, want 0.02", got)
	}
}
