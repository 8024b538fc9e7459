package node

import (
	"math"

	"trafficlab/sim"
)

// Quota is a container's CPU limit as Linux enforces it, CFS bandwidth control (cgroup
// v2 cpu.max "quota period"; kernel/sched/fair.c, struct cfs_bandwidth): the container
// may use Runtime of CPU time per Period, summed over all its threads; once it has,
// every thread stalls until the period ends and the runtime is refilled. Periods start
// at Offset + k·Period. The kernel gives each cgroup's period timer a random phase in
// [0, period) when it creates the cgroup (init_cfs_bandwidth, since the 2023 patch
// "sched: Interleave cfs bandwidth timers"; before, all were in phase), and
// start_cfs_bandwidth keeps it by moving the timer on in whole periods: draw Offset
// uniformly per container.
type Quota struct {
	Runtime sim.Time // CPU time per period; 0 = no limit
	Period  sim.Time // 0 = QuotaPeriod
	Offset  sim.Time // a period boundary
}

const (
	// QuotaPeriod is the CFS period kubelet sets: cm.QuotaPeriod = 100000 µs
	// (pkg/kubelet/cm/helpers_linux.go), also the kernel's default cpu.max period.
	QuotaPeriod = 100 * sim.Time(1e6)
	// MinQuota is the least quota kubelet sets, cm.MinQuotaPeriod = 1000 µs, the
	// kernel's minimum (min_cfs_quota_period, kernel/sched/core.c).
	MinQuota = sim.Time(1e6)
)

// Stat is the group's bandwidth accounting as cgroup v2 cpu.stat reports it
// (cpu_extra_stat_show, kernel/sched/core.c).
type Stat struct {
	// NrPeriods counts the periods in which the group had runnable work.
	NrPeriods int64
	// NrThrottled counts the periods in which the group ran out of quota with work
	// left to run.
	NrThrottled int64
	// ThrottledTime is throttled_usec, in nanoseconds. The kernel sums it over the
	// per-CPU runqueues that held the group's runnable threads while throttled
	// (unthrottle_cfs_rq adds each cfs_rq's throttled_clock span), so 4 threads
	// throttled 75 ms count 300 ms. Here a group's threads are taken to sit on
	// min(threads, node cores) CPUs, a burner of d cores on ⌈d⌉.
	ThrottledTime sim.Time
}

// bandwidth is a group's CFS bandwidth state. Its per-period consumption is settled
// lazily: nothing happens at a period boundary unless the group is throttled.
type bandwidth struct {
	quota     float64 // CPU-ns per period; 0 = unlimited
	period    sim.Time
	end       sim.Time // end of the current period, the one spent counts
	spent     float64  // CPU-ns used in the current period
	throttled bool
	until     sim.Time // a throttled group waits for this boundary
	counted   sim.Time // end of the last period counted in NrPeriods
	stat      Stat
	stalled   sim.Time // wall time throttled with runnable work
}

func (b *bandwidth) init(q Quota) {
	if q.Runtime < 0 || q.Period < 0 {
		panic("node: negative CPU quota or period")
	}
	if q.Runtime == 0 {
		return
	}
	b.quota = float64(q.Runtime)
	b.period = q.Period
	if b.period == 0 {
		b.period = QuotaPeriod
	}
	// The first boundary after time 0, when the group's clock starts.
	b.end = q.Offset % b.period
	if b.end <= 0 {
		b.end += b.period
	}
	b.counted = -1
}

// advance accounts the interval from g.vAt to now, during which g consumed use CPU-ns
// at a constant allocation; it rolls the period over when now crossed boundaries.
func (b *bandwidth) advance(g *Group, now sim.Time, use float64) {
	from := g.vAt
	busy := g.busy()
	if busy {
		if b.counted != b.end {
			b.stat.NrPeriods++
			b.counted = b.end
		}
		if b.throttled {
			if d := min(now, b.until) - from; d > 0 {
				b.stalled += d
				b.stat.ThrottledTime += d * g.runqueues()
			}
		}
	}
	if now < b.end {
		// __account_cfs_rq_runtime: the group's threads draw on its runtime.
		b.spent += use
		return
	}
	// Crossed m boundaries; the period holding now began at start. The periods between
	// were wholly inside the interval; the current one counts if it began before now.
	m := 1 + (now-b.end)/b.period
	start := b.end + (m-1)*b.period
	if busy {
		b.stat.NrPeriods += int64(m - 1)
		if start < now {
			b.stat.NrPeriods++
			b.counted = start + b.period
		}
	}
	b.end = start + b.period
	// __refill_cfs_bandwidth_runtime: each period starts afresh (no cpu.max.burst).
	// The allocation was constant, so what it used since start is exact.
	b.spent = float64(g.alloc * float64(now-start))
}

// transition applies the quota's state changes due by now; g has been advanced to now
// and has made its change.
func (b *bandwidth) transition(g *Group, now sim.Time) {
	if b.throttled {
		if now < b.until {
			return
		}
		// sched_cfs_period_timer → distribute_cfs_runtime → unthrottle_cfs_rq: the
		// refill at the boundary releases the group (advance reset spent).
		b.throttled = false
	}
	// What is left within half a nanosecond at the group's rate counts as spent, as
	// Finish absorbs half a nanosecond of work: it covers Next's rounding up and the
	// float error of summing spent. The runtime is then exactly spent, so no sliver is
	// left to schedule an event for.
	if b.quota-b.spent <= 0.5*g.alloc {
		b.spent = b.quota
	}
	// throttle_cfs_rq: out of runtime, the group's runnable threads leave the CPU. A
	// group that has just gone idle is left alone (and uncounted) until work arrives
	// within the period.
	if b.spent >= b.quota && g.busy() {
		b.throttled = true
		b.until = b.end
		b.stat.NrThrottled++
	}
}

// next folds the quota's next event into the request completion at (ok).
func (b *bandwidth) next(g *Group, at sim.Time, ok bool) (sim.Time, bool) {
	if b.throttled {
		if g.busy() {
			return b.until, true // the owner lets it run again then
		}
		return 0, false // nothing stalls; the next Start finds the period over, or not
	}
	if g.alloc == 0 {
		return at, ok
	}
	left := b.quota - b.spent
	if left < 0 {
		left = 0
	}
	t := g.vAt + sim.Time(math.Ceil(left/g.alloc))
	if t >= b.end {
		// Not spent this period. The next one starts with the full quota: spent in
		// Runtime/alloc, or never if that is a full period or more.
		full := sim.Time(math.Ceil(b.quota / g.alloc))
		if full >= b.period {
			return at, ok
		}
		t = b.end + full
	}
	if !ok || t < at {
		return t, true
	}
	return at, ok
}

// runqueues estimates the CPUs holding the group's runnable threads.
func (g *Group) runqueues() sim.Time {
	n := float64(len(g.jobs)) + math.Ceil(g.burn)
	if c := math.Ceil(g.cpu.cores); c > 0 && n > c {
		n = c
	}
	return sim.Time(n)
}

// Stat is the group's cpu.stat bandwidth accounting up to now; zero without a quota.
func (g *Group) Stat(now sim.Time) Stat {
	g.advance(now)
	return g.bw.stat
}

// Throttled is the wall time the group spent throttled while it had runnable work, up
// to now. A request started at s and finished at f stalled Throttled(f)−Throttled(s).
func (g *Group) Throttled(now sim.Time) sim.Time {
	g.advance(now)
	return g.bw.stalled
}

// IsThrottled reports whether the group is throttled at now (not before its last
// operation).
func (g *Group) IsThrottled(now sim.Time) bool { return g.bw.throttled && now < g.bw.until }
