package node

import (
	"math"
	"math/rand/v2"
	"testing"

	"trafficlab/sim"
)

// cfsGroup is a control group of a CFS bandwidth case: its weight and its quota.
type cfsGroup struct {
	weight float64
	q      Quota
}

// cfsBandwidthCases are cores, control groups under CFS bandwidth control and jobs
// started in them, with when each job must end, how long it stalls and each group's
// cpu.stat.
var cfsBandwidthCases = []struct {
	name   string
	cores  float64
	groups []cfsGroup
	starts []start
	tol    sim.Time // completion times exact unless the arithmetic is not
	want   map[int32]sim.Time
	stall  map[int32]sim.Time // Throttled(finish) − Throttled(start)
	stats  []Stat             // per group, at the end
	events []int              // per group, handled with a current Gen
}{
	{
		// CFS bandwidth control (kernel/sched/fair.c): 4 busy threads under 1 CPU (100 ms per 100 ms) on 4 cores run
		// 4 cores × 25 ms = 100 ms: the quota runs out just as the 25 ms jobs end.
		name: "four 25 ms requests under 1 CPU end in one 25 ms burst", cores: 4,
		groups: []cfsGroup{{1, limit(1000)}},
		starts: []start{{0, 1, 0, 25 * ms}, {0, 2, 0, 25 * ms}, {0, 3, 0, 25 * ms}, {0, 4, 0, 25 * ms}},
		want:   map[int32]sim.Time{1: 25 * ms, 2: 25 * ms, 3: 25 * ms, 4: 25 * ms},
		stall:  map[int32]sim.Time{1: 0, 2: 0, 3: 0, 4: 0},
		// Spent at 25 ms with nothing left to run: nothing to throttle.
		stats: []Stat{{NrPeriods: 1}},
	},
	{
		// CFS bandwidth control: run 25 ms (25 of 50 done, quota spent), stall 75 ms until the
		// boundary at 100 ms, run 25 ms: done at 125 ms, each having stalled 75 ms.
		// cpu.stat: 2 periods with work, 1 throttled, 4 runqueues × 75 ms = 300 ms.
		name: "four 50 ms requests under 1 CPU: 25 run, 75 stall, 25 run", cores: 4,
		groups: []cfsGroup{{1, limit(1000)}},
		starts: []start{{0, 1, 0, 50 * ms}, {0, 2, 0, 50 * ms}, {0, 3, 0, 50 * ms}, {0, 4, 0, 50 * ms}},
		want:   map[int32]sim.Time{1: 125 * ms, 2: 125 * ms, 3: 125 * ms, 4: 125 * ms},
		stall:  map[int32]sim.Time{1: 75 * ms, 2: 75 * ms, 3: 75 * ms, 4: 75 * ms},
		stats:  []Stat{{NrPeriods: 2, NrThrottled: 1, ThrottledTime: 300 * ms}},
		events: []int{3}, // out of quota at 25, boundary at 100, done at 125
	},
	{
		// The same on a node without a core count.
		name:   "four 50 ms requests under 1 CPU, unlimited node",
		groups: []cfsGroup{{1, limit(1000)}},
		starts: []start{{0, 1, 0, 50 * ms}, {0, 2, 0, 50 * ms}, {0, 3, 0, 50 * ms}, {0, 4, 0, 50 * ms}},
		want:   map[int32]sim.Time{1: 125 * ms, 2: 125 * ms, 3: 125 * ms, 4: 125 * ms},
		stats:  []Stat{{NrPeriods: 2, NrThrottled: 1, ThrottledTime: 300 * ms}},
	},
	{
		// 500m: 50 ms per 100 ms. 80 ms of work: 50 by 50 ms, stall to 100, the last
		// 30 by 130 ms.
		name: "one 80 ms request under 500m", cores: 4,
		groups: []cfsGroup{{1, limit(500)}},
		starts: []start{{0, 1, 0, 80 * ms}},
		want:   map[int32]sim.Time{1: 130 * ms},
		stall:  map[int32]sim.Time{1: 50 * ms},
		stats:  []Stat{{NrPeriods: 2, NrThrottled: 1, ThrottledTime: 50 * ms}},
	},
	{
		// 70 ms of work under 500m, boundaries at 0, 100: 50 by 50 ms, stall to 100,
		// 20 more: 120 ms.
		name: "offset 0", groups: []cfsGroup{{1, limit(500)}},
		starts: []start{{0, 1, 0, 70 * ms}},
		want:   map[int32]sim.Time{1: 120 * ms},
	},
	{
		// Boundaries at 30, 130: 30 ms spent by the first boundary, refilled; 40 more
		// by 70 ms is under 50: never throttled.
		name: "offset 30 ms", groups: []cfsGroup{{1, Quota{Runtime: 50 * ms, Period: 100 * ms, Offset: 30 * ms}}},
		starts: []start{{0, 1, 0, 70 * ms}},
		want:   map[int32]sim.Time{1: 70 * ms},
		stats:  []Stat{{NrPeriods: 2}},
	},
	{
		// Boundaries at 60, 160: 50 by 50 ms, stall to 60, 20 more: 80 ms.
		name: "offset 60 ms", groups: []cfsGroup{{1, Quota{Runtime: 50 * ms, Period: 100 * ms, Offset: 60 * ms}}},
		starts: []start{{0, 1, 0, 70 * ms}},
		want:   map[int32]sim.Time{1: 80 * ms},
		stall:  map[int32]sim.Time{1: 10 * ms},
	},
	{
		// −40 and 260 are the same phase as 60.
		name:   "negative and large offsets",
		groups: []cfsGroup{{1, Quota{Runtime: 50 * ms, Offset: -40 * ms}}, {1, Quota{Runtime: 50 * ms, Offset: 260 * ms}}},
		starts: []start{{0, 1, 0, 70 * ms}, {1, 2, 0, 70 * ms}},
		want:   map[int32]sim.Time{1: 80 * ms, 2: 80 * ms},
	},
	{
		// 2 cores. A (500m, 2 × 40 ms) and B (no limit, 2 × 100 ms) get a core each:
		// 0.5 per thread. A spends 50 ms by 50 ms (25 done each) and stalls; B takes
		// both cores, 1 per thread: 25 + 50 = 75 done by 100 ms. From 100 a core each
		// again: A's 15 left take 30 ms (done 130, spent 30 < 50); B did 15 more by
		// then and does its last 10 at full speed: 140 ms.
		name: "a throttled pod's cores go to the other pod", cores: 2,
		groups: []cfsGroup{{1, limit(500)}, {1, Quota{}}},
		starts: []start{{0, 1, 0, 40 * ms}, {0, 2, 0, 40 * ms}, {1, 3, 0, 100 * ms}, {1, 4, 0, 100 * ms}},
		want:   map[int32]sim.Time{1: 130 * ms, 2: 130 * ms, 3: 140 * ms, 4: 140 * ms},
		stall:  map[int32]sim.Time{1: 50 * ms, 2: 50 * ms, 3: 0, 4: 0},
		stats:  []Stat{{NrPeriods: 2, NrThrottled: 1, ThrottledTime: 100 * ms}, {}},
	},
	{
		// 1 CPU, 2 × 100 ms from 60 ms: 2 × 40 = 80 ms spent by the boundary at 100,
		// where nothing happens; the new quota runs out at 150 (90 done each), the
		// last 10 ms run from 200. Events: out of quota, boundary, completion.
		name: "the quota runs out in the next period", cores: 4,
		groups: []cfsGroup{{1, limit(1000)}},
		starts: []start{{0, 1, 60 * ms, 100 * ms}, {0, 2, 60 * ms, 100 * ms}},
		want:   map[int32]sim.Time{1: 210 * ms, 2: 210 * ms},
		stall:  map[int32]sim.Time{1: 50 * ms, 2: 50 * ms},
		stats:  []Stat{{NrPeriods: 3, NrThrottled: 1, ThrottledTime: 2 * 50 * ms}},
		events: []int{3},
	},
	{
		// 4 cores, 1 CPU, 4 × 50 ms at 0 and a 10 ms job 5 at 50 ms, during the stall:
		// it waits to 100. Then 5 threads on 4 cores, 0.8 each: job 5 ends at 112.5
		// (jobs 1-4 at 35 done); then 1 each; the quota (50 ms spent by 112.5) runs out
		// 12.5 ms later, jobs 1-4 at 47.5, stalled to 200: 2.5 more, 202.5 ms.
		name: "a request started during the stall waits for the period's end", cores: 4,
		groups: []cfsGroup{{1, limit(1000)}}, tol: 1,
		starts: []start{{0, 1, 0, 50 * ms}, {0, 2, 0, 50 * ms}, {0, 3, 0, 50 * ms}, {0, 4, 0, 50 * ms}, {0, 5, 50 * ms, 10 * ms}},
		want:   map[int32]sim.Time{1: 202.5e6, 5: 112.5e6},
		stall:  map[int32]sim.Time{1: 150 * ms, 5: 50 * ms},
		// Runqueues: 4 × 50 (25-50) + 5 × 50 (50-100, 4 cores: 4) + 4 × 75 (125-200).
		stats: []Stat{{NrPeriods: 3, NrThrottled: 2, ThrottledTime: 4*25*ms + 4*50*ms + 4*75*ms}},
	},
}

func TestCFSBandwidth(t *testing.T) {
	cases := cfsBandwidthCases
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDriver(c.cores)
			for _, g := range c.groups {
				d.group(g.weight, g.q)
			}
			for _, s := range c.starts {
				d.start(s.group, s.job, s.at, s.work)
			}
			d.k.Run(10 * 1000 * ms)
			for job, want := range c.want {
				if got := d.done[job]; got < want-c.tol || got > want+c.tol {
					t.Errorf("job %d done at %v ms, want %v ms", job, float64(got)/1e6, float64(want)/1e6)
				}
			}
			for job, want := range c.stall {
				if got := d.stall[job]; got != want {
					t.Errorf("job %d stalled %v ms, want %v ms", job, float64(got)/1e6, float64(want)/1e6)
				}
			}
			for i, want := range c.stats {
				if got := d.grp[i].Stat(d.k.Now()); got != want {
					t.Errorf("group %d cpu.stat %+v, want %+v", i, got, want)
				}
			}
			for i, want := range c.events {
				if got := d.events[i]; got != want {
					t.Errorf("group %d handled %d events, want %d", i, got, want)
				}
			}
		})
	}
}

// A group that never reaches its quota behaves exactly as one without: same
// completions to the nanosecond, no throttling, and no event beyond its completions.
func TestUnderQuotaIsUnlimited(t *testing.T) {
	cases := []struct {
		name   string
		q      Quota
		starts []start
	}{
		{
			// At most 2 threads under 2 CPUs: 2 cores use exactly the quota, never more.
			name: "two threads under 2 CPUs", q: limit(2000),
			starts: []start{{0, 1, 0, 30 * ms}, {0, 2, 5 * ms, 50 * ms}, {0, 3, 40 * ms, 100 * ms}, {0, 4, 230 * ms, 10 * ms}},
		},
		{
			name: "one thread under 1.5 CPUs, odd phase", q: Quota{Runtime: 150 * ms, Period: 100 * ms, Offset: 37 * ms},
			starts: []start{{0, 1, 0, 330 * ms}, {0, 2, 400 * ms, 77 * ms}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(q Quota) *driver {
				d := newDriver(0)
				d.group(1, q)
				for _, s := range c.starts {
					d.start(s.group, s.job, s.at, s.work)
				}
				d.k.Run(10 * 1000 * ms)
				return d
			}
			free, limited := run(Quota{}), run(c.q)
			for job, want := range free.done {
				if got := limited.done[job]; got != want {
					t.Errorf("job %d done at %d ns under quota, %d without", job, got, want)
				}
			}
			if got, want := limited.events[0], free.events[0]; got != want {
				t.Errorf("%d events under quota, %d without", got, want)
			}
			if s := limited.grp[0].Stat(limited.k.Now()); s.NrThrottled != 0 || s.ThrottledTime != 0 {
				t.Errorf("throttled: %+v", s)
			}
		})
	}
}

// Throttling costs two events a period (out of quota, period's end), whatever the
// rounding of shares.
func TestThrottlingEventsStayFew(t *testing.T) {
	t.Run("four threads of 1 s under 1 CPU", func(t *testing.T) {
		d := newDriver(4)
		g := d.group(1, limit(1000))
		for j := int32(0); j < 4; j++ {
			g.Start(0, j, int64(1000*ms))
		}
		d.k.Run(10 * 1000 * ms)
		// 25 ms of each job per period: 40 periods, the last ending its burst at
		// 39·100 + 25 = 3925 ms. Events: 39 × (out of quota, boundary) + the last burst,
		// which spends the quota as the jobs end: 39 throttled periods.
		if got := d.done[0]; got != 3925*ms {
			t.Errorf("done at %v ms, want 3925", float64(got)/1e6)
		}
		if got := d.events[0]; got != 79 {
			t.Errorf("%d events, want 79", got)
		}
		if s := g.Stat(d.k.Now()); s.NrPeriods != 40 || s.NrThrottled != 39 {
			t.Errorf("cpu.stat %+v, want 40 periods, 39 throttled", s)
		}
	})
	t.Run("a third of a core under 300m", func(t *testing.T) {
		// 1 core; A (300m, weight 1, 3 threads) and B (no limit, weight 2, 1 thread):
		// B's demand/weight is lower, it gets min(1, 2/3) and A the last third, which
		// spends 30 ms in 90 ms. Then B runs alone to the boundary. Over 10 s A uses
		// 100 × 30 ms = 3 s and B the other 7 s. A's events: 100 throttles and 99
		// boundaries (the one at 10 s is the horizon).
		d := newDriver(1)
		a, b := d.group(1, limit(300)), d.group(2, Quota{})
		for j := int32(0); j < 3; j++ {
			a.Start(0, j, int64(100*1000*ms))
		}
		b.Start(0, 3, int64(100*1000*ms))
		d.k.Run(10 * 1000 * ms)
		if got := a.Used(d.k.Now()); math.Abs(got-3) > 1e-6 {
			t.Errorf("A used %.9f core-s, want 3", got)
		}
		if got := b.Used(d.k.Now()); math.Abs(got-7) > 1e-6 {
			t.Errorf("B used %.9f core-s, want 7", got)
		}
		if got := d.events[0]; got != 199 {
			t.Errorf("A handled %d events, want 199", got)
		}
	})
}

// A burner (a group's steady CPU demand: a hog, a batch job, node daemons) shares
// the node's cores with the other groups by weight.
func TestBurnerShares(t *testing.T) {
	t.Run("a burner on 1 of 2 cores leaves one thread alone", func(t *testing.T) {
		d := newDriver(2)
		burner := d.group(1, Quota{})
		d.group(1, Quota{})
		burner.SetDemand(0, 1)
		d.start(1, 1, 0, 10*ms) // 1 + 1 cores asked of 2: full speed
		d.k.Run(1000 * ms)
		if got := d.done[1]; got != 10*ms {
			t.Errorf("done at %v ms, want 10", float64(got)/1e6)
		}
	})
	t.Run("but slows two busy threads", func(t *testing.T) {
		// 3 cores asked of 2, equal weights: the burner (demand/weight 1) keeps its
		// core, the pod gets the other, 0.5 per thread: 10 ms of work take 20 ms.
		d := newDriver(2)
		burner := d.group(1, Quota{})
		d.group(1, Quota{})
		burner.SetDemand(0, 1)
		d.start(1, 1, 0, 10*ms)
		d.start(1, 2, 0, 10*ms)
		d.k.Run(1000 * ms)
		if d.done[1] != 20*ms || d.done[2] != 20*ms {
			t.Errorf("done at %v, want 20 ms", d.done)
		}
	})
	t.Run("weights split a full node", func(t *testing.T) {
		// 2 cores; burner asks 2 at weight 1, pod 2 threads at weight 3: the pod gets
		// 2·3/4 = 1.5 cores, 0.75 per thread: 15 ms of work take 20 ms. The burner
		// has 0.5 core for 20 ms, then 2 cores: 10 + 2·20 = 50 core-ms by 40 ms.
		d := newDriver(2)
		burner := d.group(1, Quota{})
		d.group(3, Quota{})
		burner.SetDemand(0, 2)
		d.start(1, 1, 0, 15*ms)
		d.start(1, 2, 0, 15*ms)
		d.k.Run(40 * ms)
		if d.done[1] != 20*ms || d.done[2] != 20*ms {
			t.Errorf("done at %v, want 20 ms", d.done)
		}
		if got := burner.Used(d.k.Now()); math.Abs(got-0.05) > 1e-12 {
			t.Errorf("burner used %v core-s, want 0.05", got)
		}
	})
}

// A burner under a CPU limit is throttled as a pod's threads are.
func TestBurnerUnderALimit(t *testing.T) {
	t.Run("a burner under a limit is throttled", func(t *testing.T) {
		// 2 cores of demand under 1 CPU: 2 cores for 50 ms, stalled 50 ms, each period.
		d := newDriver(4)
		burner := d.group(1, limit(1000))
		burner.SetDemand(0, 2)
		for _, c := range []struct {
			at   sim.Time
			used float64
		}{{25 * ms, 0.05}, {75 * ms, 0.1}, {150 * ms, 0.2}, {1000 * ms, 1.0}} {
			d.k.Run(c.at)
			if got := burner.Used(c.at); math.Abs(got-c.used) > 1e-12 {
				t.Errorf("used %v core-s by %v ms, want %v", got, float64(c.at)/1e6, c.used)
			}
		}
		// 10 periods, all throttled, 50 ms each on 2 runqueues.
		want := Stat{NrPeriods: 10, NrThrottled: 10, ThrottledTime: 10 * 2 * 50 * ms}
		if got := burner.Stat(d.k.Now()); got != want {
			t.Errorf("cpu.stat %+v, want %+v", got, want)
		}
		if got := burner.Throttled(d.k.Now()); got != 500*ms {
			t.Errorf("throttled %v ms, want 500", float64(got)/1e6)
		}
	})
	t.Run("turned down under its limit, it is throttled no more", func(t *testing.T) {
		// 100 ms by the stall at 50 ms, 2 cores from 100 to 120 ms (40), then 0.5
		// core: 40 + 40 = 80 < 100 by 200 ms, 50 a period after. By 1 s: 100 + 40 +
		// 0.5 × 880 = 580 core-ms.
		d := newDriver(4)
		burner := d.group(1, limit(1000))
		burner.SetDemand(0, 2)
		d.k.Run(120 * ms)
		burner.SetDemand(d.k.Now(), 0.5)
		d.k.Run(1000 * ms)
		if got := burner.Used(d.k.Now()); math.Abs(got-0.58) > 1e-12 {
			t.Errorf("used %v core-s, want 0.58", got)
		}
		if s := burner.Stat(d.k.Now()); s.NrThrottled != 1 || s.NrPeriods != 10 {
			t.Errorf("cpu.stat %+v, want 10 periods, 1 throttled", s)
		}
		burner.SetDemand(d.k.Now(), 0)
		burner.Remove()
	})
}

// Random nodes checked against invariants: every period's consumption within the quota,
// the node's cores never exceeded, every request finished, events bounded.
func TestRandomNodesKeepTheRules(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		cores := float64(1 + r.IntN(8))
		d := newDriver(cores)
		var quotas []Quota
		for i := 0; i < 1+r.IntN(6); i++ {
			q := Quota{}
			if r.IntN(3) > 0 {
				q = MilliCPUToQuota(int64(100+r.IntN(3000)), 0)
				q.Offset = sim.Time(r.IntN(100)) * ms
			}
			quotas = append(quotas, q)
			g := d.group(float64(CPUWeight(int64(r.IntN(4000)))), q)
			if r.IntN(4) == 0 {
				g.SetDemand(0, r.Float64()*2)
			}
		}
		// Requests start on whole milliseconds, where use is sampled and where every
		// period boundary lies.
		var starts []start
		for at := sim.Time(0); at < 2000*ms; at += sim.Time(r.IntN(20)) * ms {
			starts = append(starts, start{r.IntN(len(d.grp)), int32(len(starts)), at, sim.Time(1 + r.Int64N(int64(60*ms)))})
		}
		jobs := len(starts)
		prev := make([]float64, len(d.grp))
		perPeriod := make([]float64, len(d.grp))
		for now := sim.Time(0); len(d.done) < jobs; now += ms {
			if now > 1000*1000*ms {
				t.Fatalf("seed %d: %d of %d requests done", seed, len(d.done), jobs)
			}
			d.k.Run(now)
			for len(starts) > 0 && starts[0].at == now {
				s := starts[0]
				d.grp[s.group].Start(now, s.job, int64(s.work))
				starts = starts[1:]
			}
			total := 0.0
			for i, g := range d.grp {
				u := g.Used(now) * 1e9
				total += u - prev[i]
				perPeriod[i] += u - prev[i]
				prev[i] = u
				if q := quotas[i]; q.Runtime > 0 && (now-q.Offset)%QuotaPeriod == 0 {
					// Next rounds up to whole nanoseconds: at most a ns of overrun per core.
					if perPeriod[i] > float64(q.Runtime)+cores+1e-3 {
						t.Fatalf("seed %d: group %d used %v ns in a period of quota %v", seed, i, perPeriod[i], q.Runtime)
					}
					perPeriod[i] = 0
				}
			}
			if total > cores*float64(ms)+1e-3 {
				t.Fatalf("seed %d: %v core-ns used in 1 ms on %v cores", seed, total, cores)
			}
		}
		// Per group: completions (at most one event per request) and at most 2 quota
		// events per period.
		for i := range d.grp {
			if limit := len(d.done) + 2*int(d.k.Now()/QuotaPeriod+1); d.events[i] > limit {
				t.Fatalf("seed %d: group %d handled %d events, more than %d", seed, i, d.events[i], limit)
			}
		}
	}
}

func TestQuotaStartFinishDoNotAllocate(t *testing.T) {
	c := NewCPU(2)
	g := c.AddGroup(0, 1, limit(500))
	other := c.AddGroup(1, 1, Quota{})
	other.Start(0, 99, 1<<60)
	now := sim.Time(0)
	buf := make([]int32, 0, 8)
	job := int32(0)
	cycle := func() {
		g.Start(now, job, int64(30*ms))
		g.Start(now, job+1, int64(20*ms))
		job += 2
		for g.Running() > 0 {
			at, ok := g.Next()
			if !ok {
				t.Fatal("running requests but no next event")
			}
			now = at
			buf = g.Finish(now, buf[:0])
		}
	}
	cycle() // grow the heap and scratch
	if n := testing.AllocsPerRun(200, cycle); n != 0 {
		t.Errorf("%v allocations per cycle, want 0", n)
	}
}

// benchDriver keeps each group's threads busy: a finished request starts another.
type benchDriver struct {
	k    *sim.Kernel
	kind uint8
	grp  []*Group
	buf  []int32
}

func (b *benchDriver) Handle(ev sim.Event) {
	g := b.grp[ev.Obj]
	if ev.Gen != g.Gen {
		return
	}
	now := b.k.Now()
	b.buf = g.Finish(now, b.buf[:0])
	for _, j := range b.buf {
		g.Start(now, j, int64(ms)+int64(j)*1000)
	}
}

func benchNode(b *testing.B, q Quota) {
	d := &benchDriver{k: sim.New()}
	d.kind = d.k.Register(d.Handle)
	c := NewCPU(8)
	c.Changed = func(g *Group) {
		if at, ok := g.Next(); ok {
			d.k.At(at, d.kind, g.ID, g.Gen)
		}
	}
	for i := int32(0); i < 8; i++ {
		g := c.AddGroup(i, 1, q)
		d.grp = append(d.grp, g)
		for j := int32(0); j < 3; j++ {
			g.Start(0, i*8+j, int64(ms)+int64(i*8+j)*1000)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.k.Run(d.k.Now() + ms)
	}
	b.ReportMetric(float64(d.k.Processed)/float64(b.N), "events/op")
}

// BenchmarkNode: 8 pods of 3 busy threads on 8 cores, 1 simulated ms per op.
func BenchmarkNode(b *testing.B) {
	b.Run("unlimited", func(b *testing.B) { benchNode(b, Quota{}) })
	b.Run("quota-unreached", func(b *testing.B) { benchNode(b, limit(4000)) })
	b.Run("throttled", func(b *testing.B) { benchNode(b, limit(500)) })
}

// Summing a group's use in floats can leave a sliver of quota where the arithmetic says
// none: it counts as spent, rather than costing an event a nanosecond later.
func TestQuotaSliverCountsAsSpent(t *testing.T) {
	g := NewCPU(0).AddGroup(0, 1, limit(1000))
	g.Start(0, 1, int64(1000*ms))
	g.Start(0, 2, int64(1000*ms))
	at, _ := g.Next() // 2 cores spend 100 ms in 50 ms
	if at != 50*ms {
		t.Fatalf("quota runs out at %v ms, want 50", float64(at)/1e6)
	}
	g.advance(at)
	g.bw.spent = g.bw.quota - 1e-7 // as if summed with rounding errors
	g.Finish(at, nil)
	if !g.IsThrottled(at) {
		t.Fatal("not throttled with 1e-7 ns of quota left")
	}
	if next, _ := g.Next(); next != 100*ms {
		t.Errorf("next event at %v ms, want the period's end at 100", float64(next)/1e6)
	}
}
