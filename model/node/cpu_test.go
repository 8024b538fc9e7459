package node

import (
	"math"
	"testing"

	"trafficlab/sim"
)

// driver runs a CPU on the event kernel as its owner would and records, per job, when
// it finished and how long its group stalled throttled in between.
type driver struct {
	k      *sim.Kernel
	kind   uint8
	cpu    *CPU
	grp    []*Group
	done   map[int32]sim.Time
	stall  map[int32]sim.Time // Throttled at start, then the difference at finish
	events []int              // events handled with a current Gen, per group
	lastAt sim.Time           // time of the last event handled
	sameAt int                // events handled at lastAt
}

func newDriver(cores float64) *driver {
	d := &driver{k: sim.New(), cpu: NewCPU(cores), done: map[int32]sim.Time{}, stall: map[int32]sim.Time{}}
	d.kind = d.k.Register(d.Handle)
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
	d.events[ev.Obj]++
	now := d.k.Now()
	if now != d.lastAt {
		d.lastAt, d.sameAt = now, 0
	}
	if d.sameAt++; d.sameAt > 1000 {
		panic("node: event storm: 1000 events at one instant")
	}
	for _, j := range g.Finish(now, nil) {
		d.done[j] = now
		d.stall[j] = g.Throttled(now) - d.stall[j]
	}
}

func (d *driver) group(weight float64, q Quota) *Group {
	g := d.cpu.AddGroup(int32(len(d.grp)), weight, q)
	d.grp = append(d.grp, g)
	d.events = append(d.events, 0)
	return g
}

// start runs the kernel to at and starts job there.
func (d *driver) start(group int, job int32, at, work sim.Time) {
	d.k.Run(at)
	g := d.grp[group]
	d.stall[job] = g.Throttled(d.k.Now())
	g.Start(d.k.Now(), job, int64(work))
}

const ms = sim.Time(1e6)

// limit is a CPU limit of m millicores as kubelet sets it, boundaries at 0.
func limit(m int64) Quota { return MilliCPUToQuota(m, 0) }

type start struct {
	group int
	job   int32
	at    sim.Time
	work  sim.Time
}

func TestProcessorSharing(t *testing.T) {
	cases := []struct {
		name   string
		cores  float64
		quotas []Quota
		weight []float64
		starts []start
		want   map[int32]sim.Time
	}{
		{
			name: "unlimited: a request never waits for another", quotas: []Quota{{}},
			starts: []start{{0, 1, 0, 10 * ms}, {0, 2, 0, 30 * ms}, {0, 3, 5 * ms, 10 * ms}},
			want:   map[int32]sim.Time{1: 10 * ms, 2: 30 * ms, 3: 15 * ms},
		},
		{
			// Two share one core: job 1 (10 ms of work) ends at 20 ms; job 2 has 10 ms of
			// its 20 left and, alone at full speed, ends at 30 ms.
			name: "a short request leaves early and the rest speed up", cores: 1, quotas: []Quota{{}},
			starts: []start{{0, 1, 0, 10 * ms}, {0, 2, 0, 20 * ms}},
			want:   map[int32]sim.Time{1: 20 * ms, 2: 30 * ms},
		},
		{
			// A thread uses at most one core even under a 2-core limit.
			name: "one request cannot use two cores", quotas: []Quota{limit(2000)},
			starts: []start{{0, 1, 0, 10 * ms}},
			want:   map[int32]sim.Time{1: 10 * ms},
		},
		{
			// 2 cores, 2 pods with 2 requests each: a core per pod, half a core per request.
			name: "node cores split between pods", cores: 2, quotas: []Quota{{}, {}},
			starts: []start{{0, 1, 0, 10 * ms}, {0, 2, 0, 10 * ms}, {1, 3, 0, 10 * ms}, {1, 4, 0, 10 * ms}},
			want:   map[int32]sim.Time{1: 20 * ms, 2: 20 * ms, 3: 20 * ms, 4: 20 * ms},
		},
		{
			// 2 cores; pod A has 1 request (can use 1 core), pod B 3 requests: max-min
			// fairness gives A its 1 core and B the other: B's requests run at 1/3.
			name: "water-filling gives spare share to the busier pod", cores: 2, quotas: []Quota{{}, {}},
			starts: []start{{0, 1, 0, 10 * ms}, {1, 2, 0, 10 * ms}, {1, 3, 0, 10 * ms}, {1, 4, 0, 10 * ms}},
			// B: 0-10 ms at 1/3 → 3.33 ms done each; then 2 cores for 3: 2/3 each, 6.67 ms
			// left → 10 ms more: all end at 20 ms.
			want: map[int32]sim.Time{1: 10 * ms, 2: 20 * ms, 3: 20 * ms, 4: 20 * ms},
		},
		{
			// 1 core, weights 2:1, both saturated: A gets 2/3 core. A's 20 ms job ends at
			// 30 ms; B did 10 ms of its 20 by then and finishes alone at 40 ms.
			name: "busy node divides by weight", cores: 1, quotas: []Quota{{}, {}}, weight: []float64{2, 1},
			starts: []start{{0, 1, 0, 20 * ms}, {1, 2, 0, 20 * ms}},
			want:   map[int32]sim.Time{1: 30 * ms, 2: 40 * ms},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDriver(c.cores)
			for i, q := range c.quotas {
				w := 1.0
				if c.weight != nil {
					w = c.weight[i]
				}
				d.group(w, q)
			}
			for _, s := range c.starts {
				d.start(s.group, s.job, s.at, s.work)
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
	g := d.group(1, limit(1000))
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
	dying, survivor := d.group(1, Quota{}), d.group(1, Quota{})
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

func TestCapacity(t *testing.T) {
	cases := []struct {
		name  string
		cores float64
		q     Quota
		want  float64
	}{
		{"500m limit on 4 cores", 4, limit(500), 0.5},
		{"limit above the node", 4, limit(8000), 4},
		{"no limit: the node", 4, Quota{}, 4},
		{"nothing limits", 0, Quota{}, 0},
		{"limit on an unlimited node", 0, limit(1500), 1.5},
		// 20 ms per 50 ms period is 0.4 cores.
		{"custom period", 0, Quota{Runtime: 20 * ms, Period: 50 * ms}, 0.4},
	}
	for _, c := range cases {
		if got := NewCPU(c.cores).AddGroup(0, 1, c.q).Capacity(); got != c.want {
			t.Errorf("%s: capacity %v, want %v", c.name, got, c.want)
		}
	}
}
