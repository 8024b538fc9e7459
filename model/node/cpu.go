// Package node models what pods on one node share. For now: CPU cores.
package node

import (
	"cmp"
	"math"
	"slices"

	"trafficlab/internal/heap"
	"trafficlab/sim"
)

// CPU is one node's cores, shared by the running requests of the containers on it.
//
// Each running request is one thread that can use at most one core (processor sharing
// within a container, as the Linux CFS scheduler does for equal-priority threads). When
// the node's cores are over-committed they are divided among the busy containers in
// proportion to their weight, as CFS divides by cpu.weight between sibling cgroups
// (cpu_weight_write_u64 turns it into the group's share, kernel/sched/core.c), a
// container never getting more than it can use (max-min fair, "water-filling"). A CPU
// limit is CFS bandwidth control: a quota of CPU time per period, after which the whole
// container stalls until the period ends (see Quota).
type CPU struct {
	cores   float64 // 0 = unlimited
	groups  []*Group
	demand  float64 // Σ over groups of demand()
	scratch []*Group
	// Changed is called for every group whose next event (Next) may have moved, so that
	// the owner can reschedule it.
	Changed func(g *Group)
}

// NewCPU returns a node with the given cores (0 = unlimited).
func NewCPU(cores float64) *CPU { return &CPU{cores: cores} }

// Cores of the node; 0 = unlimited.
func (c *CPU) Cores() float64 { return c.cores }

// Group is one container's cgroup: its running requests and their progress.
//
// Every running request progresses at the same rate, so the group keeps a virtual
// clock v (work done by any request that ran the whole time) and each request's finish
// tag v_start + work; the request with the smallest tag finishes first. A rate change
// then costs O(1) per group instead of touching every request.
type Group struct {
	cpu    *CPU
	ID     int32 // the owner's index for this group
	weight float64
	burn   float64  // steady demand of a CPU burner in the group, cores
	alloc  float64  // cores the group gets now
	rate   float64  // work-ns per ns for each running request: alloc/(running+burn)
	v      float64  // virtual clock, work-ns
	vAt    sim.Time // when v was last advanced
	used   float64  // core-ns consumed
	// jobs are the running requests by finish tag, the job (the owner's index for the
	// request) as the tie so that equal tags finish in an order fixed by the run.
	jobs heap.Heap[float64, int32, struct{}]
	bw   bandwidth
	// Gen changes whenever the next event moves; events carrying an older generation
	// are stale.
	Gen uint32
}

// AddGroup adds a container with a CFS weight (cgroup v2 cpu.weight, see CPUWeight)
// and a CPU limit as CFS bandwidth (the zero Quota for none).
func (c *CPU) AddGroup(id int32, weight float64, q Quota) *Group {
	if weight <= 0 {
		panic("node: group weight must be positive")
	}
	g := &Group{cpu: c, ID: id, weight: weight}
	g.bw.init(q)
	c.groups = append(c.groups, g)
	return g
}

// Running is the number of requests on CPU (throttled ones included).
func (g *Group) Running() int { return len(g.jobs) }

// Used is the CPU time consumed up to now, in core-seconds, burner included.
func (g *Group) Used(now sim.Time) float64 {
	g.advance(now)
	return g.used / 1e9
}

// Capacity is the most cores this group could use on average: its limit (quota per
// period), else the node's cores (0 when both are unlimited).
func (g *Group) Capacity() float64 {
	if b := &g.bw; b.quota > 0 {
		limit := b.quota / float64(b.period)
		if g.cpu.cores == 0 || limit < g.cpu.cores {
			return limit
		}
	}
	return g.cpu.cores
}

// Start puts a request needing work nanoseconds of CPU on the group.
func (g *Group) Start(now sim.Time, job int32, work int64) {
	g.advance(now)
	g.jobs.Push(g.v+float64(work), job, struct{}{})
	g.settle(now)
	g.cpu.rebalance(now, g)
}

// SetDemand makes the group burn cores of CPU from now on, steadily, on top of its
// requests (0 stops it): a CPU hog, a batch job or node daemons. The burner takes part
// in water-filling and in the group's quota like any thread of the container; when the
// group gets less than it asks for, requests and burner are slowed in proportion.
func (g *Group) SetDemand(now sim.Time, cores float64) {
	if cores < 0 || math.IsNaN(cores) {
		panic("node: negative CPU demand")
	}
	g.advance(now)
	g.burn = cores
	g.settle(now)
	g.cpu.rebalance(now, g)
}

// Demand is the burner's demand, cores.
func (g *Group) Demand() float64 { return g.burn }

// Next is the group's next event: the first running request finishing, the quota
// running out, or the throttled period ending; ok=false when none is due. The owner
// calls Finish then.
func (g *Group) Next() (at sim.Time, ok bool) {
	if len(g.jobs) > 0 && g.rate > 0 {
		left := g.jobs[0].Key - g.v
		if left < 0 {
			left = 0
		}
		at, ok = g.vAt+sim.Time(math.Ceil(left/g.rate)), true
	}
	if g.bw.quota == 0 {
		return at, ok
	}
	return g.bw.next(g, at, ok)
}

// Finish removes the requests done by now, appending their jobs to done, and applies
// the quota's transitions due by now.
func (g *Group) Finish(now sim.Time, done []int32) []int32 {
	g.advance(now)
	// Half a nanosecond of work absorbs the rounding of Next up to whole nanoseconds.
	for len(g.jobs) > 0 && g.jobs[0].Key <= g.v+0.5 {
		done = append(done, g.jobs.Pop().Tie)
	}
	g.settle(now)
	g.cpu.rebalance(now, g)
	return done
}

// Abort drops every running request, as when the container's process dies, appending
// their jobs to out. The CPU they would have used goes to the node's other pods.
func (g *Group) Abort(now sim.Time, out []int32) []int32 {
	g.advance(now)
	for len(g.jobs) > 0 {
		out = append(out, g.jobs.Pop().Tie)
	}
	g.settle(now)
	g.cpu.rebalance(now, g)
	return out
}

// Remove takes an idle group off the node, once its pod is gone. A burner must be
// stopped first (SetDemand 0).
func (g *Group) Remove() {
	if len(g.jobs) > 0 || g.burn > 0 {
		panic("node: removing a group with running requests or demand")
	}
	c := g.cpu
	if i := slices.Index(c.groups, g); i >= 0 {
		c.groups = slices.Delete(c.groups, i, i+1)
	}
	g.Gen++ // whatever the owner still has scheduled for it is stale
}

// busy: the group has runnable work (throttled or not).
func (g *Group) busy() bool { return len(g.jobs) > 0 || g.burn > 0 }

// settle applies the quota's transitions due by now after one of the group's own
// changes (g advanced to now). Only a group's own operations change its throttling, so
// that the node's demand only moves where rebalance looks.
func (g *Group) settle(now sim.Time) {
	if g.bw.quota > 0 {
		g.bw.transition(g, now)
	}
}

func (g *Group) advance(now sim.Time) {
	if now <= g.vAt {
		return // never backwards: that would count the interval twice
	}
	dt := float64(now - g.vAt)
	// Explicit float64 conversions keep the compiler from fusing multiply-adds, which
	// some architectures do and which would change results across machines.
	g.v += float64(g.rate * dt)
	use := float64(g.alloc * dt)
	g.used += use
	if g.bw.quota > 0 {
		g.bw.advance(g, now, use)
	}
	g.vAt = now
}

// demand is how many cores the group could use now: one per running request plus the
// burner, none while throttled.
func (g *Group) demand() float64 {
	if g.bw.throttled {
		return 0
	}
	return float64(len(g.jobs)) + g.burn
}

func (g *Group) setAlloc(alloc float64) {
	g.alloc = alloc
	g.rate = 0
	if d := float64(len(g.jobs)) + g.burn; d > 0 && alloc > 0 {
		g.rate = alloc / d
	}
}

func (c *CPU) notify(g *Group) {
	g.Gen++
	if c.Changed != nil {
		c.Changed(g)
	}
}

// rebalance recomputes allocations after g's demand changed. While the node has cores
// to spare, only g's own allocation moves; otherwise every busy group's share is
// recomputed.
func (c *CPU) rebalance(now sim.Time, g *Group) {
	before := c.demand
	c.demand = 0
	for _, x := range c.groups {
		c.demand += x.demand()
	}
	if c.cores == 0 || (before <= c.cores && c.demand <= c.cores) {
		g.setAlloc(g.demand())
		c.notify(g)
		return
	}
	c.waterFill(now, g)
}

// waterFill gives each busy group min(demand, λ·weight) with λ set so that the node's
// cores are all used: max-min fairness weighted by cpu.weight.
func (c *CPU) waterFill(now sim.Time, changed *Group) {
	busy := c.scratch[:0]
	for _, x := range c.groups {
		x.advance(now)
		if x.demand() > 0 {
			busy = append(busy, x)
		} else {
			x.setAlloc(0) // idle or throttled: already 0 unless x is changed
		}
	}
	slices.SortStableFunc(busy, func(a, b *Group) int {
		return cmp.Compare(a.demand()/a.weight, b.demand()/b.weight)
	})
	left, weights := c.cores, 0.0
	for _, x := range busy {
		weights += x.weight
	}
	for _, x := range busy {
		alloc := left * x.weight / weights
		if d := x.demand(); d < alloc {
			alloc = d
		}
		left -= alloc
		weights -= x.weight
		old := x.alloc
		x.setAlloc(alloc)
		if x.alloc != old || x == changed {
			c.notify(x)
		}
	}
	if changed.demand() == 0 {
		c.notify(changed) // a throttled group still has its period's end to wait for
	}
	c.scratch = busy
}
