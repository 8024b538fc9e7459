// Package node models what pods on one node share. For now: CPU cores.
package node

import (
	"cmp"
	"math"
	"slices"

	"trafficlab/sim"
)

// CPU is one node's cores, shared by the running requests of the containers on it.
//
// Each running request is one thread that can use at most one core (processor sharing
// within a container, as the Linux CFS scheduler does for equal-priority threads). A
// container gets at most its CPU limit. When the node's cores are over-committed they
// are divided among the busy containers in proportion to their weight, as CFS divides
// by cpu.weight between sibling cgroups, a container never getting more than it can
// use (max-min fair, "water-filling"). CFS quota periods (throttling) are not modelled
// here: the limit acts as a steady cap. The 100 ms quota arithmetic arrives with the
// node resources model.
type CPU struct {
	cores   float64 // 0 = unlimited
	groups  []*Group
	demand  float64 // Σ over groups of min(running, limit)
	scratch []*Group
	// Changed is called for every group whose per-request rate changed, so that the
	// owner can reschedule the group's next completion.
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
	ID     int32   // the owner's index for this group
	limit  float64 // cores; 0 = unlimited
	weight float64
	rate   float64  // work-ns per ns for each running request
	v      float64  // virtual clock, work-ns
	vAt    sim.Time // when v was last advanced
	used   float64  // core-ns consumed
	jobs   tagHeap
	// Gen changes whenever the next completion moves; events carrying an older
	// generation are stale.
	Gen uint32
}

// AddGroup adds a container with a CPU limit (0 = unlimited) and a CFS weight.
func (c *CPU) AddGroup(id int32, limit, weight float64) *Group {
	g := &Group{cpu: c, ID: id, limit: limit, weight: weight}
	c.groups = append(c.groups, g)
	return g
}

// Running is the number of requests on CPU.
func (g *Group) Running() int { return len(g.jobs) }

// Used is the CPU time consumed up to now, in core-seconds.
func (g *Group) Used(now sim.Time) float64 {
	g.advance(now)
	return g.used / 1e9
}

// Capacity is the most cores this group could use: its limit, else the node's cores
// (0 when both are unlimited).
func (g *Group) Capacity() float64 {
	if g.limit > 0 && (g.cpu.cores == 0 || g.limit < g.cpu.cores) {
		return g.limit
	}
	return g.cpu.cores
}

// Start puts a request needing work nanoseconds of CPU on the group.
func (g *Group) Start(now sim.Time, job int32, work int64) {
	g.advance(now)
	g.jobs.push(tagged{tag: g.v + float64(work), job: job})
	g.cpu.rebalance(now, g)
}

// Next is when the first running request finishes; ok=false when none runs.
func (g *Group) Next() (at sim.Time, ok bool) {
	if len(g.jobs) == 0 || g.rate == 0 {
		return 0, false
	}
	left := g.jobs[0].tag - g.v
	if left < 0 {
		left = 0
	}
	return g.vAt + sim.Time(math.Ceil(left/g.rate)), true
}

// Finish removes the requests done by now, appending their jobs to done.
func (g *Group) Finish(now sim.Time, done []int32) []int32 {
	g.advance(now)
	// Half a nanosecond of work absorbs the rounding of Next up to whole nanoseconds.
	for len(g.jobs) > 0 && g.jobs[0].tag <= g.v+0.5 {
		done = append(done, g.jobs.pop().job)
	}
	g.cpu.rebalance(now, g)
	return done
}

// Abort drops every running request, as when the container's process dies, appending
// their jobs to out. The CPU they would have used goes to the node's other pods.
func (g *Group) Abort(now sim.Time, out []int32) []int32 {
	g.advance(now)
	for len(g.jobs) > 0 {
		out = append(out, g.jobs.pop().job)
	}
	g.cpu.rebalance(now, g)
	return out
}

// Remove takes an idle group off the node, once its pod is gone.
func (g *Group) Remove() {
	if len(g.jobs) > 0 {
		panic("node: removing a group with running requests")
	}
	c := g.cpu
	if i := slices.Index(c.groups, g); i >= 0 {
		c.groups = slices.Delete(c.groups, i, i+1)
	}
}

func (g *Group) advance(now sim.Time) {
	if dt := float64(now - g.vAt); dt > 0 {
		// Explicit float64 conversions keep the compiler from fusing multiply-adds,
		// which some architectures do and which would change results across machines.
		g.v += float64(g.rate * dt)
		g.used += float64(float64(g.rate*dt) * float64(len(g.jobs)))
	}
	g.vAt = now
}

func (g *Group) demand() float64 {
	d := float64(len(g.jobs))
	if g.limit > 0 && g.limit < d {
		d = g.limit
	}
	return d
}

func (g *Group) setAlloc(alloc float64) {
	rate := 0.0
	if n := len(g.jobs); n > 0 {
		rate = alloc / float64(n)
	}
	if rate != g.rate {
		g.rate = rate
	}
}

// rebalance recomputes rates after g's running set changed. While the node has cores
// to spare, only g's own rate moves; otherwise every busy group's share is recomputed.
func (c *CPU) rebalance(now sim.Time, g *Group) {
	before := c.demand
	c.demand = 0
	for _, x := range c.groups {
		c.demand += x.demand()
	}
	if c.cores == 0 || (before <= c.cores && c.demand <= c.cores) {
		g.setAlloc(g.demand())
		g.Gen++
		if c.Changed != nil {
			c.Changed(g)
		}
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
		if len(x.jobs) > 0 {
			busy = append(busy, x)
		} else {
			x.rate = 0
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
		old := x.rate
		x.setAlloc(alloc)
		if x.rate != old || x == changed {
			x.Gen++
			if c.Changed != nil {
				c.Changed(x)
			}
		}
	}
	if changed.Running() == 0 {
		changed.Gen++
	}
	c.scratch = busy
}

type tagged struct {
	tag float64
	job int32
}

// tagHeap is a binary min-heap by finish tag, ties by job index for determinism.
type tagHeap []tagged

func (h tagHeap) less(i, j int) bool {
	if h[i].tag != h[j].tag {
		return h[i].tag < h[j].tag
	}
	return h[i].job < h[j].job
}

func (h *tagHeap) push(t tagged) {
	*h = append(*h, t)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *tagHeap) pop() tagged {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	*h = q
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	return top
}
