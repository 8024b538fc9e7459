package simulate

import (
	"trafficlab/model/node"
	"trafficlab/sim"
)

func (e *Engine) newJob(j job) int32 {
	if n := len(e.freeJobs); n > 0 {
		id := e.freeJobs[n-1]
		e.freeJobs = e.freeJobs[:n-1]
		e.jobs[id] = j
		return id
	}
	e.jobs = append(e.jobs, j)
	return int32(len(e.jobs) - 1)
}

func (e *Engine) freeJob(id int32) { e.freeJobs = append(e.freeJobs, id) }

// onArrive: a request reached its pod. A worker takes it, or it queues for one.
func (e *Engine) onArrive(ev sim.Event) {
	j := &e.jobs[ev.Obj]
	p := &e.pods[j.pod]
	if j.newConn {
		p.connections++
	}
	if p.concurrency > 0 && p.busy >= p.concurrency {
		p.queue.Push(ev.Obj)
		return
	}
	e.start(ev.Obj)
}

// start gives a worker to job ji: first its CPU work (plus the accept on a new
// connection), then its off-CPU wait.
func (e *Engine) start(ji int32) {
	j := &e.jobs[ji]
	p := &e.pods[j.pod]
	p.busy++
	work := p.work.Sample(p.rng)
	if j.newConn {
		work += p.acceptCost
	}
	j.wait = p.wait.Sample(p.rng)
	if work > 0 {
		p.grp.Start(e.k.Now(), ji, work)
		return
	}
	e.cpuDone(ji)
}

// cpuChanged reschedules a pod's next CPU completion after its rate changed.
func (e *Engine) cpuChanged(g *node.Group) {
	if at, ok := g.Next(); ok {
		e.k.At(at, e.evCPU, g.ID, g.Gen)
	}
}

func (e *Engine) onCPU(ev sim.Event) {
	g := e.pods[ev.Obj].grp
	if ev.Gen != g.Gen {
		return // the pod's rate changed since; a newer event stands
	}
	e.done = g.Finish(e.k.Now(), e.done[:0])
	for _, ji := range e.done {
		e.cpuDone(ji)
	}
}

func (e *Engine) cpuDone(ji int32) {
	if w := e.jobs[ji].wait; w > 0 {
		e.k.After(sim.Time(w), e.evWait, ji, 0)
		return
	}
	e.finish(ji)
}

// finish: the pod answers; its worker takes the next queued request.
func (e *Engine) finish(ji int32) {
	j := &e.jobs[ji]
	p := &e.pods[j.pod]
	p.busy--
	p.requests++
	e.k.After(e.hop+e.relay, e.evResponse, ji, 0)
	if next, ok := p.queue.Pop(); ok {
		e.start(next)
	}
}
