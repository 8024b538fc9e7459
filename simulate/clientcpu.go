package simulate

import (
	"math"

	"trafficlab/model/node"
	"trafficlab/result"
	"trafficlab/sim"

	corev1 "k8s.io/api/core/v1"
)

// The CPU client pods spend themselves (clients[].work): a request's preparation
// and a new connection's setup run on the client pod's own cgroup on its node,
// sharing the node's cores with the pods there as any container does, before the
// request or the dial goes on. A client without work has no CPU group.

// callerGroupBase: client pods' CPU group IDs count up from here, clear of the
// pods' (from 0 up), the sidecars' (from -1 down) and background workloads' (from
// the lowest int32 up).
const callerGroupBase = math.MinInt32 / 2

// cpuTask is one piece of a slot's CPU work on its client pod, valid while the
// slot's generation is still gen; slot is -1 for work nothing waits for (an
// HTTP/2 connection's setup, see open).
type cpuTask struct {
	slot int32
	gen  uint32
}

// clientGroup gives client pod ci a CPU group on its node when its client spends
// CPU, with the weight and quota of its resources.
func (e *Engine) clientGroup(ci int32) {
	cp := &e.cpods[ci]
	d := &e.deps[cp.dep]
	if d.reqCPU == 0 && d.connCPU == 0 && d.steadyCPU == 0 {
		return
	}
	res := &d.spec.Resources
	cp.grp = e.nodes[cp.node].cpu.AddGroup(callerGroupBase+ci, cpuWeight(res), e.cpuQuota(res, "client/"+cp.name))
	if d.steadyCPU > 0 {
		cp.grp.SetDemand(0, d.steadyCPU)
	}
	// An open loop prepares as many requests at once as the process has threads
	// on CPU: Go's runtime runs GOMAXPROCS goroutines, one per core it may use.
	if c := cp.grp.Capacity(); c > 0 {
		cp.senders = int(math.Ceil(c))
	}
}

// clientCPUChanged schedules client pod group g's next completion, if g is one.
func (e *Engine) clientCPUChanged(g *node.Group, at sim.Time) bool {
	ci := g.ID - callerGroupBase
	if ci < 0 || ci >= int32(len(e.cpods)) {
		return false
	}
	e.k.At(at, e.evClientCPU, ci, g.Gen)
	return true
}

// work puts work ns of slot si's CPU on its client pod, or, for a service pod's
// call, on that pod's own container, under an ID its requests' jobs (from 0 up)
// cannot have.
func (e *Engine) work(si int32, work sim.Time, waits bool) {
	s := &e.slots[si]
	cp := &e.cpods[s.cpod]
	t := cpuTask{slot: si, gen: s.gen}
	if !waits {
		t.slot = -1
	}
	id := e.cpuTasks.add(t)
	if cp.from >= 0 {
		id = -id - 1
	}
	cp.grp.Start(e.k.Now(), id, int64(max(work, 1)))
}

// onClientCPU: work on a client pod's CPU finished. A prepared request goes on to
// get a connection, a connection's setup to its dial; then the pod's open loop
// starts the arrivals it fell behind on, while it has threads free.
func (e *Engine) onClientCPU(ev sim.Event) {
	ci := ev.Obj
	g := e.cpods[ci].grp
	if ev.Gen != g.Gen {
		return
	}
	e.done = g.Finish(e.k.Now(), e.done[:0])
	done := append(e.doneTasks[:0], e.done...) // acquire may finish more work now
	for _, id := range done {
		e.worked(id)
	}
	e.doneTasks = done
	e.catchUp(ci)
}

// worked: slot work task id is done; its request goes on, unless given up
// meanwhile, or fails now if its timeout passed during the work: a library notices
// its deadline when it next waits, after the work it is in the middle of, so a
// thread never builds two requests at once.
func (e *Engine) worked(id int32) {
	t := e.cpuTasks.take(id)
	if t.slot < 0 {
		return
	}
	s := &e.slots[t.slot]
	if s.gen != t.gen || (s.state != preparing && s.state != opening) {
		return
	}
	if s.expired {
		s.expired = false
		if s.state == opening {
			e.letGo(t.slot, true) // the pool's room for the connection it was opening
		}
		e.fail(t.slot, errTimeout, -1)
		return
	}
	if s.state == preparing {
		e.acquire(t.slot)
		return
	}
	e.dial(t.slot)
}

// behind: an open-loop arrival of client pod ci finds its threads all busy with
// work (or earlier arrivals waiting), so it waits its turn, as vegeta's pacer
// sends at once whatever it is behind on (lib/pacer.go ConstantPacer.Pace).
func (e *Engine) behind(ci int32) bool {
	cp := &e.cpods[ci]
	if d := &e.deps[cp.dep]; cp.grp == nil || cp.senders == 0 || d.reqCPU == 0 && d.connCPU == 0 {
		return false
	}
	if cp.late.Len() == 0 && cp.sending() < cp.senders {
		return false
	}
	cp.late.Push(e.k.Now())
	return true
}

// catchUp starts client pod ci's late arrivals while it has threads free.
func (e *Engine) catchUp(ci int32) {
	cp := &e.cpods[ci]
	for cp.late.Len() > 0 && cp.sending() < cp.senders {
		due, _ := cp.late.Pop()
		d := &e.deps[cp.dep]
		d.maxLate = max(d.maxLate, e.k.Now()-due)
		e.startArrival(ci, due)
	}
}

// behindAll counts the arrivals every client fell behind on: dropped at their
// phase's end, or still waiting at the run's.
func (e *Engine) behindAll() int64 {
	n := e.stats.behind
	for i := range e.cpods {
		n += int64(e.cpods[i].late.Len())
	}
	return n
}

// dropLate: client pod ci's phase ended with arrivals still waiting; they are never
// sent, as vegeta stops at its duration however far behind (lib/attack.go Attack).
func (e *Engine) dropLate(ci int32) {
	cp := &e.cpods[ci]
	n := int64(cp.late.Len())
	if n == 0 {
		return
	}
	cp.late = sim.FIFO[sim.Time]{}
	d := &e.deps[cp.dep]
	d.behind += n
	e.stats.behind += n
}

// addClientCPUUsed adds the core-seconds client pods used up to now to their nodes'.
func (e *Engine) addClientCPUUsed(now sim.Time, used []float64) {
	for i := range e.cpods {
		// A service pod's calls spend its own container's CPU, counted as the pod's.
		if g := e.cpods[i].grp; g != nil && e.cpods[i].from < 0 {
			used[e.cpods[i].node] += g.Used(now)
		}
	}
}

// clientCPUResult fills client Deployment d's own CPU and how far behind its
// schedule it fell.
func (e *Engine) clientCPUResult(d *clientDeployment, rc *result.Client) {
	dur := e.end.Seconds()
	rc.Behind, rc.MaxLateS = d.behind, result.Round(d.maxLate.Seconds(), 6)
	used, limit := 0.0, 0.0
	if q, ok := d.spec.Resources.Limits[corev1.ResourceCPU]; ok {
		limit = q.AsApproximateFloat64()
	}
	for _, ci := range d.pods {
		cp := &e.cpods[ci]
		rc.Behind += int64(cp.late.Len()) // still waiting at the run's end
		if cp.grp == nil {
			continue // its work is not modelled: no figures
		}
		u := cp.grp.Used(e.end)
		used += u
		util := 0.0
		if c := cp.grp.Capacity(); c > 0 {
			util = u / (c * dur)
		}
		rc.Pods = append(rc.Pods, result.ClientPod{Name: cp.name, Node: e.nodes[cp.node].name,
			CPUCores: result.Round(u/dur, 4), CPUUtilization: result.Round(util, 4), CPULimit: limit})
	}
	if len(rc.Pods) == 0 {
		return
	}
	rc.CPUCores = result.Round(used/dur, 4)
	if d.sent > 0 {
		rc.CPUPerRequestMS = result.Round(used/float64(d.sent)*1e3, 6)
	}
}

// callsWorked moves on the calls whose own CPU work (negative IDs) is among done, a
// service pod's finished CPU work, and returns the requests' jobs among it.
func (e *Engine) callsWorked(done []int32) []int32 {
	jobs, tasks := e.jobsDone[:0], e.tasksDone[:0]
	for _, id := range done {
		if id < 0 {
			tasks = append(tasks, -id-1)
		} else {
			jobs = append(jobs, id)
		}
	}
	e.jobsDone, e.tasksDone = jobs, tasks
	for _, id := range tasks {
		e.worked(id)
	}
	return jobs
}

// sending is how many of client pod cp's requests are being prepared: on its CPU,
// or in the overhead before it (see startArrival).
func (cp *clientPod) sending() int { return cp.grp.Running() + cp.waking }

// woke: slot si's overhead is over, or its run aborted: it no longer counts in its
// pod's waking.
func (e *Engine) woke(si int32) {
	if s := &e.slots[si]; s.waking {
		s.waking = false
		e.cpods[s.cpod].waking--
	}
}
